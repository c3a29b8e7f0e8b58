/*
 * Wires the discovery, join and reclaim reconcilers to the apiserver: watch caches of
 * TalosClusters, TalosMachines and MachineReclaims in the operator's namespace (where
 * their Secrets are), one keyed work queue per kind, and the edges (status writes,
 * Secrets, Events, the Talos API). startOperator() creates this next to the maintenance
 * controllers and starts it when it leads.
 *
 * What wakes what: a TalosCluster whose spec changed (an added address) is probed at once;
 * a TalosMachine change, or a Node with its system UUID, reconciles the machine; a
 * MachineReclaim change reconciles the request; a Done request wakes its target
 * cluster's discovery.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  machineReclaimResource,
  talosClusterResource,
  talosMachineResource,
  type LocalSecretRef,
  type MachineReclaim,
  type TalosCluster,
  type TalosMachine,
} from '@rackside/plugin-servers-common';
import {
  CoreClient,
  createWatchCache,
  dnsResolver,
  objectKey,
  parseTalosconfig,
  RacksideClient,
  resourcePath,
  type RawKubeObject,
  type ResolveName,
  type WatchCache,
} from '@rackside/plugin-servers-node';
import type { EventRecorder } from '../runtime/events';
import { eventsFor } from '../runtime/kube/eventsFor';
import { conditionalStatusWriter, ownWritesView } from '../runtime/kube/ownWrites';
import type { SecretReader } from '../runtime/kube/secrets';
import type { NodeView } from '../maintenance/types';
import {
  DEFAULT_RECLAIM_LIMITS,
  type ReclaimLimits,
} from '../reclaim/table';
import { kubeCredentialPort } from '../reclaim/credential';
import { MachineReclaimReconciler } from '../reclaim/reconciler';
import { WorkQueue, type WorkQueueMetrics } from '../runtime/workqueue';
import { DEFAULT_JOIN_LIMITS, type JoinLimits } from '../talos-machine/table';
import { createTalosAccess, type TalosAccess } from './talosAccess';
import { TalosClusterReconciler } from '../talos-cluster/reconciler';
import { TalosMachineReconciler } from '../talos-machine/reconciler';
import { OPERATOR_FIELD_MANAGER } from '../runtime/kube/fieldManager';
import { reconcileErrorFields, type OperatorLog } from '../runtime/logger';
import { subjectAccessReviews } from '../webhook/server';

/** Limits of the machine controllers; tests shorten them. */
export interface MachineControllerSettings {
  reclaim?: Partial<ReclaimLimits> & {
    /** The time limit of one reconcile of a MachineReclaim (2 minutes). */
    reconcileTimeoutMs?: number;
  };
  join?: Partial<JoinLimits>;
  /** Deadline of one discovery probe; default 5 s. */
  probeTimeoutMs?: number;
}

export interface MachineControllersOptions extends MachineControllerSettings {
  kubeConfig: KubeConfig;
  /** The operator's namespace: TalosClusters, TalosMachines, MachineReclaims and their Secrets. */
  namespace: string;
  /** The operator's Node cache (system UUIDs and readiness). */
  nodes: WatchCache<NodeView & RawKubeObject>;
  recorder: EventRecorder;
  /** The operator's Secret reader (kube/secrets.ts): talosconfigs and join configs. */
  secrets: SecretReader;
  workers: number;
  onError?: (kind: string, key: string, error: unknown) => void;
  /** Where each controller's queue reports depth, retries and durations, by kind. */
  queueMetrics?: (controller: string) => WorkQueueMetrics;
  log?: OperatorLog;
  /** The machine API; tests may replace it. */
  talos?: TalosAccess;
  /** Resolves discovery addresses that are names; default the system resolver. */
  resolve?: ResolveName;
}

export interface MachineControllers {
  /** Waits for the caches, then runs the queues (call when leading). */
  start(): Promise<void>;
  /** Stops the queues (leadership lost); the caches keep watching. */
  pause(): void;
  hasSynced(): boolean;
  stop(): Promise<void>;
}

