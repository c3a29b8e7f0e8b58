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

backend.add(import('@backstage/plugin-permission-backend'));
// Replaced by @rackside/plugin-permission-backend-module-servers once its
// app-config policy lands; until then every authenticated user is allowed
// everything but the permissions listed under rackside.demoPolicy.deny.
backend.add(import('./demoPolicy'));

// Signals need the events bus to fan out "changed" notices.
backend.add(import('@backstage/plugin-events-backend'));
backend.add(import('@backstage/plugin-signals-backend'));

backend.add(import('@rackside/plugin-servers-backend'));

backend.start();
