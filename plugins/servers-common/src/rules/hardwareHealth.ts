/**
 * What the BMC's health reading asks of a request (docs/hardware-health.md, docs/architecture.md):
 * returning a server to service while its BMC reports the hardware Critical, or while
 * nobody knows what it reports (the reading is too old, or the last one failed), needs the
 * typed node name, one rung up, and says why. The backend applies it when it answers
 * (the detail's and the list's ceremonies, the action request's check), the operator when
 * it judges a healthy return; the frontend renders what it says; nothing else decides it.
 */
import type { CeremonyRaise } from './types';
import type { ServerAction } from '../permissions';

/** The actions that put a server back into service (uncordon, or power on a shut-down one). */
export const RETURN_TO_SERVICE_ACTIONS: readonly ServerAction[] = [
  'uncordon',
  'power-on',
];

/**
 * The sweep interval a reading is judged by when it does not say its own (a reading
 * written before the operator recorded it): the operator's default `--health-interval`.
 */
export const DEFAULT_HEALTH_SWEEP_INTERVAL_SECONDS = 900;

/** A reading older than this many sweep intervals is no longer known. */
export const HEALTH_STALE_INTERVALS = 2;

/** What the rule reads of a ServerBMC's `status.health`. */
export interface HardwareHealthFacts {
  rollup: 'OK' | 'Warning' | 'Critical' | 'Unknown';
  /** The parts that are not OK, as the operator recorded them. */
  parts?: readonly { name: string; health: 'OK' | 'Warning' | 'Critical' }[];
  /** When the last successful reading ended (absent: never read successfully). */
  readAt?: string;
  /** Why the last reading failed (absent: it did not). */
  error?: string;
  /**
   * The sweep interval of the operator that wrote the reading (s): the one number the
   * operator and the backend both judge the reading's age by.
   */
  sweepIntervalSeconds?: number;
}

/**
 * What is known of a server's hardware now:
 * - `none`: no reading at all (no ServerBMC, or one not read yet): nothing is asked;
 * - `ok`: a fresh reading, OK or Warning;
 * - `critical`: the BMC reports Critical (however old the reading: nothing newer says
 *   otherwise);
 * - `unknown`: the last reading failed, or the last good one is older than two sweep
 *   intervals; `reason` says which ("hardware state unknown: …").
 */
export type HardwareReadingState =
  | { state: 'none' }
  | { state: 'ok' }
  | { state: 'critical'; reason: string }
  | { state: 'unknown'; reason: string };

/** How many parts the reading names as not OK. */
export function failedPartsOf(health: HardwareHealthFacts | undefined): number {
  return health?.parts?.filter(p => p.health !== 'OK').length ?? 0;
}

/**
 * The sentence the pre-flight and the dialog show for a Critical reading: the parts the
 * BMC names Critical (or, when none is, the ones not OK).
 */
export function criticalHardwareReason(health: HardwareHealthFacts): string {
  const parts = health.parts ?? [];
  const critical = parts.filter(p => p.health === 'Critical');
  const named = (critical.length ? critical : parts).map(p => p.name);
  return named.length
    ? `the BMC reports Critical: ${named.join(', ')}`
    : 'the BMC reports Critical';
}

/** A duration as people read an age: "45 s", "12 min", "3 h", "2 d" (rounded down). */
export function ageText(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.floor(hours / 24)} d`;
}

/** The interval a reading is judged by (s): its own when it is a positive number, else the default. */
export function sweepIntervalOf(health: HardwareHealthFacts): number {
  const own = health.sweepIntervalSeconds;
  return typeof own === 'number' && Number.isFinite(own) && own > 0
    ? own
    : DEFAULT_HEALTH_SWEEP_INTERVAL_SECONDS;
}

/**
 * The one decision of what a reading says now (`now` in ms since the epoch). The healthy
 * return, the typed-name rung and the dialog all call it, so they never disagree on when
 * a reading stopped counting.
 */
export function hardwareReadingState(
  health: HardwareHealthFacts | undefined,
  now: number,
): HardwareReadingState {
  if (!health) return { state: 'none' };
  // A Critical part is the most concrete thing known, even in an old reading.
  if (health.rollup === 'Critical') {
    return { state: 'critical', reason: criticalHardwareReason(health) };
  }
  if (health.error !== undefined && health.error !== null) {
    return {
      state: 'unknown',
      reason: `hardware state unknown: the last reading failed: ${
        health.error || 'no reason given'
      }`,
    };
  }
  const readAt = health.readAt ? Date.parse(health.readAt) : NaN;
  if (Number.isNaN(readAt)) {
    return {
      state: 'unknown',
      reason: 'hardware state unknown: the BMC was never read successfully',
    };
  }
  if (health.rollup === 'Unknown') {
    return {
      state: 'unknown',
      reason: 'hardware state unknown: the BMC reports no health',
    };
  }
  const staleAfterMs = HEALTH_STALE_INTERVALS * sweepIntervalOf(health) * 1000;
  if (now - readAt > staleAfterMs) {
    return {
      state: 'unknown',
      reason: `hardware state unknown: last reading ${ageText(
        now - readAt,
      )} ago (the sweep reads every ${ageText(
        sweepIntervalOf(health) * 1000,
      )})`,
    };
  }
  return { state: 'ok' };
}

/**
 * The raise a health reading asks of an action (`now` in ms since the epoch): the typed
 * node name for returning a server to service whose reading is Critical or unknown; none
 * otherwise (no reading, a fresh OK or Warning, or an action that does not return the
 * server).
 */
export function hardwareHealthRaise(
  action: ServerAction,
  health: HardwareHealthFacts | undefined,
  now: number,
): CeremonyRaise | undefined {
  if (!RETURN_TO_SERVICE_ACTIONS.includes(action)) return undefined;
  const known = hardwareReadingState(health, now);
  if (known.state === 'critical' || known.state === 'unknown') {
    return { level: 'typed-name', why: known.reason };
  }
  return undefined;
}
