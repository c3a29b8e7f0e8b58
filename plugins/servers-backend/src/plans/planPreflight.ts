/*
 * The plan pre-flight: every node's single pre-flight, the steps, the budgets, quorum
 * per step and the estimate, with a token bound to all of it; the nodes of a plan as the
 * caller may see them; and the checks of a pre-flight query every layer makes alike.
 */
import { InputError } from '@backstage/errors';
import {
  alreadyAtTarget,
  firmwareAlreadyAtTarget,
  HEALTH_LIMITS,
  isPowerVerb,
  MAX_FIRMWARE_TARGETS,
  MAX_FIRMWARE_URI_LENGTH,
  MAX_IMAGE_REFERENCE_LENGTH,
  MAX_PLAN_NODES,
  PLAN_INTENTS,
  planUpgradeTarget,
  resolvePlanNodes,
  type DrainBudget,
  type NodeFacts,
  type PlanIntent,
  type PlanNodeImpact,
  type PlanPreflightResponse,
  type PlanPreflightStep,
  type PlanRequestBody,
  type PlanSkippedNode,
  type PowerVerb,
  type PreflightCeremonyLevel,
} from '@rackside/plugin-servers-common';
import crypto from 'node:crypto';
import type { ClusterState } from '../cluster/types';
import { parseAlertGateQuery, type AlertGateQuery } from './alertGatePreview';
import type { ServerReadScope } from '../access/serverGrant';
import { currentImpacts } from '../preflight/impact';
import { impactDigest, type PreflightOptions } from '../preflight/preflight';
import { type PreflightTokens } from '../preflight/tokens';
import { installCheck, powerCheck } from '../cluster/snapshot';
import type { InstallRequest } from '../lib/upgradeSources';
import { serverResourceOf } from '../access/visibleNodes';
import { type ClusterSnapshot } from '../cluster/types';

/** The plan pre-flight without its token. */
export type PlanPreflightImpact = Omit<PlanPreflightResponse, 'token'>;

/** What the token of a plan pre-flight binds: every node's impact and the plan's shape. */
export function planDigest(impact: PlanPreflightImpact): string {
  return crypto
    .createHash('sha256')
    .update(
      JSON.stringify({
        cluster: impact.cluster,
        intent: impact.intent,
        maxParallel: impact.maxParallel,
        // What an upgrade or a firmware plan installs, and the nodes it skips for it.
        image: impact.image,
        imageURI: impact.imageURI,
        version: impact.version,
        skipped: (impact.skipped ?? []).map(n => n.node),
        nodes: impact.nodes.map(n => [n.step, impactDigest(n)]),
      }),
    )
    .digest('base64url');
}

/**
 * The name of the plan a request with this token creates: the same for every request
 * carrying it, so the apiserver's unique names make the token single-use (as a single
 * pre-flight's maintenance name does).
 */
export function planNameFor(intent: PlanIntent, token: string): string {
  const digest = crypto
    .createHash('sha256')
    .update(token)
    .digest('hex')
    .slice(0, 16);
  return `${intent}-plan-${digest}`;
}

/** The steps a plan goes in: workers maxParallel at a time, then each control-plane member alone. */
export function stepsFor(
  nodes: Array<{ name: string; controlPlane: boolean }>,
  maxParallel: number,
): string[][] {
  const steps: string[][] = [];
  const workers = nodes.filter(n => !n.controlPlane).map(n => n.name);
  for (let i = 0; i < workers.length; i += maxParallel) {
    steps.push(workers.slice(i, i + maxParallel));
  }
  for (const n of nodes.filter(x => x.controlPlane)) steps.push([n.name]);
  return steps;
}

/** A plan pre-flight request, parsed at the edge (parsePlanPreflightQuery) and checked. */
export interface PlanPreflightQuery {
  intent: PlanIntent;
  nodes: string[];
  /** How many at once: 1 unless asked. */
  maxParallel: number;
  options: PreflightOptions;
  /** What an upgrade (`image`) or a firmware plan (`imageURI`) installs. */
  install: InstallRequest;
  /** The alert gate the plan would carry: the pre-flight says what would hold it now. */
  alertGate?: AlertGateQuery;
}

/**
 * The nodes of a plan in the order they go, each one the user may read and that
 * exists (400 naming the others: hidden and absent read the same).
 */
