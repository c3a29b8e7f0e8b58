/*
 * The TalosMachine (join) controller: the reconciler of reconciler.ts (the table of
 * table.ts) wired to the apiserver through the machine kinds' shared caches
 * (talos/machineKinds.ts), on one keyed work queue.
 *
 * What wakes a machine: a change of its spec (spec.join), or discovery seeing it at a new
 * address; a Node with its system UUID appearing or changing while it is still to join.
 */
import { talosMachineResource } from '@rackside/plugin-servers-common';
import { objectKey, type RawKubeObject } from '@rackside/plugin-servers-node';
import { conditionalStatusWriter } from '../runtime/kube/ownWrites';
import { WorkQueue } from '../runtime/workqueue';
import type { NodeView } from '../maintenance/types';
import type { MachineKinds } from '../talos/machineKinds';
import { TalosMachineReconciler } from './reconciler';
import { DEFAULT_JOIN_LIMITS } from './table';

export interface TalosMachineController {
  /** Waits for the caches, then runs the queue (call when leading). */
  start(): Promise<void>;
  /** Stops the queue (leadership lost); the caches keep watching. */
  pause(): void;
  stop(): Promise<void>;
}

export function createTalosMachineController(
  kinds: MachineKinds,
): TalosMachineController {
  const { api, clusters, machines, freshMachines, namespace, nodes } = kinds;

  const joins = new TalosMachineReconciler({
    view: { machine: key => freshMachines.get(key) },
    cluster: (ns, name) => clusters.get(`${ns}/${name}`),
    nodeWithUUID: kinds.nodeWithUUID,
    readSecret: kinds.readSecret,
    talos: kinds.talos,
    resolve: kinds.resolve,
    limits: { ...DEFAULT_JOIN_LIMITS, ...kinds.settings.join },
    now: kinds.now,
    writeStatus: conditionalStatusWriter(api.talosMachines, freshMachines),
    events: { record: kinds.record(talosMachineResource) },
    log: kinds.log,
  });

  let queue: WorkQueue | undefined;
  const unsubscribe = [
    machines.on('add', m => queue?.add(objectKey(m))),
    machines.on('update', (m, old) => {
      // spec.join, or discovery saw it at a new address; our own status writes are not news.
      if (
        m.metadata.generation !== old.metadata.generation ||
        m.status?.address !== old.status?.address
      ) {
        queue?.add(objectKey(m));
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
          queue?.add(`${namespace}/${uuid}`);
        }
      }),
    ),
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
      queue = new WorkQueue(key => joins.reconcile(key), {
        workers: kinds.workers,
        onError: kinds.onError('TalosMachine'),
        metrics: kinds.queueMetrics('TalosMachine'),
      });
      for (const m of machines.list()) queue.add(objectKey(m));
    },
    pause,
    async stop() {
      stopped = true;
      pause();
      for (const off of unsubscribe) off();
    },
  };
}
