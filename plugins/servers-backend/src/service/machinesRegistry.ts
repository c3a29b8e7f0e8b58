import {
  coreServices,
  createServiceFactory,
  createServiceRef,
} from '@backstage/backend-plugin-api';
import { readClusterConfigs } from '@rackside/plugin-servers-node';
import { KubeMachinesState } from './KubeMachinesState';
import type { MachinesRegistry, MachinesState } from './machinesTypes';

/** A registry over a fixed list of clusters' machine states. */
export function staticMachinesRegistry(
  states: MachinesState[],
): MachinesRegistry {
  const byName = new Map(states.map(s => [s.cluster, s]));
  return {
    list: () => states,
    get: name => byName.get(name),
  };
}

/**
 * The machine side (TalosClusters, TalosMachines, MachineReclaims in the operator
 * namespace) of each cluster of `servers.clusters`, read through watch caches.
 * Replace this service to feed the machine routes from elsewhere (tests).
 *
 * @public
 */
export const machinesRegistryServiceRef = createServiceRef<MachinesRegistry>({
  id: 'rackside.servers.machines',
  scope: 'plugin',
  defaultFactory: async service =>
    createServiceFactory({
      service,
      deps: {
        config: coreServices.rootConfig,
        logger: coreServices.logger,
        lifecycle: coreServices.lifecycle,
      },
      factory({ config, logger, lifecycle }) {
        const states = readClusterConfigs(config).map(
          cluster => new KubeMachinesState(cluster, logger),
        );
        lifecycle.addShutdownHook(async () => {
          await Promise.all(states.map(s => s.stop()));
        });
        return staticMachinesRegistry(states);
      },
    }),
});
