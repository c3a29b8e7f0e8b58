import { useMemo } from 'react';
import { Route, Routes, useParams } from 'react-router-dom';
import { useRouteRef as useLegacyRouteRef } from '@backstage/core-plugin-api';
import {
  legacyAddNodeRouteRef,
  legacyApprovalsRouteRef,
  legacyMaintenanceRouteRef,
  legacyPlanRouteRef,
  legacyServersRouteRef,
} from '../routes';
import { AddNodePage } from './AddNodePage';
import { ApprovalsPage } from './ApprovalsPage';
import { ServersLinksProvider, type ServersLinks } from './ui/links';
import { MaintenancePage } from './MaintenancePage';
import { PlanPage } from './PlanPage';
import { ServersPage } from './ServersPage';

/*
 * The legacy frontend system's routes. The new system's pages are in src/alpha/, a
 * module each, so that each page's loader fetches that page's code alone.
 */

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
  const approvals = useLegacyRouteRef(legacyApprovalsRouteRef);
  const links = useMemo<ServersLinks>(
    () => ({
      servers: () => servers(),
      maintenance: (cluster, name) => maintenance({ cluster, name }),
      plan: (cluster, name) => plan({ cluster, name }),
      addNode: () => addNode(),
      approvals: () => approvals(),
    }),
    [servers, maintenance, plan, addNode, approvals],
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
        <Route
          path={legacyApprovalsRouteRef.path}
          element={<ApprovalsPage />}
        />
      </Routes>
    </ServersLinksProvider>
  );
}
