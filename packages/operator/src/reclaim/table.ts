/*
 * The MachineReclaim lifecycle (decision 0002, docs/architecture.md, "Adding machines") as a
 * table: one row per phase. A row reads the machine and the credential through ports and
 * answers with a Decision; reconciler.ts writes it (status with its audit
 * entries, then the Events) and does what the decision asks after the write: send the
 * reset, delete the credential, wake discovery. Rows never write.
 *
 *   (new)                 -> Pending (expiresAt) | Refused (no target)
 *   Pending               -> AwaitingConfirmation (UUID read with the foreign talosconfig)
 *                            | Refused (credential not bound to the request, one of our own
 *                              machines, reset unsafe, nothing to reset, wrong cluster)
 *                            | Failed (unusable talosconfig) | Expired (TTL)
 *   AwaitingConfirmation  -> Resetting -> WaitingForMaintenance (typed UUID matches, still safe:
 *                              the foreign etcd is read again right before the Reset is recorded)
 *                            | Refused | Expired (TTL) | Failed (credential gone)
 *   Resetting             -> WaitingForMaintenance (only after a crash between record and answer:
 *                            never sent again)
 *   WaitingForMaintenance -> Done (same UUID in maintenance mode) | Failed (deadline, DHCP hint)
 *
 * The credential is bound to its request (docs/architecture.md, "Adding machines"): a Secret that is not owned by this
 * MachineReclaim (same uid) or lacks the label rackside.dev/credential-of=<name> is never
 * decoded and never deleted; the request is Refused and the Secret left as it was. A
 * Secret not there yet (the backend creates it right after the request) is waited for,
 * within the TTL.
 *
 * Network reach (docs/architecture.md, "Adding machines"): spec.address is contacted only inside the target cluster's
 * allowed networks on its Talos port, the rule discovery and the join apply (reachFor). It
 * is checked right before each contact: before the UUID read and the etcd read of Pending
 * and of the confirmation (so also right before the Reset is recorded and sent) and before
 * each look for maintenance mode. A name is resolved then, every address must be inside,
 * and the calls go to the checked IP, not to the name again. Outside before the reset: the
 * request is Refused, naming the networks, nothing contacted; after it: nothing is
 * contacted and the request waits, up to its deadline, for the networks to hold it again.
 *
 * The TTL bounds only the time before the reset; from the reset on only the maintenance
 * deadline counts. Every wait requeues at the smaller of the retry interval (10 s) and
 * the time left, and no call runs past the deadline it serves.
 *
 * The operator never writes a TalosCluster's spec (decision 0002, item 8): the backend
 * appends a reclaim's discovery address, records it in rackside.dev/reclaim-added-addresses
 * and takes stale ones out again on create and confirm, as the user.
 *
 * The rows live beside this table: beforeReset.ts ((new), Pending, AwaitingConfirmation,
 * reading the foreign machine in the named steps of foreignMachine.ts) and afterReset.ts
 * (Resetting, WaitingForMaintenance); decisions.ts holds their building blocks and
 * types.ts the ports and the Decision.
 */
import {
  isTerminalReclaimPhase,
  type MachineReclaim,
} from '@rackside/plugin-servers-common';
import { finished, NEW } from '../runtime/lifecycle/table';
import { afterReset, resetting, waitingForMaintenance } from './afterReset';
import { admit, awaitingConfirmation, pending } from './beforeReset';
import { phaseOf, type ReclaimPhase, type Row } from './types';

export {
  formatDuration,
  maintenanceDeadline,
  notBoundMessage,
  ttlMs,
} from './decisions';
export { sharesCertificate } from './foreignMachine';
export { afterReset };
export {
  DEFAULT_RECLAIM_LIMITS,
  phaseOf,
  type AuditStep,
  type CredentialDeletion,
  type CredentialPort,
  type CredentialRead,
  type Decision,
  type LifecyclePorts,
  type ReclaimEvent,
  type ReclaimLimits,
  type ReclaimPhase,
  type Row,
  type Transition,
} from './types';

/** The table: one row per phase. */
export const transitions: Record<ReclaimPhase, Row> = {
  [NEW]: admit,
  Pending: pending,
  AwaitingConfirmation: awaitingConfirmation,
  Resetting: resetting,
  WaitingForMaintenance: waitingForMaintenance,
  Done: finished,
  Failed: finished,
  Expired: finished,
  Refused: finished,
};

/**
 * The rule above the table: the credential is single use. Once the reset is on record, or
 * the request has ended, a credential not yet deleted is deleted (e.g. the deletion at the
 * reset failed and is retried).
 */
export function owesCredentialDeletion(mr: MachineReclaim): boolean {
  const phase = phaseOf(mr);
  // A Secret found not bound to the request is never deleted (nor looked at again).
  if (mr.status?.credentialDeletedAt || mr.status?.credentialLeftAt)
    return false;
  return (
    phase === 'WaitingForMaintenance' ||
    (phase !== NEW && isTerminalReclaimPhase(phase))
  );
}

export const credentialRule: Row = async () => ({
  kind: 'record',
  audit: [],
  deleteCredential: true,
});

/** The row that applies to this request now. */
export function rowFor(mr: MachineReclaim): Row {
  return owesCredentialDeletion(mr) ? credentialRule : transitions[phaseOf(mr)];
}