export function planNodes(
  cluster: string,
  snap: ClusterSnapshot,
  filter: (s: ReturnType<typeof serverResourceOf>) => boolean,
  names: string[],
) {
  const visible = snap.nodes.filter(n => filter(serverResourceOf(cluster, n)));
  const planned = resolvePlanNodes(
    { nodes: [...new Set(names)] },
    visible.map(n => ({
      name: n.metadata?.name ?? '',
      labels: n.metadata?.labels,
    })),
  );
  const missing = planned.filter(n => n.missing).map(n => n.name);
  if (missing.length) {
    throw new InputError(
      `no server named ${missing.join(', ')} in cluster ${cluster}`,
    );
  }
  return planned;
}

/** The drain options of a plan request, each false unless asked. */
export function planDrainOf(body: Pick<PlanRequestBody, 'drain'>) {
  return {
    deleteEmptyDirData: body.drain?.deleteEmptyDirData === true,
    force: body.drain?.force === true,
    allowNodeLocalData: body.drain?.allowNodeLocalData === true,
  };
}

/**
 * The nodes a plan request names, by `nodes` or resolved once from its `selector` among
 * the servers the caller may read: the permission, the pre-flight and the plan cover
 * exactly the same nodes.
 */
export function requestedPlanNodes(
  cluster: string,
  snap: ClusterSnapshot,
  scope: ServerReadScope,
  body: Pick<PlanRequestBody, 'nodes' | 'selector'>,
) {
  if ((body.nodes === undefined) === (body.selector === undefined)) {
    throw new InputError(
      'invalid request body: give exactly one of nodes and selector',
    );
  }
  let names = body.nodes;
  if (!names) {
    const selected = resolvePlanNodes(
      { selector: body.selector },
      snap.nodes
        .filter(n => scope.filter(serverResourceOf(cluster, n)))
        .map(n => ({
          name: n.metadata?.name ?? '',
          labels: n.metadata?.labels,
        })),
    );
    if (selected.length === 0) {
      throw new InputError('the selector matches no server you may read');
    }
    names = selected.map(n => n.name);
  }
  return planNodes(cluster, snap, scope.filter, names);
}

/** What a plan's spec installs, as its pre-flight is asked for it. */
export function installOfPlan(spec: {
  upgrade?: { image: string };
  firmware?: {
    imageURI: string;
    checksum?: string;
    version?: string;
    targets?: string[];
  };
}): InstallRequest {
  const { firmware } = spec;
  return {
    ...(spec.upgrade ? { upgrade: { image: spec.upgrade.image } } : {}),
    ...(firmware
      ? {
          firmware: {
            imageURI: firmware.imageURI,
            ...(firmware.checksum !== undefined
              ? { checksum: firmware.checksum }
              : {}),
            ...(firmware.version !== undefined
              ? { version: firmware.version }
              : {}),
            ...(firmware.targets ? { targets: firmware.targets } : {}),
          },
        }
      : {}),
  };
}

/**
 * The nodes of a plan the operator Skips up front, with its words, by the rules it
 * resolves a plan with: an upgrade's nodes whose Node already names the target
 * (`alreadyAtTarget`), a firmware plan's (with a version) whose BMC's last health
 * reading already reports it for the targets (`firmwareAlreadyAtTarget`). None for any
 * other plan.
 */
export function skippedUpFront(
  snap: ClusterSnapshot,
  intent: PlanIntent,
  install: InstallRequest,
  planned: ReadonlyArray<{ name: string }>,
): PlanSkippedNode[] {
  const target = planUpgradeTarget({ intent, upgrade: install.upgrade });
  const firmware = install.firmware && {
    intent,
    firmware: {
      ...install.firmware,
      targets: install.firmware.targets && [...install.firmware.targets],
    },
  };
  return planned.flatMap(n => {
    if (target !== undefined) {
      const node = snap.nodes.find(x => x.metadata?.name === n.name);
      const reason = alreadyAtTarget(target, node?.status?.nodeInfo?.osImage);
      return reason ? [{ node: n.name, reason }] : [];
    }
    if (!firmware) return [];
    const reading = snap.bmcHealth.get(n.name)?.firmware;
    const reason = firmwareAlreadyAtTarget(firmware, reading);
    if (!reason) return [];
    // The reading that says so, field by field (the portal's Components choice lists
    // a skipped node's components too, or checking one could hide it from the choice).
    return [
      {
        node: n.name,
        reason,
        firmware: (reading ?? []).map(({ id, name, version }) => ({
          ...(id !== undefined ? { id } : {}),
          name,
          version,
        })),
      },
    ];
  });
}

