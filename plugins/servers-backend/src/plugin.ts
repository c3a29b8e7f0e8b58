import {
  coreServices,
  createBackendPlugin,
} from '@backstage/backend-plugin-api';
import { readClusterConfigs } from '@rackside/plugin-servers-node';
import { serversPermissions } from '@rackside/plugin-servers-common';
import { createRouter } from './router';

/**
 * The Rackside backend plugin, mounted at `/api/servers`.
 *
 * @public
 */
export const serversPlugin = createBackendPlugin({
  pluginId: 'servers',
  register(env) {
    env.registerInit({
      deps: {
        config: coreServices.rootConfig,
        httpRouter: coreServices.httpRouter,
        logger: coreServices.logger,
        permissionsRegistry: coreServices.permissionsRegistry,
      },
      async init({ config, httpRouter, logger, permissionsRegistry }) {
        // Validate the cluster list at start-up: a typo should stop the
        // backend with the key named, not serve an empty Servers page.
        const clusters = readClusterConfigs(config);
        logger.info(
          `Rackside servers: ${clusters.length} cluster(s) configured${
            clusters.length ? `: ${clusters.map(c => c.name).join(', ')}` : ''
          }`,
        );
        permissionsRegistry.addPermissions(serversPermissions);
        httpRouter.use(await createRouter());
        httpRouter.addAuthPolicy({ path: '/health', allow: 'unauthenticated' });
      },
    });
  },
});
