/*
 * The permission checks of the maintenance plan routes, around PlansService (as
 * AuthorizedServersService guards ServersService): `servers:plan` and the intent's
 * permission on every node of a plan are asked here, with the caller's credentials, and
 * `servers:read` through the servers' own checks. They reach the service as a
 * {@link PlanAccess}, which it asks where its order of checks says (an unknown cluster's
 * 404 before `servers:plan`'s 403, that 403 before the body's 400, an unknown node's 400
 * before the intent's 403), so every answer is the same as when the service asked the
 * permission framework itself.
 */
import type {
  BackstageCredentials,
  BackstageUserPrincipal,
} from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import {
  serverActionPermissions,
  serversDrainDataPermission,
  serversPlanPermission,
  type ServerPermission,
  type PlanIntent,
  type PlanListQuery,
  type PlanListResponse,
  type PlanPreflightResponse,
  type PlanResponse,
} from '@rackside/plugin-servers-common';
import type { Request } from 'express';
import { actorOf, type ReadCall as CallContext } from '../lib/audited';
import type { ServerPermissions } from '../servers/serverPermissions';
import { serverResourceOf, type ClusterSnapshot } from '../servers/view';
import type {
  PlanAccess,
  PlanPreflightQuery,
  PlansService,
  PlanUserAccess,
} from './PlansService';

export class AuthorizedPlansService {
  constructor(
    /** The servers' permission questions: the plans' read scope is `servers:read`. */
    private readonly options: ServerPermissions,
    /** The service the checks guard. */
    readonly service: PlansService,
  ) {}

  private async requirePlan(credentials: BackstageCredentials) {
    const [decision] = await this.options.permissions.authorize(
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
    const [decision] = await this.options.permissions.authorizeConditional(
      [{ permission }],
      { credentials },
    );
    const allowed = (name: string) => {
      if (decision.result === AuthorizeResult.ALLOW) return true;
      if (decision.result === AuthorizeResult.DENY) return false;
      const node = snap.nodes.find(n => n.metadata?.name === name);
      return (
        node !== undefined &&
        this.options.applyConditions(
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

  /** `servers:drain-data` on every node; 403 naming the options and the nodes. */
  private async requireDrainDataOnEvery(
    credentials: BackstageCredentials,
    cluster: string,
    snap: ClusterSnapshot,
    names: string[],
    options: readonly string[],
  ) {
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

  private accessOf(credentials: BackstageCredentials): PlanAccess {
    return {
      actor: actorOf(credentials),
      readScope: () => this.options.readScope(credentials),
      requirePlan: () => this.requirePlan(credentials),
      requireIntentOnEvery: (cluster, snap, intent, names) =>
        this.requireIntentOnEvery(credentials, cluster, snap, intent, names),
      refusedIntentOn: (cluster, snap, intent, names) =>
        this.refusedOn(
          credentials,
          serverActionPermissions[intent],
          cluster,
          snap,
          names,
        ),
      requireDrainDataOnEvery: (cluster, snap, names, options) =>
        this.requireDrainDataOnEvery(
          credentials,
          cluster,
          snap,
          names,
          options,
        ),
    };
  }

  private userAccessOf(
    credentials: BackstageCredentials<BackstageUserPrincipal>,
  ): PlanUserAccess {
    return {
      ...this.accessOf(credentials),
      user: credentials.principal.userEntityRef,
    };
  }

  listPlans(
    credentials: BackstageCredentials,
    clusterName: string,
    query: PlanListQuery = {},
    call?: CallContext,
  ): Promise<PlanListResponse> {
    return this.service.listPlans(
      this.accessOf(credentials),
      clusterName,
      query,
      call,
    );
  }

  getPlan(
    credentials: BackstageCredentials,
    clusterName: string,
    name: string,
    call?: CallContext,
  ): Promise<PlanResponse> {
    return this.service.getPlan(
      this.accessOf(credentials),
      clusterName,
      name,
      call,
    );
  }

  planPreflight(
    credentials: BackstageCredentials<BackstageUserPrincipal>,
    clusterName: string,
    query: PlanPreflightQuery,
    call?: CallContext,
  ): Promise<PlanPreflightResponse> {
    return this.service.planPreflight(
      this.userAccessOf(credentials),
      clusterName,
      query,
      call,
    );
  }

  createPlan(
    credentials: BackstageCredentials<BackstageUserPrincipal>,
    clusterName: string,
    rawBody: unknown,
    httpRequest?: Request,
  ): Promise<{ name: string }> {
    return this.service.createPlan(
      this.userAccessOf(credentials),
      clusterName,
      rawBody,
      httpRequest,
    );
  }

  controlPlan(
    credentials: BackstageCredentials<BackstageUserPrincipal>,
    clusterName: string,
    name: string,
    control: string,
    rawBody: unknown,
    httpRequest?: Request,
  ): Promise<{ name: string }> {
    return this.service.controlPlan(
      this.userAccessOf(credentials),
      clusterName,
      name,
      control,
      rawBody,
      httpRequest,
    );
  }

  renewPlan(
    credentials: BackstageCredentials<BackstageUserPrincipal>,
    clusterName: string,
    name: string,
    rawBody: unknown,
    httpRequest?: Request,
  ): Promise<{ name: string; until: string }> {
    return this.service.renewPlan(
      this.userAccessOf(credentials),
      clusterName,
      name,
      rawBody,
      httpRequest,
    );
  }
}