/** The intents whose plan asks the requester to type how many servers it acts on. */
const TYPED_COUNT_INTENTS: ReadonlySet<PlanIntent> = new Set<PlanIntent>([
  'reboot',
  'upgrade',
  'firmware',
]);

/**
 * How many servers the requester of this plan types (null: none): the nodes it acts on,
 * without those it skips.
 */
export function planTypedCount(
  intent: PlanIntent,
  acting: number,
): number | null {
  return TYPED_COUNT_INTENTS.has(intent) ? acting : null;
}

/** The plan pre-flight now (every node's impact from the apiserver), without a token. */
export async function computePlanPreflight(
  cluster: ClusterState,
  snap: ClusterSnapshot,
  scope: ServerReadScope,
  intent: PlanIntent,
  requested: Array<{ name: string; controlPlane: boolean }>,
  maxParallel: number,
  options: PreflightOptions,
  install: InstallRequest = {},
): Promise<PlanPreflightImpact> {
  // A node already at the target has no step: it takes no place among the maxParallel,
  // has no quorum effect and is not drained (the operator Skips it the same way).
  const skipped = skippedUpFront(snap, intent, install, requested);
  const skippedNames = new Set(skipped.map(n => n.node));
  const planned = requested.filter(n => !skippedNames.has(n.name));
  const steps = stepsFor(planned, maxParallel);
  const stepOf = new Map<string, number>();
  steps.forEach((names, i) => names.forEach(n => stepOf.set(n, i)));
  const current = await currentImpacts(
    cluster,
    snap,
    planned.map(n => n.name),
    intent,
    options,
  );
  const impacts = planned.map((n, i): PlanNodeImpact => {
    // The quorum numbers only for users who read every member (as the single one).
    const { token: _token, ...shown } = scope.preflightOf(snap, {
      ...current[i],
      token: '',
    });
    return {
      ...shown,
      controlPlane: n.controlPlane,
      step: stepOf.get(n.name)!,
    };
  });
  const byNode = new Map(impacts.map(i => [i.node, i]));
  const budgets = new Map<string, DrainBudget>();
  for (const impact of impacts) {
    for (const b of impact.budgets) {
      const key = `${b.namespace}/${b.name}`;
      const seen = budgets.get(key);
      // The budget once, blocking if it blocks any node's drain.
      budgets.set(
        key,
        seen ? { ...seen, blocksNow: seen.blocksNow || b.blocksNow } : b,
      );
    }
  }
  const planSteps: PlanPreflightStep[] = steps.map((names, index) => {
    const own = names.map(n => byNode.get(n)!);
    const worst =
      own.find(i => i.quorum.verdict === 'refuse') ??
      own.find(i => i.quorum.verdict === 'hazard') ??
      own[0];
    return {
      index,
      nodes: names,
      controlPlane: own.some(i => i.controlPlane),
      estimateSeconds: Math.max(0, ...own.map(i => i.estimate?.seconds ?? 0)),
      quorum: worst.quorum,
    };
  });
  const blockers = [
    ...impacts.flatMap(i => i.blockers.map(b => `${i.node}: ${b}`)),
    // The capability rule up front: the dialog says it before the ceremony is given.
    ...notOfferedOn(snap, intent, planned).map(
      n => `${n.name}: ${intent} is not offered (${n.reason})`,
    ),
    ...(planned.length === 0 && skipped.length > 0
      ? [`nothing to do: every server is ${skipped[0].reason}`]
      : []),
  ];
  return {
    cluster: cluster.name,
    intent,
    takenAt: new Date().toISOString(),
    maxParallel,
    ...(install.upgrade ? { image: install.upgrade.image } : {}),
    ...(install.firmware ? { imageURI: install.firmware.imageURI } : {}),
    ...(install.firmware?.version !== undefined
      ? { version: install.firmware.version }
      : {}),
    nodes: impacts,
    ...(skipped.length > 0 ? { skipped } : {}),
    steps: planSteps,
    budgets: [...budgets.values()],
    estimate: {
      seconds: planSteps.reduce((sum, s) => sum + s.estimateSeconds, 0),
    },
    typedCount: planTypedCount(intent, planned.length),
    canProceed: blockers.length === 0,
    blockers,
  };
}

