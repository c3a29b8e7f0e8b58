/*
 * The permission checks of the servers routes and actions, around ServersService (as
 * Backstage's catalog wraps its entities catalog): `servers:read` and the per-action
 * permissions are asked here, with the caller's credentials, and handed to the service
 * as a {@link ServerAccess}: the read scope, the per-server decisions of a list, and
 * the check of one action on one server. The service asks for each where its order of
 * checks says (a 404 for an unknown cluster before a 403, the body's 400 before the
 * read scope), so every answer is the same as when the two were one class.
 */
import type {
  BackstageCredentials,
  BackstageUserPrincipal,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import {
  SERVER_ACTIONS,
  serverActionPermissions,
  serversDrainDataPermission,
  serversReadPermission,
  type ClusterListResponse,
  type MaintenanceListResponse,
  type MaintenanceResponse,
  type PreflightResponse,
  type ServerAction,
  type ServerListResponse,
  type ServerResponse,
} from '@rackside/plugin-servers-common';
import {
  serverResourceRefOf,
  type NodeObject,
  type ServerResource,
} from '@rackside/plugin-servers-node';
import type { Request } from 'express';
import type { PreflightOptions } from './preflight';
import { decidedKey, ReadScope } from './readScope';
import type { ServerListQuery } from './serverList';
import type { PreparedJson } from './ServerListCache';
import { serverResourceOf } from './view';
import {
  DEFAULT_READ_DECISION_REUSE_MS,
  readDecisionKeyOf,
  ReuseWindow,
} from './readDecisions';
import {
  actorOf,
  ServersService,
  type ActionRequest,
  type CallContext,
  type ServersServiceOptions,
} from './ServersService';

import type {
  ServerAccess,
  ServerDecisions,
  ServerReadScope,
  UserAccess,
} from './access';

export type { ServerAccess, ServerDecisions, ServerReadScope, UserAccess };

/** What the permission checks of the servers (and plans) routes ask with. */
export interface ServerPermissionOptions {
  permissions: PermissionsService;
  /** Applies a conditional decision of `servers:*` to one server. */
  applyConditions: (
    decision: PolicyDecision,
    resource: ServerResource | undefined,
  ) => boolean;
  /**
   * How long a user's read decisions are reused (`servers.readDecisionReuseMs`,
   * readDecisions.ts); 0 asks for every read. Actions are always asked afresh.
   */
  readDecisionReuseMs?: number;
  /** The clock of that reuse (tests). */
  now?: () => number;
}

/** The options of the service and of the checks around it. */
export type AuthorizedServersServiceOptions = ServersServiceOptions &
  ServerPermissionOptions;

/** The service's own options: the same without what only the checks use. */
function serviceOptionsOf({
  permissions: _permissions,
  applyConditions: _applyConditions,
  readDecisionReuseMs: _readDecisionReuseMs,
  now: _now,
  ...options
}: AuthorizedServersServiceOptions): ServersServiceOptions {
  return options;
}

/** What a read asks: `servers:read`, then each action's permission in SERVER_ACTIONS order. */
const READ_QUESTIONS = [
  { permission: serversReadPermission },
  ...SERVER_ACTIONS.map(action => ({
    permission: serverActionPermissions[action],
  })),
];

export class AuthorizedServersService {
  private readonly permissions: PermissionsService;
  private readonly applyConditions: ServerPermissionOptions['applyConditions'];
  /** `servers:read` and each action's decision, per user, for reads (READ_QUESTIONS). */
  private readonly readDecisions: ReuseWindow<PolicyDecision[]>;

  constructor(
    options: AuthorizedServersServiceOptions,
    /** The service the checks guard. */
    readonly service: ServersService = new ServersService(
      serviceOptionsOf(options),
    ),
  ) {
    this.permissions = options.permissions;
    this.applyConditions = options.applyConditions;
    this.readDecisions = new ReuseWindow(
      options.readDecisionReuseMs ?? DEFAULT_READ_DECISION_REUSE_MS,
      options.now,
    );
  }

  /**
   * `servers:read` and one conditional decision per action, asked in one call (nine
   * decisions, whatever the number of servers) and reused for a user's burst of reads
   * (readDecisions.ts): `/clusters` asks them, and the page's first window right after
   * reuses them. One authorize() item per server and action would grow the permission
   * request past what the permission backend accepts (413 above about 65 servers).
   */
  private askReadDecisions(
    credentials: BackstageCredentials,
  ): Promise<PolicyDecision[]> {
    return this.readDecisions.get(readDecisionKeyOf(credentials), () =>
      this.permissions.authorizeConditional(READ_QUESTIONS, { credentials }),
    );
  }

  /** What `servers:read` lets the caller see; 403 when it is denied outright. */
  async readScope(credentials: BackstageCredentials): Promise<ServerReadScope> {
    const [read] = await this.askReadDecisions(credentials);
    return this.scopeOf(read);
  }

  private scopeOf(decision: PolicyDecision): ServerReadScope {
    const filter = this.readFilterOf(decision);
    const scope = new ReadScope(
      decision,
      decision.result === AuthorizeResult.ALLOW
        ? () => true
        : (cluster, node) => filter(serverResourceOf(cluster, node)),
    );
    return Object.assign(scope, { filter });
  }

  private readFilterOf(
    decision: PolicyDecision,
  ): (server: ServerResource) => boolean {
    if (decision.result === AuthorizeResult.DENY) {
      throw new NotAllowedError(
        `you are not allowed to read servers (${serversReadPermission.name})`,
      );
    }
    if (decision.result === AuthorizeResult.ALLOW) {
      return () => true;
    }
    return server => this.applyConditions(decision, server);
  }

  /** What a user may see and do on the servers of one cluster, from its read decisions. */
  private async serverDecisions(
    credentials: BackstageCredentials,
    cluster: string,
  ): Promise<ServerDecisions> {
    const decisions = await this.askReadDecisions(credentials);
    const [read, ...perAction] = decisions;
    const scope = this.scopeOf(read);
    const byAction = new Map(
      SERVER_ACTIONS.map((action, i) => [action, perAction[i]]),
    );
    return {
      // What was decided, not the permission client's per-request ids (with them
      // every request had a key of its own: no row, listing or walk was ever reused).
      key: decidedKey(decisions),
      scope,
      readable: (node: NodeObject) => scope.readable(cluster, node),
      allowed: (node: NodeObject, action: ServerAction) => {
        const decision = byAction.get(action);
        if (!decision || decision.result === AuthorizeResult.DENY) return false;
        if (decision.result === AuthorizeResult.ALLOW) return true;
        return this.applyConditions(decision, serverResourceOf(cluster, node));
      },
    };
  }

  /** Authorises one action on one server; 403 naming the permission otherwise. */
  private async requireAction(
    credentials: BackstageCredentials,
    cluster: string,
    nodeName: string,
    action: ServerAction,
  ) {
    const [decision] = await this.permissions.authorize(
      [
        {
          permission: serverActionPermissions[action],
          resourceRef: serverResourceRefOf(cluster, nodeName),
        },
      ],
      { credentials },
    );
    if (decision.result !== AuthorizeResult.ALLOW) {
      throw new NotAllowedError(
        `you are not allowed to ${action} ${nodeName} (${serverActionPermissions[action].name})`,
      );
    }
  }

  /** Authorises a drain option that loses data on one server; 403 otherwise. */
  private async requireDrainData(
    credentials: BackstageCredentials,
    cluster: string,
    nodeName: string,
    options: readonly string[],
  ) {
    const [decision] = await this.permissions.authorize(
      [
        {
          permission: serversDrainDataPermission,
          resourceRef: serverResourceRefOf(cluster, nodeName),
        },
      ],
      { credentials },
    );
    if (decision.result !== AuthorizeResult.ALLOW) {
      throw new NotAllowedError(
        `you are not allowed to drain ${nodeName} with ${options.join(
          ', ',
        )}: those options lose data (${serversDrainDataPermission.name})`,
      );
    }
  }

  private accessOf(credentials: BackstageCredentials): ServerAccess {
    return {
      actor: actorOf(credentials),
      readScope: () => this.readScope(credentials),
      decisions: cluster => this.serverDecisions(credentials, cluster),
      requireAction: (cluster, node, action) =>
        this.requireAction(credentials, cluster, node, action),
      requireDrainData: (cluster, node, options) =>
        this.requireDrainData(credentials, cluster, node, options),
    };
  }

  private userAccessOf(
    credentials: BackstageCredentials<BackstageUserPrincipal>,
  ): UserAccess {
    return {
      ...this.accessOf(credentials),
      user: credentials.principal.userEntityRef,
    };
  }

  listClusters(
    credentials: BackstageCredentials,
    call?: CallContext,
  ): Promise<ClusterListResponse> {
    return this.service.listClusters(this.accessOf(credentials), call);
  }

  listServersJson(
    credentials: BackstageCredentials,
    clusterName: string,
    query?: ServerListQuery,
    call?: CallContext,
  ): Promise<PreparedJson> {
    return this.service.listServersJson(
      this.accessOf(credentials),
      clusterName,
      query,
      call,
    );
  }

  listServers(
    credentials: BackstageCredentials,
    clusterName: string,
    call?: CallContext,
  ): Promise<ServerListResponse> {
    return this.service.listServers(
      this.accessOf(credentials),
      clusterName,
      call,
    );
  }

  getServer(
    credentials: BackstageCredentials,
    clusterName: string,
    nodeName: string,
    call?: CallContext,
  ): Promise<ServerResponse> {
    return this.service.getServer(
      this.accessOf(credentials),
      clusterName,
      nodeName,
      call,
    );
  }

  listMaintenances(
    credentials: BackstageCredentials,
    clusterName: string,
    nodeFilter?: string,
    call?: CallContext,
  ): Promise<MaintenanceListResponse> {
    return this.service.listMaintenances(
      this.accessOf(credentials),
      clusterName,
      nodeFilter,
      call,
    );
  }

  getMaintenance(
    credentials: BackstageCredentials,
    clusterName: string,
    name: string,
    call?: CallContext,
  ): Promise<MaintenanceResponse> {
    return this.service.getMaintenance(
      this.accessOf(credentials),
      clusterName,
      name,
      call,
    );
  }

  preflight(
    credentials: BackstageCredentials<BackstageUserPrincipal>,
    clusterName: string,
    nodeName: string,
    action: string,
    drainOptions: PreflightOptions,
    call?: CallContext,
  ): Promise<PreflightResponse> {
    return this.service.preflight(
      this.userAccessOf(credentials),
      clusterName,
      nodeName,
      action,
      drainOptions,
      call,
    );
  }

  requestAction(
    credentials: BackstageCredentials<BackstageUserPrincipal>,
    request: ActionRequest,
    httpRequest?: Request,
  ): Promise<{ status: number; name: string }> {
    return this.service.requestAction(
      this.userAccessOf(credentials),
      request,
      httpRequest,
    );
  }

  /** Audits an attempt that had no user (the router's 401 path). */
  auditUnauthenticated(
    request: Omit<ActionRequest, 'body'>,
    error: Error,
    httpRequest?: Request,
  ): Promise<void> {
    return this.service.auditUnauthenticated(request, error, httpRequest);
  }
}
