/*
 * The operator process minus main(): the shared runtime (runtime/: watch caches, Events,
 * Secrets, metrics, the leader-gated client), one controller per kind (each kind's
 * controller.ts, a declaration built by runtime/controller/buildController.ts:
 * powerprovider/, serverbmc/, maintenance/, talos-cluster/, talos-machine/, reclaim/,
 * plan/), retention (runtime/retention.ts), and the elector that starts them while this
 * replica leads and pauses them when it does not. Nothing here polls: the caches hold one
 * watch each.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { NodeMaintenanceStatus } from '@rackside/plugin-servers-common';
import { CoreClient } from '@rackside/plugin-servers-node';
import { createOperatorCaches } from './runtime/caches';
import type { DrainRunnerOptions } from './maintenance/drain/DrainRunner';
import { createEventRecorder } from './runtime/events';
import { createSecretReader } from './runtime/kube/secrets';
import { firmwareSourceCredentialsReader } from './powerprovider/firmwareSourceCredentials';
import {
  LeaderElector,
  leaderGated,
  leaderGatedKubeConfig,
} from './runtime/leaderElection';
import type { ControllerPorts } from './runtime/controller/buildController';
import { createMaintenanceController } from './maintenance/controller';
import { createMetrics, type OperatorMetrics } from './runtime/metrics';
import { registerStateMetrics } from './runtime/stateMetrics';
import { createPlanController } from './plan/controller';
import type { AlertingSettings } from './config';
import { createAlertReads } from './runtime/alertReads';
import { createPowerProviderController } from './powerprovider/controller';
import type { PowerDeadlines } from './powerprovider/reconciler';
import {
  createServerBmcController,
  type HealthSettings,
} from './serverbmc/controller';
import { createRetention, DEFAULT_RETENTION_MS } from './runtime/retention';
import {
  createReclaimController,
  type ReclaimSettings,
} from './reclaim/controller';
import { createTalosClusterController } from './talos-cluster/controller';
import { createTalosMachineController } from './talos-machine/controller';
import { createMachineKinds } from './talos/machineKinds';
import type { JoinLimits } from './talos-machine/table';
import { createTalosAccess } from './talos/talosAccess';
import { OPERATOR_FIELD_MANAGER } from './runtime/kube/fieldManager';
import type { AlertmanagerApi } from '@rackside/plugin-servers-node';
import { leaderGatedAlertmanager } from './runtime/alertmanager';
import type { OperatorLog } from './runtime/logger';

/** Limits of the machine controllers; tests shorten them. */
export interface MachineControllerSettings {
  reclaim?: ReclaimSettings;
  join?: Partial<JoinLimits>;
  /** Deadline of one discovery probe; default 5 s. */
  probeTimeoutMs?: number;
}

export interface OperatorOptions {
  kubeConfig: KubeConfig;
  /** Identity in the Lease and in Events. */
  identity?: string;
  /** Namespace of the leader-election Lease. */
  leaseNamespace?: string;
  leaseName?: string;
  leaseDurationSeconds?: number;
  retryPeriodMs?: number;
  /** Lease duration, renew deadline and retry period in ms (these win over the above). */
  leaderElection?: {
    leaseDurationMs?: number;
    renewDeadlineMs?: number;
    retryPeriodMs?: number;
  };
  workers?: number;
  /** The BMC health sweep (serverbmc/health.ts). */
  health?: HealthSettings;
  metrics?: OperatorMetrics;
  log?: OperatorLog;
  /** Terminal NodeMaintenances and MachineReclaims are deleted this long after they ended (7 days). */
  retentionMs?: number;
  /**
   * The kinds MaintenancePlan object gates may read (`resource.group`, a core kind its
   * resource alone): the chart's operator.planGateReads. Others are refused.
   */
  planGateReads?: readonly string[];
  /**
   * The cluster's Alertmanager (runtime/alertmanager.ts from --alertmanager-url) and its
   * flags (docs/alerts.md): maintenances hold silences, plans' alert gates and healthy
   * returns read it. Absent: nothing is silenced, alert gates are unknown (they hold unless
   * a plan says whenUnknown: Proceed), returns check Ready only.
   */
  alerting?: { alertmanager: AlertmanagerApi; settings: AlertingSettings };
  /** How often a plan held by alerts reads them again (tests shorten it). */
  alertPollMs?: number;
  /**
   * The node this replica runs on (`--node-name`, the chart's NODE_NAME from the downward
   * API): a power verb or an upgrade for it is never recorded by this replica while it
   * leads; it hands the Lease over first (docs/upgrades.md, "The operator's own node").
   */
  nodeName?: string;
  /** Called when leadership is lost after it was held (main exits the process). */
  onLostLeadership?: () => void;
  /** Eviction retry backoff and progress cadence of drains (tests shorten them). */
  drain?: DrainRunnerOptions;
  /** How long a reboot may take, and how long a verb without an answer is watched. */
  power?: Partial<PowerDeadlines>;
  /**
   * The Talos installer image prefixes an upgrade may install (`--talos-image-prefixes`,
   * docs/upgrades.md). Absent or empty: every upgrade is refused before anything is sent.
   */
  upgrades?: {
    imagePrefixes: readonly string[];
    /** The https origins a firmware update may fetch its image from (`--firmware-sources`). */
    firmwareSources?: readonly string[];
    /** Those of them sent only with a checksum (`--firmware-sources-requiring-checksum`). */
    firmwareChecksumRequired?: readonly string[];
    /**
     * The Secret in the operator's namespace holding the sources' credentials
     * (`--firmware-source-credentials-secret`); absent: none.
     */
    firmwareSourceCredentialsSecret?: string;
    /** PEM CA bundle of the firmware sources (`--firmware-sources-ca-file`'s content). */
    firmwareSourceCaBundle?: string;
  };
  /** Discovery, join and reclaim limits (tests shorten the reclaim deadline and TTL). */
  machines?: MachineControllerSettings;
  /**
   * Test hook: awaited just before a status is written for `name` (phase and the whole
   * status). A hook that never resolves simulates a crash between an action and its record.
   */
  beforeStatusWrite?: (
    name: string,
    phase: string,
    status: NodeMaintenanceStatus,
  ) => Promise<void>;
}

