import type { DiscoveryApi, FetchApi } from '@backstage/frontend-plugin-api';
import { ResponseError } from '@backstage/errors';
import type {
  ActionRequestBody,
  ApprovalDecidedResponse,
  ApprovalDecisionBody,
  ApprovalItem,
  ApprovalListResponse,
  ApprovalRequestKind,
  ApprovalView,
  ActionResponse,
  ClusterListResponse,
  ClusterSummaryResponse,
  HealthRefreshResponse,
  MaintenanceListResponse,
  MaintenanceResponse,
  PlanAlertGateInput,
  PlanControl,
  PlanCreatedResponse,
  PlanRenewBody,
  PlanRenewedResponse,
  PlanListQuery,
  PlanListResponse,
  PlanPreflightResponse,
  PlanRequestBody,
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
import { enc, ServersBackendHttp } from './backendHttp';
import { ApprovalRungGrewError, PreflightChangedError } from './errors';

import type { PreflightOptions, ServersApi } from './ServersApi';

/**
 * {@link ServersApi} over HTTP, through the app's discovery and fetch APIs
 * (so requests carry the user's Backstage token).
 *
 * @public
 */
export class ServersClient implements ServersApi {
  private readonly http: ServersBackendHttp;

  constructor(options: {
    discoveryApi: Pick<DiscoveryApi, 'getBaseUrl'>;
    fetchApi: Pick<FetchApi, 'fetch'>;
  }) {
    this.http = new ServersBackendHttp({ ...options, errorOf });
  }

  async listClusters(): Promise<ClusterSummaryResponse[]> {
    const body = await this.http.get<ClusterListResponse>('/clusters');
    return body.items;
  }

  listServers(cluster: string): Promise<ServerListResponse> {
    return this.http.get(`/clusters/${enc(cluster)}/servers`);
  }

  listServerWindow(
    cluster: string,
    query: ServerListWindowQuery,
  ): Promise<ServerListWindowResponse> {
    const params = new URLSearchParams();
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.continue !== undefined) params.set('continue', query.continue);
    if (query.filter) params.set('filter', query.filter);
    if (query.sort) params.set('sort', query.sort);
    if (query.direction) params.set('direction', query.direction);
    // At least one parameter: without any the route answers the whole list.
    if (!params.toString()) params.set('sort', 'name');
    return this.http.get(`/clusters/${enc(cluster)}/servers?${params}`);
  }

  getServer(cluster: string, node: string): Promise<ServerResponse> {
    return this.http.get(`/clusters/${enc(cluster)}/servers/${enc(node)}`);
  }

  getServerAlerts(
    cluster: string,
    node: string,
  ): Promise<ServerAlertsResponse> {
    return this.http.get(
      `/clusters/${enc(cluster)}/servers/${enc(node)}/alerts`,
    );
  }

  async listMaintenances(
    cluster: string,
    node?: string,
  ): Promise<MaintenanceResponse[]> {
    const query = node ? `?node=${enc(node)}` : '';
    const body = await this.http.get<MaintenanceListResponse>(
      `/clusters/${enc(cluster)}/maintenances${query}`,
    );
    return body.items;
  }

  getMaintenance(cluster: string, name: string): Promise<MaintenanceResponse> {
    return this.http.get(`/clusters/${enc(cluster)}/maintenances/${enc(name)}`);
  }

  preflight(
    cluster: string,
    node: string,
    action: PreflightAction,
    options: PreflightOptions = {},
  ): Promise<PreflightResponse> {
    const query = new URLSearchParams({ action });
    // Only the options that are on: the backend's default is off.
    if (options.deleteEmptyDirData) query.set('deleteEmptyDirData', 'true');
    if (options.force) query.set('force', 'true');
    if (options.allowNodeLocalData) query.set('allowNodeLocalData', 'true');
    return this.http.get(
      `/clusters/${enc(cluster)}/servers/${enc(node)}/preflight?${query}`,
    );
  }

  requestAction(
    cluster: string,
    node: string,
    action: ServerAction,
    body: ActionRequestBody,
  ): Promise<ActionResponse> {
    return this.http.post(
      `/clusters/${enc(cluster)}/servers/${enc(node)}/actions/${enc(action)}`,
      body,
    );
  }

  getUpgradeSources(): Promise<UpgradeSourcesResponse> {
    return this.http.get('/upgrades/sources');
  }

  requestHealthRefresh(
    cluster: string,
    node: string,
  ): Promise<HealthRefreshResponse> {
    return this.http.post(
      `/clusters/${enc(cluster)}/servers/${enc(node)}/health/refresh`,
      {},
    );
  }

  listPlans(
    cluster: string,
    query: PlanListQuery = {},
  ): Promise<PlanListResponse> {
    const params = new URLSearchParams();
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.continue) params.set('continue', query.continue);
    if (query.state) params.set('state', query.state);
    const search = params.toString();
    return this.http.get<PlanListResponse>(
      `/clusters/${enc(cluster)}/plans${search ? `?${search}` : ''}`,
    );
  }

  getPlan(cluster: string, name: string): Promise<PlanResponse> {
    return this.http.get(`/clusters/${enc(cluster)}/plans/${enc(name)}`);
  }

  planPreflight(
    cluster: string,
    query: {
      intent: PlanRequestBody['intent'];
      nodes: string[];
      maxParallel?: number;
      alertGate?: PlanAlertGateInput;
      image?: string;
      imageURI?: string;
      version?: string;
      targets?: string[];
      checksum?: string;
    } & PreflightOptions,
  ): Promise<PlanPreflightResponse> {
    const params = new URLSearchParams({
      intent: query.intent,
      nodes: query.nodes.join(','),
    });
    if (query.image !== undefined) params.set('image', query.image);
    if (query.imageURI !== undefined) params.set('imageURI', query.imageURI);
    if (query.version !== undefined) params.set('version', query.version);
    // One parameter per target: an id a BMC wrote may hold a comma.
    for (const target of query.targets ?? []) params.append('targets', target);
    if (query.checksum !== undefined) params.set('checksum', query.checksum);
    if (query.maxParallel !== undefined) {
      params.set('maxParallel', String(query.maxParallel));
    }
    if (query.deleteEmptyDirData) params.set('deleteEmptyDirData', 'true');
    if (query.force) params.set('force', 'true');
    if (query.allowNodeLocalData) params.set('allowNodeLocalData', 'true');
    if (query.alertGate)
      params.set('alertGate', JSON.stringify(query.alertGate));
    return this.http.get(`/clusters/${enc(cluster)}/plans/preflight?${params}`);
  }

  createPlan(
    cluster: string,
    body: PlanRequestBody,
  ): Promise<PlanCreatedResponse> {
    return this.http.post(`/clusters/${enc(cluster)}/plans`, body);
  }

  controlPlan(
    cluster: string,
    name: string,
    control: PlanControl,
    body: { reason: string },
  ): Promise<PlanCreatedResponse> {
    return this.http.post(
      `/clusters/${enc(cluster)}/plans/${enc(name)}/${enc(control)}`,
      body,
    );
  }

  renewPlan(
    cluster: string,
    name: string,
    body: PlanRenewBody,
  ): Promise<PlanRenewedResponse> {
    return this.http.post(
      `/clusters/${enc(cluster)}/plans/${enc(name)}/renew`,
      body,
    );
  }

  async listApprovalsForMe(): Promise<ApprovalItem[]> {
    const body = await this.http.get<ApprovalListResponse>('/approvals?for=me');
    return body.items;
  }

  getApproval(
    cluster: string,
    kind: ApprovalRequestKind,
    name: string,
  ): Promise<ApprovalView> {
    return this.http.get(approvalPath(cluster, kind, name));
  }

  decideApproval(
    cluster: string,
    kind: ApprovalRequestKind,
    name: string,
    body: ApprovalDecisionBody,
  ): Promise<ApprovalDecidedResponse> {
    return this.http.post(approvalPath(cluster, kind, name), body);
  }
}

