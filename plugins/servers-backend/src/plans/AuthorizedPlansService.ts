/*
 * The permission checks of the plans feature, around the plans service (as
 * AuthorizedServersService guards the servers): an unknown cluster's 404 first, then
 * `servers:plan`, then the checks that name the nodes (an unknown node's 400 comes
 * before the intent's 403, so a 403 never names a server the caller cannot see), the
 * intent's permission and, for data-loss drain options, `servers:drain-data` on every
 * node. The request was parsed by the router (a body's 400 came first). It decides and
 * hands the cluster it found and the read scope (and, for a renewal, the refused nodes)
 * to the inner service with the call; the inner service never asks back.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import {
  dataLossOptionsOf,
  serverActionPermissions,
  serversDrainDataPermission,
  serversPlanPermission,
  type PlanIntent,
  type PlanListQuery,
  type PlanListResponse,
  type PlanPreflightResponse,
  type PlanResponse,
  type ServerPermission,
  type PlanCreatedResponse,
  type PlanRenewedResponse,
} from '@rackside/plugin-servers-common';
import { clusterOr404 } from '../cluster/clusterRegistry';
import type { ClusterRegistry } from '../cluster/types';
import type { ServerPermissions } from '../access/serverPermissions';
import type { UserCredentials } from '../lib/credentials';
import { clusterSnapshot } from '../cluster/snapshot';
import { serverResourceOf } from '../access/visibleNodes';
import { type ClusterSnapshot } from '../cluster/types';
import { notStartedNodes } from './commands/renewPlan';
import {
  planDrainOf,
  planNodes,
  requestedPlanNodes,
  type PlanPreflightQuery,
} from './planPreflight';
import type {
  ControlPlanCommand,
  CreatePlanCommand,
  PlanCallContext,
  PlanGrant,
  PlansService,
  RenewPlanCommand,
} from './PlansService';
import { readablePlans } from './planView';

export class AuthorizedPlansService implements PlansService {
  constructor(
    private readonly inner: PlansService,
    /** The servers' permission questions: the plans' read scope is `servers:read`. */
    private readonly permissions: ServerPermissions,
    private readonly clusters: ClusterRegistry,
  ) {}

  private async requirePlan(credentials: BackstageCredentials) {
    const [decision] = await this.permissions.permissions.authorize(
      [{ permission: serversPlanPermission }],
      { credentials },
    );
    if (decision.result !== AuthorizeResult.ALLOW) {
      throw new NotAllowedError(
        `you are not allowed to plan maintenance (${serversPlanPermission.name})`,
      );
    }
  }

  /**
   * The nodes of `names` on which `permission` is refused: one conditional decision,
   * applied to each node.
   */
  private async refusedOn(
    credentials: BackstageCredentials,
    permission: ServerPermission,
    cluster: string,
    snap: ClusterSnapshot,
    names: string[],
  ): Promise<string[]> {
    const [decision] = await this.permissions.permissions.authorizeConditional(
      [{ permission }],
      { credentials },
    );
    const allowed = (name: string) => {
      if (decision.result === AuthorizeResult.ALLOW) return true;
      if (decision.result === AuthorizeResult.DENY) return false;
      const node = snap.nodes.find(n => n.metadata?.name === name);
      return (
        node !== undefined &&
        this.permissions.applyConditions(
          decision as PolicyDecision,
          serverResourceOf(cluster, node),
        )
      );
    };
    return names.filter(name => !allowed(name));
  }

  /** The intent's permission on every node; 403 naming the nodes it refuses. */
  private async requireIntentOnEvery(
    credentials: BackstageCredentials,
    cluster: string,
    snap: ClusterSnapshot,
    intent: PlanIntent,
    names: string[],
  ) {
    const permission = serverActionPermissions[intent];
    const refused = await this.refusedOn(
      credentials,
      permission,
      cluster,
      snap,
      names,
    );
    if (refused.length) {
      throw new NotAllowedError(
        `you are not allowed to ${intent} ${refused.join(', ')} (${
          permission.name
        })`,
      );
    }
  }

  /** For data-loss drain options, `servers:drain-data` on every node; 403 naming them. */
  private async requireDrainDataOnEvery(
    credentials: BackstageCredentials,
    cluster: string,
    snap: ClusterSnapshot,
    names: string[],
    drain: Parameters<typeof dataLossOptionsOf>[0],
  ) {
    const options = dataLossOptionsOf(drain);
    if (options.length === 0) return;
    const refused = await this.refusedOn(
      credentials,
      serversDrainDataPermission,
      cluster,
      snap,
      names,
    );
    if (refused.length) {
      throw new NotAllowedError(
        `you are not allowed to drain ${refused.join(', ')} with ${options.join(
          ', ',
        )}: those options lose data (${serversDrainDataPermission.name})`,
      );
    }
  }

  private granted(call: PlanCallContext | undefined, grant: PlanGrant) {
    return { ...call, grant };
  }

  async listPlans(
    credentials: BackstageCredentials,
    clusterName: string,
    query: PlanListQuery,
    call?: PlanCallContext,
  ): Promise<PlanListResponse> {
    const cluster = clusterOr404(this.clusters, clusterName);
    const scope = await this.permissions.readScope(credentials);
    return this.inner.listPlans(
      credentials,
      clusterName,
      query,
      this.granted(call, { cluster, scope }),
    );
  }

  async getPlan(
    credentials: BackstageCredentials,
    clusterName: string,
    name: string,
    call?: PlanCallContext,
  ): Promise<PlanResponse> {
    const cluster = clusterOr404(this.clusters, clusterName);
    const scope = await this.permissions.readScope(credentials);
    return this.inner.getPlan(
      credentials,
      clusterName,
      name,
      this.granted(call, { cluster, scope }),
    );
  }

  async planPreflight(
    credentials: UserCredentials,
    clusterName: string,
    query: PlanPreflightQuery,
    call?: PlanCallContext,
  ): Promise<PlanPreflightResponse> {
    const cluster = clusterOr404(this.clusters, clusterName);
    await this.requirePlan(credentials);
    const scope = await this.permissions.readScope(credentials);
    const snap = await clusterSnapshot(cluster);
    const planned = planNodes(cluster.name, snap, scope.filter, query.nodes);
    await this.requireIntentOnEvery(
      credentials,
      cluster.name,
      snap,
      query.intent,
      planned.map(n => n.name),
    );
    return this.inner.planPreflight(
      credentials,
      clusterName,
      query,
      this.granted(call, { cluster, scope }),
    );
  }

  async createPlan(
    credentials: UserCredentials,
    command: CreatePlanCommand,
    call?: PlanCallContext,
  ): Promise<PlanCreatedResponse> {
    const cluster = clusterOr404(this.clusters, command.cluster);
    await this.requirePlan(credentials);
    const { body } = command;
    const scope = await this.permissions.readScope(credentials);
    const snap = await clusterSnapshot(cluster);
    const names = requestedPlanNodes(cluster.name, snap, scope, body).map(
      n => n.name,
    );
    await this.requireIntentOnEvery(
      credentials,
      cluster.name,
      snap,
      body.intent,
      names,
    );
    await this.requireDrainDataOnEvery(
      credentials,
      cluster.name,
      snap,
      names,
      planDrainOf(body),
    );
    return this.inner.createPlan(
      credentials,
      command,
      this.granted(call, { cluster, scope }),
    );
  }

  async controlPlan(
    credentials: UserCredentials,
    command: ControlPlanCommand,
    call?: PlanCallContext,
  ): Promise<{ name: string }> {
    const cluster = clusterOr404(this.clusters, command.cluster);
    await this.requirePlan(credentials);
    const scope = await this.permissions.readScope(credentials);
    return this.inner.controlPlan(
      credentials,
      command,
      this.granted(call, { cluster, scope }),
    );
  }

  /**
   * A renewal is checked again for the caller on every node not yet started: the
   * intent's refusals go to the service (a 403, or skipped with `skipRefused`), a
   * data-loss drain option refused on any other node is a 403 here.
   */
  async renewPlan(
    credentials: UserCredentials,
    command: RenewPlanCommand,
    call?: PlanCallContext,
  ): Promise<PlanRenewedResponse> {
    const cluster = clusterOr404(this.clusters, command.cluster);
    await this.requirePlan(credentials);
    const scope = await this.permissions.readScope(credentials);
    const { plans, snap } = await readablePlans(scope, cluster);
    const plan = plans.find(p => p.metadata.name === command.plan);
    let refused: string[] = [];
    if (plan) {
      const notStarted = notStartedNodes(plan);
      refused = await this.refusedOn(
        credentials,
        serverActionPermissions[plan.spec.intent],
        cluster.name,
        snap,
        notStarted,
      );
      await this.requireDrainDataOnEvery(
        credentials,
        cluster.name,
        snap,
        notStarted.filter(n => !refused.includes(n)),
        plan.spec.drain,
      );
    }
    // An unknown plan is the service's 404, after the reason's 400.
    return this.inner.renewPlan(
      credentials,
      command,
      this.granted(call, { cluster, scope, refused }),
    );
  }
}
