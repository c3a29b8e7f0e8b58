/*
 * The plans feature within what each call was granted (PlansService.ts): the reads from
 * the watch caches, the plan pre-flight, and the requests as commands (commands/). It
 * never asks the permission framework; a call without a grant is refused, so this
 * service is never reachable around AuthorizedPlansService. The cluster is the grant's
 * (the decorator found it by the name the reads also carry).
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import {
  isTerminalPlanPhase,
  PLAN_LIST_DEFAULT_LIMIT,
  type PlanListQuery,
  type PlanListResponse,
  type PlanPreflightResponse,
  type PlanResponse,
  type PlanCreatedResponse,
  type PlanRenewedResponse,
} from '@rackside/plugin-servers-common';
import { alertGatePreview } from './alertGatePreview';
import type { UserCredentials } from '../lib/credentials';
import { clusterSnapshot } from '../cluster/snapshot';
import { visibleNames } from '../access/visibleNames';
import { controlPlan } from './commands/controlPlan';
import { createPlan } from './commands/createPlan';
import { renewPlan } from './commands/renewPlan';
import { checkInstallSource, NO_UPGRADE_SOURCES } from '../lib/upgradeSources';
import {
  computePlanPreflight,
  planNodes,
  signPlanPreflight,
  type PlanPreflightQuery,
} from './planPreflight';
import type {
  ControlPlanCommand,
  CreatePlanCommand,
  PlanCallContext,
  PlanCommandContext,
  PlanGrant,
  PlansService,
  RenewPlanCommand,
} from './PlansService';
import {
  newestFirst,
  planCursor,
  planCursorOf,
  planView,
  readablePlanOr404,
  readablePlans,
} from './planView';

/** What the call was granted; none is a refusal (fail closed). */
function grantOf(call: PlanCallContext | undefined): PlanGrant {
  if (!call?.grant) {
    throw new NotAllowedError('no permission decision was made for this call');
  }
  return call.grant;
}

const userOf = (credentials: UserCredentials) =>
  credentials.principal.userEntityRef;

export class DefaultPlansService implements PlansService {
  constructor(private readonly ctx: PlanCommandContext) {}

  async listPlans(
    _credentials: BackstageCredentials,
    _cluster: string,
    query: PlanListQuery,
    call?: PlanCallContext,
  ): Promise<PlanListResponse> {
    const { scope, cluster } = grantOf(call);
    const after = query.continue ? planCursorOf(query.continue) : undefined;
    const limit = query.limit ?? PLAN_LIST_DEFAULT_LIMIT;
    const { plans, snap } = await readablePlans(scope, cluster);
    const names = visibleNames(scope, cluster.name, snap);
    const walk = plans
      .filter(
        p =>
          !query.state ||
          isTerminalPlanPhase(p.status?.phase) === (query.state === 'finished'),
      )
      .sort(newestFirst)
      .filter(p => !after || newestFirst(after, p) < 0);
    const page = walk.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: page.map(p => planView(cluster.name, p, names)),
      ...(walk.length > limit ? { continue: planCursor(last) } : {}),
    };
  }

  async getPlan(
    _credentials: BackstageCredentials,
    _cluster: string,
    name: string,
    call?: PlanCallContext,
  ): Promise<PlanResponse> {
    const { scope, cluster } = grantOf(call);
    const { plans, snap } = await readablePlans(scope, cluster);
    return planView(
      cluster.name,
      readablePlanOr404(plans, cluster.name, name),
      visibleNames(scope, cluster.name, snap),
    );
  }

  async planPreflight(
    credentials: UserCredentials,
    _cluster: string,
    query: PlanPreflightQuery,
    call?: PlanCallContext,
  ): Promise<PlanPreflightResponse> {
    const { scope, cluster } = grantOf(call);
    const { intent, maxParallel } = query;
    // What an upgrade or a firmware plan installs: the single request's rule and list.
    checkInstallSource(
      this.ctx.upgradeSources ?? NO_UPGRADE_SOURCES,
      query.install,
    );
    const snap = await clusterSnapshot(cluster);
    const planned = planNodes(cluster.name, snap, scope.filter, query.nodes);
    const user = userOf(credentials);
    this.ctx.preflights.take(user);
    const impact = await computePlanPreflight(
      cluster,
      snap,
      scope,
      intent,
      planned,
      maxParallel,
      query.options,
      query.install,
    );
    // Not bound by the token: alerts come and go, the gate reads them afresh at each step.
    const withAlerts = query.alertGate
      ? {
          ...impact,
          alerts: alertGatePreview(
            query.alertGate,
            snap.alerts,
            visibleNames(scope, cluster.name, snap),
          ),
        }
      : impact;
    return signPlanPreflight(this.ctx.preflightTokens, withAlerts, user);
  }

  async createPlan(
    credentials: UserCredentials,
    command: CreatePlanCommand,
    call?: PlanCallContext,
  ): Promise<PlanCreatedResponse> {
    return createPlan(this.ctx, userOf(credentials), command, grantOf(call));
  }

  async controlPlan(
    credentials: UserCredentials,
    command: ControlPlanCommand,
    call?: PlanCallContext,
  ): Promise<{ name: string }> {
    return controlPlan(this.ctx, userOf(credentials), command, grantOf(call));
  }

  async renewPlan(
    credentials: UserCredentials,
    command: RenewPlanCommand,
    call?: PlanCallContext,
  ): Promise<PlanRenewedResponse> {
    return renewPlan(this.ctx, userOf(credentials), command, grantOf(call));
  }
}
