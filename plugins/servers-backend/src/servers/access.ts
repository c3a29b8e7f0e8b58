/*
 * What the servers service is handed by its permission decorator: the caller's read
 * scope, the per-server decisions of a list, and the check of one action on one server.
 * The decorator (AuthorizedServersService) builds these from the permission framework;
 * the service only asks them, so it never imports the decorator.
 */
import type { ServerAction } from '@rackside/plugin-servers-common';
import type { NodeObject, ServerResource } from '@rackside/plugin-servers-node';
import type { ReadScope } from './readScope';

/** What `servers:read` lets a caller see (403 when it is denied outright). */
export type ServerReadScope = ReadScope & {
  filter: (server: ServerResource) => boolean;
};

/** What a caller may see and do on the servers of one cluster (one list's decisions). */
export interface ServerDecisions {
  /** Names what was decided, for the list cache. */
  key: string;
  scope: ServerReadScope;
  readable(node: NodeObject): boolean;
  allowed(node: NodeObject, action: ServerAction): boolean;
}

/** The permission decisions of one caller, asked when the service needs them. */
export interface ServerAccess {
  /** Who the audit names. */
  actor: string;
  readScope(): Promise<ServerReadScope>;
  decisions(cluster: string): Promise<ServerDecisions>;
  /** 403 naming the permission unless `action` is allowed on the server. */
  requireAction(
    cluster: string,
    node: string,
    action: ServerAction,
  ): Promise<void>;
  /** 403 naming the options unless `servers:drain-data` is allowed on the server. */
  requireDrainData(
    cluster: string,
    node: string,
    options: readonly string[],
  ): Promise<void>;
}

/** The access of a user (requests and pre-flights need one). */
export interface UserAccess extends ServerAccess {
  user: string;
}
