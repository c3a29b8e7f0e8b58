/*
 * What the `/api/servers` routes and the registered actions ask of the servers feature:
 * reads from the watch caches, the pre-flight, and action requests. Three layers
 * implement it, each wrapping the next (createServersService.ts):
 *
 * - AuditedServersService: every call is an auditor event, whatever ends it;
 * - AuthorizedServersService: asks the permission framework and decides (404 for an
 *   unknown cluster first, then 403), and hands what it decided to the next layer with
 *   the call (`call.grant`);
 * - DefaultServersService: every other check and the writes, within what it was granted.
 *   It never asks the permission framework, and answers nothing without a grant.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import type {
  CeremonyLevel,
  ClusterListResponse,
  HealthRefreshResponse,
  MaintenanceListResponse,
  MaintenanceResponse,
  PreflightResponse,
  ServerAction,
  ServerListResponse,
  ServerAlertsResponse,
  ServerResponse,
} from '@rackside/plugin-servers-common';
import type { Request } from 'express';
import type { CallVia } from '../lib/auditSeverity';
import type { UserCredentials } from '../lib/credentials';
import type { ServerGrant } from '../access/serverGrant';
import type { PreflightOptions } from '../preflight/preflight';
import type { ServerListQuery } from './serverList';
import type { PreparedJson } from './ServerListCache';

/** How a call came in, and what the permission decorator granted it. */
export interface CallContext {
  /** The actions registry or a route (the audit event's `via`); `http` if unset. */
  via?: CallVia;
  /** The HTTP request, for the audit event. */
  request?: Request;
  /** Set by AuthorizedServersService: what the caller may read (and do, for lists). */
  grant?: ServerGrant;
}

/** An action request as the router and the actions registry hand it over. */
export interface ActionRequest {
  cluster: string;
  node: string;
  /** Unchecked: an unknown action is a 404. */
  action: string;
  /** Unchecked: validated by the service (400 naming the field). */
  body: unknown;
  /** How the request came in (the audit event's `via`); `http` if unset. */
  via?: CallVia;
  /**
   * Through the actions registry: who called (audited as `principal`), and why a
   * request at this ceremony rung is not the caller's to make (a 403), if it is not.
   */
  agent?: {
    principal: string;
    refusal(level: CeremonyLevel, action: ServerAction): string | undefined;
  };
}

/** What an accepted action request wrote. */
export interface ActionResult {
  /** 201 for a new maintenance, 200 for a flag on the open one. */
  status: number;
  /** The NodeMaintenance. */
  name: string;
  /** What the audit record calls it (`created`, `return-to-service-requested`, ...). */
  outcome: string;
}

export interface ServersService {
  /**
   * `GET /clusters`: the clusters this user may read, each with the readable servers
   * counted and the quorum only if every member is readable.
   */
  listClusters(
    credentials: BackstageCredentials,
    call?: CallContext,
  ): Promise<ClusterListResponse>;

  /**
   * `GET /clusters/:cluster/servers`, serialised: the whole list, or with `query` one
   * window of it (serverList.ts).
   */
  listServersJson(
    credentials: BackstageCredentials,
    cluster: string,
    query?: ServerListQuery,
    call?: CallContext,
  ): Promise<PreparedJson>;

  /** The whole list, parsed (the actions registry). */
  listServers(
    credentials: BackstageCredentials,
    cluster: string,
    call?: CallContext,
  ): Promise<ServerListResponse>;

  /** One server the caller may read; hidden and absent are the same 404. */
  getServer(
    credentials: BackstageCredentials,
    cluster: string,
    node: string,
    call?: CallContext,
  ): Promise<ServerResponse>;

  /** The Alertmanager alerts of a server the caller may read (docs/alerts.md). */
  getServerAlerts(
    credentials: BackstageCredentials,
    cluster: string,
    node: string,
    call?: CallContext,
  ): Promise<ServerAlertsResponse>;

  /** The maintenances of the servers the caller may read, newest first. */
  listMaintenances(
    credentials: BackstageCredentials,
    cluster: string,
    node?: string,
    call?: CallContext,
  ): Promise<MaintenanceListResponse>;

  /** One maintenance of a server the caller may read. */
  getMaintenance(
    credentials: BackstageCredentials,
    cluster: string,
    name: string,
    call?: CallContext,
  ): Promise<MaintenanceResponse>;

  /** What `action` would do to the node now, with the token that binds it for this user. */
  preflight(
    credentials: UserCredentials,
    cluster: string,
    node: string,
    action: string,
    drainOptions: PreflightOptions,
    call?: CallContext,
  ): Promise<PreflightResponse>;

  /**
   * Carries out an action request: every check, then the write. Throws the
   * `@backstage/errors` error of the first check that fails (nothing written).
   */
  requestAction(
    credentials: UserCredentials,
    request: ActionRequest,
    call?: CallContext,
  ): Promise<ActionResult>;

  /**
   * Asks the operator for a health reading of one server now (`spec.healthRefresh` on
   * its ServerBMC), at most once a minute a server (429 otherwise).
   */
  requestHealthRefresh(
    credentials: UserCredentials,
    cluster: string,
    node: string,
    call?: CallContext,
  ): Promise<HealthRefreshResponse>;
}
