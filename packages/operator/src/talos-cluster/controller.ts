/*
 * The TalosCluster (discovery) controller, declared for the builder (runtime/controller):
 * the discovery reconciler of reconciler.ts over its ports (ports.ts, on the machine
 * kinds' shared caches). It creates the TalosMachines it finds in maintenance mode and
 * records where it last saw them.
 *
 * What wakes a cluster: its spec changing (an added address) is probed at once; a Done
 * MachineReclaim wakes its target cluster (wake(), called by reclaim/controller.ts).
 */
import { objectKey } from '@rackside/plugin-servers-node';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import type { MachineKinds } from '../talos/machineKinds';
import { kubeDiscoveryPorts } from './ports';
import { TalosClusterReconciler } from './reconciler';

export interface TalosClusterController extends Controller {
  /** Probes the cluster `namespace/name` again now (a machine was reclaimed). */
  wake(key: string): void;
}

export function createTalosClusterController(
  kinds: MachineKinds,
  ports: ControllerPorts,
): TalosClusterController {
  const { clusters } = kinds;

  const discovery = new TalosClusterReconciler(kubeDiscoveryPorts(kinds));

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
