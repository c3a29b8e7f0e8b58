/*
 * The MachineReclaim lifecycle (ADR 0107 with its hardware-run amendment, docs/architecture.md, "Adding machines") as a
 * table: one row per phase. A row reads the machine and the credential through ports and
 * answers with a Decision; MachineReclaimReconciler.ts writes it (status with its audit
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
 * The operator never writes a TalosCluster's spec (ADR 0107 amendment): the backend
 * appends a reclaim's discovery address, records it in rackside.dev/reclaim-added-addresses
 * and takes stale ones out again on create and confirm, as the user.
 */
import {
  isTerminalReclaimPhase,
  MACHINE_RECLAIM_VERB,
  machineReclaimResource,
  type MachineReclaim,
  type MachineReclaimPhase,
  type MachineReclaimStatus,
  type TalosCluster,
} from '@rackside/plugin-servers-common';
import {
  parseTalosconfig,
  parseTalosEndpoint,
  reachFor,
  type ResolveName,
  type Talosconfig,
} from '@rackside/plugin-servers-node';
import { X509Certificate } from 'node:crypto';
import { ReclaimReason } from '../runtime/lifecycle/reasons';
import {
  finished,
  isoOf,
  NEW,
  phaseOf as tablePhaseOf,
  type Clock,
  type Done,
} from '../runtime/lifecycle/table';
import type { TalosAccess } from '../talos/talosAccess';
import { judgeReset, readEtcdView, withResetsInFlight } from './etcdSafety';

function sameHost(a: string, b: string): boolean {
  try {
    return parseTalosEndpoint(a).host === parseTalosEndpoint(b).host;
  } catch {
    return a === b;
  }
}

export type ReclaimPhase = MachineReclaimPhase | typeof NEW;

/** The limits of the lifecycle; tests shorten them. */
export interface ReclaimLimits {
  /** From the reset to Failed (ADR 0107: reclaimMaintenanceWait, 10 minutes). */
  maintenanceWaitMs: number;
  /** Upper bound of a request's TTL (the CRD allows up to 60 minutes). */
  ttlMaxMs: number;
  /** The longest wait between two looks at a request (10 s). */
  retryMs: number;
  /** Deadline of one call to a machine. */
  callTimeoutMs: number;
}

export const DEFAULT_RECLAIM_LIMITS: ReclaimLimits = {
  maintenanceWaitMs: 10 * 60_000,
  ttlMaxMs: 60 * 60_000,
  retryMs: 10_000,
  callTimeoutMs: 10_000,
};

/**
 * The credential Secret as the operator found it. Only a Secret bound to the request
 * (ownerReference to this MachineReclaim with its uid, label rackside.dev/credential-of
 * with its name: credentialNotBound in servers-common) has its data decoded.
 */
export type CredentialRead =
  | { kind: 'absent' }
  | { kind: 'notBound'; problems: string[] }
  /** `talosconfig` is undefined when the Secret has no such key. */
  | { kind: 'bound'; talosconfig?: string };

/** What deleting a request's credential did: a Secret not bound to it is never deleted. */
export type CredentialDeletion =
  | { outcome: 'deleted' | 'absent' }
  | { outcome: 'notBound'; problems: string[] };

/** The foreign talosconfig of a request, read from its credential Secret. */
export interface CredentialPort {
  read(mr: MachineReclaim): Promise<CredentialRead>;
  /** Deletes the Secret only if it is bound to `mr` (and still the Secret judged). */
  delete(mr: MachineReclaim): Promise<CredentialDeletion>;
}

export interface LifecyclePorts extends Clock {
  credential: CredentialPort;
  talos: TalosAccess;
  /** The target TalosCluster (watch cache). */
  cluster(namespace: string, name: string): TalosCluster | undefined;
  /** The Talos CA (PEM) of a TalosCluster's own talosconfig; throws when unreadable. */
  clusterCa(cluster: TalosCluster): Promise<string>;
  /** The Node of this cluster with that system UUID (lower case), if any (watch cache). */
  nodeWithUUID(uuid: string): string | undefined;
  /**
   * The other requests whose Reset is on record and not yet over (Resetting,
   * WaitingForMaintenance), with their addresses: their machines count as etcd members
   * going away. Read from the watch cache and this process's own writes.
   */
  resetsInFlight(mr: MachineReclaim): Array<{ name: string; address: string }>;
  /** Resolves a spec.address that is a name (the resolver discovery uses). */
  resolve: ResolveName;
  limits: ReclaimLimits;
  /**
   * Whether a Kubernetes user holds the `reclaim` verb on this request (a
   * SubjectAccessReview as that user); throws when the apiserver gives no answer.
   */
  mayReclaim(
    username: string,
    mr: MachineReclaim,
  ): Promise<{ allowed: boolean; reason?: string }>;
}

