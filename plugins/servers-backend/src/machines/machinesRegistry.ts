import { KubeMachinesState } from './KubeMachinesState';
import type { MachinesRegistry, MachinesState } from '../cluster/machinesTypes';
import {
  fixedRegistry,
  perClusterRegistryServiceRef,
} from '../cluster/perClusterRegistry';

/** A registry over a fixed list of clusters' machine states. */
export function staticMachinesRegistry(
  states: MachinesState[],
): MachinesRegistry {
  return fixedRegistry(states, s => s.cluster);
}

/**
 * The machine side (TalosClusters, TalosMachines, MachineReclaims in the operator
 * namespace) of each cluster of `servers.clusters`, read through watch caches.
 * Replace this service to feed the machine routes from elsewhere (tests).
 *
 * @public
 */
export const machinesRegistryServiceRef = perClusterRegistryServiceRef<
  KubeMachinesState,
  MachinesRegistry
>({
  id: 'rackside.servers.machines',
  open: (cluster, { logger }) => new KubeMachinesState(cluster, logger),
  registry: staticMachinesRegistry,
});
