import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import type {
  PermissionCondition,
  PermissionCriteria,
} from '@backstage/plugin-permission-common';
import {
  SERVER_RESOURCE_TYPE,
  serversPermissions,
} from '@rackside/plugin-servers-common';
import { serverPermissionRules } from '@rackside/plugin-servers-node';
import { TIERS, type Tier } from './tiers';

/** Where the policy reads its settings in app-config. */
export const POLICY_CONFIG_KEY = 'permission.rackside';

/** A server condition as the permission framework carries it. */
export type ServerCriteria = PermissionCriteria<
  PermissionCondition<typeof SERVER_RESOURCE_TYPE>
>;

/** One line of an allow or deny list. */
export interface PolicyRule {
  /** A Rackside permission name, e.g. `servers:cordon`. */
  permission: string;
  /**
   * When present, the line applies only to servers matching these
   * conditions (server permissions only).
   */
  conditions?: ServerCriteria;
}

/** The allow and deny lists of one user or group. */
export interface PrincipalRules {
  /** Full entity ref in lower case, e.g. `group:default/plant-engineers`. */
  ref: string;
  allow: PolicyRule[];
  deny: PolicyRule[];
}

/** What the policy answers for permissions that are not Rackside's. */
export type OtherPermissionsDecision = 'allow' | 'deny';

/** The validated contents of `permission.rackside`. */
export interface ServersPolicyConfig {
  /** Principals (lower-case entity refs) holding each tier. */
  tiers: Record<Tier, string[]>;
  principals: PrincipalRules[];
  otherPermissions: OtherPermissionsDecision;
  /** How long a user's group memberships are reused before the catalog is asked again. */
  groupCacheSeconds: number;
}

const PERMISSION_NAMES = new Set(serversPermissions.map(p => p.name));
const SERVER_PERMISSION_NAMES = new Set(
  serversPermissions
    .filter(
      p => p.type === 'resource' && p.resourceType === SERVER_RESOURCE_TYPE,
    )
    .map(p => p.name),
);
const RULES_BY_NAME = new Map(
  Object.values(serverPermissionRules).map(rule => [rule.name, rule]),
);

interface ZodLikeSchema {
  /** The keys of a zod object schema. */
  shape?: Record<string, unknown>;
  safeParse(value: unknown): {
    success: boolean;
    data?: unknown;
    error?: { issues: Array<{ path: PropertyKey[]; message: string }> };
  };
}

function fail(key: string, message: string): never {
  throw new InputError(`${key}: ${message}`);
}

/** Unknown keys are typos (`alow`), and a typo must not silently grant or deny. */
function checkKeys(config: Config, key: string, known: string[]) {
  for (const k of config.keys()) {
    if (!known.includes(k)) {
      fail(`${key}.${k}`, `unknown key; expected one of ${known.join(', ')}`);
    }
  }
}

