/*
 * `servers.plans` in app-config: the settings of maintenance plans.
 */
import type { Config } from '@backstage/config';
import {
  PLAN_AUTHORIZATION_DEFAULT_HOURS,
  PLAN_AUTHORIZATION_MAX_HOURS,
} from '@rackside/plugin-servers-common';

/** How many plan pre-flights a user may ask a minute unless app-config says otherwise. */
export const PLAN_PREFLIGHTS_PER_MINUTE_DEFAULT = 20;

/** The plans' own settings (`servers.plans` in app-config). */
export interface PlansConfig {
  /** How long a plan's authorization lasts from its creation or renewal. */
  authorizationHours: number;
  /** Plan pre-flights (a plan request takes one) a user may ask a minute. */
  preflightsPerMinute: number;
}

/** The settings when app-config has no `servers.plans`. */
export const DEFAULT_PLANS_CONFIG: PlansConfig = {
  authorizationHours: PLAN_AUTHORIZATION_DEFAULT_HOURS,
  preflightsPerMinute: PLAN_PREFLIGHTS_PER_MINUTE_DEFAULT,
};

/** Reads `servers.plans`; a value out of range stops the backend with the key named. */
export function readPlansConfig(config: Config): PlansConfig {
  const key = 'servers.plans.authorizationHours';
  const hours =
    config.getOptionalNumber(key) ?? PLAN_AUTHORIZATION_DEFAULT_HOURS;
  if (!(hours > 0 && hours <= PLAN_AUTHORIZATION_MAX_HOURS)) {
    throw new Error(
      `${key} must be more than 0 and at most ${PLAN_AUTHORIZATION_MAX_HOURS} (hours), got ${hours}`,
    );
  }
  const rateKey = 'servers.plans.preflightsPerMinute';
  const perMinute =
    config.getOptionalNumber(rateKey) ?? PLAN_PREFLIGHTS_PER_MINUTE_DEFAULT;
  if (!(Number.isInteger(perMinute) && perMinute >= 1)) {
    throw new Error(
      `${rateKey} must be a whole number of at least 1, got ${perMinute}`,
    );
  }
  return { authorizationHours: hours, preflightsPerMinute: perMinute };
}
