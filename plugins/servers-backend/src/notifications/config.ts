import { readDurationFromConfig, type Config } from '@backstage/config';
import { InputError } from '@backstage/errors';

/** `servers.notifications`, read. */
export interface NotificationsConfig {
  /** Send notifications at all (default true). */
  enabled: boolean;
  /** How long a budget may block a drain before the requester is told (default 10 minutes). */
  blockedAfterMs: number;
}

/** The default of `servers.notifications.blockedAfter`. */
export const DEFAULT_BLOCKED_AFTER_MS = 10 * 60 * 1000;

const MS_PER: Record<string, number> = {
  milliseconds: 1,
  seconds: 1000,
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
  weeks: 604_800_000,
};

/**
 * Reads `servers.notifications`. `blockedAfter` is a Backstage duration: a string
 * (`10m`, `90s`, ISO `PT10M`) or an object (`{ minutes: 10 }`); months and years are
 * refused (a drain is not blocked that long on purpose).
 */
export function readNotificationsConfig(config: Config): NotificationsConfig {
  const key = 'servers.notifications.blockedAfter';
  let blockedAfterMs = DEFAULT_BLOCKED_AFTER_MS;
  if (config.has(key)) {
    const duration = readDurationFromConfig(config, { key }) as Record<
      string,
      number | undefined
    >;
    blockedAfterMs = 0;
    for (const [unit, value] of Object.entries(duration)) {
      if (value === undefined) continue;
      const per = MS_PER[unit];
      if (per === undefined) {
        throw new InputError(
          `${key}: ${unit} are not accepted; give the duration in minutes or hours`,
        );
      }
      blockedAfterMs += value * per;
    }
    if (!(blockedAfterMs > 0)) {
      throw new InputError(`${key} must be longer than zero`);
    }
  }
  return {
    enabled: config.getOptionalBoolean('servers.notifications.enabled') ?? true,
    blockedAfterMs,
  };
}
