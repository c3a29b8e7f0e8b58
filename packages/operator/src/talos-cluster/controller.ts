/*
 * The TalosCluster (discovery) controller, declared for the builder (runtime/controller):
 * the reconciler of reconciler.ts wired to the apiserver through the machine kinds'
 * shared caches (talos/machineKinds.ts). It creates the TalosMachines it finds in
 * maintenance mode and records where it last saw them.
 *
 * What wakes a cluster: its spec changing (an added address) is probed at once; a Done
 * MachineReclaim wakes its target cluster (wake(), called by reclaim/controller.ts).
 */
import {
  talosClusterResource,
  talosMachineResource,
} from '@rackside/plugin-servers-common';
import { objectKey } from '@rackside/plugin-servers-node';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import type { MachineKinds } from '../talos/machineKinds';
import { TalosClusterReconciler } from './reconciler';

export interface TalosClusterController extends Controller {
  /** Probes the cluster `namespace/name` again now (a machine was reclaimed). */
  wake(key: string): void;
}

export function createTalosClusterController(
  kinds: MachineKinds,
  ports: ControllerPorts,
): TalosClusterController {
  const { api, clusters, freshMachines, log, namespace } = kinds;
  const { probeTimeoutMs } = kinds;

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

  const controller = buildController(
    {
      kind: 'TalosCluster',
      reconcile: key => discovery.reconcile(key),
      watches: wake => [
        clusters.on('add', c => wake.enqueue(objectKey(c))),
        clusters.on('update', (c, old) => {
          // Our own status writes come back as updates: only a spec change wakes
          // discovery.
          if (c.metadata.generation !== old.metadata.generation) {
            wake.enqueue(objectKey(c));
          }
        }),
        clusters.on('delete', c => discovery.forget(objectKey(c))),
      ],
      keys: () => clusters.list().map(c => objectKey(c)),
      synced: () => kinds.synced(),
    },
    // Each pass probes every address of a cluster: two clusters at once at most.
    { ...ports, workers: Math.min(ports.workers, 2) },
  );
  return {
    ...controller,
    wake(key) {
      discovery.wake(key);
      controller.enqueue(key);
    },
  };
}