/** The name of a step: one of {@link ReclaimReason}. */
export type ReclaimEvent = (typeof ReclaimReason)[keyof typeof ReclaimReason];

/** One step for status.audit and the Event of the same reason. */
export interface AuditStep {
  event: ReclaimEvent;
  message: string;
  actor?: string;
  warning?: boolean;
}

export type Decision =
  | {
      kind: 'transition';
      to: MachineReclaimPhase;
      audit: AuditStep[];
      status?: Partial<MachineReclaimStatus>;
      /** Delete the credential Secret first (single use) and record it. */
      deleteCredential?: boolean;
      /** Wake the target cluster's discovery after the write (Done). */
      wakeDiscovery?: boolean;
    }
  /**
   * Write Resetting with resetRecordedAt (the reset is on record before it is sent), then
   * send it, then write the answer (see {@link afterReset}).
   */
  | {
      kind: 'reset';
      audit: AuditStep[];
      status: Partial<MachineReclaimStatus>;
      talosconfig: Talosconfig;
      /** Where to send it: spec.address as checked against the allowed networks. */
      dial: string;
    }
  /** Status without a phase change (no transition), e.g. the credential's deletion. */
  | {
      kind: 'record';
      audit: AuditStep[];
      status?: Partial<MachineReclaimStatus>;
      deleteCredential?: boolean;
    }
  /** Nothing to do now; `waiting` is shown as the Waiting condition. */
  | {
      kind: 'wait';
      requeueAfterMs?: number;
      waiting?: { reason: string; message: string };
    }
  /** Terminal: never looked at again. */
  | Done;

/** A transition decision: what the answer to a sent Reset always is. */
export type Transition = Extract<Decision, { kind: 'transition' }>;

export type Row = (
  mr: MachineReclaim,
  ports: LifecyclePorts,
) => Promise<Decision>;

export function phaseOf(mr: MachineReclaim): ReclaimPhase {
  return tablePhaseOf(mr);
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A duration for a person: whole minutes as minutes, anything else in seconds. */
export function formatDuration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) {
    const minutes = ms / 60_000;
    return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  }
  const seconds = Math.round(ms / 100) / 10;
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}

/** The TTL the operator applies: spec.ttlMinutes, capped by the configured maximum. */
export function ttlMs(mr: MachineReclaim, limits: ReclaimLimits): number {
  return Math.min((mr.spec.ttlMinutes ?? 15) * 60_000, limits.ttlMaxMs);
}

function expiresAt(mr: MachineReclaim, limits: ReclaimLimits): number {
  const recorded = Date.parse(mr.status?.expiresAt ?? '');
  if (Number.isFinite(recorded)) return recorded;
  return Date.parse(mr.metadata.creationTimestamp ?? '') + ttlMs(mr, limits);
}

/** When a request fails if the machine has not come back: the reset plus the wait. */
export function maintenanceDeadline(
  mr: MachineReclaim,
  limits: ReclaimLimits,
): number | undefined {
  const anchor = Date.parse(
    mr.status?.resetSentAt ?? mr.status?.resetRecordedAt ?? '',
  );
  return Number.isFinite(anchor)
    ? anchor + limits.maintenanceWaitMs
    : undefined;
}

/** The requeue of a wait: the smaller of the retry interval and the time left. */
function requeue(ports: LifecyclePorts, until: number): number {
  return Math.max(0, Math.min(ports.limits.retryMs, until - ports.now()));
}

/** A call's deadline: its own, but never past the deadline it serves. */
function callTimeout(ports: LifecyclePorts, until: number): number {
  return Math.max(1, Math.min(ports.limits.callTimeoutMs, until - ports.now()));
}

function wait(
  ports: LifecyclePorts,
  until: number,
  reason: string,
  message: string,
): Decision {
  return {
    kind: 'wait',
    requeueAfterMs: requeue(ports, until),
    waiting: { reason, message },
  };
}

function end(
  to: 'Refused' | 'Failed' | 'Expired',
  result: string,
  event: ReclaimEvent,
): Transition {
  return {
    kind: 'transition',
    to,
    status: { result },
    audit: [{ event, message: result, warning: true }],
    deleteCredential: true,
  };
}

