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
import { startServersPage } from './components/ServersPage/pageStart';
import {
  addNodeRouteRef,
  approvalsRouteRef,
  maintenanceRouteRef,
  planRouteRef,
  serversRouteRef,
} from './routes';
import {
  MachinesClient,
  machinesApiRef,
  ServersClient,
  serversApiRef,
} from './api';

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

/** The `MachinesApi` (discovery, joins, Reset and add) over HTTP. */
export const machinesApi = ApiBlueprint.make({
  name: 'machines',
  params: defineParams =>
    defineParams({
      api: machinesApiRef,
      deps: { discoveryApi: discoveryApiRef, fetchApi: fetchApiRef },
      factory: ({ discoveryApi, fetchApi }) =>
        new MachinesClient({ discoveryApi, fetchApi }),
    }),
});

/**
 * The Servers page at `/servers`. Its loader asks the page's first requests
 * (the clusters, then each one's first window) as it asks for the page's code,
 * so a first visit does not wait for the code before asking (pageStart.ts).
 */
export const serversPage = PageBlueprint.makeWithOverrides({
  factory(originalFactory, { apis }) {
    return originalFactory({
      path: '/servers',
      title: 'Servers',
      icon: <DnsIcon fontSize="small" />,
      routeRef: serversRouteRef,
      loader: () => {
        const api = apis.get(serversApiRef);
        const start = api && startServersPage(api);
        return import('./alpha/NfsServersPage').then(m => (
          <m.NfsServersPage start={start} />
        ));
      },
    });
  },
});

/** One maintenance's page at `/servers/maintenances/:cluster/:name`. */
export const maintenancePage = PageBlueprint.make({
  name: 'maintenance',
  params: {
    path: '/servers/maintenances/:cluster/:name',
    routeRef: maintenanceRouteRef,
    loader: () =>
      import('./alpha/NfsMaintenancePage').then(m => <m.NfsMaintenancePage />),
  },
});

/** One maintenance plan's page at `/servers/plans/:cluster/:name`. */
export const planPage = PageBlueprint.make({
  name: 'plan',
  params: {
    path: '/servers/plans/:cluster/:name',
    routeRef: planRouteRef,
    loader: () => import('./alpha/NfsPlanPage').then(m => <m.NfsPlanPage />),
  },
});

/** The Add node page at `/servers/add-node`. */
export const addNodePage = PageBlueprint.make({
  name: 'add-node',
  params: {
    path: '/servers/add-node',
    routeRef: addNodeRouteRef,
    loader: () =>
      import('./alpha/NfsAddNodePage').then(m => <m.NfsAddNodePage />),
  },
});

/** The Approvals for me page at `/servers/approvals`. */
export const approvalsPage = PageBlueprint.make({
  name: 'approvals',
  params: {
    path: '/servers/approvals',
    routeRef: approvalsRouteRef,
    loader: () =>
      import('./alpha/NfsApprovalsPage').then(m => <m.NfsApprovalsPage />),
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
  extensions: [
    serversApi,
    machinesApi,
    serversPage,
    maintenancePage,
    planPage,
    addNodePage,
    approvalsPage,
    entityServerContent,
  ],
  routes: {
    root: serversRouteRef,
    maintenance: maintenanceRouteRef,
    plan: planRouteRef,
    addNode: addNodeRouteRef,
    approvals: approvalsRouteRef,
  },
});

export {
  serversApiRef,
  ServersClient,
  machinesApiRef,
  MachinesClient,
} from './api';
export type { ServersApi, MachinesApi } from './api';
