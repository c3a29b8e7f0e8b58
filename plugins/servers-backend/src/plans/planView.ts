/*
 * A plan as the routes answer it, the list's order and paging, and which plans a caller
 * may read: those whose every existing node is readable.
 */
import { InputError, NotFoundError } from '@backstage/errors';
import {
  isPlanPaused,
  planUpgradeSummary,
  PLAN_LIST_MAX_LIMIT,
  PLAN_LIST_STATES,
  type PlanCounts,
  type PlanListQuery,
  type PlanListState,
  type PlanResponse,
  type PlanStepResponse,
} from '@rackside/plugin-servers-common';
import type { ClusterState, PlanObject } from '../cluster/types';
import type { ServerReadScope } from '../access/serverGrant';
import { clusterSnapshot } from '../cluster/snapshot';
import { serverResourceOf } from '../access/visibleNodes';
import {
  visibleNamesOfEveryServer,
  type VisibleNames,
} from '../access/visibleNames';

/**
 * A step's versions before and after, field by field: the status is whoever wrote it
 * (kubectl too), so nothing it holds beside the two reaches the browser. Undefined when
 * neither is known.
 */
function versionPairOf(
  pair: { before?: string; after?: string } | undefined,
): { before?: string; after?: string } | undefined {
  if (!pair?.before && !pair?.after) return undefined;
  return {
    ...(pair.before ? { before: pair.before } : {}),
    ...(pair.after ? { after: pair.after } : {}),
  };
}

/** The nodes of a plan as the page shows them: status once resolved, else the spec's. */
export function stepsOf(plan: PlanObject): PlanStepResponse[] {
  if (plan.status?.nodes?.length) {
    return plan.status.nodes.map(n => {
      const talosVersion = versionPairOf(n.talosVersion);
      const firmwareVersion = versionPairOf(n.firmwareVersion);
      return {
        name: n.name,
        controlPlane: n.controlPlane ?? false,
        phase: n.phase,
        ...(n.maintenance ? { maintenance: n.maintenance } : {}),
        ...(n.startedAt ? { startedAt: n.startedAt } : {}),
        ...(n.endedAt ? { endedAt: n.endedAt } : {}),
        ...(n.message ? { message: n.message } : {}),
        ...(talosVersion ? { talosVersion } : {}),
        ...(firmwareVersion ? { firmwareVersion } : {}),
      };
    });
  }
  return (plan.spec.nodes ?? []).map(name => ({
    name,
    controlPlane: false,
    phase: 'Pending',
  }));
}

function countsOf(steps: PlanStepResponse[]): PlanCounts {
  const count = (phase: string) => steps.filter(s => s.phase === phase).length;
  return {
    total: steps.length,
    pending: count('Pending'),
    running: count('Running'),
    done: count('Done'),
    failed: count('Failed'),
    refused: count('Refused'),
    skipped: count('Skipped'),
  };
}

/**
 * A plan as the routes answer it, its messages as the reader may read them (`names`): the
 * operator's words name alerts of any server (the alert gate looks at the whole cluster).
 */
export function planView(
  cluster: string,
  plan: PlanObject,
  names: VisibleNames = visibleNamesOfEveryServer,
): PlanResponse {
  const said = (text: string) => names.text(text).text;
  const steps = stepsOf(plan).map(s =>
    s.message ? { ...s, message: said(s.message) } : s,
  );
  const { spec, status } = plan;
  // The operator's count, from the same rule over the same steps.
  const versions = planUpgradeSummary(spec, steps);
  return {
    cluster,
    name: plan.metadata.name,
    intent: spec.intent,
    ...(spec.upgrade
      ? {
          upgrade: {
            image: spec.upgrade.image,
            ...(spec.upgrade.stage !== undefined
              ? { stage: spec.upgrade.stage }
              : {}),
          },
        }
      : {}),
    ...(spec.firmware
      ? {
          firmware: {
            imageURI: spec.firmware.imageURI,
            ...(spec.firmware.targets
              ? { targets: spec.firmware.targets }
              : {}),
            ...(spec.firmware.applyTime
              ? { applyTime: spec.firmware.applyTime }
              : {}),
            ...(spec.firmware.version
              ? { version: spec.firmware.version }
              : {}),
            ...(spec.firmware.checksum
              ? { checksum: spec.firmware.checksum }
              : {}),
          },
        }
      : {}),
    ...(versions ? { versions } : {}),
    phase: status?.phase ?? 'Pending',
    ...(status?.message ? { message: said(status.message) } : {}),
    maxParallel: spec.maxParallel ?? 1,
    reason: spec.reason,
    ...(spec.requestedBy ? { requestedBy: spec.requestedBy } : {}),
    ...(plan.metadata.creationTimestamp
      ? { createdAt: plan.metadata.creationTimestamp }
      : {}),
    nodes: steps,
    counts: status?.counts ?? countsOf(steps),
    ...(status?.waiting
      ? {
          waiting: {
            ...status.waiting,
            message: said(status.waiting.message),
          },
        }
      : {}),
    ...(spec.gates ? { gates: spec.gates } : {}),
    ...(spec.window ? { window: spec.window } : {}),
    failurePolicy: { tolerate: spec.failurePolicy?.tolerate ?? 0 },
    onCancel: spec.onCancel ?? 'finish',
    paused: isPlanPaused(spec),
    ...(spec.pause ? { pause: spec.pause } : {}),
    ...(spec.resume ? { resume: spec.resume } : {}),
    ...(spec.cancel ? { cancel: spec.cancel } : {}),
    ...(spec.authorization ? { authorization: spec.authorization } : {}),
    ...(spec.acknowledged ? { acknowledged: spec.acknowledged } : {}),
    ...(spec.acknowledgements
      ? { acknowledgements: spec.acknowledgements }
      : {}),
    ...(spec.drain ? { drain: spec.drain } : {}),
    ...(status?.startedAt ? { startedAt: status.startedAt } : {}),
    ...(status?.completedAt ? { completedAt: status.completedAt } : {}),
    ...(status?.estimate ? { estimate: status.estimate } : {}),
  };
}

