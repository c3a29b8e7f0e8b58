/*
 * The permission checks of the servers routes and actions, around the service that does
 * the rest (as Backstage's catalog wraps its entities catalog). Each call finds its
 * cluster (404), then asks `servers:read` and the permissions of what it does (403
 * naming them), and passes what was decided, with the cluster it found, to the inner
 * service with the call (`call.grant`). The inner service never asks back. The request
 * was parsed at the edge (its action known, its body valid): nothing here parses it.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import {
  dataLossOptionsOf,
  type ClusterListResponse,
  type UpgradeSourcesResponse,
  type HealthRefreshResponse,
  type MaintenanceListResponse,
  type MaintenanceResponse,
  type PreflightResponse,
  type ServerListResponse,
  type ServerAlertsResponse,
  type ServerResponse,
} from '@rackside/plugin-servers-common';
import { clusterOr404 } from '../cluster/clusterRegistry';
import type { ClusterRegistry } from '../cluster/types';
import { isPreflightAction } from './actionNames';
import type { ServerListQuery } from './serverList';
import type { PreparedJson } from './ServerListCache';
import type { ServerPermissions } from '../access/serverPermissions';
import type {
  ActionResult,
  CallContext,
  ServerActionCommand,
  ServerPreflightQuery,
  ServersService,
} from './ServersService';
import type { UserCredentials } from '../lib/credentials';

export class AuthorizedServersService implements ServersService {
  constructor(
    private readonly inner: ServersService,
    private readonly permissions: ServerPermissions,
    /** To answer an unknown cluster with 404 before any permission is asked. */
    private readonly clusters: ClusterRegistry,
  ) {}

  async listClusters(
    credentials: BackstageCredentials,
    call?: CallContext,
  ): Promise<ClusterListResponse> {
    const scope = await this.permissions.readScope(credentials);
    return this.inner.listClusters(credentials, { ...call, grant: { scope } });
  }

  /**
   * No permission of its own: the lists are the deployment's configuration, which the
   * backend checks every request against anyway. The caller's read scope, as for the
   * cluster list (403 for a caller who may read no server), is the grant.
   */
  async getUpgradeSources(
    credentials: BackstageCredentials,
    call?: CallContext,
  ): Promise<UpgradeSourcesResponse> {
    const scope = await this.permissions.readScope(credentials);
    return this.inner.getUpgradeSources(credentials, {
      ...call,
      grant: { scope },
    });
  }

  /** `servers:read` and every action's decision on the cluster's servers. */
  private async listGrant(
    credentials: BackstageCredentials,
    clusterName: string,
    call: CallContext | undefined,
  ): Promise<CallContext> {
    const cluster = clusterOr404(this.clusters, clusterName);
    const decisions = await this.permissions.decisions(
      credentials,
      cluster.name,
    );
    return { ...call, grant: { cluster, scope: decisions.scope, decisions } };
  }

  /** `servers:read` of a cluster's servers. */
  private async readGrant(
    credentials: BackstageCredentials,
    clusterName: string,
    call: CallContext | undefined,
  ): Promise<CallContext> {
    const cluster = clusterOr404(this.clusters, clusterName);
    const scope = await this.permissions.readScope(credentials);
    return { ...call, grant: { cluster, scope } };
  }

  async listServersJson(
    credentials: BackstageCredentials,
    clusterName: string,
    query?: ServerListQuery,
    call?: CallContext,
  ): Promise<PreparedJson> {
    return this.inner.listServersJson(
      credentials,
      clusterName,
      query,
      await this.listGrant(credentials, clusterName, call),
    );
  }

  async listServers(
    credentials: BackstageCredentials,
    clusterName: string,
    call?: CallContext,
  ): Promise<ServerListResponse> {
    return this.inner.listServers(
      credentials,
      clusterName,
      await this.listGrant(credentials, clusterName, call),
    );
  }

  async getServer(
    credentials: BackstageCredentials,
    clusterName: string,
    nodeName: string,
    call?: CallContext,
  ): Promise<ServerResponse> {
    return this.inner.getServer(
      credentials,
      clusterName,
      nodeName,
      await this.listGrant(credentials, clusterName, call),
    );
  }

  async getServerAlerts(
    credentials: BackstageCredentials,
    clusterName: string,
    nodeName: string,
    call?: CallContext,
  ): Promise<ServerAlertsResponse> {
    return this.inner.getServerAlerts(
      credentials,
      clusterName,
      nodeName,
      await this.readGrant(credentials, clusterName, call),
    );
  }

  async listMaintenances(
    credentials: BackstageCredentials,
    clusterName: string,
    nodeFilter?: string,
    call?: CallContext,
  ): Promise<MaintenanceListResponse> {
    return this.inner.listMaintenances(
      credentials,
      clusterName,
      nodeFilter,
      await this.readGrant(credentials, clusterName, call),
    );
  }

  async getMaintenance(
    credentials: BackstageCredentials,
    clusterName: string,
    name: string,
    call?: CallContext,
  ): Promise<MaintenanceResponse> {
    return this.inner.getMaintenance(
      credentials,
      clusterName,
      name,
      await this.readGrant(credentials, clusterName, call),
    );
  }

  /** `servers:read`, then the action's permission on the server. */
  async preflight(
    credentials: UserCredentials,
    query: ServerPreflightQuery,
    call?: CallContext,
  ): Promise<PreflightResponse> {
    const cluster = clusterOr404(this.clusters, query.cluster);
    const scope = await this.permissions.readScope(credentials);
    await this.permissions.requireAction(
      credentials,
      cluster.name,
      query.node,
      query.action,
    );
    return this.inner.preflight(credentials, query, {
      ...call,
      grant: { cluster, scope },
    });
  }

  /**
   * The action's permission on the server before anything else is told about it, then
   * (for the drain options that lose data, named in the body) `servers:drain-data`, then
   * `servers:read`: a server the caller may not read is absent to them.
   */
  async requestAction(
    credentials: UserCredentials,
    command: ServerActionCommand,
    call?: CallContext,
  ): Promise<ActionResult> {
    const cluster = clusterOr404(this.clusters, command.cluster);
    await this.permissions.requireAction(
      credentials,
      cluster.name,
      command.node,
      command.action,
    );
    if (isPreflightAction(command.action)) {
      const dataLoss = dataLossOptionsOf(command.body);
      if (dataLoss.length > 0) {
        await this.permissions.requireDrainData(
          credentials,
          cluster.name,
          command.node,
          dataLoss,
        );
      }
    }
    const scope = await this.permissions.readScope(credentials);
    return this.inner.requestAction(credentials, command, {
      ...call,
      grant: { cluster, scope },
    });
  }

  /**
   * `servers:read` (403 when denied outright); a server it hides is the inner layer's
   * 404, as an absent one. Asking for a reading changes nothing on the server, so no
   * action permission is asked.
   */
  async requestHealthRefresh(
    credentials: UserCredentials,
    clusterName: string,
    node: string,
    call?: CallContext,
  ): Promise<HealthRefreshResponse> {
    return this.inner.requestHealthRefresh(
      credentials,
      clusterName,
      node,
      await this.readGrant(credentials, clusterName, call),
    );
  }
}
