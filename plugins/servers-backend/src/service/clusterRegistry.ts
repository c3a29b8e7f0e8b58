import { KubeClusterState } from './KubeClusterState';
import {
  fixedRegistry,
  perClusterRegistryServiceRef,
} from './perClusterRegistry';
import type { ClusterRegistry, ClusterState } from './types';

/** A registry over a fixed list of clusters. */
export function staticClusterRegistry(states: ClusterState[]): ClusterRegistry {
  return fixedRegistry(states, s => s.name);
}

/**
 * The clusters of `servers.clusters`, each read through watch caches.
 * Replace this service to feed the routes from elsewhere (tests).
 *
 * @public
 */
export const clusterRegistryServiceRef = perClusterRegistryServiceRef<
  KubeClusterState,
  ClusterRegistry
>({
  id: 'rackside.servers.clusters',
  open: (cluster, logger) => new KubeClusterState(cluster, logger),
  registry: staticClusterRegistry,
});