export interface Operator {
  metrics: OperatorMetrics;
  /** Holds the Lease and its renew deadline has not passed: the replica may act now. */
  isLeader(): boolean;
  /** Caches synced (the controllers can act). */
  isSynced(): boolean;
  /** Caches synced, leading or not: the operator's part of /readyz (main adds the webhook). */
  isReady(): boolean;
  stop(): Promise<void>;
}

/** The Lease-based elector of OperatorOptions (docs/architecture.md, "The maintenance lifecycle": one active replica). */
function createElector(
  options: OperatorOptions,
  identity: string,
  log: OperatorLog,
  handlers: { onStartedLeading(): void; onStoppedLeading(): void },
): LeaderElector {
  const leaseDurationMs =
    options.leaderElection?.leaseDurationMs ??
    (options.leaseDurationSeconds ?? 15) * 1000;
  const renewDeadlineMs =
    options.leaderElection?.renewDeadlineMs ??
    Math.min(10_000, (leaseDurationMs * 2) / 3);
  return new LeaderElector({
    kubeConfig: options.kubeConfig,
    namespace: options.leaseNamespace ?? 'rackside-system',
    name: options.leaseName ?? 'rackside-operator',
    identity,
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs:
      options.leaderElection?.retryPeriodMs ??
      options.retryPeriodMs ??
      Math.min(2000, renewDeadlineMs / 2),
    log,
    ...handlers,
  });
}

