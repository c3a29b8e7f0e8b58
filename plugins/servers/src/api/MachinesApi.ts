import { createApiRef } from '@backstage/frontend-plugin-api';
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
  ReclaimResponse,
} from '@rackside/plugin-servers-common';

/**
 * The machine routes of the Rackside backend (`/api/servers`): discovery,
 * joining machines, and "Reset and add". Failed requests reject with a
 * `ResponseError` from `@backstage/errors` whose `cause` carries the backend's
 * message.
 *
 * @public
 */
export interface MachinesApi {
  /** `GET /clusters/:cluster/machines`: discovery addresses with state, and machines. */
  listMachines(cluster: string): Promise<MachinesResponse>;
  /** `POST /clusters/:cluster/discovery/addresses`. */
  addDiscoveryAddress(
    cluster: string,
    body: AddDiscoveryAddressRequestBody,
  ): Promise<DiscoveryAddressAddedResponse>;
  /** `POST /clusters/:cluster/machines/:uuid/join`. */
  joinMachine(
    cluster: string,
    uuid: string,
    body: JoinMachineRequestBody,
  ): Promise<JoinMachineResponse>;
  /** `GET /clusters/:cluster/reclaims/can`: whether "Reset and add" is offered. */
  canReclaim(cluster: string): Promise<CanReclaimResponse>;
  /**
   * `POST /clusters/:cluster/reclaims`. The talosconfig is sent once and
   * never comes back.
   */
  createReclaim(
    cluster: string,
    body: CreateReclaimRequestBody,
  ): Promise<ReclaimCreatedResponse>;
  /** `POST /clusters/:cluster/reclaims/:name/confirm` with the typed UUID. */
  confirmReclaim(
    cluster: string,
    name: string,
    body: ConfirmReclaimRequestBody,
  ): Promise<ReclaimConfirmedResponse>;
  /** `GET /clusters/:cluster/reclaims`, newest first. */
  listReclaims(cluster: string): Promise<ReclaimResponse[]>;
  /** `GET /clusters/:cluster/reclaims/:name`. */
  getReclaim(cluster: string, name: string): Promise<ReclaimResponse>;
}

/**
 * The {@link MachinesApi} of the app.
 *
 * @public
 */
export const machinesApiRef = createApiRef<MachinesApi>().with({
  id: 'plugin.servers.machines',
  pluginId: 'servers',
});
