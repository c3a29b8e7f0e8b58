import {
  coreServices,
  createServiceFactory,
  createServiceRef,
  type ServiceFactory,
  type ServiceRef,
} from '@backstage/backend-plugin-api';
import { makeKubeConfig, type ClusterConfig } from '../clusterConfig';
import {
  createClusterNodes,
  type ClusterNodes,
  type ClusterNodesOptions,
} from './ClusterNodes';

/**
 * The Node watches of a backend process: one per cluster, opened by the first reader
 * that asks and shared with every later one (the servers plugin and the catalog module
 * both read `servers.clusters`). Root-scoped, so plugins share it.
 *
 * @public
 */
export interface ClusterNodesService {
  /** The shared Node watch of `cluster` (opened on first use). */
  forCluster(cluster: ClusterConfig): ClusterNodes;
  /** Node watch requests opened so far, over every cluster (benches and tests). */
  watchesOpened(): number;
}

/** Options of {@link clusterNodesServiceFactory}. */
export interface ClusterNodesServiceOptions {
  /** Makes a cluster's watch; tests hand in a fake transport here. */
  open?: (
    cluster: ClusterConfig,
    defaults: Pick<ClusterNodesOptions, 'cluster' | 'logger'>,
  ) => ClusterNodes;
}

/** A {@link ClusterNodesService} over `open`; stop() stops every watch it opened. */
export function createClusterNodesService(
  open: (cluster: ClusterConfig) => ClusterNodes,
): ClusterNodesService & { stop(): Promise<void> } {
  const byName = new Map<string, ClusterNodes>();
  return {
    forCluster(cluster) {
      let nodes = byName.get(cluster.name);
      if (!nodes) {
        nodes = open(cluster);
        byName.set(cluster.name, nodes);
      }
      return nodes;
    },
    watchesOpened() {
      let n = 0;
      for (const nodes of byName.values()) n += nodes.watchesOpened();
      return n;
    },
    async stop() {
      const all = [...byName.values()];
      byName.clear();
      await Promise.all(all.map(n => n.stop()));
    },
  };
}

/**
 * The shared Node watches (see {@link ClusterNodesService}).
 *
 * @public
 */
export const clusterNodesServiceRef: ServiceRef<
  ClusterNodesService,
  'root',
  'singleton'
> = createServiceRef<ClusterNodesService>({
  id: 'rackside.cluster-nodes',
  scope: 'root',
  // eslint-disable-next-line @typescript-eslint/no-use-before-define
  defaultFactory: async () => clusterNodesServiceFactory(),
});

/**
 * The factory of {@link clusterNodesServiceRef}; pass `open` to replace how a watch is
 * made (tests).
 *
 * @public
 */
export function clusterNodesServiceFactory(
  options: ClusterNodesServiceOptions = {},
): ServiceFactory<ClusterNodesService, 'root', 'singleton'> {
  return createServiceFactory({
    service: clusterNodesServiceRef,
    deps: {
      logger: coreServices.rootLogger,
      lifecycle: coreServices.rootLifecycle,
    },
    factory({ logger, lifecycle }) {
      const service = createClusterNodesService(cluster => {
        const defaults = {
          cluster: cluster.name,
          logger: logger.child({ cluster: cluster.name }),
        };
        return options.open
          ? options.open(cluster, defaults)
          : createClusterNodes({
              ...defaults,
              kubeConfig: makeKubeConfig(cluster),
            });
      });
      lifecycle.addShutdownHook(() => service.stop());
      return service;
    },
  });
}
