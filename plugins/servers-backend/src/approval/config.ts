/*
 * `servers.approvals.rules` in app-config (docs/approvals.md), read once at start-up into
 * the rules servers-common's approvalRuleFor takes. A rule the backend cannot read stops
 * it, naming the rule and the field: a typo must not leave dangerous requests unheld.
 */
import type { Config } from '@backstage/config';
import {
  DEFAULT_APPROVAL_EXPIRES_AFTER_MINUTES,
  MAX_APPROVERS,
  PREFLIGHT_CEREMONY_LEVELS,
  type ApprovalRule,
  type ApprovalRuleSelector,
  type PreflightCeremonyLevel,
} from '@rackside/plugin-servers-common';

const KEY = 'servers.approvals.rules';

/** The longest an approval may wait (a week). */
export const APPROVAL_MAX_EXPIRES_AFTER_MINUTES = 7 * 24 * 60;

/** The actions a rule may select (a server action that creates a maintenance, or a plan). */
export const APPROVAL_ACTIONS = [
  'cordon',
  'drain',
  'reboot',
  'shutdown',
  'power-on',
  'upgrade',
  'firmware',
  'plan',
] as const;
/** The intents a rule may select. */
export const APPROVAL_INTENTS = [
  'cordon',
  'drain',
  'reboot',
  'shutdown',
  'upgrade',
  'firmware',
];
const ROLES = ['control-plane', 'worker'];
const RULE_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
/** A catalog ref of a user or a group, with or without its namespace. */
const APPROVER_REF =
  /^(user|group):([a-z0-9][a-z0-9._-]{0,62}\/)?[a-z0-9][a-z0-9._-]{0,62}$/i;

/** A rule's text field that must be one of `allowed`. */
function oneOfEach(
  where: string,
  values: string[] | undefined,
  allowed: readonly string[],
): string[] | undefined {
  if (values === undefined) return undefined;
  for (const value of values) {
    if (!allowed.includes(value)) {
      throw new Error(
        `${where} must each be one of ${allowed.join(', ')}; got "${value}"`,
      );
    }
  }
  return values;
}

/** The approvers of a rule as the catalog keeps refs: lower-cased, namespace filled in. */
function approverRef(ref: string): string {
  const [kind, rest] = [
    ref.slice(0, ref.indexOf(':')),
    ref.slice(ref.indexOf(':') + 1),
  ];
  const full = rest.includes('/') ? rest : `default/${rest}`;
  return `${kind}:${full}`.toLowerCase();
}

function readSelector(rule: Config, where: string): ApprovalRuleSelector {
  const select = rule.getOptionalConfig('select');
  if (!select) return {};
  const at = `${where}.select`;
  const known = [
    'actions',
    'intents',
    'rungAtLeast',
    'nodeLabels',
    'roles',
    'planSizeAtLeast',
  ];
  for (const key of select.keys()) {
    if (!known.includes(key)) {
      throw new Error(
        `${at}.${key} is not a selector; selectors are ${known.join(', ')}`,
      );
    }
  }
  const actions = oneOfEach(
    `${at}.actions`,
    select.getOptionalStringArray('actions'),
    APPROVAL_ACTIONS,
  );
  const intents = oneOfEach(
    `${at}.intents`,
    select.getOptionalStringArray('intents'),
    APPROVAL_INTENTS,
  );
  const rung = select.getOptionalString('rungAtLeast');
  if (
    rung !== undefined &&
    !(PREFLIGHT_CEREMONY_LEVELS as readonly string[]).includes(rung)
  ) {
    throw new Error(
      `${at}.rungAtLeast must be one of ${PREFLIGHT_CEREMONY_LEVELS.join(
        ', ',
      )}; got "${rung}"`,
    );
  }
  // Read whole: a label key (`rackside.dev/storage`) is no config key.
  const rawLabels = select.getOptional('nodeLabels');
  if (
    rawLabels !== undefined &&
    (typeof rawLabels !== 'object' ||
      rawLabels === null ||
      Array.isArray(rawLabels) ||
      Object.values(rawLabels).some(v => typeof v !== 'string'))
  ) {
    throw new Error(
      `${at}.nodeLabels must map label names to text values, e.g. { rackside.dev/storage: "true" }`,
    );
  }
  const nodeLabels = rawLabels as Record<string, string> | undefined;
  const roles = oneOfEach(
    `${at}.roles`,
    select.getOptionalStringArray('roles'),
    ROLES,
  ) as ApprovalRuleSelector['roles'];
  const size = select.getOptionalNumber('planSizeAtLeast');
  if (size !== undefined && !(Number.isInteger(size) && size >= 1)) {
    throw new Error(
      `${at}.planSizeAtLeast must be a whole number of at least 1; got ${size}`,
    );
  }
  return {
    ...(actions ? { actions } : {}),
    ...(intents ? { intents } : {}),
    ...(rung ? { rungAtLeast: rung as PreflightCeremonyLevel } : {}),
    ...(nodeLabels ? { nodeLabels } : {}),
    ...(roles ? { roles } : {}),
    ...(size !== undefined ? { planSizeAtLeast: size } : {}),
  };
}

/**
 * Reads `servers.approvals.rules` (none: an empty list, nothing is held). Throws,
 * naming the rule (by its name, or its place when it has none) and the field, for a
 * rule that cannot be read.
 */
export function readApprovalRules(config: Config): ApprovalRule[] {
  const rules = config.getOptionalConfigArray(KEY) ?? [];
  const seen = new Set<string>();
  return rules.map((rule, index) => {
    const rawName = rule.getOptionalString('name');
    const where = `${KEY}[${index}]${rawName ? ` (${rawName})` : ''}`;
    if (!rawName || !RULE_NAME.test(rawName)) {
      throw new Error(
        `${where}.name must be lowercase letters, digits and dashes (at most 63); got ${JSON.stringify(
          rawName ?? null,
        )}`,
      );
    }
    if (seen.has(rawName)) {
      throw new Error(
        `${where}.name is used by another rule: names are unique`,
      );
    }
    seen.add(rawName);
    const approvers = rule.getOptionalStringArray('approvers') ?? [];
    if (approvers.length === 0 || approvers.length > MAX_APPROVERS) {
      throw new Error(
        `${where}.approvers must name 1 to ${MAX_APPROVERS} users or groups; got ${approvers.length}`,
      );
    }
    for (const ref of approvers) {
      if (!APPROVER_REF.test(ref)) {
        throw new Error(
          `${where}.approvers: "${ref}" is not a catalog ref of a user or group (user:default/alice, group:default/platform-oncall)`,
        );
      }
    }
    const minutes =
      rule.getOptionalNumber('expiresAfterMinutes') ??
      DEFAULT_APPROVAL_EXPIRES_AFTER_MINUTES;
    if (
      !(
        Number.isInteger(minutes) &&
        minutes >= 1 &&
        minutes <= APPROVAL_MAX_EXPIRES_AFTER_MINUTES
      )
    ) {
      throw new Error(
        `${where}.expiresAfterMinutes must be a whole number from 1 to ${APPROVAL_MAX_EXPIRES_AFTER_MINUTES}; got ${minutes}`,
      );
    }
    return {
      name: rawName,
      select: readSelector(rule, where),
      approvers: [...new Set(approvers.map(approverRef))],
      expiresAfterMinutes: minutes,
    };
  });
}
