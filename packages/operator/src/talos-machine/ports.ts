/*
 * The TalosMachine kind's ports at the edge: the join reconciler's ports on the machine
 * kinds' shared caches and clients (talos/machineKinds.ts): status writes with this
 * process's own writes seen at once, Events, the Talos machine API, the join limits.
 * controller.ts declares the controller over them.
 */
import { talosMachineResource } from '@rackside/plugin-servers-common';
import { conditionalStatusWriter } from '../runtime/kube/ownWrites';
import type { MachineKinds } from '../talos/machineKinds';
import type { TalosMachineReconcilerPorts } from './reconciler';
import { DEFAULT_JOIN_LIMITS, type JoinLimits } from './table';

export function kubeJoinPorts(
  kinds: MachineKinds,
  /** The join limits; tests shorten them. */
  limits: Partial<JoinLimits> | undefined,
): TalosMachineReconcilerPorts {
  const { api, clusters, freshMachines } = kinds;
  return {
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
  };
}
