import {
  coreServices,
  createBackendModule,
  readSchedulerServiceTaskScheduleDefinitionFromConfig,
} from '@backstage/backend-plugin-api';
import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import { InputError } from '@backstage/errors';
import { catalogProcessingExtensionPoint } from '@backstage/plugin-catalog-node';
import {
  clusterNodesServiceRef,
  readClusterConfigs,
} from '@rackside/plugin-servers-node';
import {
  ServersEntityProvider,
  sharedNodeCache,
} from './ServersEntityProvider';

/** Where the provider reads its settings. */
export const PROVIDER_CONFIG_KEY = 'catalog.providers.rackside';

/** Whether server entities carry the machine's system UUID (default no). */
export const INCLUDE_SYSTEM_UUID_KEY = 'servers.catalog.includeSystemUUID';

const DEFAULT_SCHEDULE = {
  frequency: { minutes: 30 },
  timeout: { minutes: 3 },
  initialDelay: { seconds: 15 },
};

/**
 * Adds {@link ServersEntityProvider} to the catalog: the servers of
 * `servers.clusters` (the same clusters the servers backend reads), owned by
 * `catalog.providers.rackside.owner`.
 *
 * @public
 */
export const catalogModuleServers = createBackendModule({
  pluginId: 'catalog',
  moduleId: 'rackside-servers',
  register(reg) {
    reg.registerInit({
      deps: {
        catalog: catalogProcessingExtensionPoint,
        config: coreServices.rootConfig,
        logger: coreServices.logger,
        scheduler: coreServices.scheduler,
        lifecycle: coreServices.lifecycle,
        clusterNodes: clusterNodesServiceRef,
      },
      async init({
        catalog,
        config,
        logger,
        scheduler,
        lifecycle,
        clusterNodes,
      }) {
        const clusters = readClusterConfigs(config);
        const providerConfig = config.getOptionalConfig(PROVIDER_CONFIG_KEY);
        const ownerValue = providerConfig?.getOptionalString('owner');
        if (!ownerValue) {
          throw new InputError(
            `${PROVIDER_CONFIG_KEY}.owner: required, the owner of the server entities (e.g. group:default/plant-admins)`,
          );
        }
        let owner: string;
        try {
          owner = stringifyEntityRef(
            parseEntityRef(ownerValue, {
              defaultKind: 'group',
              defaultNamespace: 'default',
            }),
          );
        } catch (error) {
          throw new InputError(`${PROVIDER_CONFIG_KEY}.owner: ${error}`);
        }
        const schedule = providerConfig?.has('schedule')
          ? readSchedulerServiceTaskScheduleDefinitionFromConfig(
              providerConfig.getConfig('schedule'),
            )
          : DEFAULT_SCHEDULE;
        const provider = new ServersEntityProvider({
          clusters,
          owner,
          logger,
          taskRunner: scheduler.createScheduledTaskRunner(schedule),
          includeSystemUUID:
            config.getOptionalBoolean(INCLUDE_SYSTEM_UUID_KEY) ?? false,
          // The process's Node watch of each cluster, shared with the servers plugin.
          createNodeCache: cluster => {
            const full = clusters.find(c => c.name === cluster.name)!;
            return sharedNodeCache(clusterNodes.forCluster(full));
          },
        });
        catalog.addEntityProvider(provider);
        lifecycle.addShutdownHook(() => provider.stop());
        logger.info(
          `Rackside server entities for ${clusters.length} cluster(s), owner ${owner}`,
        );
      },
    });
  },
});
