import {
  createApiFactory,
  createComponentExtension,
  createPlugin,
  createRoutableExtension,
  discoveryApiRef,
  fetchApiRef,
} from '@backstage/core-plugin-api';
import {
  legacyAddNodeRouteRef,
  legacyApprovalsRouteRef,
  legacyMaintenanceRouteRef,
  legacyPlanRouteRef,
  legacyServersRouteRef,
} from './routes';
import {
  MachinesClient,
  machinesApiRef,
  ServersClient,
  serversApiRef,
} from './api';

/**
 * Rackside for apps on the legacy frontend system.
 *
 * @public
 */
export const serversPlugin = createPlugin({
  id: 'servers',
  routes: {
    root: legacyServersRouteRef,
    maintenance: legacyMaintenanceRouteRef,
    plan: legacyPlanRouteRef,
    addNode: legacyAddNodeRouteRef,
    approvals: legacyApprovalsRouteRef,
  },
  apis: [
    createApiFactory({
      api: serversApiRef,
      deps: { discoveryApi: discoveryApiRef, fetchApi: fetchApiRef },
      factory: ({ discoveryApi, fetchApi }) =>
        new ServersClient({ discoveryApi, fetchApi }),
    }),
    createApiFactory({
      api: machinesApiRef,
      deps: { discoveryApi: discoveryApiRef, fetchApi: fetchApiRef },
      factory: ({ discoveryApi, fetchApi }) =>
        new MachinesClient({ discoveryApi, fetchApi }),
    }),
  ],
});

/**
 * The Servers page, for a `<Route path="/servers" element={<ServersPage />} />`;
 * a maintenance's page is its sub-route `maintenances/:cluster/:name`, the Add
 * node page its sub-route `add-node`, the Approvals for me page its sub-route
 * `approvals`.
 *
 * @public
 */
export const ServersPage = serversPlugin.provide(
  createRoutableExtension({
    name: 'ServersPage',
    component: () =>
      import('./components/ServersRoutes').then(m => m.LegacyServersRoutes),
    mountPoint: legacyServersRouteRef,
  }),
);

/**
 * The Server tab of a catalog entity annotated `rackside.dev/node` (and
 * `rackside.dev/cluster`), e.g.
 * `<EntityLayout.Route path="/server" title="Server" if={isServerEntity}>`.
 *
 * @public
 */
export const EntityServerContent = serversPlugin.provide(
  createComponentExtension({
    name: 'EntityServerContent',
    component: {
      lazy: () =>
        import('./components/EntityServerContent').then(
          m => m.EntityServerContent,
        ),
    },
  }),
);
