/*
 * The TalosCluster (discovery) controller: the reconciler of reconciler.ts wired to the
 * apiserver through the machine kinds' shared caches (talos/machineKinds.ts), on one
 * keyed work queue. It creates the TalosMachines it finds in maintenance mode and
 * records where it last saw them.
 *
 * What wakes a cluster: its spec changing (an added address) is probed at once; a Done
 * MachineReclaim wakes its target cluster (wake(), called by reclaim/controller.ts).
 */
import {
  talosClusterResource,
  talosMachineResource,
} from '@rackside/plugin-servers-common';
import { objectKey } from '@rackside/plugin-servers-node';
import { WorkQueue } from '../runtime/workqueue';
import type { MachineKinds } from '../talos/machineKinds';
import { TalosClusterReconciler } from './reconciler';

export interface TalosClusterController {
  /** Waits for the caches, then runs the queue (call when leading). */
  start(): Promise<void>;
  /** Stops the queue (leadership lost); the caches keep watching. */
  pause(): void;
  /** Probes the cluster `namespace/name` again now (a machine was reclaimed). */
  wake(key: string): void;
  stop(): Promise<void>;
}

export function createTalosClusterController(
  kinds: MachineKinds,
): TalosClusterController {
  const { api, clusters, freshMachines, log, namespace } = kinds;
  const probeTimeoutMs = kinds.settings.probeTimeoutMs ?? 5000;

  const discovery = new TalosClusterReconciler({
    cluster: key => clusters.get(key),
    machine: (ns, name) => freshMachines.get(`${ns}/${name}`),
    readSecret: kinds.readSecret,
    talos: kinds.talos,
    resolve: kinds.resolve,
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
          },
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
          },
          { namespace: machine.metadata.namespace, type: 'merge' },
        ),
      );
    },
    async writeStatus(cluster, status) {
      await api.talosClusters.patchStatus(
        cluster.metadata.name,
        { status },
        { namespace: cluster.metadata.namespace, type: 'merge' },
      );
    },
    events: { record: kinds.record(talosClusterResource) },
    now: kinds.now,
    probeTimeoutMs,
    concurrency: 8,
    log,
  });

  let queue: WorkQueue | undefined;
  const unsubscribe = [
    clusters.on('add', c => queue?.add(objectKey(c))),
    clusters.on('update', (c, old) => {
      // Our own status writes come back as updates: only a spec change wakes discovery.
      if (c.metadata.generation !== old.metadata.generation) {
        queue?.add(objectKey(c));
      }
    }),
    clusters.on('delete', c => discovery.forget(objectKey(c))),
  ];

  let stopped = false;
  const pause = () => {
    queue?.stop();
    queue = undefined;
  };
  return {
    async start() {
      await kinds.synced();
      if (stopped) return;
      queue = new WorkQueue(key => discovery.reconcile(key), {
        workers: Math.min(kinds.workers, 2),
        onError: kinds.onError('TalosCluster'),
        metrics: kinds.queueMetrics('TalosCluster'),
      });
      for (const c of clusters.list()) queue.add(objectKey(c));
    },
    pause,
    wake(key) {
      discovery.wake(key);
      queue?.add(key);
    },
    async stop() {
      stopped = true;
      pause();
      for (const off of unsubscribe) off();
    },
  };
}
