/**
 * Rackside's own Alertmanager silences (docs/alerts.md): how the operator marks the silence
 * it holds for a maintenance, so that it finds it again after a restart or a change of
 * leader, and so that a plan's alert gate and a healthy return can look through it.
 */

/** Fields of a silence these rules read (Alertmanager API v2 names). */
export interface SilenceIdentity {
  createdBy: string;
  comment: string;
}

/** Fields of an alert these rules read (Alertmanager API v2 names). */
export interface AlertState {
  labels: Record<string, string>;
  status: {
    state: 'active' | 'suppressed' | 'unprocessed';
    silencedBy: string[];
    inhibitedBy: string[];
  };
}

const CREATED_BY_PREFIX = 'Rackside';
const MARKER_PREFIX = '[rackside.dev/maintenance';

/** `createdBy` of a maintenance's silence: Rackside, for whom. */
export function racksideSilenceCreatedBy(requester: string): string {
  return `${CREATED_BY_PREFIX} for ${requester}`;
}

/** The marker a maintenance's silence carries in its comment: its name and uid. */
export function racksideSilenceMarker(maintenance: {
  name: string;
  uid: string;
}): string {
  return `${MARKER_PREFIX} ${maintenance.name} ${maintenance.uid}]`;
}

/** Whether a silence is one Rackside made (for any maintenance). */
export function isRacksideSilence(silence: SilenceIdentity): boolean {
  return (
    silence.createdBy.startsWith(`${CREATED_BY_PREFIX} for `) &&
    silence.comment.includes(`${MARKER_PREFIX} `)
  );
}

/** Whether a silence is the one this maintenance holds (same name and uid). */
export function isSilenceOfMaintenance(
  silence: SilenceIdentity,
  maintenance: { name: string; uid: string },
): boolean {
  return (
    isRacksideSilence(silence) &&
    silence.comment.includes(racksideSilenceMarker(maintenance))
  );
}

/**
 * Whether an alert fires as a gate or a healthy return sees it. Active alerts fire; an
 * inhibited one does not (Alertmanager judged another alert to cover it). A silenced one
 * fires only when every silence on it is Rackside's and `throughRacksideSilences` is set:
 * Rackside's own silence must not hide from Rackside what it is waiting for, while a
 * person's silence is a decision to ignore that alert.
 */
export function alertFires(
  alert: AlertState,
  racksideSilenceIds: ReadonlySet<string>,
  throughRacksideSilences: boolean,
): boolean {
  if (alert.status.state === 'active') return true;
  if (alert.status.inhibitedBy.length > 0) return false;
  if (alert.status.silencedBy.length === 0)
    return alert.status.state !== 'suppressed';
  return (
    throughRacksideSilences &&
    alert.status.silencedBy.every(id => racksideSilenceIds.has(id))
  );
}
