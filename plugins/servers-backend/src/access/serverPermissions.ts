/*
 * The questions the servers and plans decorators ask the permission framework, with the
 * caller's credentials: `servers:read` and the per-action decisions of a read (reused for
 * a user's burst of reads, readDecisions.ts), and one action or `servers:drain-data` on
 * one server (always asked afresh). The answers are data (a read scope, a list's
 * decisions) that the decorators hand to their services; no service asks them itself.
 */
import type {
  BackstageCredentials,
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
  type ServerAction,
  type ServerPermission,
} from '@rackside/plugin-servers-common';
import {
  serverResourceRefOf,
  type NodeObject,
  type ServerResource,
} from '@rackside/plugin-servers-node';
import type { ServerDecisions, ServerReadScope } from './serverGrant';
import {
  DEFAULT_READ_DECISION_REUSE_MS,
  readDecisionKeyOf,
  ReuseWindow,
} from './readDecisions';
import { decidedKey, ReadScope } from './readScope';
import { serverResourceOf } from './visibleNodes';

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

/** What a read asks: `servers:read`, then each action's permission in SERVER_ACTIONS order. */
const READ_QUESTIONS = [
  { permission: serversReadPermission },
  ...SERVER_ACTIONS.map(action => ({
    permission: serverActionPermissions[action],
  })),
];

export class ServerPermissions {
  readonly permissions: PermissionsService;
  readonly applyConditions: ServerPermissionOptions['applyConditions'];
  /** `servers:read` and each action's decision, per user, for reads (READ_QUESTIONS). */
  private readonly readDecisions: ReuseWindow<PolicyDecision[]>;

  constructor(options: ServerPermissionOptions) {
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
  async decisions(
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
  async requireAction(
    credentials: BackstageCredentials,
    cluster: string,
    nodeName: string,
    action: ServerAction,
  ): Promise<void> {
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
      const what = action === 'firmware' ? 'update the firmware of' : action;
      throw new NotAllowedError(
        `you are not allowed to ${what} ${nodeName} (${serverActionPermissions[action].name})`,
      );
    }
  }

  /**
   * Which servers of a cluster `permission` allows the caller on: one conditional
   * decision, asked afresh (never reused), its conditions applied to each node in memory.
   */
  async allowedOn(
    credentials: BackstageCredentials,
    permission: ServerPermission,
    cluster: string,
  ): Promise<(node: NodeObject) => boolean> {
    const [decision] = await this.permissions.authorizeConditional(
      [{ permission }],
      { credentials },
    );
    if (decision.result === AuthorizeResult.ALLOW) return () => true;
    if (decision.result === AuthorizeResult.DENY) return () => false;
    return node =>
      this.applyConditions(decision, serverResourceOf(cluster, node));
  }

  /** Authorises a drain option that loses data on one server; 403 otherwise. */
  async requireDrainData(
    credentials: BackstageCredentials,
    cluster: string,
    nodeName: string,
    options: readonly string[],
  ): Promise<void> {
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
}
