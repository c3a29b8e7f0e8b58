import { useMemo } from 'react';
import { Route, Routes, useParams } from 'react-router-dom';
import { useRouteRef as useLegacyRouteRef } from '@backstage/core-plugin-api';
import { ReactRouterV6PageRouter } from '@backstage/frontend-adapter-react-router-v6';
import { useRouteRef, useRouteRefParams } from '@backstage/frontend-plugin-api';
import {
  addNodeRouteRef,
  legacyAddNodeRouteRef,
  legacyMaintenanceRouteRef,
  legacyPlanRouteRef,
  legacyServersRouteRef,
  maintenanceRouteRef,
  planRouteRef,
  serversRouteRef,
} from '../routes';
import { AddNodePage } from './AddNodePage';
import { ServersLinksProvider, type ServersLinks } from './links';
import { MaintenancePage } from './MaintenancePage';
import type { PageStart } from './pageStart';
import { PlanPage } from './plans/PlanPage';
import { ServersPage } from './ServersPage';

/*
 * The page wrappers of the two frontend systems. Each resolves the plugin's
 * route refs with its own system's hook and hands the links to the shared
 * components through ServersLinksProvider. The shared components link with
 * React Router v6, so the new system's pages declare its adapter.
 */

function useNfsLinks(): ServersLinks {
  const servers = useRouteRef(serversRouteRef);
  const maintenance = useRouteRef(maintenanceRouteRef);
  const addNode = useRouteRef(addNodeRouteRef);
  const plan = useRouteRef(planRouteRef);
  return useMemo(
    () => ({
      servers: servers && (() => servers()),
      maintenance:
        maintenance &&
        ((cluster: string, name: string) => maintenance({ cluster, name })),
      plan:
        plan && ((cluster: string, name: string) => plan({ cluster, name })),
      addNode: addNode && (() => addNode()),
    }),
    [servers, maintenance, plan, addNode],
  );
}

/**
 * The Servers page in the new frontend system; `start` holds the requests its
 * loader made (alpha.tsx).
 */
export function NfsServersPage(props: { start?: PageStart }) {
  return (
    <ReactRouterV6PageRouter>
      <ServersLinksProvider links={useNfsLinks()}>
        <ServersPage start={props.start} />
      </ServersLinksProvider>
    </ReactRouterV6PageRouter>
  );
}

/** A maintenance's page in the new frontend system. */
export function NfsMaintenancePage() {
  const { cluster, name } = useRouteRefParams(maintenanceRouteRef);
  return (
    <ReactRouterV6PageRouter>
      <ServersLinksProvider links={useNfsLinks()}>
        <MaintenancePage cluster={cluster} name={name} />
      </ServersLinksProvider>
    </ReactRouterV6PageRouter>
  );
}

/** A maintenance plan's page in the new frontend system. */
export function NfsPlanPage() {
  const { cluster, name } = useRouteRefParams(planRouteRef);
  return (
    <ReactRouterV6PageRouter>
      <ServersLinksProvider links={useNfsLinks()}>
        <PlanPage cluster={cluster} name={name} />
      </ServersLinksProvider>
    </ReactRouterV6PageRouter>
  );
}

/** The Add node page in the new frontend system. */
export function NfsAddNodePage() {
  return (
    <ReactRouterV6PageRouter>
      <ServersLinksProvider links={useNfsLinks()}>
        <AddNodePage />
      </ServersLinksProvider>
    </ReactRouterV6PageRouter>
  );
}

function LegacyMaintenanceRoute() {
  const { cluster = '', name = '' } = useParams();
  return <MaintenancePage cluster={cluster} name={name} />;
}

function LegacyPlanRoute() {
  const { cluster = '', name = '' } = useParams();
  return <PlanPage cluster={cluster} name={name} />;
}

/**
 * The legacy frontend system mounts one element at the Servers route; the
 * maintenance pages are its sub-routes.
 */
export function LegacyServersRoutes() {
  const servers = useLegacyRouteRef(legacyServersRouteRef);
  const maintenance = useLegacyRouteRef(legacyMaintenanceRouteRef);
  const addNode = useLegacyRouteRef(legacyAddNodeRouteRef);
  const plan = useLegacyRouteRef(legacyPlanRouteRef);
  const links = useMemo<ServersLinks>(
    () => ({
      servers: () => servers(),
      maintenance: (cluster, name) => maintenance({ cluster, name }),
      plan: (cluster, name) => plan({ cluster, name }),
      addNode: () => addNode(),
    }),
    [servers, maintenance, plan, addNode],
  );
  return (
    <ServersLinksProvider links={links}>
      <Routes>
        <Route path="/" element={<ServersPage />} />
        <Route
          path={legacyMaintenanceRouteRef.path}
          element={<LegacyMaintenanceRoute />}
        />
        <Route path={legacyPlanRouteRef.path} element={<LegacyPlanRoute />} />
        <Route path={legacyAddNodeRouteRef.path} element={<AddNodePage />} />
      </Routes>
    </ServersLinksProvider>
  );
}
