/*
 * What a maintenance that ended Complete did to its node. Complete says only that the
 * node is back in service: a reboot returned to service before its verb ends Complete
 * too, having rebooted nothing. Whoever reports an outcome (the plan's step, the
 * requester's notification, the maintenance page) reads it here, so no record says
 * more than what happened.
 */
import type { MaintenanceIntent } from './quorum';

/** What the rule reads of a NodeMaintenance. */
export interface MaintenanceEndRecord {
  spec: { intent: MaintenanceIntent; returnToService?: unknown };
  status?: {
    phase?: string;
    abandoned?: boolean;
    rebootSentAt?: string;
    power?: {
      reboot?: { sentAt?: string };
      upgrade?: { sentAt?: string };
      firmware?: { sentAt?: string };
    };
    history?: ReadonlyArray<{ phase: string }>;
  };
}

/**
 * Whether the maintenance's verb happened, from its record: a reboot was accepted by the
 * channel and the node came back (Rebooting, then Returning: Ready with a new boot ID); a
 * shutdown reached PoweredOff; a drain reached Drained; a cordon always (cordoning is its
 * verb, and admission did it).
 */
export function verbHappened(m: MaintenanceEndRecord): boolean {
  const phases = (m.status?.history ?? []).map(h => h.phase);
  const reached = (phase: string) =>
    phases.includes(phase) || m.status?.phase === phase;
  switch (m.spec.intent) {
    case 'reboot': {
      const sent = m.status?.power?.reboot?.sentAt ?? m.status?.rebootSentAt;
      const rebooting = phases.indexOf('Rebooting');
      return (
        sent !== undefined &&
        rebooting >= 0 &&
        phases.indexOf('Returning', rebooting) > rebooting
      );
    }
    case 'upgrade': {
      // Done only on the target version: a rollback ends Failed, never Complete.
      const sent = m.status?.power?.upgrade?.sentAt;
      return sent !== undefined && reached('Returning');
    }
    case 'firmware': {
      // Done only once the inventory reported the new version (a failed task is Failed).
      const sent = m.status?.power?.firmware?.sentAt;
      return sent !== undefined && reached('Returning');
    }
    case 'shutdown':
      return reached('PoweredOff');
    case 'drain':
      return reached('Drained');
    case 'cordon':
    default:
      return true;
  }
}

/** How a Complete maintenance ended: its verb done, abandoned, or returned before it. */
export type CompletedOutcome =
  | { kind: 'done' }
  | { kind: 'abandoned' }
  /** Ended Complete without its verb; `text` says why ("returned to service before the reboot"). */
  | { kind: 'without-verb'; text: string };

/** The outcome of a maintenance that ended Complete ({@link CompletedOutcome}). */
export function completedOutcome(m: MaintenanceEndRecord): CompletedOutcome {
  if (m.status?.abandoned) return { kind: 'abandoned' };
  if (verbHappened(m)) return { kind: 'done' };
  const verb = `the ${m.spec.intent}`;
  return {
    kind: 'without-verb',
    text: m.spec.returnToService
      ? `returned to service before ${verb}`
      : `ended without ${verb}`,
  };
}