/** The sentence for a Secret that is not the request's credential. */
export function notBoundMessage(
  mr: MachineReclaim,
  problems: string[],
): string {
  return `The Secret ${
    mr.spec.credentialSecretRef.name
  } named by spec.credentialSecretRef is not the credential of this request: ${problems.join(
    ', and ',
  )}. It was left untouched (not read, not deleted).`;
}

/** Refused: the named Secret is not bound to the request; it is neither read nor deleted. */
function refuseNotBound(
  mr: MachineReclaim,
  ports: LifecyclePorts,
  problems: string[],
): Decision {
  const result = `${notBoundMessage(mr, problems)} Nothing was reset.`;
  return {
    kind: 'transition',
    to: 'Refused',
    status: { result, credentialLeftAt: isoOf(ports) },
    audit: [
      { event: ReclaimReason.Refused, message: result, warning: true },
      {
        event: ReclaimReason.CredentialNotBound,
        message: notBoundMessage(mr, problems),
        warning: true,
      },
    ],
  };
}

const OWN_MACHINES = 'taking our own machines out goes through maintenance';

/** Whether two PEM bundles share a certificate (compared by fingerprint, not by text). */
export function sharesCertificate(a: string, b: string): boolean {
  const fingerprints = (pem: string) =>
    (
      pem.match(
        /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g,
      ) ?? []
    ).flatMap(block => {
      try {
        return [new X509Certificate(block).fingerprint256];
      } catch {
        return [];
      }
    });
  const ours = new Set(fingerprints(b));
  return fingerprints(a).some(f => ours.has(f));
}

function expired(mr: MachineReclaim, ports: LifecyclePorts): Decision {
  return end(
    'Expired',
    `The reset of ${mr.spec.address} was not confirmed before ${iso(
      expiresAt(mr, ports.limits),
    )}: the request expired and its credential was deleted. Nothing was reset.`,
    ReclaimReason.Expired,
  );
}

/**
 * What the foreign machine is now, read with its talosconfig; a Decision when it cannot
 * go on. In order: the credential must be bound to the request; its CA must not be the
 * target cluster's own; the machine must answer as a member of the foreign cluster; its
 * UUID must not be a Node of this cluster; and its reset must keep the foreign etcd
 * (members read now, each voting member asked whether it is up). The etcd read is the
 * last call before the answer: at the confirmation the Reset is recorded right after it.
 */
async function readForeignMachine(
  mr: MachineReclaim,
  ports: LifecyclePorts,
  until: number,
  missing: 'wait' | 'fail' = 'wait',
): Promise<
  | { talosconfig: Talosconfig; uuid: string; safety: string; dial: string }
  | Decision
