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
} from './cluster/clusterRegistry';
export type {
  ClusterRegistry,
  ClusterState,
  MaintenanceObject,
  NewMaintenance,
  RequestFlagName,
  ServerBmcRecord,
} from './cluster/types';
export type { ClusterAlerts } from './cluster/nodeAlerts';
export {
  machinesRegistryServiceRef,
  staticMachinesRegistry,
} from './machines/machinesRegistry';
export type {
  CredentialSecret,
  KubernetesReclaimAccess,
  MachinesRegistry,
  MachinesState,
} from './cluster/machinesTypes';
