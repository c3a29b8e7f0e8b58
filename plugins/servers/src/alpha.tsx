import {
  createFrontendPlugin,
  PageBlueprint,
} from '@backstage/frontend-plugin-api';
import DnsIcon from '@mui/icons-material/Dns';
import { serversRouteRef } from './routes';

/** The Servers page at `/servers`. */
export const serversPage = PageBlueprint.make({
  params: {
    path: '/servers',
    title: 'Servers',
    icon: <DnsIcon fontSize="small" />,
    routeRef: serversRouteRef,
    loader: () =>
      import('./components/ServersPage').then(m => <m.ServersPage />),
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
  extensions: [serversPage],
  routes: { root: serversRouteRef },
});
