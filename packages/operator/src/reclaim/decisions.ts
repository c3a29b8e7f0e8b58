/*
 * The building blocks of the MachineReclaim rows: deadlines and requeues, the wait and
 * end decisions, the expiry and the refusal of a credential not bound to its request.
 */
import type { MachineReclaim } from '@rackside/plugin-servers-common';
import { parseTalosEndpoint } from '@rackside/plugin-servers-node';
import { ReclaimReason } from '../runtime/lifecycle/reasons';
import { isoOf } from '../runtime/lifecycle/table';
import type {
  Decision,
  LifecyclePorts,
  ReclaimEvent,
  ReclaimLimits,
  Transition,
} from './types';

export function sameHost(a: string, b: string): boolean {
  try {
    return parseTalosEndpoint(a).host === parseTalosEndpoint(b).host;
  } catch {
    return a === b;
  }
}

export const iso = (ms: number) => new Date(ms).toISOString();

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

export function expiresAt(mr: MachineReclaim, limits: ReclaimLimits): number {
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
export function requeue(ports: LifecyclePorts, until: number): number {
  return Math.max(0, Math.min(ports.limits.retryMs, until - ports.now()));
}

/** A call's deadline: its own, but never past the deadline it serves. */
export function callTimeout(ports: LifecyclePorts, until: number): number {
  return Math.max(1, Math.min(ports.limits.callTimeoutMs, until - ports.now()));
}

export function wait(
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

export function end(
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
export function refuseNotBound(
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

export function expired(mr: MachineReclaim, ports: LifecyclePorts): Decision {
  return end(
    'Expired',
    `The reset of ${mr.spec.address} was not confirmed before ${iso(
      expiresAt(mr, ports.limits),
    )}: the request expired and its credential was deleted. Nothing was reset.`,
    ReclaimReason.Expired,
  );
}

export const isDecision = (value: object): value is Decision => 'kind' in value;
