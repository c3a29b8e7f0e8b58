import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersEdgeService } from '../servers/ServersService';
import { DEFAULT_AGENT_POLICY, type AgentPolicy } from './agentPolicy';
import { registerAbandonServerMaintenanceAction } from './abandonServerMaintenance';
import { registerCordonServerAction } from './cordonServer';
import { registerDrainServerAction } from './drainServer';
import { registerGetServerAction } from './getServer';
import { registerListClustersAction } from './listClusters';
import { registerListMaintenancesAction } from './listMaintenances';
import { registerListServersAction } from './listServers';
import { registerPowerOnServerAction } from './powerOnServer';
import { registerPreflightAction } from './preflight';
import { registerRebootServerAction } from './rebootServer';
import { registerShutdownServerAction } from './shutdownServer';
import { registerUncordonServerAction } from './uncordonServer';
import { registerUpdateServerFirmwareAction } from './updateServerFirmware';
import { registerUpgradeServerAction } from './upgradeServer';

/**
 * The plugin's actions in the Backstage actions registry (for MCP clients and other
 * plugins): the same reads and the same action requests as the routes, through the same
 * service, so the same permission, reason policy, ceremony and guard checks apply, and
 * what an agent may not do on its own (agentPolicy.ts, `servers.actions`). One
 * action per server verb, so each carries its own readOnly/destructive/idempotent hints.
 */
export function registerServersActions(
  registry: ActionsRegistryService,
  service: ServersEdgeService,
  policy: AgentPolicy = DEFAULT_AGENT_POLICY,
): void {
  registerListClustersAction(registry, service);
  registerListServersAction(registry, service);
  registerGetServerAction(registry, service);
  registerPreflightAction(registry, service, policy);
  registerListMaintenancesAction(registry, service);
  registerCordonServerAction(registry, service, policy);
  registerUncordonServerAction(registry, service, policy);
  registerDrainServerAction(registry, service, policy);
  registerRebootServerAction(registry, service, policy);
  registerShutdownServerAction(registry, service, policy);
  registerPowerOnServerAction(registry, service, policy);
  registerAbandonServerMaintenanceAction(registry, service, policy);
  registerUpgradeServerAction(registry, service, policy);
  registerUpdateServerFirmwareAction(registry, service, policy);
}
