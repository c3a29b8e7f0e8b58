import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersService } from '../service/ServersService';
import { registerGetServerAction } from './getServer';
import { registerListMaintenancesAction } from './listMaintenances';
import { registerListServersAction } from './listServers';
import { registerPreflightAction } from './preflight';
import { registerRequestServerAction } from './requestServerAction';

/**
 * The plugin's actions in the Backstage actions registry (for MCP clients and other
 * plugins): the same reads and the same action requests as the routes, through the same
 * service, so the same permission, reason policy, ceremony and guard checks apply.
 */
export function registerServersActions(
  registry: ActionsRegistryService,
  service: ServersService,
): void {
  registerListServersAction(registry, service);
  registerGetServerAction(registry, service);
  registerPreflightAction(registry, service);
  registerListMaintenancesAction(registry, service);
  registerRequestServerAction(registry, service);
}
