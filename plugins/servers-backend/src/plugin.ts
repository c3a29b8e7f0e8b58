import {
  coreServices,
  createBackendPlugin,
} from '@backstage/backend-plugin-api';
import type { Config } from '@backstage/config';
import { createConditionAuthorizer } from '@backstage/plugin-permission-node';
import { signalsServiceRef } from '@backstage/plugin-signals-node';
import { notificationService } from '@backstage/plugin-notifications-node';
import { catalogServiceRef } from '@backstage/plugin-catalog-node';
import { serversPermissions } from '@rackside/plugin-servers-common';
import {
  parseServerResourceRef,
  readClusterConfigs,
  serverPermissionResourceRef,
  serverPermissionRules,
} from '@rackside/plugin-servers-node';
import { actionsRegistryServiceRef } from '@backstage/backend-plugin-api/alpha';
import { registerServersActions } from './actions';
import { readAgentPolicy } from './actions/agentPolicy';
import { createMachinesService } from './machines/createMachinesService';
import { createMachinesRouter } from './machines/router';
import { createPlansService } from './plans/createPlansService';
import { readPlansConfig } from './plans/config';
import { createPlansRouter } from './plans/router';
import { createRouter } from './servers/router';
import { clusterRegistryServiceRef } from './cluster/clusterRegistry';
import { machinesRegistryServiceRef } from './machines/machinesRegistry';
import { announceChanges } from './cluster/changeSignals';
import { PreflightTokens } from './preflight/tokens';
import { readReasonPolicy } from './lib/reasonPolicy';
import { createServersService } from './servers/createServersService';
import { ServerPermissions } from './access/serverPermissions';
import { readNotificationsConfig } from './notifications/config';
import { kubeMaintenanceClaims } from './notifications/claims';
import {
  notificationServiceNotifier,
  silentNotifier,
} from './notifications/notifier';
import { withPodsAtCreation } from './notifications/podsAtCreation';
import { watchForNotifications } from './notifications/watchNotifications';
import { catalogWorkloads } from './lib/workloadCatalog';
import { serverResourceOf } from './access/visibleNodes';
import { readApprovalRules } from './approval/config';
import { readUpgradeSources } from './lib/upgradeSources';
import type { ApprovalPolicy } from './approval/heldApproval';
import { createApprovalsService } from './approvals/createApprovalsService';
import { createApprovalsRouter } from './approvals/router';
import { approvalNotifier } from './notifications/approvalNotices';
import { planApprovalPreflights } from './plans/planApprovalPreflight';
import { PlanPreflightLimiter } from './preflight/planPreflightLimiter';

/** `servers.readDecisionReuseMs`: a whole number of milliseconds, 0 or more. */
function readDecisionReuseMsOf(config: Config): number | undefined {
  const key = 'servers.readDecisionReuseMs';
  const value = config.getOptionalNumber(key);
  if (value !== undefined && !(Number.isInteger(value) && value >= 0)) {
    throw new Error(
      `${key} must be a whole number of milliseconds, 0 or more (0 asks the permission framework for every read); got ${value}`,
    );
  }
  return value;
}

/** The signals channel the plugin publishes `{ cluster }` on when a cluster changes. */
export const SERVERS_SIGNAL_CHANNEL = 'rackside:servers';

