import { createServiceFactory } from '@backstage/backend-plugin-api';
import { NotFoundError } from '@backstage/errors';
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

/** The cluster named `name`, or 404. */
export function clusterOr404(
  clusters: ClusterRegistry,
  name: string,
): ClusterState {
  const cluster = clusters.get(name);
  if (!cluster) throw new NotFoundError(`no cluster named ${name}`);
  return cluster;
}

/**
 * The clusters of `servers.clusters`, each read through watch caches; the Node watch
 * of each is the process's shared one (`clusterNodesServiceRef`, also read by the
 * catalog module), so a backend opens one Node watch per cluster.
 * Replace this service to feed the routes from elsewhere (tests).
 *
 * @public
 */
export const clusterRegistryServiceRef = perClusterRegistryServiceRef<
  KubeClusterState,
  ClusterRegistry
>({
  id: 'rackside.servers.clusters',
  open: (cluster, { logger, clusterNodes }) =>
    new KubeClusterState(cluster, logger, {
      nodes: clusterNodes.forCluster(cluster),
    }),
  registry: staticClusterRegistry,
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
