/*
 * The Rackside demo portal's backend: the plugins a plant's Backstage would
 * already run (auth, catalog, permission, signals) plus Rackside.
 */
import { createBackend } from '@backstage/backend-defaults';

const backend = createBackend();

backend.add(import('@backstage/plugin-app-backend'));

backend.add(import('@backstage/plugin-auth-backend'));
backend.add(import('@backstage/plugin-auth-backend-module-guest-provider'));

backend.add(import('@backstage/plugin-catalog-backend'));
// Each server of servers.clusters as a Resource entity, each cluster a System.
backend.add(import('@rackside/plugin-catalog-backend-module-servers'));

backend.add(import('@backstage/plugin-permission-backend'));
// Rackside's app-config policy: tiers, allow and deny lines under
// permission.rackside in app-config.yaml, groups from the catalog.
backend.add(import('@rackside/plugin-permission-backend-module-servers'));

// Signals need the events bus to fan out "changed" notices.
backend.add(import('@backstage/plugin-events-backend'));
backend.add(import('@backstage/plugin-signals-backend'));
// Rackside tells requesters and workload owners through the notifications plugin.
backend.add(import('@backstage/plugin-notifications-backend'));

backend.add(import('@rackside/plugin-servers-backend'));
// The actions registry's actions (backend.actions.pluginSources) as MCP tools,
// at /api/mcp-actions/v1 with a user's token (docs/mcp.md).
backend.add(import('@backstage/plugin-mcp-actions-backend'));

backend.start();
