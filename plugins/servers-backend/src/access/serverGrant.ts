/*
 * What AuthorizedServersService decided for one call, handed to the service with it: the
 * cluster it found, the caller's read scope and, for a list or one server, what it may do
 * on each server. These are answers already given (the conditions of a conditional
 * decision are applied here, in memory): the service reads them and never asks the
 * permission framework.
 */
import type { ServerAction } from '@rackside/plugin-servers-common';
import type { NodeObject, ServerResource } from '@rackside/plugin-servers-node';
import type { ClusterState } from '../cluster/types';
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

/** What one call was granted. */
export interface ServerGrant {
  /**
   * The cluster the call was granted on, as the decorator found it (404 when unknown);
   * absent for a call on every cluster (the cluster list).
   */
  cluster?: ClusterState;
  scope: ServerReadScope;
  /** The per-server decisions (reads of servers; the other calls need the scope only). */
  decisions?: ServerDecisions;
}

/** What a call on one cluster was granted: the cluster is always there. */
export type ClusterGrant = ServerGrant & { cluster: ClusterState };
