/*
 * Who stands behind each step of a MaintenancePlan, and at which rung (docs/plans.md,
 * docs/plans.md): the rules the backend applies when it writes a plan and the operator
 * applies when a step starts, so the two cannot drift apart.
 *
 * The operator cannot ask Backstage's permission framework as the requester, so the
 * backend's check is a lease (`spec.authorization`): no step starts after `until`, and a
 * renewal checks the permissions again. A plan made with kubectl carries no lease: its
 * writer's RBAC was checked by the apiserver when it was created, and it is vouched for
 * the default lease from then.
 */
import { ceremonyFor } from './ceremony';
import type {
  PlanAuthorization,
  PlanIntent,
} from '../resources/maintenancePlan';
import type { PreflightCeremonyLevel } from '../resources/nodeMaintenance';

/** The annotation the backend puts on a plan: when the acknowledged pre-flight was taken. */
export const PLAN_PREFLIGHT_TAKEN_AT = 'rackside.dev/preflight-taken-at';

/** How long a plan's authorization lasts unless app-config says otherwise. */
export const PLAN_AUTHORIZATION_DEFAULT_HOURS = 8;
/** The longest authorization app-config may set. */
export const PLAN_AUTHORIZATION_MAX_HOURS = 24;

/** What these rules read of a plan. */
export interface PlanAuthoritySpec {
  intent: PlanIntent;
  acknowledged?: Record<string, PreflightCeremonyLevel>;
  authorization?: PlanAuthorization;
}

/** The authorization a plan gets when it is written or renewed at `at` for `hours`. */
export function planAuthorizationAt(
  by: string,
  at: Date,
  hours: number,
  excluded?: readonly string[],
): PlanAuthorization {
  return {
    by,
    at: at.toISOString(),
    until: new Date(at.getTime() + hours * 3_600_000).toISOString(),
    ...(excluded && excluded.length > 0 ? { excluded: [...excluded] } : {}),
  };
}

/** Whether the plan may start a step now, until when, and in words. */
export interface PlanAuthorityVerdict {
  valid: boolean;
  /** When the lease ends (ended). */
  until: string;
  message: string;
}

/**
 * The plan's authority at `now`: its lease, or for a plan made with kubectl the default
 * lease from its creation.
 */
export function planAuthority(
  spec: PlanAuthoritySpec,
  createdAt: string | undefined,
  now: number,
): PlanAuthorityVerdict {
  const lease = spec.authorization;
  const until = lease
    ? lease.until
    : new Date(
        (createdAt ? Date.parse(createdAt) : now) +
          PLAN_AUTHORIZATION_DEFAULT_HOURS * 3_600_000,
      ).toISOString();
  const by = lease
    ? `${lease.by}'s permissions, checked at ${lease.at}`
    : `the permissions of its writer (made with kubectl, checked at ${
        createdAt ?? 'creation'
      })`;
  if (now < Date.parse(until)) {
    return {
      valid: true,
      until,
      message: `authorized by ${by} until ${until}`,
    };
  }
  return {
    valid: false,
    until,
    message: `the plan's authorization ended at ${until} (${by}): no step starts until someone who may ${spec.intent} its remaining servers renews it from the plan page`,
  };
}

/** Whether a renewal left this node out (its step is Skipped). */
export function excludedByAuthorization(
  spec: PlanAuthoritySpec,
  node: string,
): boolean {
  return spec.authorization?.excluded?.includes(node) ?? false;
}

/**
 * The rung a step was acknowledged at: what the plan records for its node, else the
 * intent's own rung (a plan made with kubectl never acknowledges the hazard tier).
 */
export function stepAcknowledgedRung(
  spec: PlanAuthoritySpec,
  node: string,
): PreflightCeremonyLevel {
  const acknowledged = spec.acknowledged?.[node];
  if (acknowledged) return acknowledged;
  // An allowed verdict never puts an action on the refused rung.
  const own = ceremonyFor(spec.intent, 'allow').level;
  return own === 'refused' ? 'typed-name' : own;
}
