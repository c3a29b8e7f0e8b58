/*
 * The MachineReclaim rows before the reset (table.ts): (new), Pending and
 * AwaitingConfirmation. Each reads the foreign machine again (foreignMachine.ts) before
 * it goes on; the confirmation records the Reset right after the last etcd read.
 */
import {
  MACHINE_RECLAIM_VERB,
  machineReclaimResource,
  type MachineReclaim,
} from '@rackside/plugin-servers-common';
import { ReclaimReason } from '../runtime/lifecycle/reasons';
import { isoOf } from '../runtime/lifecycle/table';
import { end, expired, expiresAt, iso, isDecision, requeue } from './decisions';
import { readForeignMachine } from './foreignMachine';
import type { Decision, LifecyclePorts, Row } from './types';

/** (new): fix the expiry, and check the target exists. */
export const admit: Row = async (mr, ports) => {
  const actor = mr.spec.requestedBy;
  if (!ports.cluster(mr.metadata.namespace ?? '', mr.spec.targetCluster)) {
    return end(
      'Refused',
      `There is no TalosCluster ${mr.spec.targetCluster} in namespace ${mr.metadata.namespace} to add ${mr.spec.address} to. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  const expires = expiresAt(mr, ports.limits);
  return {
    kind: 'transition',
    to: 'Pending',
    status: { expiresAt: iso(expires) },
    audit: [
      {
        event: ReclaimReason.Created,
        actor,
        message: `Reset and add of ${mr.spec.address} into TalosCluster ${
          mr.spec.targetCluster
        } requested${
          mr.spec.reason ? `: ${mr.spec.reason}` : ''
        }. The credential and the request expire at ${iso(
          expires,
        )} unless the reset is confirmed before.`,
      },
    ],
  };
};

/** Pending: read the UUID with the foreign talosconfig and judge the reset. */
export const pending: Row = async (mr, ports) => {
  const until = expiresAt(mr, ports.limits);
  if (ports.now() >= until) return expired(mr, ports);
  const read = await readForeignMachine(mr, ports, until);
  if (isDecision(read)) return read;
  return {
    kind: 'transition',
    to: 'AwaitingConfirmation',
    status: { machineUUID: read.uuid },
    audit: [
      {
        event: ReclaimReason.UUIDRead,
        message: `${mr.spec.address} has the SMBIOS UUID ${
          read.uuid
        } (read with the foreign talosconfig); ${
          read.safety
        }. Type the UUID to confirm the reset before ${iso(until)}.`,
      },
    ],
  };
};

/** AwaitingConfirmation: the typed UUID, then the same machine still there and still safe. */
export const awaitingConfirmation: Row = async (mr, ports) => {
  const until = expiresAt(mr, ports.limits);
  if (ports.now() >= until) return expired(mr, ports);
  const typed = mr.spec.confirmUUID?.toLowerCase();
  if (!typed) {
    return { kind: 'wait', requeueAfterMs: requeue(ports, until) };
  }
  const expected = mr.status?.machineUUID?.toLowerCase();
  if (typed !== expected) {
    return end(
      'Refused',
      `The typed UUID ${typed} does not match the UUID of ${mr.spec.address} (${expected}). Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  const read = await readForeignMachine(mr, ports, until, 'fail');
  if (isDecision(read)) return read;
  if (read.uuid !== expected) {
    return end(
      'Refused',
      `${mr.spec.address} now has the UUID ${read.uuid}, not the confirmed ${expected}: another machine took the address. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  const refused = await requesterRefusal(mr, ports, until);
  if (refused) return refused;
  const now = isoOf(ports);
  return {
    kind: 'reset',
    talosconfig: read.talosconfig,
    dial: read.dial,
    status: { confirmedAt: now, resetRecordedAt: now },
    audit: [
      {
        event: ReclaimReason.Confirmed,
        message: `The typed UUID matches ${expected}; ${read.safety}.`,
      },
      {
        event: ReclaimReason.ResetRecorded,
        message: `Sending Reset to ${mr.spec.address} (graceful, reboot, wipe STATE and EPHEMERAL).`,
      },
    ],
  };
};

/**
 * A Backstage entity ref (user:default/jane): what the Backstage backend writes as the
 * requester, and only it (the chart's attribution policy). The backend checked that person
 * with the permission framework (machines:reclaim) before it wrote the request.
 */
const ENTITY_REF = /^[A-Za-z]+:[^\s:/]+\/[^\s/]+$/;

/**
 * The `reclaim` verb, checked again right before the Reset is recorded, as the requester
 * (a SubjectAccessReview), whatever the webhook's setting (disabled, failurePolicy
 * Ignore): a request written by someone who may not reset machines sends nothing. A
 * request without a requester is refused; one made through the portal carries the
 * person's entity ref and was checked by the backend. No answer from the apiserver: wait,
 * within the TTL (fail closed).
 */
async function requesterRefusal(
  mr: MachineReclaim,
  ports: LifecyclePorts,
  until: number,
): Promise<Decision | undefined> {
  const requester = mr.spec.requestedBy?.trim();
  if (!requester) {
    return end(
      'Refused',
      `MachineReclaim ${mr.metadata.name} names no requester (spec.requestedBy): a reset is done only for someone who may reclaim. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  if (ENTITY_REF.test(requester)) return undefined;
  let review: { allowed: boolean; reason?: string };
  try {
    review = await ports.mayReclaim(requester, mr);
  } catch (error) {
    return {
      kind: 'wait',
      requeueAfterMs: requeue(ports, until),
      waiting: {
        reason: 'PermissionCheckFailed',
        message: `The reclaim permission of ${requester} could not be checked (${
          (error as Error).message
        }); nothing is reset until it is.`,
      },
    };
  }
  if (review.allowed) return undefined;
  return end(
    'Refused',
    `${requester} may not reset ${
      mr.spec.address
    }: the requester needs the "${MACHINE_RECLAIM_VERB}" verb on ${
      machineReclaimResource.plural
    }.${machineReclaimResource.group} in namespace ${
      mr.metadata.namespace
    }, checked by the operator right before the reset${
      review.reason ? ` (${review.reason})` : ''
    }. Nothing was reset.`,
    ReclaimReason.Refused,
  );
}
