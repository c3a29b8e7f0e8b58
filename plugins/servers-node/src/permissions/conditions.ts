import type {
  ConditionalPolicyDecision,
  PermissionCondition,
  PermissionCriteria,
  ResourcePermission,
} from '@backstage/plugin-permission-common';
import { createConditionExports } from '@backstage/plugin-permission-node';
import { serverPermissionRules } from './rules';
import { serverPermissionResourceRef } from './serverResource';

const exports = createConditionExports({
  resourceRef: serverPermissionResourceRef,
  rules: serverPermissionRules,
});

/**
 * Conditions for policies written in code, e.g.
 * `createServerConditionalDecision(permission, { not: serverConditions.isControlPlane() })`.
 */
export const serverConditions = exports.conditions;

/** Wraps server conditions into a conditional policy decision. */
export const createServerConditionalDecision: (
  permission: ResourcePermission<'server'>,
  conditions: PermissionCriteria<PermissionCondition<'server'>>,
) => ConditionalPolicyDecision = exports.createConditionalDecision;
