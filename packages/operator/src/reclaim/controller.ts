/*
 * The MachineReclaim controller: the reconciler of reconciler.ts (the table of table.ts)
 * wired to the apiserver through the machine kinds' shared caches
 * (talos/machineKinds.ts), on one keyed work queue: status writes with this process's
 * own writes seen at once, the bound credential Secret (credential.ts), the requester's
 * reclaim verb asked right before the reset, Events.
 *
 * What wakes a request: a change of its spec (the confirm, spec.confirmUUID); a
 * reconcile goes on from its own writes itself. A Done request wakes its target
 * cluster's discovery (wakeDiscovery).
 */
import { machineReclaimResource } from '@rackside/plugin-servers-common';
import { objectKey, parseTalosconfig } from '@rackside/plugin-servers-node';
import { conditionalStatusWriter } from '../runtime/kube/ownWrites';
import { WorkQueue } from '../runtime/workqueue';
import type { MachineKinds } from '../talos/machineKinds';
import { subjectAccessReviews } from '../webhook/server';
import { kubeCredentialPort } from './credential';
import { MachineReclaimReconciler } from './reconciler';
import { DEFAULT_RECLAIM_LIMITS } from './table';

export interface ReclaimControllerOptions {
  /** Probes the TalosCluster `namespace/name` again (talos-cluster/controller.ts). */
  wakeDiscovery(namespace: string, cluster: string): void;
}

export interface ReclaimController {
  /** Waits for the caches, then runs the queue (call when leading). */
  start(): Promise<void>;
  /** Stops the queue (leadership lost); the caches keep watching. */
  pause(): void;
  stop(): Promise<void>;
}

export function createReclaimController(
  kinds: MachineKinds,
  options: ReclaimControllerOptions,
): ReclaimController {
  const { api, clusters, reclaims, freshReclaims, namespace } = kinds;
  const settings = kinds.settings.reclaim;
  const access = subjectAccessReviews(kinds.kubeConfig);

  const reclaimer = new MachineReclaimReconciler({
    view: { reclaim: key => freshReclaims.get(key) },
    cluster: (ns, name) => clusters.get(`${ns}/${name}`),
    // Reads and deletes only a Secret bound to its request (see credential.ts).
    credential: kubeCredentialPort(kinds.core.secrets, namespace),
    async clusterCa(cluster) {
      return parseTalosconfig(
        await kinds.readSecret(
          cluster.metadata.namespace ?? namespace,
          cluster.spec.talosconfigSecretRef,
        ),
      ).identity.ca;
    },
    nodeWithUUID: uuid =>
      kinds.nodeWithUUID(uuid.toLowerCase())?.metadata?.name,
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
    talos: kinds.talos,
    limits: { ...DEFAULT_RECLAIM_LIMITS, ...settings },
    // The reclaim verb as the requester, right before the reset (table.ts).
    mayReclaim: (username, mr) =>
      access.canReclaim(
        { username, groups: ['system:authenticated'] },
        { namespace: mr.metadata.namespace, name: mr.metadata.name },
      ),
    // spec.address is held to the target cluster's allowed networks (table.ts).
    resolve: kinds.resolve,
    reconcileTimeoutMs: settings?.reconcileTimeoutMs ?? 120_000,
    now: kinds.now,
    status: {
      write: conditionalStatusWriter(api.machineReclaims, freshReclaims),
      read: (ns, name) => api.machineReclaims.find(name, { namespace: ns }),
    },
    events: { record: kinds.record(machineReclaimResource) },
    wakeDiscovery: options.wakeDiscovery,
    log: kinds.log,
  });

  let queue: WorkQueue | undefined;
  const unsubscribe = [
    reclaims.on('add', r => queue?.add(objectKey(r))),
    reclaims.on('update', (r, old) => {
      // The confirm (spec.confirmUUID); a reconcile goes on from its own writes itself.
      if (r.metadata.generation !== old.metadata.generation) {
        queue?.add(objectKey(r));
      }
    }),
    reclaims.on('delete', r => freshReclaims.forget(objectKey(r))),
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
      queue = new WorkQueue(key => reclaimer.reconcile(key), {
        workers: kinds.workers,
        onError: kinds.onError('MachineReclaim'),
        metrics: kinds.queueMetrics('MachineReclaim'),
      });
      for (const r of reclaims.list()) queue.add(objectKey(r));
    },
    pause,
    async stop() {
      stopped = true;
      pause();
      for (const off of unsubscribe) off();
    },
  };
}
