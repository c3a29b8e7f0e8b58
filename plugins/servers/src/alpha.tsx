import {
  ApiBlueprint,
  createFrontendPlugin,
  discoveryApiRef,
  fetchApiRef,
  PageBlueprint,
} from '@backstage/frontend-plugin-api';
import { EntityContentBlueprint } from '@backstage/plugin-catalog-react/alpha';
import DnsIcon from '@mui/icons-material/Dns';
import { isServerEntity } from './components/EntityServerContent/annotations';
import { maintenanceRouteRef, serversRouteRef } from './routes';
import { ServersClient, serversApiRef } from './api';

/** The `ServersApi` over HTTP. */
export const serversApi = ApiBlueprint.make({
  params: defineParams =>
    defineParams({
      api: serversApiRef,
      deps: { discoveryApi: discoveryApiRef, fetchApi: fetchApiRef },
      factory: ({ discoveryApi, fetchApi }) =>
        new ServersClient({ discoveryApi, fetchApi }),
    }),
});

/** The Servers page at `/servers`. */
export const serversPage = PageBlueprint.make({
  params: {
    path: '/servers',
    title: 'Servers',
    icon: <DnsIcon fontSize="small" />,
    routeRef: serversRouteRef,
    loader: () =>
      import('./components/ServersRoutes').then(m => <m.NfsServersPage />),
  },
});

/** One maintenance's page at `/servers/maintenances/:cluster/:name`. */
export const maintenancePage = PageBlueprint.make({
  name: 'maintenance',
  params: {
    path: '/servers/maintenances/:cluster/:name',
    routeRef: maintenanceRouteRef,
    loader: () =>
      import('./components/ServersRoutes').then(m => <m.NfsMaintenancePage />),
  },
});

/** The Server tab on catalog entities annotated `rackside.dev/node`. */
export const entityServerContent = EntityContentBlueprint.make({
  name: 'server',
  params: {
    path: 'server',
    title: 'Server',
    filter: isServerEntity,
    loader: () =>
      import('./components/EntityServerContent').then(m => (
        <m.EntityServerContent />
      )),
  },
});

/**
 * Rackside for the new frontend system: take bare-metal servers out of
 * service and bring them back.
 *
 * @alpha
 */
export default createFrontendPlugin({
  pluginId: 'servers',
  extensions: [serversApi, serversPage, maintenancePage, entityServerContent],
  routes: { root: serversRouteRef, maintenance: maintenanceRouteRef },
});

export { serversApiRef, ServersClient } from './api';
export type { ServersApi } from './api';