type PlanPosition = Pick<PlanObject, 'metadata'>;

export const newestFirst = (a: PlanPosition, b: PlanPosition) =>
  (b.metadata.creationTimestamp ?? '').localeCompare(
    a.metadata.creationTimestamp ?? '',
  ) || a.metadata.name.localeCompare(b.metadata.name);

/** The `continue` token after a plan: its place in the walk (creation, name). */
export function planCursor(plan: PlanPosition): string {
  return Buffer.from(
    JSON.stringify([plan.metadata.creationTimestamp ?? '', plan.metadata.name]),
  ).toString('base64url');
}

/** The place a `continue` token names; 400 for one that is not ours. */
export function planCursorOf(token: string): PlanPosition {
  try {
    const [at, name] = JSON.parse(
      Buffer.from(token, 'base64url').toString('utf8'),
    );
    if (typeof at === 'string' && typeof name === 'string' && name) {
      return { metadata: { name, creationTimestamp: at } };
    }
  } catch {
    // not JSON: the same answer as a token of the wrong shape
  }
  throw new InputError(
    'continue is not a token of this list: start again without it',
  );
}

/** Parses the plans list's query (`limit`, `continue`, `state`); 400 naming what is wrong. */
export function parsePlanListQuery(
  query: Record<string, unknown>,
): PlanListQuery {
  const parsed: PlanListQuery = {};
  if (query.limit !== undefined) {
    const limit = Number(query.limit);
    if (
      !/^\d+$/.test(String(query.limit)) ||
      limit < 1 ||
      limit > PLAN_LIST_MAX_LIMIT
    ) {
      throw new InputError(
        `limit must be a whole number from 1 to ${PLAN_LIST_MAX_LIMIT}`,
      );
    }
    parsed.limit = limit;
  }
  if (query.continue !== undefined) {
    if (typeof query.continue !== 'string' || !query.continue) {
      throw new InputError('continue must be the token of the previous page');
    }
    planCursorOf(query.continue);
    parsed.continue = query.continue;
  }
  if (query.state !== undefined) {
    if (!(PLAN_LIST_STATES as readonly unknown[]).includes(query.state)) {
      throw new InputError(
        `state must be one of ${PLAN_LIST_STATES.join(', ')}`,
      );
    }
    parsed.state = query.state as PlanListState;
  }
  return parsed;
}

/** The cluster's plans the caller may read (every existing node readable), and its snapshot. */
export async function readablePlans(
  scope: ServerReadScope,
  cluster: ClusterState,
) {
  const [snap, plans] = await Promise.all([
    clusterSnapshot(cluster),
    cluster.plans?.() ?? Promise.resolve([]),
  ]);
  const byName = new Map(snap.nodes.map(n => [n.metadata?.name ?? '', n]));
  const readable = (plan: PlanObject) =>
    stepsOf(plan).every(step => {
      const node = byName.get(step.name);
      return !node || scope.filter(serverResourceOf(cluster.name, node));
    });
  return { snap, plans: plans.filter(readable) };
}

/** A readable plan of the cluster, or 404 (hidden and absent are the same). */
export function readablePlanOr404(
  plans: PlanObject[],
  cluster: string,
  name: string,
): PlanObject {
  const plan = plans.find(p => p.metadata.name === name);
  if (!plan) {
    throw new NotFoundError(
      `no maintenance plan named ${name} in cluster ${cluster}`,
    );
  }
  return plan;
}
