import { createRouteRef as createLegacyRouteRef } from '@backstage/core-plugin-api';
import { createRouteRef } from '@backstage/frontend-plugin-api';

/** Route of the Servers page in the new frontend system. */
export const serversRouteRef = createRouteRef();

/** Route of the Servers page for apps on the legacy frontend system. */
export const legacyServersRouteRef = createLegacyRouteRef({ id: 'servers' });