export async function startOperator(
  options: OperatorOptions,
): Promise<Operator> {
  const log = options.log ?? (() => {});
  const identity = options.identity ?? `rackside-operator-${process.pid}`;
  const metrics = options.metrics ?? createMetrics();
  const operatorNamespace = options.leaseNamespace ?? 'rackside-system';
  const workers = options.workers ?? 4;
  const alertmanager = options.alerting?.alertmanager;
  // Every write of the controllers asks the elector right before it goes out (a replica
  // past its renew deadline, e.g. resumed after a freeze, sends nothing); reads do not.
  let leading = () => false;
  // The handover of the Lease before a verb for this replica's own node (the elector is
  // made below, once the controllers it starts and pauses exist).
  let handOverLease = async (_reason: string) => {};
  const isLeading = () => leading();
  const kc = leaderGatedKubeConfig(options.kubeConfig, isLeading);
  const core = new CoreClient(kc, { fieldManager: OPERATOR_FIELD_MANAGER });
  const recorder = createEventRecorder({
    kubeConfig: kc,
    component: 'rackside-operator',
    instance: identity,
    log,
  });
  const secrets = createSecretReader({
    kubeConfig: kc,
    core,
    namespace: operatorNamespace,
  });
  const caches = createOperatorCaches(kc);
  // What every controller runs with (runtime/controller/buildController.ts): its queue
  // reconciles only while this replica leads, counted and logged under the kind's name.
  const ports: ControllerPorts = {
    workers,
    leading: isLeading,
    metrics,
    log,
  };

  // One controller per kind.
  const credentialsSecret = options.upgrades?.firmwareSourceCredentialsSecret;
  const powerProviders = createPowerProviderController(
    {
      kubeConfig: kc,
      caches,
      secrets,
      metrics,
      deadlines: options.power,
      firmwareSourceCredentials: credentialsSecret
        ? firmwareSourceCredentialsReader({
            secrets,
            secretName: credentialsSecret,
            sources: options.upgrades?.firmwareSources ?? [],
            log,
          })
        : undefined,
      firmwareSourceCaBundle: options.upgrades?.firmwareSourceCaBundle,
    },
    ports,
  );
  const serverBmcs = createServerBmcController(
    {
      kubeConfig: kc,
      caches,
      channel: powerProviders.provider,
      secrets,
      recorder,
      metrics,
      health: options.health,
    },
    ports,
  );
  // Alertmanager's writes (a silence created, renewed or expired) go out only while leading,
  // like every Kubernetes write; reads do not ask.
  const alerting = options.alerting && {
    settings: options.alerting.settings,
    alertmanager: leaderGatedAlertmanager(
      options.alerting.alertmanager,
      isLeading,
    ),
  };
  const maintenance = createMaintenanceController(
    {
      kubeConfig: kc,
      caches,
      core,
      recorder,
      power: powerProviders.channel,
      powerSend: powerProviders.send,
      metrics,
      drain: options.drain,
      alerting,
      upgrades: options.upgrades,
      ownNode: options.nodeName
        ? {
            name: options.nodeName,
            handOver: reason => handOverLease(reason),
          }
        : undefined,
      beforeStatusWrite: options.beforeStatusWrite,
      returnAlerts: createAlertReads(
        alertmanager,
        options.alerting?.settings,
        () => caches.maintenances.list(),
        options.alertPollMs,
      ),
      log,
    },
    ports,
  );
  // TalosClusters, TalosMachines and MachineReclaims share their caches (talos/machineKinds.ts).
  const machineKinds = createMachineKinds({
    kubeConfig: kc,
    namespace: operatorNamespace,
    nodes: caches.nodes,
    recorder,
    secrets,
    talos: leaderGated(
      createTalosAccess(),
      ['reset', 'applyConfiguration'],
      isLeading,
    ),
    probeTimeoutMs: options.machines?.probeTimeoutMs,
    log,
  });
  const talosClusters = createTalosClusterController(machineKinds, ports);
  const talosMachines = createTalosMachineController(
    machineKinds,
    options.machines?.join,
    ports,
  );
  const reclaims = createReclaimController(
    machineKinds,
    {
      wakeDiscovery: (ns, cluster) => talosClusters.wake(`${ns}/${cluster}`),
      settings: options.machines?.reclaim,
    },
    ports,
  );
  // MaintenancePlans: each step a NodeMaintenance owned by its plan.
  const plans = createPlanController(
    {
      kubeConfig: kc,
      maintenances: caches.maintenances,
      nodes: caches.nodes,
      bmcs: caches.bmcs,
      recorder,
      onStatusWriteFailed: kind => metrics.statusWriteFailures.inc({ kind }),
      planGateReads: options.planGateReads,
      alertmanager,
      alerting: options.alerting?.settings,
      alertPollMs: options.alertPollMs,
      log,
    },
    ports,
  );
  // Deletes terminal objects --retention after they ended; runs while leading.
  const retention = createRetention({
    kubeConfig: kc,
    namespace: operatorNamespace,
    retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
    maintenances: caches.maintenances,
    recorder,
    onDeleted: kind => metrics.retentionDeletions.inc({ kind }),
    log,
  });
  // In the order they start while leading: maintenances wait for the channel and the
  // first pass over the BMCs (an admission must not refuse a reboot only because the
  // channel was not built yet).
  const machineControllers = [talosClusters, talosMachines, reclaims];
  const controllers = [
    powerProviders,
    serverBmcs,
    maintenance,
    ...machineControllers,
    plans,
  ];

  let stopped = false;
  const startControllers = async () => {
    await caches.synced();
    for (const controller of controllers) {
      if (stopped) return;
      await controller.start();
    }
    if (stopped) return;
    await retention.start();
  };
  const pauseControllers = () => {
    void retention.stop();
    for (const controller of [...controllers].reverse()) controller.pause();
  };

  const elector = createElector(options, identity, log, {
    onStartedLeading: () => {
      startControllers().catch(error =>
        log(`starting controllers: ${(error as Error).message}`),
      );
    },
    onStoppedLeading: () => {
      pauseControllers();
      options.onLostLeadership?.();
    },
  });
  leading = () => elector.isLeader;
  handOverLease = async reason => {
    await elector.handOver(reason);
  };
  metrics.leadership(() => elector.isLeader);
  // What the chart's alerts need of the objects themselves (runtime/stateMetrics.ts).
  const stopStateMetrics = registerStateMetrics({
    registry: metrics.registry,
    maintenances: caches.maintenances,
    bmcs: caches.bmcs,
    plans: plans.cache,
    isLeader: () => elector.isLeader,
  });
  elector.start();

  const isSynced = () =>
    caches.hasSynced() && machineKinds.hasSynced() && plans.hasSynced();
  return {
    metrics,
    isLeader: () => elector.isLeader,
    isSynced,
    isReady: isSynced,
    async stop() {
      if (stopped) return;
      stopped = true;
      stopStateMetrics();
      await retention.stop();
      for (const controller of machineControllers) await controller.stop();
      await machineKinds.stop();
      await plans.stop();
      // Still leading and the channels still open: a verb on record is sent first.
      await maintenance.stop();
      serverBmcs.pause();
      powerProviders.pause();
      await elector.stop();
      await serverBmcs.stop();
      await powerProviders.stop();
      await caches.stop();
    },
  };
}
