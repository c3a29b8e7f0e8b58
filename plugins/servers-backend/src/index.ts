/**
 * The Rackside backend plugin: servers, pre-flight and maintenance actions
 * under `/api/servers`.
 *
 * @packageDocumentation
 */
export { serversPlugin as default, SERVERS_SIGNAL_CHANNEL } from './plugin';
export {
  clusterRegistryServiceRef,
  staticClusterRegistry,
  staticClusterRegistryFactory,
} from './service/clusterRegistry';
export type {
  ClusterRegistry,
  ClusterState,
  MaintenanceObject,
  NewMaintenance,
  RequestFlagName,
} from './service/types';
export {
  machinesRegistryServiceRef,
  staticMachinesRegistry,
} from './service/machinesRegistry';
export type {
  CredentialSecret,
  KubernetesReclaimAccess,
  MachinesRegistry,
  MachinesState,
} from './service/machinesTypes';
