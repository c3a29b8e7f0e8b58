/*
 * The TalosCluster kind's ports at the edge: the discovery reconciler's DiscoveryPorts
 * on the machine kinds' shared caches and clients (talos/machineKinds.ts): TalosMachines
 * created and their last sighting recorded with this process's own writes seen at once,
 * the cluster's status, Events, the Talos machine API. controller.ts declares the
 * controller over them.
 */
import {
  talosClusterResource,
  talosMachineResource,
} from '@rackside/plugin-servers-common';
import type { MachineKinds } from '../talos/machineKinds';
import type { DiscoveryPorts } from './reconciler';

export function kubeDiscoveryPorts(kinds: MachineKinds): DiscoveryPorts {
  const { api, clusters, freshMachines, log, namespace, probeTimeoutMs } =
    kinds;
  return {
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
  };
}
