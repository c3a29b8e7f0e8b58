/*
 * Every call of the servers feature is an auditor event, opened before the permission
 * checks so a denied or unknown target fails its event: reads as `server-read` (low),
 * action requests as `server-action` (graded by lib/auditSeverity.ts) with the
 * maintenance they wrote and how they ended, health refresh requests as
 * `server-health-refresh` (low: a reading changes nothing on the server). An action
 * request the edge refused (no user, or a request that does not parse) is recorded too,
 * as the same `server-action` event (auditRefused).
 */
import type {
  AuditorService,
  BackstageCredentials,
} from '@backstage/backend-plugin-api';
import type {
  ClusterListResponse,
  UpgradeSourcesResponse,
  HealthRefreshResponse,
  MaintenanceListResponse,
  MaintenanceResponse,
  PreflightResponse,
  ServerListResponse,
  ServerAlertsResponse,
  ServerResponse,
} from '@rackside/plugin-servers-common';
import type { Request } from 'express';
import {
  actorOf,
  audited,
  auditedRead,
  auditRefused,
  type Refusal,
} from '../lib/audited';
import { READ_SEVERITY, serverActionSeverity } from '../lib/auditSeverity';
import type { ServerListQuery } from './serverList';
import type { PreparedJson } from './ServerListCache';
import type {
  ActionResult,
  ActionTarget,
  CallContext,
  ServerActionCommand,
  ServerPreflightQuery,
  ServersEdgeService,
  ServersService,
} from './ServersService';
import type { UserCredentials } from '../lib/credentials';

export class AuditedServersService implements ServersEdgeService {
  constructor(
    private readonly inner: ServersService,
    private readonly auditor: AuditorService,
  ) {}

  private read<T>(
    credentials: BackstageCredentials,
    call: CallContext | undefined,
    target: Record<string, string | undefined>,
    run: () => Promise<T>,
  ): Promise<T> {
    return auditedRead(this.auditor, actorOf(credentials), call, target, run);
  }

  listClusters(
    credentials: BackstageCredentials,
    call?: CallContext,
  ): Promise<ClusterListResponse> {
    return this.read(credentials, call, { read: 'clusters' }, () =>
      this.inner.listClusters(credentials, call),
    );
  }

  getUpgradeSources(
    credentials: BackstageCredentials,
    call?: CallContext,
  ): Promise<UpgradeSourcesResponse> {
    return this.read(credentials, call, { read: 'upgrade-sources' }, () =>
      this.inner.getUpgradeSources(credentials, call),
    );
  }

  listServersJson(
    credentials: BackstageCredentials,
    cluster: string,
    query?: ServerListQuery,
    call?: CallContext,
  ): Promise<PreparedJson> {
    return this.read(credentials, call, { read: 'servers', cluster }, () =>
      this.inner.listServersJson(credentials, cluster, query, call),
    );
  }

  listServers(
    credentials: BackstageCredentials,
    cluster: string,
    call?: CallContext,
  ): Promise<ServerListResponse> {
    return this.read(credentials, call, { read: 'servers', cluster }, () =>
      this.inner.listServers(credentials, cluster, call),
    );
  }

  getServer(
    credentials: BackstageCredentials,
    cluster: string,
    node: string,
    call?: CallContext,
  ): Promise<ServerResponse> {
    return this.read(credentials, call, { read: 'server', cluster, node }, () =>
      this.inner.getServer(credentials, cluster, node, call),
    );
  }

  getServerAlerts(
    credentials: BackstageCredentials,
    cluster: string,
    node: string,
    call?: CallContext,
  ): Promise<ServerAlertsResponse> {
    return this.read(
      credentials,
      call,
      { read: 'server-alerts', cluster, node },
      () => this.inner.getServerAlerts(credentials, cluster, node, call),
    );
  }

  listMaintenances(
    credentials: BackstageCredentials,
    cluster: string,
    node?: string,
    call?: CallContext,
  ): Promise<MaintenanceListResponse> {
    return this.read(
      credentials,
      call,
      { read: 'maintenances', cluster, node },
      () => this.inner.listMaintenances(credentials, cluster, node, call),
    );
  }

  getMaintenance(
    credentials: BackstageCredentials,
    cluster: string,
    name: string,
    call?: CallContext,
  ): Promise<MaintenanceResponse> {
    return this.read(
      credentials,
      call,
      { read: 'maintenance', cluster, maintenance: name },
      () => this.inner.getMaintenance(credentials, cluster, name, call),
    );
  }

  preflight(
    credentials: UserCredentials,
    query: ServerPreflightQuery,
    call?: CallContext,
  ): Promise<PreflightResponse> {
    const { cluster, node, action } = query;
    return this.read(
      credentials,
      call,
      { read: 'preflight', cluster, node, action },
      () => this.inner.preflight(credentials, query, call),
    );
  }

  /** What a `server-action` event says of a request, refused at the edge or not. */
  private actionEvent(
    target: ActionTarget,
    actor: string | null,
    request?: Request,
  ) {
    return {
      auditor: this.auditor,
      eventId: 'server-action',
      severityLevel: serverActionSeverity(target.action),
      request,
      meta: {
        actor,
        action: target.action,
        reason: target.reason ?? '',
        cluster: target.cluster,
        node: target.node,
        via: target.via ?? 'http',
        ...(target.principal ? { principal: target.principal } : {}),
      },
    };
  }

  requestAction(
    credentials: UserCredentials,
    command: ServerActionCommand,
    call?: CallContext,
  ): Promise<ActionResult> {
    const target: ActionTarget = {
      cluster: command.cluster,
      node: command.node,
      action: command.action,
      reason: command.body.reason,
      via: command.via,
      principal: command.agent?.principal,
    };
    return audited(
      this.actionEvent(
        target,
        credentials.principal.userEntityRef,
        call?.request,
      ),
      async record => {
        record.extra.maintenance = null;
        // What an upgrade or a firmware update was to install, refused or not.
        if (command.upgrade) record.extra.upgrade = { ...command.upgrade };
        if (command.firmware) record.extra.firmware = { ...command.firmware };
        const result = await this.inner.requestAction(
          credentials,
          command,
          call,
        );
        record.extra.maintenance = result.name;
        record.outcome = result.outcome;
        // Held for a second person (docs/approvals.md): by which rule, for whom.
        if (result.approval) {
          record.extra.approval = {
            rule: result.approval.rule,
            approvers: result.approval.approvers,
            expiresAt: result.approval.expiresAt,
          };
        }
        return result;
      },
    );
  }

  requestHealthRefresh(
    credentials: UserCredentials,
    cluster: string,
    node: string,
    call?: CallContext,
  ): Promise<HealthRefreshResponse> {
    return audited(
      {
        auditor: this.auditor,
        eventId: 'server-health-refresh',
        severityLevel: READ_SEVERITY,
        request: call?.request,
        meta: {
          actor: credentials.principal.userEntityRef,
          cluster,
          node,
          via: call?.via ?? 'http',
        },
      },
      async record => {
        const result = await this.inner.requestHealthRefresh(
          credentials,
          cluster,
          node,
          call,
        );
        record.extra.requestedAt = result.requestedAt;
        record.outcome = 'requested';
        return result;
      },
    );
  }

  /**
   * Records an action request the edge refused before this service saw it: no user
   * (`unauthenticated`), or an unknown action or a body that does not parse.
   */
  auditRefused(
    target: ActionTarget,
    error: Error,
    refusal: Refusal,
  ): Promise<void> {
    return auditRefused(
      this.actionEvent(target, refusal.actor, refusal.request),
      error,
    );
  }
}
