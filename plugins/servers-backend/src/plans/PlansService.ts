/*
 * The maintenance plan routes (docs/architecture.md, "The backend"; docs/plans.md), once: the plans of a cluster
 * with per-node progress, the plan pre-flight (every node's single pre-flight, the steps,
 * the budgets, quorum per step, the estimate) with a token bound to all of it, the
 * request of a plan with its checks in order (servers:plan, body, reason policy, nodes,
 * the intent's permission on every node, the spec, ceremony, token, blockers), and
 * pause / resume / cancel. Every request is an auditor event at the plans' severity.
 * It reuses the servers feature's audited reads, per-node impact and tokens. The permission
 * checks are the caller's {@link PlanAccess} (AuthorizedPlansService), asked at the points
 * of that order.
 */
import type {
  AuditorService,
  LoggerService,
} from '@backstage/backend-plugin-api';
import {
  ConflictError,
  InputError,
  NotAllowedError,
  NotFoundError,
} from '@backstage/errors';
import {
  cutList,
  dataLossOptionsOf,
  HAZARD_TITLE,
  isPlanPaused,
  isPowerVerb,
  isTerminalPlanPhase,
  PLAN_AUTHORIZATION_DEFAULT_HOURS,
  PLAN_LIST_DEFAULT_LIMIT,
  PLAN_LIST_MAX_LIMIT,
  PLAN_LIST_STATES,
  PLAN_PREFLIGHT_TAKEN_AT,
  type PlanListQuery,
  type PlanListState,
  planAuthorizationAt,
  planRenewBodySchema,
  serverActionPermissions,
  type NodeFacts,
  type PowerVerb,
  type PreflightCeremonyLevel,
  maintenancePlanSpecSchema,
  PLAN_CONTROLS,
  MAX_PLAN_NODES,
  PLAN_INTENTS,
  planControlBodySchema,
  planRequestBodySchema,
  RACKSIDE_API_VERSION,
  resolvePlanNodes,
  type DrainBudget,
  type PlanControl,
  type PlanCounts,
  type PlanIntent,
  type PlanListResponse,
  type PlanNodeImpact,
  type PlanPreflightResponse,
  type PlanPreflightStep,
  type PlanResponse,
  type PlanStepResponse,
} from '@rackside/plugin-servers-common';
import type { Request } from 'express';
import crypto from 'node:crypto';
import { audited } from '../lib/audited';
import { parseRequestBody } from '../lib/requestBody';
import { PLAN_SEVERITY } from '../lib/auditSeverity';
import { PlanPreflightLimiter } from './preflightLimiter';
import {
  impactDigest,
  PreflightConflictError,
  type PreflightOptions,
} from '../servers/preflight';
import { checkReason } from '../lib/reasonPolicy';
import type { ServerReadScope } from '../servers/access';
import { currentImpacts } from '../servers/impact';
import type { PreflightTokens } from '../servers/preflight';
import { auditedRead, type ReadCall as CallContext } from '../lib/audited';
import type { ReasonPolicy } from '../lib/reasonPolicy';
import { clusterOr404 } from '../cluster/clusterRegistry';
import type { ClusterRegistry } from '../cluster/types';
import type { ClusterState, PlanObject } from '../cluster/types';
import {
  powerCheck,
  serverResourceOf,
  clusterSnapshot,
  type ClusterSnapshot,
} from '../servers/view';

/** The plan pre-flight without its token. */
export type PlanPreflightImpact = Omit<PlanPreflightResponse, 'token'>;

