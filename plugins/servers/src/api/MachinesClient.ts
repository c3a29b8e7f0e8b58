import type { DiscoveryApi, FetchApi } from '@backstage/frontend-plugin-api';
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
import { enc, ServersBackendHttp } from './backendHttp';
import type { MachinesApi } from './MachinesApi';

/**
 * {@link MachinesApi} over HTTP, through the app's discovery and fetch APIs
 * (so requests carry the user's Backstage token).
 *
 * @public
 */
export class MachinesClient implements MachinesApi {
  private readonly http: ServersBackendHttp;

  constructor(options: {
    discoveryApi: Pick<DiscoveryApi, 'getBaseUrl'>;
    fetchApi: Pick<FetchApi, 'fetch'>;
  }) {
    this.http = new ServersBackendHttp(options);
  }

  listMachines(cluster: string): Promise<MachinesResponse> {
    return this.http.get(`/clusters/${enc(cluster)}/machines`);
  }

  addDiscoveryAddress(
    cluster: string,
    body: AddDiscoveryAddressRequestBody,
  ): Promise<DiscoveryAddressAddedResponse> {
    return this.http.post(
      `/clusters/${enc(cluster)}/discovery/addresses`,
      body,
    );
  }

  joinMachine(
    cluster: string,
    uuid: string,
    body: JoinMachineRequestBody,
  ): Promise<JoinMachineResponse> {
    return this.http.post(
      `/clusters/${enc(cluster)}/machines/${enc(uuid)}/join`,
      body,
    );
  }

  canReclaim(cluster: string): Promise<CanReclaimResponse> {
    return this.http.get(`/clusters/${enc(cluster)}/reclaims/can`);
  }

  createReclaim(
    cluster: string,
    body: CreateReclaimRequestBody,
  ): Promise<ReclaimCreatedResponse> {
    return this.http.post(`/clusters/${enc(cluster)}/reclaims`, body);
  }

  confirmReclaim(
    cluster: string,
    name: string,
    body: ConfirmReclaimRequestBody,
  ): Promise<ReclaimConfirmedResponse> {
    return this.http.post(
      `/clusters/${enc(cluster)}/reclaims/${enc(name)}/confirm`,
      body,
    );
  }

  async listReclaims(cluster: string): Promise<ReclaimResponse[]> {
    const body = await this.http.get<ReclaimListResponse>(
      `/clusters/${enc(cluster)}/reclaims`,
    );
    return body.items;
  }

  getReclaim(cluster: string, name: string): Promise<ReclaimResponse> {
    return this.http.get(`/clusters/${enc(cluster)}/reclaims/${enc(name)}`);
  }
}