/** The plan pre-flight with its token for `user`. */
export function signPlanPreflight(
  tokens: PreflightTokens,
  impact: PlanPreflightImpact,
  user: string,
): PlanPreflightResponse {
  return {
    ...impact,
    token: tokens.signDigest(planDigest(impact), impact.takenAt, user),
  };
}

/** The intent of a plan request; 400 for one that is not a plan's. */
export function planIntentOr400(intent: string): PlanIntent {
  if (!(PLAN_INTENTS as readonly string[]).includes(intent)) {
    throw new InputError(
      `intent must be one of ${PLAN_INTENTS.join(', ')}, got "${intent}"`,
    );
  }
  return intent as PlanIntent;
}

/** How many workers a plan takes at once: 1 unless asked, at most 100. */
export function maxParallelOr400(value: unknown): number {
  if (value === undefined) return 1;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < 1 ||
    value > 100
  ) {
    throw new InputError('maxParallel must be a whole number from 1 to 100');
  }
  return value;
}

/**
 * Parses the plan pre-flight query (`intent`, `nodes` comma-separated, `maxParallel`,
 * drain flags) and checks what needs no permission, in order: the flags, the intent,
 * how many at once, and how many servers (400 naming what is wrong).
 */
export function parsePlanPreflightQuery(
  query: Record<string, unknown>,
  flag: (value: unknown, name: string) => boolean,
): PlanPreflightQuery {
  const nodes =
    typeof query.nodes === 'string'
      ? query.nodes
          .split(',')
          .map(n => n.trim())
          .filter(Boolean)
      : [];
  let asked: number | undefined;
  if (query.maxParallel !== undefined) {
    asked = Number(query.maxParallel);
    if (!/^\d+$/.test(String(query.maxParallel))) {
      throw new InputError('maxParallel must be a whole number from 1 to 100');
    }
  }
  const alertGate = parseAlertGateQuery(query.alertGate);
  const options = {
    deleteEmptyDirData: flag(query.deleteEmptyDirData, 'deleteEmptyDirData'),
    force: flag(query.force, 'force'),
    allowNodeLocalData: flag(query.allowNodeLocalData, 'allowNodeLocalData'),
  };
  const intent = planIntentOr400(String(query.intent ?? ''));
  const install = planInstallQueryOr400(intent, query);
  const maxParallel = maxParallelOr400(asked);
  if (nodes.length === 0) {
    throw new InputError('nodes must name at least one server');
  }
  if (nodes.length > MAX_PLAN_NODES) {
    throw new InputError(`a plan takes at most ${MAX_PLAN_NODES} servers`);
  }
  return {
    intent,
    nodes,
    maxParallel,
    ...(alertGate ? { alertGate } : {}),
    options,
    install,
  };
}

/**
 * What the pre-flight of an upgrade plan (`image`) or a firmware plan (`imageURI`) is
 * asked for: required with its intent, refused with any other (400 naming the field).
 * Whether the deployment allows it is asked after the permissions, as for one node.
 */
function planInstallQueryOr400(
  intent: PlanIntent,
  query: Record<string, unknown>,
): InstallRequest {
  const fields = [
    { field: 'image', intent: 'upgrade', max: MAX_IMAGE_REFERENCE_LENGTH },
    { field: 'imageURI', intent: 'firmware', max: MAX_FIRMWARE_URI_LENGTH },
  ] as const;
  const values: Partial<Record<'image' | 'imageURI', string>> = {};
  for (const { field, intent: own, max } of fields) {
    const value = query[field];
    if (value === undefined) {
      if (intent === own) {
        throw new InputError(`${field} is required with intent ${own}`);
      }
      continue;
    }
    if (intent !== own) {
      throw new InputError(
        `${field} goes only with intent ${own}, not ${intent}`,
      );
    }
    if (typeof value !== 'string' || value.length === 0 || value.length > max) {
      throw new InputError(
        `${field} must be one string of 1 to ${max} characters`,
      );
    }
    values[field] = value;
  }
  if (values.imageURI !== undefined) {
    return {
      firmware: { imageURI: values.imageURI, ...firmwareQueryOr400(query) },
    };
  }
  for (const field of ['version', 'targets', 'checksum']) {
    if (query[field] !== undefined) {
      throw new InputError(
        `${field} goes only with intent firmware, not ${intent}`,
      );
    }
  }
  if (values.image !== undefined) return { upgrade: { image: values.image } };
  return {};
}

