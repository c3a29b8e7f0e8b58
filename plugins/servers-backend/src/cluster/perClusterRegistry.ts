import {
  coreServices,
  createServiceFactory,
  createServiceRef,
  type LoggerService,
  type ServiceRef,
} from '@backstage/backend-plugin-api';
import {
  clusterNodesServiceRef,
  readClusterConfigs,
  type ClusterConfig,
  type ClusterNodesService,
} from '@rackside/plugin-servers-node';

/** Per-cluster states looked up by their Backstage cluster name. */
export interface PerClusterRegistry<S> {
  list(): S[];
  get(cluster: string): S | undefined;
}

/** A registry over a fixed list of states, keyed by `clusterOf`. */
export function fixedRegistry<S>(
  states: S[],
  clusterOf: (state: S) => string,
): PerClusterRegistry<S> {
  const byName = new Map(states.map(s => [clusterOf(s), s]));
  return {
    list: () => states,
    get: name => byName.get(name),
  };
}

/** What a per-cluster state is opened with. */
export interface PerClusterDeps {
  logger: LoggerService;
  /** The process's shared Node watches (one per cluster, also read by the catalog). */
  clusterNodes: ClusterNodesService;
}

/**
 * A plugin service whose default opens one state per entry of `servers.clusters`
 * (`open`) and stops them all when the backend shuts down, so their watches end.
 * The servers and the machines registries are both this.
 */
export function perClusterRegistryServiceRef<
  S extends { stop(): Promise<void> },
  R,
>(options: {
  id: string;
  open(cluster: ClusterConfig, deps: PerClusterDeps): S;
  registry(states: S[]): R;
}): ServiceRef<R, 'plugin', 'singleton'> {
  return createServiceRef<R>({
    id: options.id,
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
          const states = readClusterConfigs(config).map(cluster =>
            options.open(cluster, { logger, clusterNodes }),
          );
          lifecycle.addShutdownHook(async () => {
            await Promise.all(states.map(s => s.stop()));
          });
          return options.registry(states);
        },
      }),
  });
}
