import {
  createPlugin,
  createRoutableExtension,
} from '@backstage/core-plugin-api';
import { legacyServersRouteRef } from './routes';

/**
 * Rackside for apps on the legacy frontend system.
 *
 * @public
 */
export const serversPlugin = createPlugin({
  id: 'servers',
  routes: { root: legacyServersRouteRef },
});

/**
 * The Servers page, for a `<Route path="/servers" element={<ServersPage />} />`.
 *
 * @public
 */
export const ServersPage = serversPlugin.provide(
  createRoutableExtension({
    name: 'ServersPage',
    component: () =>
      import('./components/ServersPage').then(m => m.ServersPage),
    mountPoint: legacyServersRouteRef,
  }),
);
