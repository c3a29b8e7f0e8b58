import type { CeremonyLevel, GuardResult } from './types';
import type { MaintenanceIntent, MaintenancePhase } from './quorum';

/**
 * Rules about a running maintenance that the backend (what it offers, what it accepts)
 * and the operator (what it does with an object written with kubectl) both apply
 * (docs/architecture.md, "The maintenance lifecycle"). Each is one function, so the two sides cannot drift apart.
 */

/** What these rules read of a NodeMaintenance. */
export interface MaintenanceState {
  intent: MaintenanceIntent;
  /** `status.phase`; absent (not yet admitted) reads as Requested. */
  phase?: MaintenancePhase;
  returnToService?: unknown;
  abandon?: unknown;
  powerOn?: unknown;
}

/**
 * Whether an abandon would leave the machine off: abandon never sends a power verb, so
 * on a PoweredOff maintenance it would end the maintenance with nothing in the product
 * able to bring the machine back. The backend does not offer it; the operator holds one
 * written with kubectl (condition AbandonPending) until the machine is powered on.
 */
export function abandonWouldStrand(m: MaintenanceState): boolean {
  return m.phase === 'PoweredOff';
}

/**
 * Why abandon is not offered on this open maintenance, or undefined when it is.
 */
export function whyNotAbandon(
  name: string,
  m: MaintenanceState,
): string | undefined {
  if (m.returnToService || m.abandon) {
    return `maintenance ${name} is already ending.`;
  }
  if (abandonWouldStrand(m)) {
    return `maintenance ${name} has powered the machine off, and abandon never sends a power verb: it would leave the machine off with no way back. Power it on, or return it to service.`;
  }
  return undefined;
}

/**
 * Why return to service is not offered on this open maintenance, or undefined when it
 * is. Not once it is already ending, and not while it reboots the node: the reboot
 * returns the node to service by itself once it is back with a new boot ID, and the
 * operator's Rebooting row acts on nothing else until then (abandon ends it at once).
 */
export function whyNotReturnToService(
  name: string,
  nodeName: string,
  m: MaintenanceState,
): string | undefined {
  if (m.returnToService || m.abandon) {
    return `maintenance ${name} is already ending.`;
  }
  if (m.phase === 'Rebooting') {
    return `maintenance ${name} returns ${nodeName} to service by itself once it is back from the reboot; abandon ends it now.`;
  }
  return undefined;
}

/**
 * Why power-on is not offered on this open maintenance, or undefined when it is. An
 * abandon held while the machine is off keeps power-on offered: it is the way back.
 */
export function whyNotPowerOn(
  name: string,
  nodeName: string,
  m: MaintenanceState,
): string | undefined {
  if (m.intent !== 'shutdown' || m.phase !== 'PoweredOff') {
    return `${nodeName} is not powered off by a Rackside shutdown.`;
  }
  if (m.powerOn) return `power-on of ${nodeName} was already requested.`;
  if (m.returnToService) return `maintenance ${name} is already ending.`;
  return undefined;
}

/**
 * Whether a Refused maintenance still holds its node out of service: it was refused at
 * the moment of acting (after it had cordoned and drained), and the node is still
 * unschedulable. Such a node is shown with that maintenance and offered return to
 * service (which records a cordon maintenance with returnToService).
 */
export function holdsNodeCordoned(
  m: MaintenanceState & { cordonedAt?: string },
  nodeUnschedulable: boolean,
): boolean {
  return m.phase === 'Refused' && !!m.cordonedAt && nodeUnschedulable;
}

/** The guard verdict an admitted request passed, as the operator records it. */
export type AdmissionVerdict = 'allow' | 'hazard';

/**
 * The rung a request was acknowledged at: the pre-flight's ceremony when it carries one
 * (the backend always writes one for drain, reboot and shutdown); otherwise, for an
 * object made with kubectl, the rung its admission verdict put it on.
 */
export function acknowledgedRung(
  preflightCeremony: CeremonyLevel | undefined,
  admitted: AdmissionVerdict | undefined,
): CeremonyLevel {
  if (preflightCeremony) return preflightCeremony;
  return admitted === 'hazard' ? 'hazard' : 'typed-name';
}

/**
 * Why a request acknowledged at `acknowledged` may not go on under the guard's verdict
 * now, or undefined when it may (docs/architecture.md, "The maintenance lifecycle", "Authoritative at the moment of
 * acting"). The operator asks it when it admits a maintenance (a plan's step starts) and
 * right before a power verb is recorded: the guard must not refuse, and a hazard goes on
 * only when the request was acknowledged at the hazard rung. A refusal is never turned
 * into a ceremony.
 */
export function whyAboveAcknowledged(
  now: GuardResult,
  acknowledged: CeremonyLevel,
): string | undefined {
  if (now.verdict === 'refuse') return now.reason;
  if (now.verdict === 'hazard' && acknowledged !== 'hazard') {
    return `${now.reason} It needs the hazard ceremony (the node's name and a reason typed by a person); it was acknowledged at the ${acknowledged} rung.`;
  }
  return undefined;
}

/** Whether a power verb may be sent now: {@link whyAboveAcknowledged} has no objection. */
export function sendAllowed(
  now: GuardResult,
  acknowledged: CeremonyLevel,
): boolean {
  return whyAboveAcknowledged(now, acknowledged) === undefined;
}
