import type {
  MaintenanceCondition,
  MaintenancePhase,
  MaintenanceRefusal,
  MaintenanceRequestFlag,
  MaintenanceResponse,
} from '@rackside/plugin-servers-common';

/** One entry of a maintenance's timeline: a phase it reached, or a request a person made. */
export interface TimelineEntry {
  kind: 'phase' | 'request';
  /** The phase, or what was requested ("Return to service requested"). */
  label: string;
  phase?: MaintenancePhase;
  at?: string;
  message?: string;
  /** Who asked, for a request (and for the first phase: who created it). */
  by?: string;
  /** Why, in the requester's words. */
  reason?: string;
}

const FLAG_LABELS = {
  returnToService: 'Return to service requested',
  abandon: 'Abandon requested',
  powerOn: 'Power on requested',
} as const;

/** The request flags set on a maintenance, with how each is named. */
export function requestFlags(
  m: MaintenanceResponse,
): Array<{ label: string; flag: MaintenanceRequestFlag }> {
  return (Object.keys(FLAG_LABELS) as Array<keyof typeof FLAG_LABELS>)
    .filter(key => m[key])
    .map(key => ({ label: FLAG_LABELS[key], flag: m[key]! }));
}

function time(at: string | undefined): number {
  const t = at ? Date.parse(at) : NaN;
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
}

/**
 * The maintenance's phases (its history) and the requests people made on it,
 * oldest first. Who created it and why go on its Requested phase (or on an
 * entry of their own when the history has none); an entry without a time goes
 * last. Equal times keep the history's order.
 */
export function timelineOf(m: MaintenanceResponse): TimelineEntry[] {
  const entries: TimelineEntry[] = m.history.map(h => ({
    kind: 'phase',
    label: h.phase,
    phase: h.phase,
    at: h.at,
    message: h.message,
  }));
  const requested = byTime(entries).find(e => e.phase === 'Requested');
  if (requested) {
    requested.by = m.requestedBy;
    requested.reason = m.reason;
  } else {
    entries.unshift({
      kind: 'request',
      label: `${m.intent[0].toUpperCase()}${m.intent.slice(1)} requested`,
      at: m.createdAt,
      by: m.requestedBy,
      reason: m.reason,
    });
  }
  for (const { label, flag } of requestFlags(m)) {
    entries.push({
      kind: 'request',
      label,
      at: flag.at,
      by: flag.by,
      reason: flag.reason,
    });
  }
  return byTime(entries);
}

/** Sorted by time, equal times (and no time) keeping their order. */
function byTime(entries: TimelineEntry[]): TimelineEntry[] {
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => time(a.entry.at) - time(b.entry.at) || a.index - b.index)
    .map(({ entry }) => entry);
}

const STATUS_WORDS = { True: 'yes', False: 'no', Unknown: 'unknown' } as const;

/** A condition in words: "PowerOffConfirmed: no (ReadbackRunning)". */
export function conditionText(c: MaintenanceCondition): string {
  const word = STATUS_WORDS[c.status as keyof typeof STATUS_WORDS] ?? c.status;
  return `${c.type}: ${word} (${c.reason})`;
}

/** The numbers of a refusal, when the guard gave them. */
export function refusalNumbers(r: MaintenanceRefusal): string | undefined {
  const parts: string[] = [];
  if (r.members !== undefined) parts.push(`members ${r.members}`);
  if (r.quorum !== undefined) parts.push(`quorum ${r.quorum}`);
  if (r.ready !== undefined) parts.push(`ready ${r.ready}`);
  if (r.margin !== undefined) parts.push(`margin ${r.margin}`);
  if (!parts.length) return undefined;
  const text = parts.join(', ');
  return `${text[0].toUpperCase()}${text.slice(1)}.`;
}

/** A timestamp for a person, in their locale. */
export function formatTime(at: string | undefined): string {
  if (!at) return 'unknown time';
  const t = new Date(at);
  return Number.isNaN(t.getTime()) ? at : t.toLocaleString();
}
