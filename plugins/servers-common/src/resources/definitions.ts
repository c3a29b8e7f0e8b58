import type { CrdDefinition, CustomResourceDefinition } from './crd';
import { renderCrd } from './crd';
import { machineReclaimCrd, machineReclaimResource } from './machineReclaim';
import { maintenancePlanCrd, maintenancePlanResource } from './maintenancePlan';
import { nodeMaintenanceCrd, nodeMaintenanceResource } from './nodeMaintenance';
import { powerProviderCrd, powerProviderResource } from './powerProvider';
import { serverBmcCrd, serverBmcResource } from './serverBmc';
import { talosClusterCrd, talosClusterResource } from './talosCluster';
import { talosMachineCrd, talosMachineResource } from './talosMachine';

/** Every Rackside resource, by kind. */
export const RACKSIDE_RESOURCES = {
  NodeMaintenance: nodeMaintenanceResource,
  PowerProvider: powerProviderResource,
  ServerBMC: serverBmcResource,
  TalosCluster: talosClusterResource,
  TalosMachine: talosMachineResource,
  MachineReclaim: machineReclaimResource,
  MaintenancePlan: maintenancePlanResource,
} as const;

/** A Rackside kind. */
export type RacksideKind = keyof typeof RACKSIDE_RESOURCES;

/** What every CRD is rendered from, in the order of {@link RACKSIDE_RESOURCES}. */
export const RACKSIDE_CRD_DEFINITIONS: readonly CrdDefinition[] = [
  nodeMaintenanceCrd,
  powerProviderCrd,
  serverBmcCrd,
  talosClusterCrd,
  talosMachineCrd,
  machineReclaimCrd,
  maintenancePlanCrd,
];

/**
 * The CustomResourceDefinitions, rendered from the zod schemas. `crds/*.yaml` hold
 * exactly these (a test fails when they drift; regenerate with
 * `yarn workspace @rackside/plugin-servers-common gen:crds`).
 */
export function racksideCustomResourceDefinitions(): CustomResourceDefinition[] {
  return RACKSIDE_CRD_DEFINITIONS.map(renderCrd);
}
