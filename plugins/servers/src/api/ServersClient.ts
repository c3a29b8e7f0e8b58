import type { DiscoveryApi, FetchApi } from '@backstage/frontend-plugin-api';
import { ResponseError } from '@backstage/errors';
import type {
  ActionRequestBody,
  ActionResponse,
  ClusterListResponse,
  ClusterSummaryResponse,
  MaintenanceListResponse,
  MaintenanceResponse,
  ServerAction,
  ServerListResponse,
} from '@rackside/plugin-servers-common';
import type { ServersApi } from './ServersApi';

/**
 * {@link ServersApi} over HTTP, through the app's discovery and fetch APIs
 * (so requests carry the user's Backstage token).
 *
 * @public
 */
export class ServersClient implements ServersApi {
  private readonly discoveryApi: Pick<DiscoveryApi, 'getBaseUrl'>;
  private readonly fetchApi: Pick<FetchApi, 'fetch'>;

  constructor(options: {
    discoveryApi: Pick<DiscoveryApi, 'getBaseUrl'>;
    fetchApi: Pick<FetchApi, 'fetch'>;
  }) {
    this.discoveryApi = options.discoveryApi;
    this.fetchApi = options.fetchApi;
  }

  async listClusters(): Promise<ClusterSummaryResponse[]> {
    const body = await this.request<ClusterListResponse>('/clusters');
    return body.items;
  }

  listServers(cluster: string): Promise<ServerListResponse> {
    return this.request(`/clusters/${enc(cluster)}/servers`);
  }

  async listMaintenances(
    cluster: string,
    node?: string,
  ): Promise<MaintenanceResponse[]> {
    const query = node ? `?node=${enc(node)}` : '';
    const body = await this.request<MaintenanceListResponse>(
      `/clusters/${enc(cluster)}/maintenances${query}`,
    );
    return body.items;
  }

  getMaintenance(cluster: string, name: string): Promise<MaintenanceResponse> {
    return this.request(`/clusters/${enc(cluster)}/maintenances/${enc(name)}`);
  }

  requestAction(
    cluster: string,
    node: string,
    action: ServerAction,
    body: ActionRequestBody,
  ): Promise<ActionResponse> {
    return this.request(
      `/clusters/${enc(cluster)}/servers/${enc(node)}/actions/${enc(action)}`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      },
    );
  }

  private async request<T>(path: string, init?: RequestInit): Promise<T> {
    const baseUrl = await this.discoveryApi.getBaseUrl('servers');
    const response = await this.fetchApi.fetch(`${baseUrl}${path}`, init);
    if (!response.ok) {
      throw await ResponseError.fromResponse(response);
    }
    return (await response.json()) as T;
  }
}

function enc(part: string): string {
  return encodeURIComponent(part);
}
