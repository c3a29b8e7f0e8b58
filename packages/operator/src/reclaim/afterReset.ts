/*
 * The MachineReclaim rows after the reset (table.ts): Resetting (only after a crash
 * between record and answer: never sent again) and WaitingForMaintenance (the same UUID
 * back in maintenance mode, or the deadline).
 */
import type { MachineReclaim } from '@rackside/plugin-servers-common';
import { reachFor } from '@rackside/plugin-servers-node';
import { ReclaimReason } from '../runtime/lifecycle/reasons';
import {
  callTimeout,
  end,
  formatDuration,
  maintenanceDeadline,
  wait,
} from './decisions';
import type { ReclaimLimits, Row, Transition } from './types';

/** What the answer to the reset makes of a request in Resetting. */
export function afterReset(
  mr: MachineReclaim,
  outcome:
    | { ok: true; actorId: string; at: string }
    | {
        ok: false;
        outcome: 'notSent' | 'refused' | 'unknown';
        message: string;
      },
  limits: ReclaimLimits,
): Transition {
  const address = mr.spec.address;
  const maintenanceWait = formatDuration(limits.maintenanceWaitMs);
  if (outcome.ok) {
    return {
      kind: 'transition',
      to: 'WaitingForMaintenance',
      status: { resetSentAt: outcome.at },
      deleteCredential: true,
      audit: [
        {
          event: ReclaimReason.ResetSent,
          message: `${address} accepted the Reset (actor ${
            outcome.actorId || 'unnamed'
          }); waiting up to ${maintenanceWait} for it to answer in maintenance mode with UUID ${
            mr.status?.machineUUID
          }.`,
        },
      ],
    };
  }
  if (outcome.outcome === 'unknown') {
    return {
      kind: 'transition',
      to: 'WaitingForMaintenance',
      deleteCredential: true,
      audit: [
        {
          event: ReclaimReason.ResetUnanswered,
          warning: true,
          message: `The Reset to ${address} got no clear answer (${outcome.message}); it may have run and is not sent again. Waiting for ${address} to answer in maintenance mode.`,
        },
      ],
    };
  }
  return end(
    'Failed',
    `The Reset was not carried out: ${
      outcome.outcome === 'notSent'
        ? `it could not be sent to ${address}`
        : `${address} refused it`
    } (${outcome.message}).`,
    ReclaimReason.ReclaimFailed,
  );
}

/** Resetting seen on a later pass: the operator stopped between record and answer. */
export const resetting: Row = async mr => ({
  kind: 'transition',
  to: 'WaitingForMaintenance',
  deleteCredential: true,
  audit: [
    {
      event: ReclaimReason.ResetUnanswered,
      warning: true,
      message: `The operator stopped after it recorded the Reset and before it recorded the answer; the Reset is not sent again. Waiting for ${mr.spec.address} to answer in maintenance mode.`,
    },
  ],
});

/** WaitingForMaintenance: Done when the same machine answers in maintenance mode; Failed at the deadline. */
export const waitingForMaintenance: Row = async (mr, ports) => {
  const address = mr.spec.address;
  const uuid = mr.status?.machineUUID?.toLowerCase();
  const deadline =
    maintenanceDeadline(mr, ports.limits) ??
    ports.now() + ports.limits.maintenanceWaitMs;
  if (ports.now() >= deadline) {
    const result = `${address} did not return to maintenance mode with UUID ${uuid} within ${formatDuration(
      ports.limits.maintenanceWaitMs,
    )} of the reset. It may have taken a new address from DHCP: scan for the machine and add its address to a TalosCluster's spec.discovery.addresses.`;
    return {
      kind: 'transition',
      to: 'Failed',
      status: { result },
      deleteCredential: true,
      audit: [
        { event: ReclaimReason.ReclaimFailed, message: result, warning: true },
      ],
    };
  }
  const cluster = ports.cluster(
    mr.metadata.namespace ?? '',
    mr.spec.targetCluster,
  );
  const reach = cluster
    ? await reachFor(cluster, address, ports.resolve)
    : undefined;
  if (!reach?.allowed) {
    // The reset was sent inside the networks; they (or the name) changed since. Nothing
    // is contacted; the deadline still ends the request (Failed, with the DHCP hint).
    return wait(
      ports,
      deadline,
      reach ? reach.state : 'TargetClusterMissing',
      reach
        ? `${address} is not contacted: ${reach.message}`
        : `${address} is not contacted: there is no TalosCluster ${mr.spec.targetCluster} to check its allowed networks`,
    );
  }
  let found: string;
  try {
    found = (
      await ports.talos.maintenanceUUID(
        reach.dial,
        callTimeout(ports, deadline),
      )
    ).toLowerCase();
  } catch (error) {
    return wait(
      ports,
      deadline,
      'NotInMaintenanceYet',
      `${address} is not answering in maintenance mode yet: ${
        (error as Error).message
      }`,
    );
  }
  if (found !== uuid) {
    return wait(
      ports,
      deadline,
      'OtherMachine',
      `a machine with UUID ${found}, not ${uuid}, answers at ${address}`,
    );
  }
  const result = `${address} answers in maintenance mode with UUID ${uuid}: it is reset. Discovery of TalosCluster ${mr.spec.targetCluster} lists it as a pending machine to add.`;
  return {
    kind: 'transition',
    to: 'Done',
    status: { result },
    deleteCredential: true,
    wakeDiscovery: true,
    audit: [{ event: ReclaimReason.Done, message: result }],
  };
};
