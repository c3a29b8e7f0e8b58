import { serversPermissions } from '@rackside/plugin-servers-common';

/**
 * Access tiers, lowest first. Each tier holds every permission of the tiers
 * below it, so granting `admin` never takes away `read`.
 */
export const TIERS = ['read', 'operate-lead', 'admin'] as const;
export type Tier = (typeof TIERS)[number];

/**
 * Default tier per permission (decision 0001 section 6): reading sits at `read`,
 * every infrastructure action and adding or reclaiming machines at `admin`.
 * A deployment that wants plant engineers to cordon writes an allow line;
 * the default stays on the side that fails loudly.
 */
export const DEFAULT_TIERS: Readonly<Record<string, Tier>> = Object.freeze(
  Object.fromEntries(
    serversPermissions.map((p): [string, Tier] => [
      p.name,
      p.name === 'servers:read' || p.name === 'machines:read'
        ? 'read'
        : 'admin',
    ]),
  ),
);

/** Whether a principal at `held` may use something that needs `required`. */
export function tierHolds(held: Tier, required: Tier): boolean {
  return TIERS.indexOf(held) >= TIERS.indexOf(required);
}

/** The highest of several tiers (a user in two groups gets the higher one). */
export function highestTier(tiers: Iterable<Tier>): Tier | undefined {
  let best: Tier | undefined;
  for (const tier of tiers) {
    if (best === undefined || tierHolds(tier, best)) best = tier;
  }
  return best;
}
