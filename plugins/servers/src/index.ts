/**
 * Rackside frontend plugin (legacy frontend system). The new frontend system
 * entry point is `@rackside/plugin-servers/alpha`.
 *
 * @packageDocumentation
 */
export { serversPlugin, ServersPage } from './plugin';
export { serversApiRef, ServersClient } from './api';
export type { ServersApi } from './api';