/** Parses `user:default/ada` or `group:plant-engineers`; users and groups only. */
export function normalizePrincipalRef(ref: string, key: string): string {
  let parsed;
  try {
    parsed = parseEntityRef(ref, { defaultNamespace: 'default' });
  } catch (error) {
    return fail(key, `"${ref}" is not an entity ref (${error})`);
  }
  const kind = parsed.kind.toLocaleLowerCase('en-US');
  if (kind !== 'user' && kind !== 'group') {
    fail(
      key,
      `"${ref}" must be a user or group ref, e.g. group:default/plant-engineers`,
    );
  }
  return stringifyEntityRef({ ...parsed, kind }).toLocaleLowerCase('en-US');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads a condition written in app-config into permission criteria:
 * `{ rule: NAME, params? }`, `{ allOf: [...] }`, `{ anyOf: [...] }` or
 * `{ not: ... }`. Rule names and their parameters are checked against the
 * registered server rules.
 */
export function parseServerCriteria(
  value: unknown,
  key: string,
): ServerCriteria {
  if (!isPlainObject(value)) {
    return fail(
      key,
      'a condition must be an object with rule, allOf, anyOf or not',
    );
  }
  const keys = Object.keys(value);
  if ('rule' in value) {
    for (const k of keys) {
      if (k !== 'rule' && k !== 'params') {
        fail(
          `${key}.${k}`,
          'unknown key; a rule condition has rule and params',
        );
      }
    }
    const name = value.rule;
    const rule = typeof name === 'string' ? RULES_BY_NAME.get(name) : undefined;
    if (!rule) {
      fail(
        `${key}.rule`,
        `unknown rule ${JSON.stringify(name)}; known rules: ${[
          ...RULES_BY_NAME.keys(),
        ].join(', ')}`,
      );
    }
    const params = value.params ?? {};
    if (!isPlainObject(params)) {
      fail(`${key}.params`, `must be an object of ${rule.name}'s parameters`);
    }
    // The server rules declare their parameters with zod, whose objects drop keys they
    // do not know: a misspelt `vaule` would vanish and HAS_LABEL match every value of
    // the label, widening an allow line (or narrowing a deny line) in silence.
    const schema = rule.paramsSchema as unknown as ZodLikeSchema | undefined;
    const known = Object.keys(schema?.shape ?? {});
    for (const k of Object.keys(params)) {
      if (!known.includes(k)) {
        fail(
          `${key}.params.${k}`,
          `unknown parameter of ${rule.name}; ${
            known.length ? `expected ${known.join(', ')}` : 'it takes none'
          }`,
        );
      }
    }
    const parsed = schema?.safeParse(params);
    if (parsed && !parsed.success) {
      fail(
        `${key}.params`,
        `invalid parameters for ${rule.name}: ${(parsed.error?.issues ?? [])
          .map(i => `${i.path.join('.') || '(params)'} ${i.message}`)
          .join('; ')}`,
      );
    }
    return {
      rule: rule.name,
      resourceType: SERVER_RESOURCE_TYPE,
      params: (parsed?.data ?? params) as Record<string, any>,
    };
  }
  if (keys.length !== 1) {
    return fail(
      key,
      `expected exactly one of rule, allOf, anyOf, not; got ${keys.join(', ')}`,
    );
  }
  const [op] = keys;
  if (op === 'not') {
    return { not: parseServerCriteria(value.not, `${key}.not`) };
  }
  if (op === 'allOf' || op === 'anyOf') {
    const list = value[op];
    if (!Array.isArray(list) || list.length === 0) {
      return fail(`${key}.${op}`, 'must be a non-empty list of conditions');
    }
    const items = list.map((item, i) =>
      parseServerCriteria(item, `${key}.${op}[${i}]`),
    );
    return op === 'allOf'
      ? { allOf: items as [ServerCriteria, ...ServerCriteria[]] }
      : { anyOf: items as [ServerCriteria, ...ServerCriteria[]] };
  }
  return fail(
    `${key}.${op}`,
    'unknown key; expected rule, allOf, anyOf or not',
  );
}

function checkPermissionName(name: string, key: string) {
  if (!PERMISSION_NAMES.has(name)) {
    fail(
      key,
      `unknown permission "${name}"; Rackside's are ${[
        ...PERMISSION_NAMES,
      ].join(', ')}`,
    );
  }
}

function readRuleList(
  config: Config,
  key: string,
  fullKey: string,
): PolicyRule[] {
  if (!config.has(key)) return [];
  const raw = config.get(key);
  if (!Array.isArray(raw)) fail(`${fullKey}.${key}`, 'must be a list');
  return raw.map((entry, i) => {
    const where = `${fullKey}.${key}[${i}]`;
    if (typeof entry === 'string') {
      checkPermissionName(entry, where);
      return { permission: entry };
    }
    if (!isPlainObject(entry)) {
      return fail(
        where,
        'must be a permission name or { permission, conditions }',
      );
    }
    for (const k of Object.keys(entry)) {
      if (k !== 'permission' && k !== 'conditions') {
        fail(`${where}.${k}`, 'unknown key; expected permission or conditions');
      }
    }
    if (typeof entry.permission !== 'string') {
      fail(`${where}.permission`, 'must be a permission name');
    }
    checkPermissionName(entry.permission, `${where}.permission`);
    if (entry.conditions === undefined) return { permission: entry.permission };
    if (!SERVER_PERMISSION_NAMES.has(entry.permission)) {
      fail(
        `${where}.conditions`,
        `${entry.permission} is not checked against a server, so it cannot have conditions`,
      );
    }
    return {
      permission: entry.permission,
      conditions: parseServerCriteria(entry.conditions, `${where}.conditions`),
    };
  });
}

/**
 * Reads and validates `permission.rackside`. Every error names the key that
 * is wrong, so a portal with a typo fails at start-up instead of quietly
 * denying (or granting) something.
 */
export function readServersPolicyConfig(
  rootConfig: Config,
): ServersPolicyConfig {
  const config = rootConfig.getOptionalConfig(POLICY_CONFIG_KEY);
  const tiers: Record<Tier, string[]> = {
    read: [],
    'operate-lead': [],
    admin: [],
  };
  if (!config) {
    return {
      tiers,
      principals: [],
      otherPermissions: 'deny',
      groupCacheSeconds: 30,
    };
  }
  checkKeys(config, POLICY_CONFIG_KEY, [
    'tiers',
    'principals',
    'otherPermissions',
    'groupCacheSeconds',
  ]);

  const tierConfig = config.getOptionalConfig('tiers');
  if (tierConfig) {
    checkKeys(tierConfig, `${POLICY_CONFIG_KEY}.tiers`, [...TIERS]);
    for (const tier of TIERS) {
      tiers[tier] = (tierConfig.getOptionalStringArray(tier) ?? []).map(
        (ref, i) =>
          normalizePrincipalRef(
            ref,
            `${POLICY_CONFIG_KEY}.tiers.${tier}[${i}]`,
          ),
      );
    }
  }

  const seen = new Set<string>();
  const principals = (config.getOptionalConfigArray('principals') ?? []).map(
    (entry, i) => {
      const where = `${POLICY_CONFIG_KEY}.principals[${i}]`;
      checkKeys(entry, where, ['ref', 'allow', 'deny']);
      const ref = normalizePrincipalRef(entry.getString('ref'), `${where}.ref`);
      if (seen.has(ref)) fail(`${where}.ref`, `${ref} is listed twice`);
      seen.add(ref);
      const allow = readRuleList(entry, 'allow', where);
      const deny = readRuleList(entry, 'deny', where);
      if (allow.length === 0 && deny.length === 0) {
        fail(where, `${ref} has neither allow nor deny entries`);
      }
      return { ref, allow, deny };
    },
  );

  const other = config.getOptionalString('otherPermissions') ?? 'deny';
  if (other !== 'allow' && other !== 'deny') {
    fail(
      `${POLICY_CONFIG_KEY}.otherPermissions`,
      `must be allow or deny, not "${other}"`,
    );
  }

  const groupCacheSeconds = config.getOptionalNumber('groupCacheSeconds') ?? 30;
  if (!(groupCacheSeconds >= 0)) {
    fail(`${POLICY_CONFIG_KEY}.groupCacheSeconds`, 'must be zero or more');
  }

  return { tiers, principals, otherPermissions: other, groupCacheSeconds };
}
