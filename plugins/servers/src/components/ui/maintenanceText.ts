import {
  quorumNumbersSentence,
  type MaintenanceCondition,
  type MaintenanceDrainOptions,
  type MaintenancePhase,
  type MaintenancePowerRecord,
  type MaintenancePowerRecords,
  type MaintenanceRefusal,
  type MaintenanceRequestFlag,
  type MaintenanceResponse,
} from '@rackside/plugin-servers-common';

/** "45 s", "2 min 30 s", "1 h 5 min": a duration as a person reads it. */
export function durationText(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) {
    const rest = s % 60;
    return `${Math.floor(s / 60)} min${rest ? ` ${rest} s` : ''}`;
  }
  // Whole minutes from here on: 7170 s is 2 h, not 1 h 60 min.
  const total = Math.round(s / 60);
  const minutes = total % 60;
  return `${Math.floor(total / 60)} h${minutes ? ` ${minutes} min` : ''}`;
}

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

/** The condition that says whether the machine was seen to reach off. */
export const POWER_OFF_CONFIRMED = 'PowerOffConfirmed';

/**
 * How sure the page may be that a shut-down machine is off: `confirmed` is an
 * observation of the BMC, `pending` a readback still running, `unconfirmed`
 * settled without one. PoweredOff itself only says the channel accepted the
 * shutdown (decision 0001 section 7), so the stronger claim is made only
 * where the condition makes it.
 */
export type PowerOffTone = 'confirmed' | 'pending' | 'unconfirmed';

/** The PowerOffConfirmed condition in words a person reads. */
export function powerOffConfirmedText(c: MaintenanceCondition): {
  text: string;
  tone: PowerOffTone;
} {
  if (c.status === 'True') {
    return { text: 'Off, confirmed by the BMC', tone: 'confirmed' };
  }
  if (c.status === 'False') {
    return {
      text: 'Shutdown accepted; confirming with the BMC…',
      tone: 'pending',
    };
  }
  switch (c.reason) {
    case 'ChannelCannotObserve':
      return {
        text: 'Shutdown accepted; the channel cannot confirm the machine is off',
        tone: 'unconfirmed',
      };
    case 'ReadbackWindowClosed':
      return {
        text: 'The BMC did not confirm Off within the window',
        tone: 'unconfirmed',
      };
    default:
      return {
        text: `Shutdown accepted; not confirmed (${c.reason})`,
        tone: 'unconfirmed',
      };
  }
}

/**
 * Whether a powered-off maintenance's machine is known to be off, in words;
 * undefined where no shutdown was accepted.
 */
export function powerOffState(
  m: MaintenanceResponse,
): { text: string; tone: PowerOffTone } | undefined {
  const c = m.conditions.find(x => x.type === POWER_OFF_CONFIRMED);
  if (c) return powerOffConfirmedText(c);
  if (m.phase === 'PoweredOff') {
    return { text: 'Shutdown accepted', tone: 'unconfirmed' };
  }
  return undefined;
}

/**
 * A condition in words: "Admitted: no (QuorumGuard)"; PowerOffConfirmed as
 * what it means for the machine ("Off, confirmed by the BMC").
 */
export function conditionText(c: MaintenanceCondition): string {
  if (c.type === POWER_OFF_CONFIRMED) return powerOffConfirmedText(c).text;
  const word = STATUS_WORDS[c.status as keyof typeof STATUS_WORDS] ?? c.status;
  return `${c.type}: ${word} (${c.reason})`;
}

/** The power verbs as the maintenance records them, in the order they happen. */
export const POWER_RECORD_VERBS = ['reboot', 'shutdown', 'powerOn'] as const;

const POWER_RECORD_LABELS: Record<keyof MaintenancePowerRecords, string> = {
  reboot: 'Reboot',
  shutdown: 'Shutdown',
  powerOn: 'Power-on',
  upgrade: 'Talos upgrade',
  firmware: 'Firmware update (SimpleUpdate)',
};

/**
 * One recorded power verb in words: "Reboot sent at … over redfish" once the
 * channel accepted it; recorded but not (yet) answered otherwise. `detail`
 * and `error` are the channel's own words and stay separate.
 */
export function powerRecordText(
  verb: keyof MaintenancePowerRecords,
  record: MaintenancePowerRecord,
): string {
  const label = POWER_RECORD_LABELS[verb];
  const over = record.channel ? ` over ${record.channel}` : '';
  if (record.sentAt)
    return `${label} sent at ${formatTime(record.sentAt)}${over}`;
  if (record.error) {
    return `${label} recorded at ${formatTime(
      record.recordedAt,
    )}${over}; the channel did not accept it`;
  }
  return `${label} recorded at ${formatTime(
    record.recordedAt,
  )}${over}; waiting for the channel's answer`;
}

