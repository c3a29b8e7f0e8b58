import { createApiRef } from '@backstage/frontend-plugin-api';
import type {
  ActionRequestBody,
  ActionResponse,
  ClusterSummaryResponse,
  MaintenanceResponse,
  ServerAction,
  ServerListResponse,
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
  /** `GET /clusters/:cluster/maintenances[?node=]`, newest first. */
  listMaintenances(
    cluster: string,
    node?: string,
  ): Promise<MaintenanceResponse[]>;
  /** `GET /clusters/:cluster/maintenances/:name`. */
  getMaintenance(cluster: string, name: string): Promise<MaintenanceResponse>;
  /** `POST /clusters/:cluster/servers/:node/actions/:action`. */
  requestAction(
    cluster: string,
    node: string,
    action: ServerAction,
    body: ActionRequestBody,
  ): Promise<ActionResponse>;
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