/**
 * A firmware plan pre-flight's `version` (what the image installs: the servers already at
 * it are skipped), `targets` (FirmwareInventory members, one parameter each) and `checksum`
 * (a source that requires one is refused without it, as the plan would be), all optional.
 */
function firmwareQueryOr400(query: Record<string, unknown>): {
  version?: string;
  targets?: string[];
  checksum?: string;
} {
  const { version, targets, checksum } = query;
  if (
    checksum !== undefined &&
    (typeof checksum !== 'string' || checksum.length > 128)
  ) {
    throw new InputError('checksum must be one string of sha256:<64 hex>');
  }
  const max = HEALTH_LIMITS.firmwareVersion;
  if (
    version !== undefined &&
    (typeof version !== 'string' ||
      version.length === 0 ||
      version.length > max)
  ) {
    throw new InputError(
      `version must be one string of 1 to ${max} characters`,
    );
  }
  let list: string[] | undefined;
  if (targets !== undefined) {
    // One parameter per target (`targets=a&targets=b`), each taken as it is: an id a BMC
    // wrote may hold a comma, which a comma-separated list would cut in two.
    const given: unknown[] = Array.isArray(targets) ? targets : [targets];
    if (
      given.length === 0 ||
      given.length > MAX_FIRMWARE_TARGETS ||
      given.some(t => typeof t !== 'string' || t.length === 0 || t.length > 512)
    ) {
      throw new InputError(
        `targets must name 1 to ${MAX_FIRMWARE_TARGETS} components, one targets parameter each`,
      );
    }
    list = given as string[];
  }
  return {
    ...(typeof version === 'string' ? { version } : {}),
    ...(list ? { targets: list } : {}),
    ...(typeof checksum === 'string' ? { checksum } : {}),
  };
}

/** The rung each node of a plan pre-flight puts its step on: what the plan records. */
export function acknowledgedRungs(
  preflight: PlanPreflightImpact,
): Record<string, PreflightCeremonyLevel> {
  return Object.fromEntries(
    preflight.nodes
      .filter(n => n.ceremony.level !== 'refused')
      .map(n => [n.node, n.ceremony.level as PreflightCeremonyLevel]),
  );
}

/** The hazard-rung nodes of a plan pre-flight whose names were not typed. */
export function missingHazardNames(
  preflight: Pick<PlanPreflightImpact, 'nodes'>,
  typedNames: readonly string[],
): string[] {
  const typed = new Set(typedNames.map(n => n.trim()));
  return preflight.nodes
    .filter(n => n.ceremony.level === 'hazard' && !typed.has(n.node))
    .map(n => n.node);
}

/**
 * The plan's nodes on which the channel does not offer the intent (its power verb, or an
 * upgrade or a firmware update: the capability rule a single request asks), and why.
 */
export function notOfferedOn(
  snap: ClusterSnapshot,
  intent: PlanIntent,
  planned: ReadonlyArray<{ name: string }>,
): Array<{ name: string; reason: string }> {
  const check = (name: string) => {
    const facts = factsOf(snap, name);
    if (intent === 'upgrade' || intent === 'firmware') {
      return installCheck(snap, intent, facts);
    }
    return isPowerVerb(intent)
      ? powerCheck(snap, intent as PowerVerb, facts)
      : undefined;
  };
  return planned.flatMap(n => {
    const answer = check(n.name);
    return !answer || answer.ok
      ? []
      : [{ name: n.name, reason: answer.reason }];
  });
}

/** The facts of one node of the snapshot (it exists: the plan's nodes were resolved). */
function factsOf(snap: ClusterSnapshot, name: string): NodeFacts {
  return snap.facts.find(f => f.name === name)!;
}