/** The recorded power verbs of a maintenance, in the order they happen. */
export function powerRecords(m: MaintenanceResponse): Array<{
  verb: keyof MaintenancePowerRecords;
  record: MaintenancePowerRecord;
}> {
  return POWER_RECORD_VERBS.filter(verb => m.power?.[verb]).map(verb => ({
    verb,
    record: m.power![verb]!,
  }));
}

/**
 * What a maintenance parked on a power verb waits for, in a sentence:
 * "Rebooting — waiting for worker-3 to come back". Undefined in other phases.
 */
export function powerWaitText(m: MaintenanceResponse): string | undefined {
  if (m.phase === 'Rebooting') {
    return `Rebooting — waiting for ${m.nodeName} to come back`;
  }
  if (m.phase === 'PoweredOff') {
    return m.powerOn
      ? `Powered off — power-on requested, sending it to ${m.nodeName}`
      : `Powered off — ${m.nodeName} stays off until it is powered on`;
  }
  return undefined;
}

/** The numbers of a refusal, when the guard gave them. */
export function refusalNumbers(r: MaintenanceRefusal): string | undefined {
  return quorumNumbersSentence(r);
}

/** A timestamp for a person, in their locale. */
export function formatTime(at: string | undefined): string {
  if (!at) return 'unknown time';
  const t = new Date(at);
  return Number.isNaN(t.getTime()) ? at : t.toLocaleString();
}

/** Intents whose maintenance drains the node (a cordon evicts nothing). */
const DRAINING_INTENTS: ReadonlySet<string> = new Set([
  'drain',
  'reboot',
  'shutdown',
]);

/** The fields of `spec.drain`, in the order the page names them. */
export type DrainOptionKey =
  | 'deleteEmptyDirData'
  | 'force'
  | 'allowNodeLocalData'
  | 'gracePeriodSeconds'
  | 'timeoutSeconds';

/**
 * Each drain option: what it is in words when asked, and when left at its default.
 * The same order as the drain dialog's options, then the two numbers.
 */
const DRAIN_OPTION_WORDS: Array<{
  option: DrainOptionKey;
  asked: (o: MaintenanceDrainOptions) => string | undefined;
  byDefault: string;
}> = [
  {
    option: 'deleteEmptyDirData',
    asked: o =>
      o.deleteEmptyDirData
        ? 'Pods with emptyDir volumes: evicted, their emptyDir data is lost'
        : undefined,
    byDefault: 'pods with emptyDir volumes are not evicted',
  },
  {
    option: 'force',
    asked: o =>
      o.force
        ? 'Pods without a controller: evicted, they are not recreated'
        : undefined,
    byDefault: 'pods without a controller are not evicted',
  },
  {
    option: 'allowNodeLocalData',
    asked: o =>
      o.allowNodeLocalData
        ? 'Node-local data: pods with data on this node are evicted, their data unavailable until the node is back'
        : undefined,
    byDefault: 'pods with data on this node are not evicted',
  },
  {
    option: 'gracePeriodSeconds',
    asked: o =>
      o.gracePeriodSeconds !== undefined
        ? `Grace period: ${durationText(
            o.gracePeriodSeconds,
          )} for every evicted pod, instead of its own`
        : undefined,
    byDefault: 'each pod gets its own grace period',
  },
  {
    option: 'timeoutSeconds',
    asked: o =>
      o.timeoutSeconds !== undefined
        ? `Timeout: after ${durationText(
            o.timeoutSeconds,
          )} the drain gives up, the maintenance ends Failed and the node stays cordoned`
        : undefined,
    byDefault: 'no timeout',
  },
];

/** The drain options of a maintenance in words (what was asked, and the rest). */
export interface DrainOptionsText {
  /** The options asked for, each a sentence ending in who asked. */
  asked: Array<{ option: DrainOptionKey; text: string }>;
  /** The options left at their defaults, in one sentence ("Default drain: …"). */
  defaults?: string;
}

/**
 * What the maintenance's drain was asked to do (`spec.drain`), as the page shows
 * it: each option asked for, by whom (the requester: the options are fixed at
 * creation), then the defaults of the others. Undefined for a maintenance that
 * does not drain and asked for nothing.
 */
export function drainOptionsText(
  m: MaintenanceResponse,
): DrainOptionsText | undefined {
  const options = m.drain ?? {};
  const by = `asked by ${m.requestedBy ?? 'someone unrecorded'}`;
  const asked: DrainOptionsText['asked'] = [];
  const defaults: string[] = [];
  for (const { option, asked: words, byDefault } of DRAIN_OPTION_WORDS) {
    const text = words(options);
    if (text) asked.push({ option, text: `${text} (${by})` });
    else defaults.push(byDefault);
  }
  if (asked.length === 0 && !DRAINING_INTENTS.has(m.intent)) return undefined;
  if (defaults.length === 0) return { asked };
  const list = defaults.join('; ');
  return {
    asked,
    defaults:
      asked.length === 0
        ? `Default drain: ${list}.`
        : `Otherwise the default: ${list}.`,
  };
}
