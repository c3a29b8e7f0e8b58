import {
  coreServices,
  createBackendModule,
} from '@backstage/backend-plugin-api';
import { catalogServiceRef } from '@backstage/plugin-catalog-node';
import { policyExtensionPoint } from '@backstage/plugin-permission-node/alpha';
import { readServersPolicyConfig } from './config';
import { CatalogGroupResolver } from './groups';
import { ServersPermissionPolicy } from './policy';
import { TIERS } from './tiers';

/**
 * Installs the app-config policy (`permission.rackside`) as the portal's
 * permission policy. A portal has one policy: add this module instead of
 * another policy module, not next to one.
 *
 * @public
 */
export const permissionModuleServersPolicy = createBackendModule({
  pluginId: 'permission',
  moduleId: 'rackside-policy',
  register(reg) {
    reg.registerInit({
      deps: {
        policy: policyExtensionPoint,
        config: coreServices.rootConfig,
        logger: coreServices.logger,
        auth: coreServices.auth,
        catalog: catalogServiceRef,
      },
      async init({ policy, config, logger, auth, catalog }) {
        const parsed = readServersPolicyConfig(config);
        logger.info(
          `Rackside permission policy: ${TIERS.map(
            tier => `${tier} ${parsed.tiers[tier].length}`,
          ).join(', ')} principal(s); allow/deny lines for ${
            parsed.principals.length
          } principal(s); other permissions: ${parsed.otherPermissions}`,
        );
        policy.setPolicy(
          new ServersPermissionPolicy(
            parsed,
            new CatalogGroupResolver({
              catalog,
              auth,
              logger,
              cacheSeconds: parsed.groupCacheSeconds,
            }),
            logger,
          ),
        );
      },
    });
  },
});