export function createMachineControllers(
  options: MachineControllersOptions,
): MachineControllers {
  const { kubeConfig: kc, namespace, nodes, recorder } = options;
  const log = options.log ?? (() => {});
  const talos = options.talos ?? createTalosAccess();
  const resolve =
    options.resolve ?? dnsResolver(options.probeTimeoutMs ?? 5000);
  const api = new RacksideClient(kc, { fieldManager: OPERATOR_FIELD_MANAGER });
  const core = new CoreClient(kc, { fieldManager: OPERATOR_FIELD_MANAGER });
  const now = () => Date.now();

  const clusters = createWatchCache<TalosCluster & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(talosClusterResource, namespace),
    name: 'talosclusters',
  });
  const machines = createWatchCache<TalosMachine & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(talosMachineResource, namespace),
    name: 'talosmachines',
  });
  const reclaims = createWatchCache<MachineReclaim & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(machineReclaimResource, namespace),
    name: 'machinereclaims',
  });
  const freshMachines = ownWritesView<TalosMachine>(machines);
  const freshReclaims = ownWritesView<MachineReclaim>(reclaims);

  const readSecret = (ns: string, ref: LocalSecretRef): Promise<string> =>
    options.secrets.read({ namespace: ns, name: ref.name, key: ref.key });
  const record = (descriptor: { apiVersion: string; kind: string }) =>
    eventsFor(recorder, descriptor).record;

  const discovery = new TalosClusterReconciler({
    cluster: key => clusters.get(key),
    machine: (ns, name) => freshMachines.get(`${ns}/${name}`),
    readSecret,
    talos,
    resolve,
    async createMachine(cluster, uuid, seen) {
      const ns = cluster.metadata.namespace ?? namespace;
      const created = await api.talosMachines.create({
        apiVersion: talosMachineResource.apiVersion,
        kind: 'TalosMachine',
        metadata: { name: uuid, namespace: ns },
        spec: { cluster: cluster.metadata.name },
      });
      freshMachines.remember(
        await api.talosMachines.patchStatus(
          uuid,
          {
            status: {
              phase: 'Pending',
              address: seen.address,
              lastSeenAt: seen.at,
              message: `found by discovery of TalosCluster ${cluster.metadata.name} in maintenance mode`,
            },
          } as any,
          { namespace: ns, type: 'merge' },
        ),
      );
      log(
        `TalosMachine ${ns}/${created.metadata.name}: Pending at ${seen.address}`,
      );
    },
    async updateMachineSeen(machine, seen) {
      if (
        machine.status?.address === seen.address &&
        machine.status?.phase === 'Pending'
      ) {
        return; // lastSeenAt alone is not worth a write per pass
      }
      freshMachines.remember(
        await api.talosMachines.patchStatus(
          machine.metadata.name,
          {
            status: {
              phase: machine.status?.phase ?? 'Pending',
              address: seen.address,
              lastSeenAt: seen.at,
            },
          } as any,
          { namespace: machine.metadata.namespace, type: 'merge' },
        ),
      );
    },
    async writeStatus(cluster, status) {
      await api.talosClusters.patchStatus(
        cluster.metadata.name,
        { status } as any,
        { namespace: cluster.metadata.namespace, type: 'merge' },
      );
    },
    events: { record: record(talosClusterResource) },
    now,
    probeTimeoutMs: options.probeTimeoutMs ?? 5000,
    concurrency: 8,
    log,
  });

  const joinLimits = { ...DEFAULT_JOIN_LIMITS, ...options.join };
  const nodeWithUUID = (uuid: string) =>
    nodes
      .list()
      .find(n => n.status?.nodeInfo?.systemUUID?.toLowerCase() === uuid);
  const joins = new TalosMachineReconciler({
    view: { machine: key => freshMachines.get(key) },
    cluster: (ns, name) => clusters.get(`${ns}/${name}`),
    nodeWithUUID,
    readSecret,
    talos,
    resolve,
    limits: joinLimits,
    now,
    writeStatus: conditionalStatusWriter(api.talosMachines, freshMachines),
    events: { record: record(talosMachineResource) },
    log,
  });

  let discoveryQueue: WorkQueue | undefined;
  let machineQueue: WorkQueue | undefined;
  let reclaimQueue: WorkQueue | undefined;

  const reclaimLimits = { ...DEFAULT_RECLAIM_LIMITS, ...options.reclaim };
  const reclaimAccess = subjectAccessReviews(kc);
  const reclaimer = new MachineReclaimReconciler({
    view: { reclaim: key => freshReclaims.get(key) },
    cluster: (ns, name) => clusters.get(`${ns}/${name}`),
    // Reads and deletes only a Secret bound to its request (see reclaim/credential.ts).
    credential: kubeCredentialPort(core.secrets, namespace),
    async clusterCa(cluster) {
      return parseTalosconfig(
        await readSecret(
          cluster.metadata.namespace ?? namespace,
          cluster.spec.talosconfigSecretRef,
        ),
      ).identity.ca;
    },
    nodeWithUUID: uuid => nodeWithUUID(uuid.toLowerCase())?.metadata?.name,
    resetsInFlight: mr =>
      freshReclaims
        .list()
        .filter(
          r =>
            r.metadata.uid !== mr.metadata.uid &&
            r.metadata.namespace === mr.metadata.namespace &&
            (r.status?.phase === 'Resetting' ||
              r.status?.phase === 'WaitingForMaintenance'),
        )
        .map(r => ({ name: r.metadata.name, address: r.spec.address })),
    talos,
    limits: reclaimLimits,
    // The reclaim verb as the requester, right before the reset (reclaim/lifecycle.ts).
    mayReclaim: (username, mr) =>
      reclaimAccess.canReclaim(
        { username, groups: ['system:authenticated'] },
        { namespace: mr.metadata.namespace, name: mr.metadata.name },
      ),
    // spec.address is held to the target cluster's allowed networks (reclaim/lifecycle.ts).
    resolve,
    reconcileTimeoutMs: options.reclaim?.reconcileTimeoutMs ?? 120_000,
    now,
    status: {
      write: conditionalStatusWriter(api.machineReclaims, freshReclaims),
      read: (ns, name) => api.machineReclaims.find(name, { namespace: ns }),
    },
    events: { record: record(machineReclaimResource) },
    wakeDiscovery(ns, cluster) {
      const key = `${ns}/${cluster}`;
      discovery.wake(key);
      discoveryQueue?.add(key);
    },
    log,
  });

  const onError = (kind: string) => (key: string, error: unknown) => {
    options.onError?.(kind, key, error);
    log(
      `reconcile ${kind} ${key}: ${(error as Error).message}`,
      reconcileErrorFields(kind, key, error),
    );
  };

  const unsubscribe = [
    clusters.on('add', c => discoveryQueue?.add(objectKey(c))),
    clusters.on('update', (c, old) => {
      // Our own status writes come back as updates: only a spec change wakes discovery.
      if (c.metadata.generation !== old.metadata.generation) {
        discoveryQueue?.add(objectKey(c));
      }
    }),
    clusters.on('delete', c => discovery.forget(objectKey(c))),
    machines.on('add', m => machineQueue?.add(objectKey(m))),
    machines.on('update', (m, old) => {
      // spec.join, or discovery saw it at a new address; our own status writes are not news.
      if (
        m.metadata.generation !== old.metadata.generation ||
        m.status?.address !== old.status?.address
      ) {
        machineQueue?.add(objectKey(m));
      }
    }),
    machines.on('delete', m => freshMachines.forget(objectKey(m))),
    ...(['add', 'update'] as const).map(event =>
      nodes.on(event, (node: NodeView & RawKubeObject) => {
        const uuid = node.status?.nodeInfo?.systemUUID?.toLowerCase();
        const phase = uuid
          ? machines.get(`${namespace}/${uuid}`)?.status?.phase ?? 'none'
          : 'none';
        // Heartbeats of every Node come through here: only a machine still to join cares.
        if (phase === 'Pending' || phase === 'Joining') {
          machineQueue?.add(`${namespace}/${uuid}`);
        }
      }),
    ),
    reclaims.on('add', r => reclaimQueue?.add(objectKey(r))),
    reclaims.on('update', (r, old) => {
      // The confirm (spec.confirmUUID); a reconcile goes on from its own writes itself.
      if (r.metadata.generation !== old.metadata.generation) {
        reclaimQueue?.add(objectKey(r));
      }
    }),
    reclaims.on('delete', r => freshReclaims.forget(objectKey(r))),
  ];

  let stopped = false;
  const stopQueues = () => {
    for (const q of [discoveryQueue, machineQueue, reclaimQueue]) q?.stop();
    discoveryQueue = machineQueue = reclaimQueue = undefined;
  };

  return {
    async start() {
      await Promise.all([
        clusters.synced,
        machines.synced,
        reclaims.synced,
        nodes.synced,
      ]);
      if (stopped) return;
      const workers = Math.max(1, options.workers);
      discoveryQueue = new WorkQueue(key => discovery.reconcile(key), {
        workers: Math.min(workers, 2),
        onError: onError('TalosCluster'),
        metrics: options.queueMetrics?.('TalosCluster'),
      });
      machineQueue = new WorkQueue(key => joins.reconcile(key), {
        workers,
        onError: onError('TalosMachine'),
        metrics: options.queueMetrics?.('TalosMachine'),
      });
      reclaimQueue = new WorkQueue(key => reclaimer.reconcile(key), {
        workers,
        onError: onError('MachineReclaim'),
        metrics: options.queueMetrics?.('MachineReclaim'),
      });
      for (const c of clusters.list()) discoveryQueue.add(objectKey(c));
      for (const m of machines.list()) machineQueue.add(objectKey(m));
      for (const r of reclaims.list()) reclaimQueue.add(objectKey(r));
    },
    pause: stopQueues,
    hasSynced: () =>
      clusters.hasSynced() && machines.hasSynced() && reclaims.hasSynced(),
    async stop() {
      stopped = true;
      stopQueues();
      for (const off of unsubscribe) off();
      await Promise.all([clusters.stop(), machines.stop(), reclaims.stop()]);
    },
  };
}