/** How long shown changes are collected before one signal is sent. */
const SIGNAL_DEBOUNCE_MS = 1000;

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
        httpAuth: coreServices.httpAuth,
        logger: coreServices.logger,
        permissions: coreServices.permissions,
        permissionsRegistry: coreServices.permissionsRegistry,
        auditor: coreServices.auditor,
        lifecycle: coreServices.lifecycle,
        signals: signalsServiceRef,
        notifications: notificationService,
        catalog: catalogServiceRef,
        auth: coreServices.auth,
        userInfo: coreServices.userInfo,
        clusters: clusterRegistryServiceRef,
        machines: machinesRegistryServiceRef,
        actionsRegistry: actionsRegistryServiceRef,
      },
      async init({
        config,
        httpRouter,
        httpAuth,
        logger,
        permissions,
        permissionsRegistry,
        auditor,
        lifecycle,
        signals,
        notifications,
        catalog,
        auth,
        userInfo,
        clusters,
        machines,
        actionsRegistry,
      }) {
        // Validate the cluster list at start-up: a typo should stop the
        // backend with the key named, not serve an empty Servers page.
        const configured = readClusterConfigs(config);
        logger.info(
          `Rackside servers: ${configured.length} cluster(s) configured${
            configured.length
              ? `: ${configured.map(c => c.name).join(', ')}`
              : ''
          }`,
        );
        const reasonPolicy = readReasonPolicy(config);
        // Read at start: an entry that is not an image prefix or an https origin stops
        // the backend, naming it (docs/upgrades.md, "Allowing sources").
        const upgradeSources = readUpgradeSources(config);
        // Read at start: a rule that cannot be read stops the backend, naming it.
        const approvalRules = readApprovalRules(config);
        if (approvalRules.length > 0) {
          logger.info(
            `Rackside approvals: ${
              approvalRules.length
            } rule(s): ${approvalRules.map(r => r.name).join(', ')}`,
          );
        }
        const preflightTokens = new PreflightTokens(
          config.getOptionalString('servers.preflight.secret'),
        );
        if (!preflightTokens.shared) {
          logger.warn(
            'servers.preflight.secret is not set: pre-flight tokens are signed with a key random to this process, ' +
              'so a pre-flight acknowledged before a restart, or shown by one of several replicas, is refused by the ' +
              'other replicas (400, the user opens the pre-flight again). Set the same secret on every replica.',
          );
        }

        permissionsRegistry.addPermissions(serversPermissions);
        permissionsRegistry.addResourceType({
          resourceRef: serverPermissionResourceRef,
          permissions: serversPermissions,
          rules: Object.values(serverPermissionRules),
          getResources: async refs =>
            Promise.all(
              refs.map(async ref => {
                const parsed = parseServerResourceRef(ref);
                const cluster = parsed && clusters.get(parsed.cluster);
                if (!parsed || !cluster) return undefined;
                const node = (await cluster.nodes()).find(
                  n => n.metadata?.name === parsed.node,
                );
                return node ? serverResourceOf(cluster.name, node) : undefined;
              }),
            ),
        });
        const applyConditions = createConditionAuthorizer(
          permissionsRegistry.getPermissionRuleset(serverPermissionResourceRef),
        );

        // One small "changed" signal per cluster per burst of shown changes, servers
        // and machines (each from its own caches) on the same channel.
        lifecycle.addShutdownHook(
          announceChanges({
            sources: [
              ...clusters
                .list()
                .map(c => ({ cluster: c.name, onChange: c.onChange.bind(c) })),
              ...machines.list().map(m => ({
                cluster: m.cluster,
                onChange: m.onChange.bind(m),
              })),
            ],
            signals,
            logger,
            channel: SERVERS_SIGNAL_CHANNEL,
            debounceMs: SIGNAL_DEBOUNCE_MS,
          }),
        );
        // First: its body parser keeps a reclaim's credential out of parse errors.
        httpRouter.use(
          await createMachinesRouter({
            machines: createMachinesService({
              machines,
              permissions,
              auditor,
              logger,
              reasonPolicy,
            }),
            httpAuth,
          }),
        );
        // Notifications (docs/architecture.md, "The backend") from the same watch caches.
        const notificationsConfig = readNotificationsConfig(config);
        const workloads = catalogWorkloads({ catalog, auth });
        const watch = watchForNotifications({
          clusters,
          machines,
          notifier: notificationsConfig.enabled
            ? notificationServiceNotifier(notifications)
            : silentNotifier(logger),
          workloads: notificationsConfig.enabled ? workloads : undefined,
          logger,
          blockedAfterMs: notificationsConfig.blockedAfterMs,
          maintenanceClaims: kubeMaintenanceClaims(configured),
        });
        lifecycle.addShutdownHook(() => watch.stop());
        // Approvals (docs/approvals.md): told by the replica whose write made the news.
        const approvals: ApprovalPolicy = {
          rules: approvalRules,
          notifier: approvalNotifier(
            notificationsConfig.enabled
              ? notificationServiceNotifier(notifications)
              : silentNotifier(logger),
            logger,
          ),
        };
        const serviceOptions = {
          clusters: notificationsConfig.enabled
            ? withPodsAtCreation(clusters, watch.maintenances, logger)
            : clusters,
          auditor,
          logger,
          reasonPolicy,
          preflightTokens,
          approvals,
          upgradeSources,
        };
        // Only the checks around the services ask the permission framework.
        const serverPermissions = new ServerPermissions({
          permissions,
          applyConditions,
          readDecisionReuseMs: readDecisionReuseMsOf(config),
        });
        const service = createServersService({
          ...serviceOptions,
          serverPermissions,
          permissions,
          applyConditions,
          workloads,
        });
        registerServersActions(
          actionsRegistry,
          service,
          readAgentPolicy(config),
        );
        const plansConfig = readPlansConfig(config);
        // One per-user limit for every plan pre-flight, an approver's view's included.
        const planPreflights = new PlanPreflightLimiter(
          plansConfig.preflightsPerMinute,
        );
        const plans = createPlansService({
          ...serviceOptions,
          serverPermissions,
          config: plansConfig,
          preflights: planPreflights,
        });
        const approvalsService = createApprovalsService({
          clusters: serviceOptions.clusters,
          auditor,
          serverPermissions,
          preflightTokens,
          planPreflights: planApprovalPreflights(
            preflightTokens,
            planPreflights,
          ),
          userInfo,
          notifier: approvals.notifier,
        });
        // Each feature's routes, in the order they were always answered (the servers'
        // first, after the approvals': `/plans/:name/approval` is not a plan control);
        // the OpenAPI document (schema/openapi.yaml) describes them all.
        httpRouter.use(
          await createApprovalsRouter({
            approvals: approvalsService,
            httpAuth,
          }),
        );
        httpRouter.use(await createRouter({ service, httpAuth }));
        httpRouter.use(await createPlansRouter({ plans, httpAuth }));
        httpRouter.addAuthPolicy({ path: '/health', allow: 'unauthenticated' });
      },
    });
  },
});