/** What the token of a plan pre-flight binds: every node's impact and the plan's shape. */
function planDigest(impact: PlanPreflightImpact): string {
  return crypto
    .createHash('sha256')
    .update(
      JSON.stringify({
        cluster: impact.cluster,
        intent: impact.intent,
        maxParallel: impact.maxParallel,
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

/** The nodes of a plan as the page shows them: status once resolved, else the spec's. */
function stepsOf(plan: PlanObject): PlanStepResponse[] {
  if (plan.status?.nodes?.length) {
    return plan.status.nodes.map(n => ({
      name: n.name,
      controlPlane: n.controlPlane ?? false,
      phase: n.phase,
      ...(n.maintenance ? { maintenance: n.maintenance } : {}),
      ...(n.startedAt ? { startedAt: n.startedAt } : {}),
      ...(n.endedAt ? { endedAt: n.endedAt } : {}),
      ...(n.message ? { message: n.message } : {}),
    }));
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

/** A plan as the routes answer it. */
export function planView(cluster: string, plan: PlanObject): PlanResponse {
  const steps = stepsOf(plan);
  const { spec, status } = plan;
  return {
    cluster,
    name: plan.metadata.name,
    intent: spec.intent,
    phase: status?.phase ?? 'Pending',
    ...(status?.message ? { message: status.message } : {}),
    maxParallel: spec.maxParallel ?? 1,
    reason: spec.reason,
    ...(spec.requestedBy ? { requestedBy: spec.requestedBy } : {}),
    ...(plan.metadata.creationTimestamp
      ? { createdAt: plan.metadata.creationTimestamp }
      : {}),
    nodes: steps,
    counts: status?.counts ?? countsOf(steps),
    ...(status?.waiting ? { waiting: status.waiting } : {}),
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
    ...(status?.startedAt ? { startedAt: status.startedAt } : {}),
    ...(status?.completedAt ? { completedAt: status.completedAt } : {}),
    ...(status?.estimate ? { estimate: status.estimate } : {}),
  };
}

type PlanPosition = Pick<PlanObject, 'metadata'>;

const newestFirst = (a: PlanPosition, b: PlanPosition) =>
  (b.metadata.creationTimestamp ?? '').localeCompare(
    a.metadata.creationTimestamp ?? '',
  ) || a.metadata.name.localeCompare(b.metadata.name);

/** The `continue` token after a plan: its place in the walk (creation, name). */
function planCursor(plan: PlanPosition): string {
  return Buffer.from(
    JSON.stringify([plan.metadata.creationTimestamp ?? '', plan.metadata.name]),
  ).toString('base64url');
}

/** The place a `continue` token names; 400 for one that is not ours. */
function planCursorOf(token: string): PlanPosition {
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

/** The steps a plan goes in: workers maxParallel at a time, then each control-plane member alone. */
function stepsFor(
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

/** A plan pre-flight request, parsed. */
export interface PlanPreflightQuery {
  intent: string;
  nodes: string[];
  maxParallel?: number;
  options: PreflightOptions;
}

/** The permission decisions of one caller, asked when the plan service needs them. */
export interface PlanAccess {
  /** Who the audit names. */
  actor: string;
  /** What `servers:read` lets the caller see; 403 when it is denied outright. */
  readScope(): Promise<ServerReadScope>;
  /** 403 unless the caller may plan maintenance (`servers:plan`). */
  requirePlan(): Promise<void>;
  /** 403 naming the nodes of `names` on which the intent's permission is refused. */
  requireIntentOnEvery(
    cluster: string,
    snap: ClusterSnapshot,
    intent: PlanIntent,
    names: string[],
  ): Promise<void>;
  /** The nodes of `names` on which the intent's permission is refused now. */
  refusedIntentOn(
    cluster: string,
    snap: ClusterSnapshot,
    intent: PlanIntent,
    names: string[],
  ): Promise<string[]>;
  /** 403 naming the nodes on which `servers:drain-data` is refused. */
  requireDrainDataOnEvery(
    cluster: string,
    snap: ClusterSnapshot,
    names: string[],
    options: readonly string[],
  ): Promise<void>;
}

/** The access of a user (a plan pre-flight, request or control needs one). */
export interface PlanUserAccess extends PlanAccess {
  user: string;
}

/** How many plan pre-flights a user may ask a minute unless app-config says otherwise. */
export const PLAN_PREFLIGHTS_PER_MINUTE_DEFAULT = 20;

/** The plans' own settings (`servers.plans` in app-config, config.ts). */
export interface PlansConfig {
  /** How long a plan's authorization lasts from its creation or renewal. */
  authorizationHours: number;
  /** Plan pre-flights (a plan request takes one) a user may ask a minute. */
  preflightsPerMinute: number;
}

/** What the plans service needs. No permission service: the decorator asks it. */
export interface PlansServiceOptions {
  clusters: ClusterRegistry;
  auditor: AuditorService;
  logger: LoggerService;
  reasonPolicy: ReasonPolicy;
  preflightTokens: PreflightTokens;
}

export class PlansService {
  private readonly preflights: PlanPreflightLimiter;

  constructor(
    private readonly options: PlansServiceOptions,
    private readonly config: PlansConfig = {
      authorizationHours: PLAN_AUTHORIZATION_DEFAULT_HOURS,
      preflightsPerMinute: PLAN_PREFLIGHTS_PER_MINUTE_DEFAULT,
    },
  ) {
    this.preflights = new PlanPreflightLimiter(config.preflightsPerMinute);
  }

  /** The cluster's plans this user may read: those whose every existing node is readable. */
  private async readablePlans(access: PlanAccess, cluster: ClusterState) {
    const scope = await access.readScope();
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
    return { scope, snap, plans: plans.filter(readable) };
  }

  async listPlans(
    access: PlanAccess,
    clusterName: string,
    query: PlanListQuery = {},
    call?: CallContext,
  ): Promise<PlanListResponse> {
    return auditedRead(
      this.options.auditor,
      access.actor,
      call,
      {
        read: 'plans',
        cluster: clusterName,
        ...(query.state ? { state: query.state } : {}),
      },
      async () => {
        const cluster = clusterOr404(this.options.clusters, clusterName);
        const after = query.continue ? planCursorOf(query.continue) : undefined;
        const limit = query.limit ?? PLAN_LIST_DEFAULT_LIMIT;
        const { plans } = await this.readablePlans(access, cluster);
        const walk = plans
          .filter(
            p =>
              !query.state ||
              isTerminalPlanPhase(p.status?.phase) ===
                (query.state === 'finished'),
          )
          .sort(newestFirst)
          .filter(p => !after || newestFirst(after, p) < 0);
        const page = walk.slice(0, limit);
        const last = page[page.length - 1];
        return {
          items: page.map(p => planView(cluster.name, p)),
          ...(walk.length > limit ? { continue: planCursor(last) } : {}),
        };
      },
    );
  }

  async getPlan(
    access: PlanAccess,
    clusterName: string,
    name: string,
    call?: CallContext,
  ): Promise<PlanResponse> {
    return auditedRead(
      this.options.auditor,
      access.actor,
      call,
      { read: 'plan', cluster: clusterName, plan: name },
      async () => {
        const cluster = clusterOr404(this.options.clusters, clusterName);
        const { plans } = await this.readablePlans(access, cluster);
        const plan = plans.find(p => p.metadata.name === name);
        if (!plan) {
          throw new NotFoundError(
            `no maintenance plan named ${name} in cluster ${cluster.name}`,
          );
        }
        return planView(cluster.name, plan);
      },
    );
  }

  /**
   * The nodes of a plan in the order they go, each one the user may read and that
   * exists (400 naming the others: hidden and absent read the same).
   */
  private planNodes(
    cluster: string,
    snap: ClusterSnapshot,
    filter: (s: ReturnType<typeof serverResourceOf>) => boolean,
    names: string[],
  ) {
    const visible = snap.nodes.filter(n =>
      filter(serverResourceOf(cluster, n)),
    );
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

  /** The plan pre-flight now (every node's impact from the apiserver), without a token. */
  private async computePlanPreflight(
    cluster: ClusterState,
    snap: ClusterSnapshot,
    scope: ServerReadScope,
    intent: PlanIntent,
    planned: Array<{ name: string; controlPlane: boolean }>,
    maxParallel: number,
    options: PreflightOptions,
  ): Promise<PlanPreflightImpact> {
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
    ];
    return {
      cluster: cluster.name,
      intent,
      takenAt: new Date().toISOString(),
      maxParallel,
      nodes: impacts,
      steps: planSteps,
      budgets: [...budgets.values()],
      estimate: {
        seconds: planSteps.reduce((sum, s) => sum + s.estimateSeconds, 0),
      },
      typedCount: intent === 'reboot' ? planned.length : null,
      canProceed: blockers.length === 0,
      blockers,
    };
  }

  private sign(
    impact: PlanPreflightImpact,
    user: string,
  ): PlanPreflightResponse {
    return {
      ...impact,
      token: this.options.preflightTokens.signDigest(
        planDigest(impact),
        impact.takenAt,
        user,
      ),
    };
  }

  /** `GET /clusters/:cluster/plans/preflight`: what the plan would do now, with its token. */
  async planPreflight(
    access: PlanUserAccess,
    clusterName: string,
    query: PlanPreflightQuery,
    call?: CallContext,
  ): Promise<PlanPreflightResponse> {
    return auditedRead(
      this.options.auditor,
      access.actor,
      call,
      {
        read: 'plan-preflight',
        cluster: clusterName,
        intent: query.intent,
        nodes: query.nodes.join(','),
      },
      async () => {
        const cluster = clusterOr404(this.options.clusters, clusterName);
        await access.requirePlan();
        const intent = this.intentOf(query.intent);
        const maxParallel = this.maxParallelOf(query.maxParallel);
        if (query.nodes.length === 0) {
          throw new InputError('nodes must name at least one server');
        }
        if (query.nodes.length > MAX_PLAN_NODES) {
          throw new InputError(
            `a plan takes at most ${MAX_PLAN_NODES} servers`,
          );
        }
        const scope = await access.readScope();
        const snap = await clusterSnapshot(cluster);
        const planned = this.planNodes(
          cluster.name,
          snap,
          scope.filter,
          query.nodes,
        );
        await access.requireIntentOnEvery(
          cluster.name,
          snap,
          intent,
          planned.map(n => n.name),
        );
        this.preflights.take(access.user);
        const impact = await this.computePlanPreflight(
          cluster,
          snap,
          scope,
          intent,
          planned,
          maxParallel,
          query.options,
        );
        return this.sign(impact, access.user);
      },
    );
  }

  private intentOf(intent: string): PlanIntent {
    if (!(PLAN_INTENTS as readonly string[]).includes(intent)) {
      throw new InputError(
        `intent must be one of ${PLAN_INTENTS.join(', ')}, got "${intent}"`,
      );
    }
    return intent as PlanIntent;
  }

  private maxParallelOf(value: unknown): number {
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
   * `POST /clusters/:cluster/plans`: every check, then the MaintenancePlan, with an
   * auditor event either way. Answers the plan's name; throws the `@backstage/errors`
   * error of the first check that fails (nothing written).
   */
  async createPlan(
    access: PlanUserAccess,
    clusterName: string,
    rawBody: unknown,
    httpRequest?: Request,
  ): Promise<{ name: string }> {
    const actor = access.user;
    const raw = (rawBody ?? {}) as Record<string, unknown>;
    const meta = {
      actor,
      action: 'create',
      intent: typeof raw.intent === 'string' ? raw.intent : '',
      reason: typeof raw.reason === 'string' ? raw.reason : '',
      cluster: clusterName,
      nodes: Array.isArray(raw.nodes) ? raw.nodes.join(',') : null,
      via: 'http',
    };
    return this.auditedPlanRequest(meta, httpRequest, async () => {
      const cluster = clusterOr404(this.options.clusters, clusterName);
      await access.requirePlan();
      const body = parseRequestBody(planRequestBodySchema, rawBody);
      const reasonProblem = checkReason(this.options.reasonPolicy, body.reason);
      if (reasonProblem) throw new InputError(reasonProblem);
      if ((body.nodes === undefined) === (body.selector === undefined)) {
        throw new InputError(
          'invalid request body: give exactly one of nodes and selector',
        );
      }
      const scope = await access.readScope();
      const snap = await clusterSnapshot(cluster);
      let names = body.nodes;
      if (!names) {
        // A selector is resolved here, once, among the servers the user may read: the
        // permission, the pre-flight and the plan cover exactly the same nodes.
        const selected = resolvePlanNodes(
          { selector: body.selector },
          snap.nodes
            .filter(n => scope.filter(serverResourceOf(cluster.name, n)))
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
      const planned = this.planNodes(cluster.name, snap, scope.filter, names);
      const plannedNames = planned.map(n => n.name);
      await access.requireIntentOnEvery(
        cluster.name,
        snap,
        body.intent,
        plannedNames,
      );
      const drain = {
        deleteEmptyDirData: body.drain?.deleteEmptyDirData === true,
        force: body.drain?.force === true,
        allowNodeLocalData: body.drain?.allowNodeLocalData === true,
      };
      const dataLoss = dataLossOptionsOf(drain);
      if (dataLoss.length > 0) {
        await access.requireDrainDataOnEvery(
          cluster.name,
          snap,
          plannedNames,
          dataLoss,
        );
      }
      // The capability rule, as a single reboot applies it: a plan whose steps the
      // channel cannot carry out is refused now, not step by step later.
      const notOffered = notOfferedOn(snap, body.intent, planned);
      if (notOffered.length > 0) {
        throw new InputError(
          `${body.intent} is not offered on ${cutList(
            notOffered.map(n => n.name),
          )}: ${notOffered[0].reason}`,
        );
      }
      const spec = {
        intent: body.intent,
        nodes: planned.map(n => n.name),
        ...(body.maxParallel !== undefined
          ? { maxParallel: body.maxParallel }
          : {}),
        ...(body.gates !== undefined ? { gates: body.gates } : {}),
        ...(body.window !== undefined ? { window: body.window } : {}),
        ...(body.failurePolicy !== undefined
          ? { failurePolicy: body.failurePolicy }
          : {}),
        drain,
        reason: body.reason.trim(),
        requestedBy: actor,
      };
      const checked = parseRequestBody(maintenancePlanSpecSchema, spec);
      const maxParallel = checked.maxParallel;

      // Ceremony: reason (above), the acknowledged pre-flight, and for reboots the count.
      const problems: string[] = [];
      if (!body.preflightToken) {
        problems.push('acknowledge the plan pre-flight (preflightToken).');
      }
      if (body.intent === 'reboot' && body.typedCount !== planned.length) {
        problems.push(
          `type the number of servers to reboot (${planned.length}) as typedCount.`,
        );
      }
      if (problems.length) {
        throw new InputError(`ceremony not met: ${problems.join(' ')}`);
      }
      const token = body.preflightToken!;

      this.preflights.take(actor);
      const current = await this.computePlanPreflight(
        cluster,
        snap,
        scope,
        body.intent,
        planned,
        maxParallel,
        drain,
      );
      // 400 for a token that is not ours, 409 with the new pre-flight if any of it changed.
      const { takenAt } = this.options.preflightTokens.verifyDigest(
        token,
        planDigest(current),
        actor,
        new Date(),
        () => this.sign(current, actor),
      );
      if (!current.canProceed) {
        throw new PreflightConflictError(
          current.blockers.join(' '),
          this.sign(current, actor),
        );
      }
      // Ceremony per step: a step at the hazard rung needs what a single hazard
      // request needs, its node's name typed (and the reason, typed above).
      const untyped = missingHazardNames(current, body.typedNames ?? []);
      if (untyped.length > 0) {
        throw new InputError(
          `ceremony not met: ${untyped.join(', ')} ${
            untyped.length === 1 ? 'consumes' : 'each consume'
          } the last of the quorum margin (${HAZARD_TITLE.toLowerCase()}): type each name in typedNames, and type the reason yourself.`,
        );
      }
      const name = planNameFor(body.intent, token);
      const used = () =>
        new PreflightConflictError(
          `this pre-flight token was used already (plan ${name}): a pre-flight acknowledges one request; review the current pre-flight and acknowledge it again`,
          this.sign(current, actor),
        );
      if (
        ((await cluster.plans?.()) ?? []).some(p => p.metadata.name === name)
      ) {
        throw used();
      }
      try {
        if (!cluster.createPlan) {
          throw new NotFoundError(
            `cluster ${cluster.name} does not serve maintenance plans`,
          );
        }
        await cluster.createPlan({
          apiVersion: RACKSIDE_API_VERSION,
          kind: 'MaintenancePlan',
          metadata: {
            name,
            annotations: { [PLAN_PREFLIGHT_TAKEN_AT]: takenAt },
          },
          spec: {
            ...checked,
            acknowledged: acknowledgedRungs(current),
            authorization: planAuthorizationAt(
              actor,
              new Date(),
              this.config.authorizationHours,
            ),
          },
        });
      } catch (error) {
        if (ConflictError.is(error)) throw used();
        throw error;
      }
      return { result: { name }, plan: name };
    });
  }

  /** `POST /clusters/:cluster/plans/:name/{pause,resume,cancel}`. */
  async controlPlan(
    access: PlanUserAccess,
    clusterName: string,
    name: string,
    control: string,
    rawBody: unknown,
    httpRequest?: Request,
  ): Promise<{ name: string }> {
    const actor = access.user;
    const raw = (rawBody ?? {}) as Record<string, unknown>;
    const meta = {
      actor,
      action: control,
      reason: typeof raw.reason === 'string' ? raw.reason : '',
      cluster: clusterName,
      plan: name,
      via: 'http',
    };
    return this.auditedPlanRequest(meta, httpRequest, async () => {
      if (!(PLAN_CONTROLS as readonly string[]).includes(control)) {
        throw new NotFoundError(
          `unknown plan control ${control}; controls are ${PLAN_CONTROLS.join(
            ', ',
          )}`,
        );
      }
      const cluster = clusterOr404(this.options.clusters, clusterName);
      await access.requirePlan();
      const body = parseRequestBody(planControlBodySchema, rawBody);
      const reasonProblem = checkReason(this.options.reasonPolicy, body.reason);
      if (reasonProblem) throw new InputError(reasonProblem);
      const { plans } = await this.readablePlans(access, cluster);
      if (!plans.some(p => p.metadata.name === name)) {
        throw new NotFoundError(
          `no maintenance plan named ${name} in cluster ${cluster.name}`,
        );
      }
      const at = new Date();
      await cluster.updatePlanSpec!(name, current =>
        controlled(current, control as PlanControl, {
          by: actor,
          reason: body.reason.trim(),
          at,
        }),
      );
      return { result: { name }, plan: name };
    });
  }

  /**
   * `POST /clusters/:cluster/plans/:name/renew`: the plan's authority checked again for
   * the caller (`servers:plan`, the intent's permission and, for data-loss drain options,
   * `servers:drain-data` on every node not yet started), then a new lease. Nodes the
   * caller may not act on: 403 naming them, nothing written; with `skipRefused: true` the
   * lease is renewed without them and their steps are Skipped.
   */
  async renewPlan(
    access: PlanUserAccess,
    clusterName: string,
    name: string,
    rawBody: unknown,
    httpRequest?: Request,
  ): Promise<{ name: string; until: string }> {
    const actor = access.user;
    const raw = (rawBody ?? {}) as Record<string, unknown>;
    const meta = {
      actor,
      action: 'renew',
      reason: typeof raw.reason === 'string' ? raw.reason : '',
      cluster: clusterName,
      plan: name,
      via: 'http',
    };
    return this.auditedPlanRequest(meta, httpRequest, async () => {
      const cluster = clusterOr404(this.options.clusters, clusterName);
      await access.requirePlan();
      const body = parseRequestBody(planRenewBodySchema, rawBody);
      const reasonProblem = checkReason(this.options.reasonPolicy, body.reason);
      if (reasonProblem) throw new InputError(reasonProblem);
      const { plans, snap } = await this.readablePlans(access, cluster);
      const plan = plans.find(p => p.metadata.name === name);
      if (!plan) {
        throw new NotFoundError(
          `no maintenance plan named ${name} in cluster ${cluster.name}`,
        );
      }
      if (isTerminalPlanPhase(plan.status?.phase) || plan.spec.cancel) {
        throw new ConflictError(
          `plan ${name} is ${
            plan.spec.cancel ? 'cancelled' : plan.status?.phase
          }: there is nothing to renew`,
        );
      }
      const notStarted = stepsOf(plan)
        .filter(s => s.phase === 'Pending')
        .map(s => s.name)
        .filter(n => !plan.spec.authorization?.excluded?.includes(n));
      const refused = await access.refusedIntentOn(
        cluster.name,
        snap,
        plan.spec.intent,
        notStarted,
      );
      const dataLoss = dataLossOptionsOf(plan.spec.drain);
      if (dataLoss.length > 0) {
        const rest = notStarted.filter(n => !refused.includes(n));
        await access.requireDrainDataOnEvery(
          cluster.name,
          snap,
          rest,
          dataLoss,
        );
      }
      if (refused.length > 0 && !body.skipRefused) {
        throw new NotAllowedError(
          `you may not ${plan.spec.intent} ${cutList(refused)} (${
            serverActionPermissions[plan.spec.intent].name
          }): renew with skipRefused to renew without them (their steps are skipped), or ask someone who may`,
        );
      }
      const authorization = planAuthorizationAt(
        actor,
        new Date(),
        this.config.authorizationHours,
        [...(plan.spec.authorization?.excluded ?? []), ...refused],
      );
      await cluster.updatePlanSpec!(name, current => {
        if (isTerminalPlanPhase(current.status?.phase) || current.spec.cancel) {
          throw new ConflictError(
            `plan ${name} ended while it was renewed: there is nothing to renew`,
          );
        }
        return { ...current.spec, authorization };
      });
      return { result: { name, until: authorization.until }, plan: name };
    });
  }

  /** Runs a plan request with its auditor event (`server-plan`, severity high). */
  private async auditedPlanRequest<T>(
    meta: Record<string, unknown>,
    httpRequest: Request | undefined,
    run: () => Promise<{ result: T; plan: string }>,
  ): Promise<T> {
    return audited(
      {
        auditor: this.options.auditor,
        eventId: 'server-plan',
        severityLevel: PLAN_SEVERITY,
        request: httpRequest,
        meta,
      },
      async record => {
        const { result, plan } = await run();
        record.extra.plan = plan;
        record.outcome = 'ok';
        return result;
      },
    );
  }
}

/** The spec after a pause, resume or cancel; 409 where it does not apply. */
export function controlled(
  plan: PlanObject,
  control: PlanControl,
  flag: { by: string; reason: string; at: Date },
): PlanObject['spec'] {
  const { spec, status } = plan;
  const phase = status?.phase;
  if (isTerminalPlanPhase(phase)) {
    throw new ConflictError(
      `plan ${plan.metadata.name} is ${phase}: there is nothing to ${control}`,
    );
  }
  if (spec.cancel) {
    throw new ConflictError(
      `plan ${plan.metadata.name} was cancelled by ${spec.cancel.by}`,
    );
  }
  const paused = isPlanPaused(spec);
  const stamp = (after?: string) => {
    // Later than the toggle it replaces (the CRD orders pauses and resumes by at).
    const floor = after ? Date.parse(after) + 1 : 0;
    return new Date(Math.max(flag.at.getTime(), floor)).toISOString();
  };
  switch (control) {
    case 'pause':
      if (paused) {
        throw new ConflictError(
          `plan ${plan.metadata.name} is paused already (by ${spec.pause!.by})`,
        );
      }
      return {
        ...spec,
        pause: {
          by: flag.by,
          reason: flag.reason,
          at: stamp(
            [spec.pause?.at, spec.resume?.at].filter(Boolean).sort().pop(),
          ),
        },
      };
    case 'resume':
      if (!paused) {
        throw new ConflictError(`plan ${plan.metadata.name} is not paused`);
      }
      return {
        ...spec,
        resume: { by: flag.by, reason: flag.reason, at: stamp(spec.pause!.at) },
      };
    case 'cancel':
    default:
      return {
        ...spec,
        cancel: {
          by: flag.by,
          reason: flag.reason,
          at: flag.at.toISOString(),
        },
      };
  }
}

/** Parses the plan pre-flight query (`intent`, `nodes` comma-separated, `maxParallel`, drain flags). */
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
  let maxParallel: number | undefined;
  if (query.maxParallel !== undefined) {
    maxParallel = Number(query.maxParallel);
    if (!/^\d+$/.test(String(query.maxParallel))) {
      throw new InputError('maxParallel must be a whole number from 1 to 100');
    }
  }
  return {
    intent: String(query.intent ?? ''),
    nodes,
    maxParallel,
    options: {
      deleteEmptyDirData: flag(query.deleteEmptyDirData, 'deleteEmptyDirData'),
      force: flag(query.force, 'force'),
      allowNodeLocalData: flag(query.allowNodeLocalData, 'allowNodeLocalData'),
    },
  };
}

/** The rung each node of a plan pre-flight puts its step on: what the plan records. */
function acknowledgedRungs(
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

/** The plan's nodes on which the channel does not offer the intent's power verb, and why. */
function notOfferedOn(
  snap: ClusterSnapshot,
  intent: PlanIntent,
  planned: ReadonlyArray<{ name: string }>,
): Array<{ name: string; reason: string }> {
  if (!isPowerVerb(intent)) return [];
  return planned.flatMap(n => {
    const check = powerCheck(snap, intent as PowerVerb, factsOf(snap, n.name));
    return check.ok ? [] : [{ name: n.name, reason: check.reason }];
  });
}

/** The facts of one node of the snapshot (it exists: the plan's nodes were resolved). */
function factsOf(snap: ClusterSnapshot, name: string): NodeFacts {
  return snap.facts.find(f => f.name === name)!;
}
