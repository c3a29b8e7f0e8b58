/*
 * The TalosMachine (join) controller, declared for the builder (runtime/controller): the
 * join reconciler of reconciler.ts (the table of table.ts) over its ports (ports.ts, on
 * the machine kinds' shared caches).
 *
 * What wakes a machine: a change of its spec (spec.join), or discovery seeing it at a new
 * address; a Node with its system UUID appearing or changing while it is still to join.
 */
import { objectKey, type RawKubeObject } from '@rackside/plugin-servers-node';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import type { NodeView } from '../runtime/nodeView';
import type { MachineKinds } from '../talos/machineKinds';
import { kubeJoinPorts } from './ports';
import { TalosMachineReconciler } from './reconciler';
import type { JoinLimits } from './table';

export function createTalosMachineController(
  kinds: MachineKinds,
  /** The join limits; tests shorten them. */
  limits: Partial<JoinLimits> | undefined,
  ports: ControllerPorts,
): Controller {
  const { machines, freshMachines, namespace, nodes } = kinds;

  const joins = new TalosMachineReconciler(kubeJoinPorts(kinds, limits));

  return buildController(
    {
      kind: 'TalosMachine',
      reconcile: key => joins.reconcile(key),
      watches: wake => [
        machines.on('add', m => wake.enqueue(objectKey(m))),
        machines.on('update', (m, old) => {
          // spec.join, or discovery saw it at a new address; our own status writes are
          // not news.
          if (
            m.metadata.generation !== old.metadata.generation ||
            m.status?.address !== old.status?.address
          ) {
            wake.enqueue(objectKey(m));
          }
        }),
        machines.on('delete', m => freshMachines.forget(objectKey(m))),
        ...(['add', 'update'] as const).map(event =>
          nodes.on(event, (node: NodeView & RawKubeObject) => {
            const uuid = node.status?.nodeInfo?.systemUUID?.toLowerCase();
            const phase = uuid
              ? machines.get(`${namespace}/${uuid}`)?.status?.phase ?? 'none'
              : 'none';
            // Heartbeats of every Node come through here: only a machine still to join
            // cares.
            if (phase === 'Pending' || phase === 'Joining') {
              wake.enqueue(`${namespace}/${uuid}`);
            }
          }),
        ),
      ],
      keys: () => machines.list().map(m => objectKey(m)),
      phaseOf: key => machines.get(key)?.status?.phase,
      synced: () => kinds.synced(),
    },
    ports,
  );
}
