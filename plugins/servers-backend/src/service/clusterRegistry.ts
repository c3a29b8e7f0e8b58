import {
  coreServices,
  createServiceFactory,
  createServiceRef,
} from '@backstage/backend-plugin-api';
import {
  clusterNodesServiceRef,
  readClusterConfigs,
} from '@rackside/plugin-servers-node';
import { KubeClusterState } from './KubeClusterState';
import { fixedRegistry } from './perClusterRegistry';
import type { ClusterRegistry, ClusterState } from './types';

/** A registry over a fixed list of clusters. */
export function staticClusterRegistry(states: ClusterState[]): ClusterRegistry {
  return fixedRegistry(states, s => s.name);
}

/**
 * The clusters of `servers.clusters`, each read through watch caches; the Node watch
 * of each is the process's shared one (`clusterNodesServiceRef`, also read by the
 * catalog module), so a backend opens one Node watch per cluster.
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
        clusterNodes: clusterNodesServiceRef,
      },
      factory({ config, logger, lifecycle, clusterNodes }) {
        const states = readClusterConfigs(config).map(
          cluster =>
            new KubeClusterState(cluster, logger, {
              nodes: clusterNodes.forCluster(cluster),
            }),
        );
        lifecycle.addShutdownHook(async () => {
          await Promise.all(states.map(s => s.stop()));
        });
        return staticClusterRegistry(states);
      },
    }),
});

/**
 * The registry service over a fixed list of clusters, for a test backend (as
 * `packages/backend`'s test of the MCP endpoint runs the servers plugin over an
 * in-memory cluster).
 *
 * @public
 */
export function staticClusterRegistryFactory(states: ClusterState[]) {
  return createServiceFactory({
    service: clusterRegistryServiceRef,
    deps: {},
    factory: () => staticClusterRegistry(states),
  });
}
