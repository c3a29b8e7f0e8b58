/*
 * The MachineReclaim controller, declared for the builder (runtime/controller): the
 * reconciler of reconciler.ts (the table of table.ts) over its ports (ports.ts, on the
 * machine kinds' shared caches).
 *
 * What wakes a request: a change of its spec (the confirm, spec.confirmUUID); a
 * reconcile goes on from its own writes itself. A Done request wakes its target
 * cluster's discovery (wakeDiscovery).
 */
import { objectKey } from '@rackside/plugin-servers-node';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import type { MachineKinds } from '../talos/machineKinds';
import {
  kubeReclaimPorts,
  type ReclaimControllerOptions,
  type ReclaimSettings,
} from './ports';
import { MachineReclaimReconciler } from './reconciler';

export type { ReclaimControllerOptions, ReclaimSettings };

export function createReclaimController(
  kinds: MachineKinds,
  options: ReclaimControllerOptions,
  ports: ControllerPorts,
): Controller {
  const { reclaims, freshReclaims } = kinds;

  const reclaimer = new MachineReclaimReconciler(
    kubeReclaimPorts(kinds, options),
  );

  return buildController(
    {
      kind: 'MachineReclaim',
      reconcile: key => reclaimer.reconcile(key),
      watches: wake => [
        reclaims.on('add', r => wake.enqueue(objectKey(r))),
        reclaims.on('update', (r, old) => {
          // The confirm (spec.confirmUUID); a reconcile goes on from its own writes
          // itself.
          if (r.metadata.generation !== old.metadata.generation) {
            wake.enqueue(objectKey(r));
          }
        }),
        reclaims.on('delete', r => freshReclaims.forget(objectKey(r))),
      ],
      keys: () => reclaims.list().map(r => objectKey(r)),
      phaseOf: key => reclaims.get(key)?.status?.phase,
      synced: () => kinds.synced(),
    },
    ports,
  );
}
