import type express from 'express';
import Router from 'express-promise-router';
import { jsonBody } from './lib/jsonBody';
import { addDiscoveryAddressRoute } from './machines/addDiscoveryAddress';
import { confirmReclaimRoute } from './machines/confirmReclaim';
import type { MachinesRouteContext } from './machines/context';
import { createReclaimRoute } from './machines/createReclaim';
import { joinMachineRoute } from './machines/joinMachine';
import { addMachineReadRoutes } from './machines/reads';

/** Options of {@link createMachinesRouter}. */
export type MachinesRouterOptions = MachinesRouteContext;

/** The paths this router answers (prefixes). */
const MACHINE_PATHS = [
  '/clusters/:cluster/machines',
  '/clusters/:cluster/discovery',
  '/clusters/:cluster/reclaims',
];

/** Room for a talosconfig (64 KiB) and the rest of a body, JSON-escaped. */
const BODY_LIMIT = '256kb';

/**
 * The machine routes under `/api/servers` (DESIGN section 7): discovery addresses and
 * discovered machines, joining a machine, and "Reset and add" requests. Mount it
 * before the servers router, so its body parser (and not the general one) reads
 * these requests.
 */
export async function createMachinesRouter(
  options: MachinesRouterOptions,
): Promise<express.Router> {
  const router = Router();
  router.use(MACHINE_PATHS, jsonBody({ limit: BODY_LIMIT, quiet: true }));
  addMachineReadRoutes(router, options);
  addDiscoveryAddressRoute(router, options);
  joinMachineRoute(router, options);
  createReclaimRoute(router, options);
  confirmReclaimRoute(router, options);
  return router;
}
