import {
  coreServices,
  createServiceFactory,
  createServiceRef,
  type LoggerService,
  type ServiceRef,
} from '@backstage/backend-plugin-api';
import {
  readClusterConfigs,
  type ClusterConfig,
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

/**
 * A plugin service whose default opens one state per entry of `servers.clusters`
 * (`open`) and stops them all when the backend shuts down, so their watches end.
 */
export function perClusterRegistryServiceRef<
  S extends { stop(): Promise<void> },
  R,
>(options: {
  id: string;
  open(cluster: ClusterConfig, logger: LoggerService): S;
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
        },
        factory({ config, logger, lifecycle }) {
          const states = readClusterConfigs(config).map(cluster =>
            options.open(cluster, logger),
          );
          lifecycle.addShutdownHook(async () => {
            await Promise.all(states.map(s => s.stop()));
          });
          return options.registry(states);
        },
      }),
  });
}
