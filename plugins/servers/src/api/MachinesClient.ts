import type { DiscoveryApi, FetchApi } from '@backstage/frontend-plugin-api';
import { ResponseError } from '@backstage/errors';
import type {
  AddDiscoveryAddressRequestBody,
  CanReclaimResponse,
  ConfirmReclaimRequestBody,
  CreateReclaimRequestBody,
  DiscoveryAddressAddedResponse,
  JoinMachineRequestBody,
  JoinMachineResponse,
  MachinesResponse,
  ReclaimConfirmedResponse,
  ReclaimCreatedResponse,
  ReclaimListResponse,
  ReclaimResponse,
} from '@rackside/plugin-servers-common';
import type { MachinesApi } from './MachinesApi';

/**
 * {@link MachinesApi} over HTTP, through the app's discovery and fetch APIs
 * (so requests carry the user's Backstage token).
 *
 * @public
 */
export class MachinesClient implements MachinesApi {
  private readonly discoveryApi: Pick<DiscoveryApi, 'getBaseUrl'>;
  private readonly fetchApi: Pick<FetchApi, 'fetch'>;

  constructor(options: {
    discoveryApi: Pick<DiscoveryApi, 'getBaseUrl'>;
    fetchApi: Pick<FetchApi, 'fetch'>;
  }) {
    this.discoveryApi = options.discoveryApi;
    this.fetchApi = options.fetchApi;
  }

  listMachines(cluster: string): Promise<MachinesResponse> {
    return this.request(`/clusters/${enc(cluster)}/machines`);
  }

  addDiscoveryAddress(
    cluster: string,
    body: AddDiscoveryAddressRequestBody,
  ): Promise<DiscoveryAddressAddedResponse> {
    return this.post(`/clusters/${enc(cluster)}/discovery/addresses`, body);
  }

  joinMachine(
    cluster: string,
    uuid: string,
    body: JoinMachineRequestBody,
  ): Promise<JoinMachineResponse> {
    return this.post(
      `/clusters/${enc(cluster)}/machines/${enc(uuid)}/join`,
      body,
    );
  }

  canReclaim(cluster: string): Promise<CanReclaimResponse> {
    return this.request(`/clusters/${enc(cluster)}/reclaims/can`);
  }

  createReclaim(
    cluster: string,
    body: CreateReclaimRequestBody,
  ): Promise<ReclaimCreatedResponse> {
    return this.post(`/clusters/${enc(cluster)}/reclaims`, body);
  }

  confirmReclaim(
    cluster: string,
    name: string,
    body: ConfirmReclaimRequestBody,
  ): Promise<ReclaimConfirmedResponse> {
    return this.post(
      `/clusters/${enc(cluster)}/reclaims/${enc(name)}/confirm`,
      body,
    );
  }

  async listReclaims(cluster: string): Promise<ReclaimResponse[]> {
    const body = await this.request<ReclaimListResponse>(
      `/clusters/${enc(cluster)}/reclaims`,
    );
    return body.items;
  }

  getReclaim(cluster: string, name: string): Promise<ReclaimResponse> {
    return this.request(`/clusters/${enc(cluster)}/reclaims/${enc(name)}`);
  }

  private post<T>(path: string, body: unknown): Promise<T> {
    return this.request(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
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
