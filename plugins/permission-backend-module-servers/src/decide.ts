import {
  AuthorizeResult,
  type Permission,
  type PolicyDecision,
  type ResourcePermission,
} from '@backstage/plugin-permission-common';
import {
  SERVER_RESOURCE_TYPE,
  serversPermissions,
} from '@rackside/plugin-servers-common';
import { createServerConditionalDecision } from '@rackside/plugin-servers-node';
import type { PolicyRule, ServerCriteria, ServersPolicyConfig } from './config';
import {
  DEFAULT_TIERS,
  highestTier,
  tierHolds,
  TIERS,
  type Tier,
} from './tiers';

const RACKSIDE_PERMISSION_NAMES: ReadonlySet<string> = new Set(
  serversPermissions.map(p => p.name),
);

/** Whether a permission is one of Rackside's sixteen (by its name, the contract). */
export function isRacksidePermission(permission: Permission): boolean {
  return RACKSIDE_PERMISSION_NAMES.has(permission.name);
}

/** The highest tier any of the principals holds, if any. */
export function tierOf(
  principals: readonly string[],
  tiers: ServersPolicyConfig['tiers'],
): Tier | undefined {
  const held = new Set(principals);
  return highestTier(
    TIERS.filter(tier => tiers[tier].some(ref => held.has(ref))),
  );
}

function anyOf(items: ServerCriteria[]): ServerCriteria {
  return items.length === 1
    ? items[0]
    : { anyOf: items as [ServerCriteria, ...ServerCriteria[]] };
}

/**
 * Decides one Rackside permission for a set of principals (the user's entity
 * ref and the refs of the groups it belongs to, all lower case):
 *
 * 1. an unconditional deny line of any principal denies;
 * 2. otherwise the user is granted by a tier that holds the permission's
 *    default tier, or by allow lines (unconditional, or conditional on the
 *    server rules);
 * 3. conditional deny lines narrow the grant: the answer is conditional,
 *    "granted and not denied".
 *
 * Nothing granted is a deny. The result is the decision a code policy would
 * return; conditional ones carry pluginId `servers` and resource type
 * `server`.
 */
export function decideServersPermission(
  permission: Permission,
  principals: readonly string[],
  config: Pick<ServersPolicyConfig, 'tiers' | 'principals'>,
): PolicyDecision {
  const name = permission.name;
  const required = DEFAULT_TIERS[name];
  if (!required) {
    throw new Error(`${name} is not a Rackside permission`);
  }
  const held = new Set(principals);
  const lines = config.principals.filter(p => held.has(p.ref));
  const matching = (list: 'allow' | 'deny'): PolicyRule[] =>
    lines.flatMap(p => p[list].filter(rule => rule.permission === name));

  const denies = matching('deny');
  if (denies.some(rule => !rule.conditions)) {
    return { result: AuthorizeResult.DENY };
  }

  const tier = tierOf(principals, config.tiers);
  const allows = matching('allow');
  const grantedOutright =
    (tier !== undefined && tierHolds(tier, required)) ||
    allows.some(rule => !rule.conditions);
  const grantConditions = grantedOutright
    ? []
    : allows.map(rule => rule.conditions!);
  if (!grantedOutright && grantConditions.length === 0) {
    return { result: AuthorizeResult.DENY };
  }

  const denyConditions = denies.map(rule => rule.conditions!);
  if (grantedOutright && denyConditions.length === 0) {
    return { result: AuthorizeResult.ALLOW };
  }
  if (
    permission.type !== 'resource' ||
    permission.resourceType !== SERVER_RESOURCE_TYPE
  ) {
    // Config validation refuses conditions on other permissions; a code
    // caller passing such a config gets the safe answer.
    return { result: AuthorizeResult.DENY };
  }

  const parts: ServerCriteria[] = [];
  if (!grantedOutright) parts.push(anyOf(grantConditions));
  if (denyConditions.length > 0) parts.push({ not: anyOf(denyConditions) });
  return createServerConditionalDecision(
    permission as ResourcePermission<typeof SERVER_RESOURCE_TYPE>,
    parts.length === 1
      ? parts[0]
      : { allOf: parts as [ServerCriteria, ...ServerCriteria[]] },
  );
}
