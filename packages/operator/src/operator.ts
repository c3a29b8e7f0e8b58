/*
 * The operator process minus main(): watch caches for NodeMaintenances and Nodes, a keyed
 * work queue running the maintenance reconciler, leader election gating the controllers,
 * Events and metrics. Nothing here polls: the caches hold one watch each.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  MAINTENANCE_PHASES,
  nodeMaintenanceResource,
  POWER_PROVIDER_NAME,
  powerProviderResource,
  serverBmcResource,
  type NodeMaintenance,
  type NodeMaintenanceStatus,
  type PowerProvider,
  type ServerBMC,
} from '@rackside/plugin-servers-common';
import {
  CoreClient,
  coreResources,
  createWatchCache,
  objectKey,
  ResourceClient,
  resourcePath,
  type NodeObject,
  type PodObject,
  type RawKubeObject,
  type WatchCache,
} from '@rackside/plugin-servers-node';
import { DrainRunner, type DrainRunnerOptions } from './drain/DrainRunner';
import { createEventRecorder } from './events';
import {
  LeaderElector,
  leaderGated,
  leaderGatedKubeConfig,
} from './leaderElection';
import type { NodeView } from './maintenance/types';
import { systemClock } from './lifecycle/table';
import {
  MaintenanceReconciler,
  Mutex,
  type ReconcilerPorts,
} from './maintenance/reconciler';
import { createMetrics, type OperatorMetrics } from './metrics';
import {
  PowerProviderReconciler,
  type PowerDeadlines,
} from './power/PowerProviderReconciler';
import { reconcileServerBmc } from './power/serverBmc';
import { createRetention, DEFAULT_RETENTION_MS } from './retention';
import {
  createMachineControllers,
  type MachineControllerSettings,
} from './talos/controllers';
import { createTalosAccess } from './talos/talosAccess';
import { WorkQueue } from './workqueue';

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
  metrics?: OperatorMetrics;
  log?: (message: string) => void;
  /** Terminal NodeMaintenances and MachineReclaims are deleted this long after they ended (7 days). */
  retentionMs?: number;
  /** Called when leadership is lost after it was held (main exits the process). */
  onLostLeadership?: () => void;
  /** Eviction retry backoff and progress cadence of drains (tests shorten them). */
  drain?: DrainRunnerOptions;
  /** How long a reboot may take, and how long a verb without an answer is watched. */
  power?: Partial<PowerDeadlines>;
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

const NODE_INDEX = 'nodeName';

/** Keeps what a drain reads of a Pod (see planDrain). */
function slimPod(obj: RawKubeObject): PodObject & RawKubeObject {
  const pod = obj as PodObject;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      name: pod.metadata?.name,
      namespace: pod.metadata?.namespace,
      resourceVersion: pod.metadata?.resourceVersion,
      labels: pod.metadata?.labels,
      annotations: pod.metadata?.annotations,
      ownerReferences: pod.metadata?.ownerReferences,
      deletionTimestamp: pod.metadata?.deletionTimestamp,
    },
    spec: {
      containers: [],
      nodeName: pod.spec?.nodeName,
      terminationGracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds,
      // What tells emptyDir and node-local data apart (servers-common planDrain).
      volumes: (pod.spec?.volumes ?? []).map(v => ({
        name: v.name,
        emptyDir: v.emptyDir,
        hostPath: v.hostPath ? { path: v.hostPath.path } : undefined,
        persistentVolumeClaim: v.persistentVolumeClaim
          ? { claimName: v.persistentVolumeClaim.claimName }
          : undefined,
        ephemeral: v.ephemeral ? {} : undefined,
      })),
    },
    status: { phase: pod.status?.phase },
  } as PodObject & RawKubeObject;
}

/** Keeps what the machine reads of a Node: labels, unschedulable, conditions, boot ID, address. */
function slimNode(obj: RawKubeObject): NodeView & RawKubeObject {
  const node = obj as NodeObject;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      name: node.metadata?.name,
      resourceVersion: node.metadata?.resourceVersion,
      uid: node.metadata?.uid,
      labels: node.metadata?.labels,
    } as any,
    spec: { unschedulable: node.spec?.unschedulable },
    status: {
      conditions: (node.status?.conditions ?? []).map(c => ({
        type: c.type,
        status: c.status,
      })),
      nodeInfo: {
        bootID: node.status?.nodeInfo?.bootID,
        systemUUID: node.status?.nodeInfo?.systemUUID,
      },
      addresses: (node.status?.addresses ?? []).map(a => ({
        type: a.type,
        address: a.address,
      })),
    },
  };
}

function newer(a: NodeMaintenance, b: NodeMaintenance): boolean {
  try {
    return (
      BigInt(a.metadata.resourceVersion ?? '0') >
      BigInt(b.metadata.resourceVersion ?? '0')
    );
  } catch {
    return false;
  }
}

