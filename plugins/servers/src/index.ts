/**
 * Rackside frontend plugin (legacy frontend system). The new frontend system
 * entry point is `@rackside/plugin-servers/alpha`.
 *
 * @packageDocumentation
 */
export { serversPlugin, ServersPage, EntityServerContent } from './plugin';
export {
  CLUSTER_ANNOTATION,
  NODE_ANNOTATION,
  isServerEntity,
} from './components/EntityServerContent/annotations';
export {
  serversApiRef,
  ServersClient,
  machinesApiRef,
  MachinesClient,
} from './api';
export type { ServersApi, MachinesApi } from './api';
