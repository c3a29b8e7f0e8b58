/*
 * The demo portal's permission policy: allows everything, except the
 * permissions listed under `rackside.demoPolicy.deny` in app-config, which it
 * denies to every user. Stands in for the allow-all policy until
 * @rackside/plugin-permission-backend-module-servers reads its policy from
 * app-config; the browser tests use it to show what a denied user sees.
 *
 *   rackside:
 *     demoPolicy:
 *       deny: [servers:cordon]
 */
import {
  coreServices,
  createBackendModule,
} from '@backstage/backend-plugin-api';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import type {
  PermissionPolicy,
  PolicyQuery,
} from '@backstage/plugin-permission-node';
import { policyExtensionPoint } from '@backstage/plugin-permission-node/alpha';

export class DemoPermissionPolicy implements PermissionPolicy {
  private readonly deny: ReadonlySet<string>;

  constructor(deny: Iterable<string>) {
    this.deny = new Set(deny);
  }

  async handle(request: PolicyQuery): Promise<PolicyDecision> {
    return {
      result: this.deny.has(request.permission.name)
        ? AuthorizeResult.DENY
        : AuthorizeResult.ALLOW,
    };
  }
}

export default createBackendModule({
  pluginId: 'permission',
  moduleId: 'rackside-demo-policy',
  register(reg) {
    reg.registerInit({
      deps: {
        policy: policyExtensionPoint,
        config: coreServices.rootConfig,
        logger: coreServices.logger,
      },
      async init({ policy, config, logger }) {
        const deny =
          config.getOptionalStringArray('rackside.demoPolicy.deny') ?? [];
        if (deny.length > 0) {
          logger.warn(`demo policy denies ${deny.join(', ')} to every user`);
        }
        policy.setPolicy(new DemoPermissionPolicy(deny));
      },
    });
  },
});