export async function startOperator(
  options: OperatorOptions,
): Promise<Operator> {
  const log = options.log ?? (() => {});
  const identity = options.identity ?? `rackside-operator-${process.pid}`;
  const metrics = options.metrics ?? createMetrics();
  // Every write of the controllers asks the elector right before it goes out (a replica
  // past its renew deadline, e.g. resumed after a freeze, sends nothing); reads do not.
  let leading = () => false;
  const kc = leaderGatedKubeConfig(options.kubeConfig, () => leading());
  const maintenanceClient = new ResourceClient<NodeMaintenance>(
    kc,
    nodeMaintenanceResource,
    { fieldManager: 'rackside-operator' },
  );
  const nodeClient = new ResourceClient<NodeObject>(kc, coreResources.nodes, {
    fieldManager: 'rackside-operator',
  });
  const core = new CoreClient(kc, { fieldManager: 'rackside-operator' });
  const recorder = createEventRecorder({
    kubeConfig: kc,
    component: 'rackside-operator',
    instance: identity,
    log,
  });

  const maintenances: WatchCache<NodeMaintenance> =
    createWatchCache<NodeMaintenance>({
      kubeConfig: kc,
      path: resourcePath(nodeMaintenanceResource),
      name: 'nodemaintenances',
      indexes: { [NODE_INDEX]: nm => nm.spec?.nodeName },
    });
  const nodes = createWatchCache<NodeView & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(coreResources.nodes),
    name: 'nodes',
    transform: slimNode,
  });

  const providers = createWatchCache<PowerProvider & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(powerProviderResource),
    fieldSelector: `metadata.name=${POWER_PROVIDER_NAME}`,
    name: 'powerproviders',
  });
  const bmcs = createWatchCache<ServerBMC & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(serverBmcResource),
    name: 'serverbmcs',
  });
  const providerClient = new ResourceClient<PowerProvider>(
    kc,
    powerProviderResource,
    { fieldManager: 'rackside-operator' },
  );
  const bmcClient = new ResourceClient<ServerBMC>(kc, serverBmcResource, {
    fieldManager: 'rackside-operator',
  });
  const configMaps = new ResourceClient<any>(
    kc,
    {
      group: '',
      version: 'v1',
      plural: 'configmaps',
      kind: 'ConfigMap',
      namespaced: true,
    },
    {},
  );
  const operatorNamespace = options.leaseNamespace ?? 'rackside-system';
  const secrets = {
    async read(ref: {
      kind?: 'Secret' | 'ConfigMap';
      namespace?: string;
      name: string;
      key: string;
    }) {
      const namespace = ref.namespace ?? operatorNamespace;
      const what = `${ref.kind ?? 'Secret'} ${namespace}/${ref.name}`;
      const obj =
        ref.kind === 'ConfigMap'
          ? await configMaps.get(ref.name, { namespace })
          : await core.secrets.get(ref.name, { namespace });
      const raw =
        ref.kind === 'ConfigMap'
          ? obj.data?.[ref.key]
          : obj.data?.[ref.key] &&
            Buffer.from(obj.data[ref.key], 'base64').toString('utf8');
      if (!raw) throw new Error(`${what} has no key ${ref.key}`);
      return raw as string;
    },
  };
  const power = new PowerProviderReconciler(
    {
      provider: () => providers.get(POWER_PROVIDER_NAME),
      bmc: name => bmcs.get(name),
      secrets,
      writeStatus: async (provider, status) => {
        await providerClient.patchStatus(
          provider.metadata.name,
          { status } as any,
          { type: 'merge' },
        );
      },
      onSent: (verb, channel) => metrics.powerVerbsSent.inc({ verb, channel }),
      log,
    },
    {
      rebootSeconds: options.power?.rebootSeconds ?? 900,
      unansweredSeconds: options.power?.unansweredSeconds ?? 300,
    },
  );

  // Our own writes, until the watch catches up: the next admission must see them.
  const written = new Map<string, NodeMaintenance>();
  const freshest = (name: string): NodeMaintenance | undefined => {
    const cached = maintenances.get(name);
    const own = written.get(name);
    if (!own) return cached;
    if (!cached || newer(own, cached)) return own;
    written.delete(name);
    return cached;
  };

  let queue: WorkQueue | undefined;
  const drains = new DrainRunner(
    {
      watchPods(nodeName) {
        const cache = createWatchCache<PodObject & RawKubeObject>({
          kubeConfig: kc,
          path: resourcePath(coreResources.pods),
          fieldSelector: `spec.nodeName=${nodeName}`,
          name: `pods on ${nodeName}`,
          transform: slimPod,
        });
        return {
          synced: cache.synced,
          pods: () => cache.list() as any,
          onChange(listener) {
            // Per event, not the debounced 'changed': Drained follows the last pod at once.
            const offs = (['add', 'update', 'delete'] as const).map(event =>
              cache.on(event, () => listener()),
            );
            return () => offs.forEach(off => off());
          },
          stop: () => cache.stop(),
        };
      },
      evict: (namespace, name, opts) => core.evictPod(namespace, name, opts),
      budgets: async namespace =>
        (await core.podDisruptionBudgets.list({ namespace })).items as any,
      storage: (nodeName, namespaces) =>
        core.drainStorage(nodeName, namespaces),
      virtualMachines: nodeName => core.virtualMachineInstancesOn(nodeName),
      async writeProgress(name, progress) {
        // Only status.drain: the phase stays the reconciler's, and a merge patch of this
        // one field cannot undo its writes.
        await maintenanceClient.patchStatus(
          name,
          { status: { drain: progress } } as any,
          { type: 'merge' },
        );
      },
      wake: name => queue?.add(name),
      log,
    },
    options.drain,
  );

  const ports: ReconcilerPorts = {
    view: {
      maintenance: freshest,
      maintenances: () =>
        maintenances.list().map(nm => freshest(nm.metadata.name) ?? nm),
      node: name => nodes.get(name),
      nodes: () => nodes.list(),
    },
    pods: {
      onNode: nodeName => core.podsOnNode(nodeName) as any,
      storage: (nodeName, pods) =>
        core.drainStorage(nodeName, [
          ...new Set(pods.map(p => p.metadata?.namespace ?? '')),
        ]),
    },
    drains,
    power: leaderGated(power.powerPort(), ['send'], () => leading()),
    nodes: {
      async setUnschedulable(nodeName, unschedulable) {
        const node = nodes.get(nodeName);
        if (node && (node.spec?.unschedulable === true) === unschedulable)
          return;
        await nodeClient.patch(
          nodeName,
          { spec: { unschedulable } },
          { type: 'strategic' },
        );
      },
    },
    status: {
      async write(nm, status: NodeMaintenanceStatus) {
        await options.beforeStatusWrite?.(
          nm.metadata.name,
          status.phase ?? '',
          status,
        );
        // resourceVersion makes the patch conditional: a stale view gets a 409, and the
        // queue retries with the current object.
        const result = await maintenanceClient.patchStatus(
          nm.metadata.name,
          {
            metadata: { resourceVersion: nm.metadata.resourceVersion },
            status,
          } as any,
          { type: 'merge' },
        );
        written.set(result.metadata.name, result);
        return result;
      },
    },
    events: {
      record: (nm, type, reason, message) =>
        recorder.record(
          {
            apiVersion: nodeMaintenanceResource.apiVersion,
            kind: nodeMaintenanceResource.kind,
            name: nm.metadata.name,
            uid: nm.metadata.uid,
          },
          type,
          reason,
          message,
        ),
    },
    admissionLock: new Mutex(),
    ...systemClock,
    onRefused: cause => metrics.refusals.inc({ cause }),
    log,
  };
  const reconciler = new MaintenanceReconciler(ports);
  // TalosClusters, TalosMachines and MachineReclaims (talos/controllers.ts).
  const machineControllers = createMachineControllers({
    ...options.machines,
    kubeConfig: kc,
    namespace: operatorNamespace,
    nodes,
    recorder,
    talos: leaderGated(
      createTalosAccess(),
      ['reset', 'applyConfiguration'],
      () => leading(),
    ),
    workers: options.workers ?? 4,
    onError: kind => metrics.reconcileErrors.inc({ kind }),
    queueMetrics: controller => metrics.queue(controller),
    log,
  });

  let stopped = false;
  const enqueueAll = () => {
    for (const nm of maintenances.list()) queue?.add(nm.metadata.name);
  };
  const updateGauge = () => {
    const counts = new Map<string, number>(MAINTENANCE_PHASES.map(p => [p, 0]));
    for (const nm of maintenances.list()) {
      const phase = nm.status?.phase;
      if (phase) counts.set(phase, (counts.get(phase) ?? 0) + 1);
    }
    for (const [phase, count] of counts) {
      metrics.maintenancesByPhase.set({ phase }, count);
    }
  };

  const unsubscribe = [
    maintenances.on('add', nm => queue?.add(objectKey(nm))),
    maintenances.on('update', (nm, old) => {
      // A drain belongs to Draining: abandoned, returned or finished, it stops.
      if (nm.status?.phase !== 'Draining') drains.cancel(objectKey(nm));
      if (nm.status?.phase === 'Drained' && old.status?.phase === 'Draining') {
        const started = Date.parse(nm.status.drain?.startedAt ?? '');
        if (Number.isFinite(started)) {
          metrics.drainDuration.observe((Date.now() - started) / 1000);
        }
      }
      queue?.add(objectKey(nm));
    }),
    maintenances.on('delete', nm => {
      drains.cancel(objectKey(nm));
      written.delete(objectKey(nm));
    }),
    maintenances.on('changed', updateGauge),
    // A node change wakes the maintenances of that node (e.g. Returning waits for Ready).
    ...(['add', 'update', 'delete'] as const).map(event =>
      nodes.on(event, (node: NodeView & RawKubeObject) => {
        for (const nm of maintenances.byIndex(NODE_INDEX, objectKey(node))) {
          queue?.add(objectKey(nm));
        }
      }),
    ),
  ];

  let powerQueue: WorkQueue | undefined;
  const powerKey = 'PowerProvider/default';
  unsubscribe.push(
    ...(['add', 'update', 'delete'] as const).map(event =>
      providers.on(event, () => powerQueue?.add(powerKey)),
    ),
    ...(['add', 'update'] as const).map(event =>
      bmcs.on(event, (bmc: ServerBMC) =>
        powerQueue?.add(`ServerBMC/${bmc.metadata.name}`),
      ),
    ),
  );

  // Deletes terminal objects --retention after they ended; runs while leading.
  const retention = createRetention({
    kubeConfig: kc,
    namespace: operatorNamespace,
    retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
    maintenances,
    recorder,
    onDeleted: kind => metrics.retentionDeletions.inc({ kind }),
    log,
  });
  const startControllers = async () => {
    await Promise.all([
      maintenances.synced,
      nodes.synced,
      providers.synced,
      bmcs.synced,
    ]);
    if (stopped) return;
    // One reconciler per kind: the PowerProvider (and the ServerBMCs that serve it).
    powerQueue = new WorkQueue(
      async key => {
        if (key === powerKey) {
          await power.reconcile();
          return;
        }
        const name = key.slice('ServerBMC/'.length);
        const bmc = bmcs.get(name);
        if (!bmc) return;
        await reconcileServerBmc(bmc, {
          node: n => nodes.get(n),
          secrets,
          writeStatus: async status => {
            await bmcClient.patchStatus(name, { status } as any, {
              type: 'merge',
            });
          },
        });
      },
      {
        workers: 1,
        metrics: metrics.queue('PowerProvider'),
        onError: (key, error) => {
          metrics.reconcileErrors.inc({ kind: key.split('/')[0] });
          log(`reconcile ${key}: ${(error as Error).message}`);
        },
      },
    );
    powerQueue.add(powerKey);
    for (const bmc of bmcs.list())
      powerQueue.add(`ServerBMC/${bmc.metadata.name}`);
    // Maintenances wait for the channel: an admission must not refuse a reboot only
    // because the channel was not built yet.
    await powerQueue.idle();
    if (stopped) return;
    queue = new WorkQueue(key => reconciler.reconcile(key), {
      workers: options.workers ?? 4,
      metrics: metrics.queue('NodeMaintenance'),
      onError: (key, error) => {
        metrics.reconcileErrors.inc({ kind: 'NodeMaintenance' });
        log(`reconcile ${key}: ${(error as Error).message}`);
      },
    });
    updateGauge();
    enqueueAll();
    await machineControllers.start();
    if (stopped) return;
    await retention.start();
  };

  const leaseDurationMs =
    options.leaderElection?.leaseDurationMs ??
    (options.leaseDurationSeconds ?? 15) * 1000;
  const renewDeadlineMs =
    options.leaderElection?.renewDeadlineMs ??
    Math.min(10_000, (leaseDurationMs * 2) / 3);
  const elector = new LeaderElector({
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
    onStartedLeading: () => {
      startControllers().catch(error =>
        log(`starting controllers: ${(error as Error).message}`),
      );
    },
    onStoppedLeading: () => {
      void retention.stop();
      machineControllers.pause();
      drains.stop();
      powerQueue?.stop();
      powerQueue = undefined;
      queue?.stop();
      queue = undefined;
      options.onLostLeadership?.();
    },
  });
  leading = () => elector.isLeader;
  metrics.leadership(() => elector.isLeader);
  elector.start();

  const isSynced = () =>
    maintenances.hasSynced() &&
    nodes.hasSynced() &&
    providers.hasSynced() &&
    bmcs.hasSynced() &&
    machineControllers.hasSynced();
  return {
    metrics,
    isLeader: () => elector.isLeader,
    isSynced,
    isReady: isSynced,
    async stop() {
      if (stopped) return;
      stopped = true;
      await retention.stop();
      await machineControllers.stop();
      drains.stop();
      powerQueue?.stop();
      powerQueue = undefined;
      queue?.stop();
      queue = undefined;
      for (const off of unsubscribe) off();
      await elector.stop();
      await power.stop();
      await Promise.all([
        maintenances.stop(),
        nodes.stop(),
        providers.stop(),
        bmcs.stop(),
      ]);
    },
  };
}
