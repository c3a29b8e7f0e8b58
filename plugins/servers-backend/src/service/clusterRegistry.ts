import {
  coreServices,
  createServiceFactory,
  createServiceRef,
} from '@backstage/backend-plugin-api';
import { readClusterConfigs } from '@rackside/plugin-servers-node';
import { KubeClusterState } from './KubeClusterState';
import type { ClusterRegistry, ClusterState } from './types';

/** A registry over a fixed list of clusters. */
export function staticClusterRegistry(states: ClusterState[]): ClusterRegistry {
  const byName = new Map(states.map(s => [s.name, s]));
  return {
    list: () => states,
    get: name => byName.get(name),
  };
}

/**
 * The clusters of `servers.clusters`, each read through watch caches.
 * Replace this service to feed the routes from elsewhere (tests).
 *
 * @public
 */
export const clusterRegistryServiceRef = createServiceRef<ClusterRegistry>({
  id: 'rackside.servers.clusters',
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
          cluster => new KubeClusterState(cluster, logger),
        );
        lifecycle.addShutdownHook(async () => {
          await Promise.all(states.map(s => s.stop()));
        });
        return staticClusterRegistry(states);
      },
    }),
});
