/*
 * What the MachineReclaim rows (table.ts) read and answer: the ports, the limits, the
 * credential as the port reads it, and the Decision a row returns.
 */
import type {
  MachineReclaim,
  MachineReclaimPhase,
  MachineReclaimStatus,
  TalosCluster,
} from '@rackside/plugin-servers-common';
import type { ResolveName, Talosconfig } from '@rackside/plugin-servers-node';
import { ReclaimReason } from '../runtime/lifecycle/reasons';
import {
  NEW,
  phaseOf as tablePhaseOf,
  type Clock,
  type Done,
} from '../runtime/lifecycle/table';
import type { TalosAccess } from '../talos/talosAccess';

export type ReclaimPhase = MachineReclaimPhase | typeof NEW;

/** The limits of the lifecycle; tests shorten them. */
export interface ReclaimLimits {
  /** From the reset to Failed (decision 0002: reclaimMaintenanceWait, 10 minutes). */
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