/** The approval of a maintenance or a plan, below the backend's base URL. */
function approvalPath(
  cluster: string,
  kind: ApprovalRequestKind,
  name: string,
): string {
  const collection = kind === 'plan' ? 'plans' : 'maintenances';
  return `/clusters/${enc(cluster)}/${collection}/${enc(name)}/approval`;
}

/**
 * The error of a failed response: a `ResponseError`, or for a 409 that carries
 * the new pre-flight (`PreflightChangedBody`) a {@link PreflightChangedError}.
 * The body is read once, so the `ResponseError` is built from a replay of it.
 */
async function errorOf(response: Response): Promise<Error> {
  const text = await response.text().catch(() => '');
  const replay = {
    ok: response.ok,
    status: response.status,
    statusText: response.statusText,
    url: response.url,
    headers: response.headers,
    text: async () => text,
  } as Response;
  const error = await ResponseError.fromResponse(replay);
  if (response.status !== 409) return error;
  const grew = rungsOf(text);
  if (grew) {
    return new ApprovalRungGrewError(
      grew.message ||
        `The impact grew from ${grew.requestedRung} to ${grew.rungNow} since the request.`,
      grew,
      error,
    );
  }
  const changed = preflightChangedOf(text);
  if (!changed) return error;
  return new PreflightChangedError(
    changed.message || 'The impact changed since you looked.',
    changed.preflight,
    error,
  );
}

/**
 * Both rungs of an approval refused because the impact grew (409 `{ error, requestedRung,
 * rungNow }`), and its message, if the body carries them.
 */
function rungsOf(
  text: string,
): { requestedRung: string; rungNow: string; message?: string } | undefined {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  // Beside `error` as the contract says; inside a serialised error works too.
  const requestedRung = body?.requestedRung ?? body?.error?.requestedRung;
  const rungNow = body?.rungNow ?? body?.error?.rungNow;
  if (typeof requestedRung !== 'string' || typeof rungNow !== 'string') {
    return undefined;
  }
  const message = body?.error?.message;
  return {
    requestedRung,
    rungNow,
    message: typeof message === 'string' ? message : undefined,
  };
}

/** The new pre-flight and the message of a 409 body, if it carries one. */
function preflightChangedOf(
  text: string,
): { preflight: PreflightResponse; message?: string } | undefined {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  // The contract puts it beside `error`; a serialised error field works too.
  const preflight = body?.preflight ?? body?.error?.preflight;
  if (!preflight || typeof preflight !== 'object' || !preflight.token) {
    return undefined;
  }
  const message = body?.error?.message;
  return {
    preflight: preflight as PreflightResponse,
    message: typeof message === 'string' ? message : undefined,
  };
}
