/*
 * The TalosMachine (join) controller, declared for the builder (runtime/controller): the
 * reconciler of reconciler.ts (the table of table.ts) wired to the apiserver through the
 * machine kinds' shared caches (talos/machineKinds.ts).
 *
 * What wakes a machine: a change of its spec (spec.join), or discovery seeing it at a new
 * address; a Node with its system UUID appearing or changing while it is still to join.
 */
import { talosMachineResource } from '@rackside/plugin-servers-common';
import { objectKey, type RawKubeObject } from '@rackside/plugin-servers-node';
import { conditionalStatusWriter } from '../runtime/kube/ownWrites';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import type { NodeView } from '../runtime/nodeView';
import type { MachineKinds } from '../talos/machineKinds';
import { TalosMachineReconciler } from './reconciler';
import { DEFAULT_JOIN_LIMITS, type JoinLimits } from './table';

export function createTalosMachineController(
  kinds: MachineKinds,
  /** The join limits; tests shorten them. */
  limits: Partial<JoinLimits> | undefined,
  ports: ControllerPorts,
): Controller {
  const { api, clusters, machines, freshMachines, namespace, nodes } = kinds;

  const joins = new TalosMachineReconciler({
    view: { machine: key => freshMachines.get(key) },
    cluster: (ns, name) => clusters.get(`${ns}/${name}`),
    nodeWithUUID: kinds.nodeWithUUID,
    readSecret: kinds.readSecret,
    talos: kinds.talos,
    resolve: kinds.resolve,
    limits: { ...DEFAULT_JOIN_LIMITS, ...limits },
    now: kinds.now,
    writeStatus: conditionalStatusWriter(api.talosMachines, freshMachines),
    events: { record: kinds.record(talosMachineResource) },
    log: kinds.log,
  });

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
