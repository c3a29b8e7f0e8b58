import { createApiRef } from '@backstage/frontend-plugin-api';
import type {
  ActionRequestBody,
  ApprovalDecidedResponse,
  ApprovalDecisionBody,
  ApprovalItem,
  ApprovalRequestKind,
  ApprovalView,
  ActionResponse,
  ClusterSummaryResponse,
  HealthRefreshResponse,
  MaintenanceResponse,
  PlanAlertGateInput,
  PlanControl,
  PlanCreatedResponse,
  PlanRenewBody,
  PlanRenewedResponse,
  PlanPreflightResponse,
  PlanRequestBody,
  PlanListQuery,
  PlanListResponse,
  PlanResponse,
  PreflightAction,
  PreflightResponse,
  ServerAction,
  ServerAlertsResponse,
  ServerListResponse,
  ServerListWindowQuery,
  ServerListWindowResponse,
  ServerResponse,
  UpgradeSourcesResponse,
} from '@rackside/plugin-servers-common';

/**
 * The Rackside backend (`/api/servers`), as the frontend uses it. Failed
 * requests reject with a `ResponseError` from `@backstage/errors`; its
 * `cause` carries the backend's message (and, for a quorum refusal, the
 * members, quorum and margin).
 *
 * @public
 */
export interface ServersApi {
  /** `GET /clusters`. */
  listClusters(): Promise<ClusterSummaryResponse[]>;
  /** `GET /clusters/:cluster/servers`: the servers and the cluster's quorum. */
  listServers(cluster: string): Promise<ServerListResponse>;
  /**
   * `GET /clusters/:cluster/servers?limit=&continue=&filter=&sort=&direction=`: one
   * window of the servers, filtered and sorted on the server. A `continue` the backend
   * no longer holds rejects with a 410 `ResponseError`: start again without it.
   */
  listServerWindow(
    cluster: string,
    query: ServerListWindowQuery,
  ): Promise<ServerListWindowResponse>;
  /**
   * `GET /clusters/:cluster/servers/:node`: one server with every action, offered or
   * not, and why. A server the user may not read is a 404, as an absent one.
   */
  getServer(cluster: string, node: string): Promise<ServerResponse>;
  /** `GET /clusters/:cluster/servers/:node/alerts`: the node's Alertmanager alerts. */
  getServerAlerts(cluster: string, node: string): Promise<ServerAlertsResponse>;
  /** `GET /clusters/:cluster/maintenances[?node=]`, newest first. */
  listMaintenances(
    cluster: string,
    node?: string,
  ): Promise<MaintenanceResponse[]>;
  /** `GET /clusters/:cluster/maintenances/:name`. */
  getMaintenance(cluster: string, name: string): Promise<MaintenanceResponse>;
  /**
   * `GET /clusters/:cluster/servers/:node/preflight?action=`: what a drain,
   * reboot or shutdown would do now, and the token that binds it. The options
   * ask again as if the drain were allowed to evict those pods.
   */
  preflight(
    cluster: string,
    node: string,
    action: PreflightAction,
    options?: PreflightOptions,
  ): Promise<PreflightResponse>;
  /**
   * `POST /clusters/:cluster/servers/:node/actions/:action`. A drain (reboot,
   * shutdown) carries the acknowledged `preflightToken` and the options the
   * pre-flight was taken with; when the impact changed since, this rejects
   * with a {@link PreflightChangedError} that carries the new pre-flight.
   */
  requestAction(
    cluster: string,
    node: string,
    action: ServerAction,
    body: ActionRequestBody,
  ): Promise<ActionResponse>;
  /**
   * `GET /upgrades/sources`: the Talos installer image prefixes and the firmware image
   * origins this deployment allows (`servers.upgrades`), which the upgrade and firmware
   * dialogs offer targets from; empty lists when none is configured.
   */
  getUpgradeSources(): Promise<UpgradeSourcesResponse>;
  /**
   * `POST /clusters/:cluster/servers/:node/health/refresh`: asks the operator for a
   * reading of the server's BMC now. At most once a minute a server: a 429
   * `ResponseError` whose message names when to ask again.
   */
  requestHealthRefresh(
    cluster: string,
    node: string,
  ): Promise<HealthRefreshResponse>;
  /**
   * `GET /clusters/:cluster/plans`: one page of the cluster's maintenance plans, newest
   * first (`query.continue` is the previous page's `continue`).
   */
  listPlans(cluster: string, query?: PlanListQuery): Promise<PlanListResponse>;
  /** `GET /clusters/:cluster/plans/:name`: one plan with per-node progress. */
  getPlan(cluster: string, name: string): Promise<PlanResponse>;
  /**
   * `GET /clusters/:cluster/plans/preflight?intent=&nodes=&maxParallel=`: every
   * node's impact, the steps, budgets, quorum per step, the estimate and the token.
   */
  planPreflight(
    cluster: string,
    query: {
      intent: PlanRequestBody['intent'];
      nodes: string[];
      maxParallel?: number;
      /** The plan's `gates.alerts`: the answer's `alerts` say what would hold it now. */
      alertGate?: PlanAlertGateInput;
      /** An upgrade plan's installer image (required with intent upgrade). */
      image?: string;
      /** A firmware plan's image URI (required with intent firmware). */
      imageURI?: string;
      /** A firmware plan's version, targets and checksum, as its spec.firmware has them. */
      version?: string;
      targets?: string[];
      checksum?: string;
    } & PreflightOptions,
  ): Promise<PlanPreflightResponse>;
  /**
   * `POST /clusters/:cluster/plans`. When the impact changed since the pre-flight this
   * rejects with a {@link PreflightChangedError} whose `preflight` is the new plan
   * pre-flight.
   */
  createPlan(
    cluster: string,
    body: PlanRequestBody,
  ): Promise<PlanCreatedResponse>;
  /** `POST /clusters/:cluster/plans/:name/{pause,resume,cancel}`. */
  controlPlan(
    cluster: string,
    name: string,
    control: PlanControl,
    body: { reason: string },
  ): Promise<PlanCreatedResponse>;
  /**
   * `POST /clusters/:cluster/plans/:name/renew`: the caller's permissions checked on
   * every server not started, and the plan's authorization extended.
   */
  renewPlan(
    cluster: string,
    name: string,
    body: PlanRenewBody,
  ): Promise<PlanRenewedResponse>;
  /**
   * `GET /approvals?for=me`: the requests awaiting an approval the caller may give
   * (docs/approvals.md).
   */
  listApprovalsForMe(): Promise<ApprovalItem[]>;
  /**
   * `GET /clusters/:cluster/{maintenances,plans}/:name/approval`: the approval, the impact
   * acknowledged and a fresh pre-flight, and whether the caller may approve.
   */
  getApproval(
    cluster: string,
    kind: ApprovalRequestKind,
    name: string,
  ): Promise<ApprovalView>;
  /**
   * `POST /clusters/:cluster/{maintenances,plans}/:name/approval`: approve (with the fresh
   * pre-flight's token, and the typed name at the hazard rung) or reject (with a reason).
   * When the impact grew past the rung the requester acknowledged this rejects with an
   * {@link ApprovalRungGrewError} carrying both rungs.
   */
  decideApproval(
    cluster: string,
    kind: ApprovalRequestKind,
    name: string,
    body: ApprovalDecisionBody,
  ): Promise<ApprovalDecidedResponse>;
}

/**
 * The drain options a pre-flight is computed with.
 *
 * @public
 */
export interface PreflightOptions {
  /** Evict pods with emptyDir volumes (their data is lost). */
  deleteEmptyDirData?: boolean;
  /** Evict pods without a controller (nothing recreates them). */
  force?: boolean;
  /**
   * Evict pods whose data is on the node (local or node-pinned
   * PersistentVolumes, hostPath): they cannot run elsewhere until it is back.
   */
  allowNodeLocalData?: boolean;
}

/**
 * The {@link ServersApi} of the app.
 *
 * @public
 */
export const serversApiRef = createApiRef<ServersApi>().with({
  id: 'plugin.servers.api',
  pluginId: 'servers',
});