> {
  const address = mr.spec.address;
  const secretName = mr.spec.credentialSecretRef.name;
  const key = mr.spec.credentialSecretRef.key ?? 'talosconfig';
  const credential = await ports.credential.read(mr);
  if (credential.kind === 'notBound') {
    return refuseNotBound(mr, ports, credential.problems);
  }
  if (credential.kind === 'absent' && missing === 'fail') {
    return end(
      'Failed',
      `The credential Secret ${secretName} is gone, so the reset cannot be sent. Nothing was reset.`,
      ReclaimReason.ReclaimFailed,
    );
  }
  if (credential.kind === 'bound' && credential.talosconfig === undefined) {
    // Immutable and owned by the request: the key will not appear later.
    return end(
      'Failed',
      `The credential Secret ${secretName} has no key ${key}. Nothing was reset.`,
      ReclaimReason.ReclaimFailed,
    );
  }
  const text = credential.kind === 'bound' ? credential.talosconfig : undefined;
  if (!text) {
    // The Secret usually follows its request by a moment (it is owned by it): a young
    // request is looked at again soon, an older one at the usual interval.
    const age = ports.now() - Date.parse(mr.metadata.creationTimestamp ?? '');
    const decision = wait(
      ports,
      until,
      'CredentialMissing',
      `waiting for the credential Secret ${
        mr.spec.credentialSecretRef.name
      } (key ${mr.spec.credentialSecretRef.key ?? 'talosconfig'})`,
    );
    if (decision.kind === 'wait' && Number.isFinite(age)) {
      decision.requeueAfterMs = Math.min(
        decision.requeueAfterMs ?? ports.limits.retryMs,
        Math.max(500, age),
      );
    }
    return decision;
  }
  let talosconfig: Talosconfig;
  try {
    talosconfig = parseTalosconfig(text);
  } catch (error) {
    return end(
      'Failed',
      `The talosconfig in Secret ${
        mr.spec.credentialSecretRef.name
      } cannot be used: ${(error as Error).message}. Nothing was reset.`,
      ReclaimReason.ReclaimFailed,
    );
  }
  const cluster = ports.cluster(
    mr.metadata.namespace ?? '',
    mr.spec.targetCluster,
  );
  if (!cluster) {
    return end(
      'Refused',
      `There is no TalosCluster ${mr.spec.targetCluster} in namespace ${mr.metadata.namespace} to add ${address} to any more. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  const reach = await reachFor(cluster, address, ports.resolve);
  if (!reach.allowed) {
    const message = `${address} is not contacted: ${reach.message}`;
    if (reach.state === 'Unreachable') {
      // A name that does not resolve now may resolve later (within the TTL).
      return wait(ports, until, 'MachineUnreachable', message);
    }
    return end(
      'Refused',
      `${message}. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  // From here on every call goes to the checked address (for a name: its checked IP).
  const dial = reach.dial;
  let ownCa: string;
  try {
    ownCa = await ports.clusterCa(cluster);
  } catch (error) {
    return wait(
      ports,
      until,
      'TargetTalosconfigUnreadable',
      `the talosconfig of TalosCluster ${
        mr.spec.targetCluster
      } could not be read to compare its CA: ${(error as Error).message}`,
    );
  }
  if (sharesCertificate(talosconfig.identity.ca, ownCa)) {
    return end(
      'Refused',
      `The talosconfig in Secret ${secretName} is issued by the CA of TalosCluster ${mr.spec.targetCluster} itself: ${address} would be one of our own machines, and ${OWN_MACHINES}. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  const probe = await ports.talos.probe(dial, {
    ca: talosconfig.identity.ca,
    timeoutMs: callTimeout(ports, until),
  });
  if (probe.mode === 'unreachable') {
    return wait(
      ports,
      until,
      'MachineUnreachable',
      `${address} does not answer: ${probe.reason}`,
    );
  }
  if (probe.mode === 'maintenance') {
    return end(
      'Refused',
      `${address} answers in maintenance mode: no cluster holds it, so there is nothing to reset. Add it with Add node instead.`,
      ReclaimReason.Refused,
    );
  }
  if (probe.serverTrusted !== true) {
    return end(
      'Refused',
      `${address} is not a machine of the cluster this talosconfig belongs to (its server certificate is not issued by that cluster's CA${
        probe.trustDetail ? `: ${probe.trustDetail}` : ''
      }). Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  let uuid: string;
  try {
    uuid = (
      await ports.talos.uuid(
        dial,
        talosconfig.identity,
        callTimeout(ports, until),
      )
    ).toLowerCase();
  } catch (error) {
    return wait(
      ports,
      until,
      'UUIDUnreadable',
      `the UUID of ${address} could not be read: ${(error as Error).message}`,
    );
  }
  const node = ports.nodeWithUUID(uuid);
  if (node) {
    return end(
      'Refused',
      `${address} has the UUID ${uuid}, the system UUID of Node ${node} of this cluster: ${OWN_MACHINES}. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  const inFlight = ports.resetsInFlight(mr);
  const sameMachine = inFlight.find(other => sameHost(other.address, address));
  if (sameMachine) {
    return end(
      'Refused',
      `MachineReclaim ${sameMachine.name} is resetting ${address} already. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  const verdict = judgeReset(
    address,
    withResetsInFlight(
      await readEtcdView(
        ports.talos,
        dial,
        talosconfig,
        callTimeout(ports, until),
        // The talosconfig's endpoints and the member list's hosts come with the
        // request: only those inside the allowed networks are dialled.
        async endpoint => {
          const checked = await reachFor(cluster, endpoint, ports.resolve);
          return checked.allowed
            ? checked
            : { allowed: false, message: checked.message };
        },
      ),
      inFlight,
    ),
  );
  if (verdict.verdict === 'unknown') {
    return wait(ports, until, 'EtcdMembersUnknown', verdict.reason);
  }
  if (verdict.verdict === 'refuse') {
    return end(
      'Refused',
      `Refused: ${verdict.reason}. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  return { talosconfig, uuid, safety: verdict.summary, dial };
}

const isDecision = (value: object): value is Decision => 'kind' in value;

/** (new): fix the expiry, and check the target exists. */
const admit: Row = async (mr, ports) => {
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
const pending: Row = async (mr, ports) => {
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
const awaitingConfirmation: Row = async (mr, ports) => {
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
const resetting: Row = async mr => ({
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
const waitingForMaintenance: Row = async (mr, ports) => {
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
