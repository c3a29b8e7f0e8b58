/*
 * The window of a MaintenancePlan (docs/plans.md): when a next step may start. One
 * rule, called by the operator before each step and by the backend's plan pre-flight.
 */
import type { PlanWindow, Weekday } from '../resources/maintenancePlan';

/** Whether a step may start at `at`, and if not why and when it may. */
export type WindowVerdict =
  | { open: true }
  | {
      open: false;
      /** Why no step starts now. */
      message: string;
      /** When the window opens next; absent: never again (past notAfter). */
      opensAt?: number;
    };

interface LocalTime {
  weekday: Weekday;
  /** Minutes since local midnight. */
  minutes: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

function localTime(at: number, timeZone: string): LocalTime {
  const parts = formatterFor(timeZone).formatToParts(new Date(at));
  const part = (type: string) => parts.find(p => p.type === type)?.value ?? '';
  return {
    weekday: part('weekday') as Weekday,
    minutes: Number(part('hour')) * 60 + Number(part('minute')),
  };
}

function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h * 60 + m;
}

const PREVIOUS_DAY: Record<Weekday, Weekday> = {
  Mon: 'Sun',
  Tue: 'Mon',
  Wed: 'Tue',
  Thu: 'Wed',
  Fri: 'Thu',
  Sat: 'Fri',
  Sun: 'Sat',
};

/**
 * Whether the weekly part (weekdays, hours) admits this local time. Hours that span
 * midnight (22:00 to 04:00) belong to the day they start on: Monday 22:00 to Tuesday
 * 04:00 is Monday's window.
 */
function weeklyOpen(window: PlanWindow, t: LocalTime): boolean {
  const days = window.weekdays;
  const dayAllowed = (d: Weekday) => !days || days.includes(d);
  if (!window.hours) return dayAllowed(t.weekday);
  const start = minutesOf(window.hours.start);
  const end = minutesOf(window.hours.end);
  if (start < end) {
    return dayAllowed(t.weekday) && t.minutes >= start && t.minutes < end;
  }
  // Spans midnight: the evening part is today's, the morning part yesterday's.
  if (t.minutes >= start) return dayAllowed(t.weekday);
  if (t.minutes < end) return dayAllowed(PREVIOUS_DAY[t.weekday]);
  return false;
}

function describeWeekly(window: PlanWindow): string {
  const parts: string[] = [];
  if (window.weekdays) parts.push(window.weekdays.join(', '));
  if (window.hours) parts.push(`${window.hours.start}-${window.hours.end}`);
  return `${parts.join(' ')} ${window.timeZone ?? 'UTC'}`;
}

const MINUTE = 60_000;
/** How far ahead the next opening is looked for: a weekly window opens within 8 days. */
const HORIZON_MINUTES = 8 * 24 * 60;

/** The first whole minute at or after `from` the weekly part admits (within 8 days). */
function nextWeeklyOpening(
  window: PlanWindow,
  from: number,
): number | undefined {
  const zone = window.timeZone ?? 'UTC';
  let at = Math.ceil(from / MINUTE) * MINUTE;
  for (let i = 0; i <= HORIZON_MINUTES; i++, at += MINUTE) {
    if (weeklyOpen(window, localTime(at, zone))) return at;
  }
  return undefined;
}

/** Decides whether a step may start at `at` (ms since the epoch). */
export function planWindowVerdict(
  window: PlanWindow | undefined,
  at: number,
): WindowVerdict {
  if (!window) return { open: true };
  const notBefore = window.notBefore ? Date.parse(window.notBefore) : undefined;
  const notAfter = window.notAfter ? Date.parse(window.notAfter) : undefined;
  if (notAfter !== undefined && at >= notAfter) {
    return {
      open: false,
      message: `the window closed at ${window.notAfter}: no step starts after it`,
    };
  }
  const weekly = window.weekdays !== undefined || window.hours !== undefined;
  if (notBefore !== undefined && at < notBefore) {
    const opensAt = weekly ? nextWeeklyOpening(window, notBefore) : notBefore;
    return {
      open: false,
      message: `the window opens at ${window.notBefore}${
        weekly ? ` (then ${describeWeekly(window)})` : ''
      }`,
      opensAt: capped(opensAt, notAfter),
    };
  }
  if (!weekly) return { open: true };
  if (weeklyOpen(window, localTime(at, window.timeZone ?? 'UTC'))) {
    return { open: true };
  }
  const opensAt = capped(nextWeeklyOpening(window, at), notAfter);
  return {
    open: false,
    message: `outside the window (${describeWeekly(window)})${
      opensAt !== undefined
        ? `: it opens at ${new Date(opensAt).toISOString()}`
        : ''
    }`,
    opensAt,
  };
}

function capped(
  opensAt: number | undefined,
  notAfter: number | undefined,
): number | undefined {
  if (opensAt === undefined) return undefined;
  return notAfter !== undefined && opensAt >= notAfter ? undefined : opensAt;
}
