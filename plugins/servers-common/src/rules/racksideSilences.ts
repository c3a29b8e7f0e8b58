/**
 * Rackside's own Alertmanager silences (docs/alerts.md): how the operator marks the silence
 * it holds for a maintenance, so that it finds it again after a restart or a change of
 * leader, and so that a plan's alert gate and a healthy return can look through it.
 */

/** Fields of a silence these rules read (Alertmanager API v2 names). */
export interface SilenceIdentity {
  /** Who made the silence. */
  createdBy: string;
  /** Its comment, where Rackside's marker is. */
  comment: string;
}

/** Fields of an alert these rules read (Alertmanager API v2 names). */
export interface AlertState {
  /** The alert's labels. */
  labels: Record<string, string>;
  /** Alertmanager's view of it: active, or suppressed by silences or inhibitions. */
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

/**
 * Whether a silence looks like one Rackside made (for any maintenance): its marker and
 * createdBy, which anyone can copy. Which silences are Rackside's is racksideSilenceIdsOf's
 * answer; this is one of its checks, and the adoption's (isAdoptableSilence).
 */
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

/** What a maintenance knows of its own silences, from its object (never from a comment). */
export interface SilenceOwner {
  name: string;
  /** The maintenance's uid, from its metadata. */
  uid: string;
  /** spec.requestedBy: the silence's createdBy names them. */
  requestedBy: string;
  /** status.cordonedAt: its silences are made after it. */
  cordonedAt?: string;
  /** status.alerting.silenceIds: the silences it recorded holding. */
  recordedIds?: readonly string[];
}

/**
 * Whether the operator may take this silence as one a maintenance holds (renew, shorten,
 * expire it). Anyone who may write silences can copy Rackside's marker and a createdBy
 * starting with "Rackside for ", so neither alone makes a silence ours: a maintenance that
 * recorded its silences adopts only those ids; one that recorded none (its status write
 * was lost after the create) adopts a silence only with its exact createdBy, its marker
 * carrying its own uid, and a start after its cordon (Rackside makes its silences then).
 */
export function isAdoptableSilence(
  silence: SilenceIdentity & { id: string; startsAt: string },
  owner: SilenceOwner,
): boolean {
  if (owner.recordedIds && owner.recordedIds.length > 0) {
    return owner.recordedIds.includes(silence.id);
  }
  if (silence.createdBy !== racksideSilenceCreatedBy(owner.requestedBy)) {
    return false;
  }
  if (!isSilenceOfMaintenance(silence, owner)) return false;
  const cordoned = Date.parse(owner.cordonedAt ?? '');
  const starts = Date.parse(silence.startsAt);
  return (
    Number.isFinite(cordoned) && Number.isFinite(starts) && starts >= cordoned
  );
}

/** What a NodeMaintenance records of the silences it holds (its status.alerting.silenceIds). */
export interface SilenceRecorder {
  /** Written by the operator only: the ids of the silences the maintenance holds. */
  status?: { alerting?: { silenceIds?: readonly string[] } };
}

/**
 * The ids of Rackside's own silences among those Alertmanager lists, as every gate, healthy
 * return and portal row counts them (docs/alerts.md, "Rackside's own silences"). Anyone who
 * may write silences can copy Rackside's marker and a createdBy starting with "Rackside for
 * ", so looking like ours is not enough: a silence is Rackside's only when a NodeMaintenance
 * recorded its id in its status (a status only the operator writes) and it still carries
 * the marker (a person who rewrote its comment made it theirs). A silence the operator has
 * just created and not yet recorded counts as a person's until it is: that holds a gate a
 * moment longer, never lets one through.
 */
export function racksideSilenceIdsOf(
  silences: Iterable<SilenceIdentity & { id: string }>,
  maintenances: Iterable<SilenceRecorder>,
): Set<string> {
  const recorded = new Set<string>();
  for (const maintenance of maintenances) {
    for (const id of maintenance.status?.alerting?.silenceIds ?? []) {
      recorded.add(id);
    }
  }
  const ids = new Set<string>();
  for (const silence of silences) {
    if (recorded.has(silence.id) && isRacksideSilence(silence)) {
      ids.add(silence.id);
    }
  }
  return ids;
}

/** How a gate or a healthy return looks at suppressed alerts. */
export interface AlertLook {
  /** An alert silenced only by Rackside's own silences fires. */
  throughRacksideSilences: boolean;
  /** An alert silenced by a person fires too (a gate's includeSilenced). */
  throughPersonSilences?: boolean;
}

/**
 * Whether an alert fires as a gate or a healthy return sees it (docs/alerts.md, "What
 * holds a gate"). Active alerts fire, and so do inhibited ones: Alertmanager inhibits an
 * alert so that nobody is paged twice, not because it stopped (a warning inhibited by a
 * critical alert of the same node is still true, whether or not the critical one is in the
 * gate's scope). A silenced alert fires only when every silence on it is looked through:
 * Rackside's own with `throughRacksideSilences` (its silence must not hide from Rackside
 * what it waits for), a person's with `throughPersonSilences` (a person's silence is a
 * decision to ignore that alert, unless the gate says to include it).
 */
export function alertFires(
  alert: AlertState,
  racksideSilenceIds: ReadonlySet<string>,
  look: AlertLook,
): boolean {
  if (alert.status.state === 'active') return true;
  const { silencedBy, inhibitedBy } = alert.status;
  if (silencedBy.length === 0) {
    return inhibitedBy.length > 0 || alert.status.state !== 'suppressed';
  }
  return silencedBy.every(id =>
    racksideSilenceIds.has(id)
      ? look.throughRacksideSilences
      : look.throughPersonSilences === true,
  );
}
