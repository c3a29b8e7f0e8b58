import {
  createRouteRef as createLegacyRouteRef,
  createSubRouteRef as createLegacySubRouteRef,
} from '@backstage/core-plugin-api';
import { createRouteRef } from '@backstage/frontend-plugin-api';

/** Route of the Servers page in the new frontend system. */
export const serversRouteRef = createRouteRef();

/**
 * Route of one maintenance's page in the new frontend system, mounted at
 * `/servers/maintenances/:cluster/:name`.
 */
export const maintenanceRouteRef = createRouteRef({
  params: ['cluster', 'name'],
});

/**
 * Route of one maintenance plan's page in the new frontend system, mounted at
 * `/servers/plans/:cluster/:name`.
 */
export const planRouteRef = createRouteRef({
  params: ['cluster', 'name'],
});

/**
 * Route of the Approvals for me page in the new frontend system (`/servers/approvals`):
 * the requests awaiting an approval the signed-in user may give.
 */
export const approvalsRouteRef = createRouteRef();

/** Route of the Add node page in the new frontend system (`/servers/add-node`). */
export const addNodeRouteRef = createRouteRef();

/** Route of the Servers page for apps on the legacy frontend system. */
export const legacyServersRouteRef = createLegacyRouteRef({ id: 'servers' });

/** One maintenance's page under the Servers page, for legacy apps. */
export const legacyMaintenanceRouteRef = createLegacySubRouteRef({
  id: 'servers-maintenance',
  parent: legacyServersRouteRef,
  path: '/maintenances/:cluster/:name',
});

/** The Add node page under the Servers page, for legacy apps. */
export const legacyAddNodeRouteRef = createLegacySubRouteRef({
  id: 'servers-add-node',
  parent: legacyServersRouteRef,
  path: '/add-node',
});

/** The Approvals for me page under the Servers page, for legacy apps. */
export const legacyApprovalsRouteRef = createLegacySubRouteRef({
  id: 'servers-approvals',
  parent: legacyServersRouteRef,
  path: '/approvals',
});

/** One maintenance plan's page under the Servers page, for legacy apps. */
export const legacyPlanRouteRef = createLegacySubRouteRef({
  id: 'servers-plan',
  parent: legacyServersRouteRef,
  path: '/plans/:cluster/:name',
});
