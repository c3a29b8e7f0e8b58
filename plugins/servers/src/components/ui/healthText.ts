import type {
  HealthRollup,
  ServerHealthSummary,
} from '@rackside/plugin-servers-common';

/** A health rollup as a chip's colour (table and entity page). */
export function healthTone(
  rollup: HealthRollup | 'OK' | 'Warning' | 'Critical',
): 'success' | 'warning' | 'error' | 'default' {
  switch (rollup) {
    case 'OK':
      return 'success';
    case 'Warning':
      return 'warning';
    case 'Critical':
      return 'error';
    default:
      return 'default';
  }
}

/**
 * How old a reading is, in words: "just now", "3 min ago", "2 h ago", "4 d ago".
 * A time in the future (a clock ahead elsewhere) reads "just now".
 */
export function readingAge(readAt: string, now: number): string {
  const seconds = Math.floor((now - Date.parse(readAt)) / 1000);
  if (!(seconds >= 60)) return 'just now';
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} d ago`;
}

/** The Health cell's tooltip: what the rollup stands for. */
export function healthTitle(health: ServerHealthSummary): string {
  const parts =
    health.failedParts === 1
      ? '1 part not OK'
      : `${health.failedParts} parts not OK`;
  return health.readAt
    ? `The BMC reports ${health.rollup}: ${parts} (read ${health.readAt})`
    : `The BMC reports ${health.rollup}: ${parts}`;
}
