/*
 * What a renewal of a MaintenancePlan must acknowledge afresh (docs/plans.md, "Renewing
 * a plan"). A renewal puts the remaining steps on the renewer's authority, so it cannot
 * lean on the creator's ceremony: a remaining step at the hazard rung (now, or as the
 * creator acknowledged it), or one whose rung grew since, needs the renewer's own plan
 * pre-flight of the remaining steps and, at the hazard rung, each name typed, exactly as
 * creating the plan does. The backend applies it to a renewal; the plan page applies it
 * to the pre-flight it shows in the renew dialog.
 */
import {
  PREFLIGHT_CEREMONY_LEVELS,
  type PreflightCeremonyLevel,
} from '../resources/nodeMaintenance';
import type { PlanAcknowledgement } from '../resources/maintenancePlan';
import { stepAcknowledgedRung, type PlanAuthoritySpec } from './planAuthority';

/** One remaining step as a plan pre-flight shows it now. */
export interface RenewalStepNow {
  node: string;
  /** The rung the pre-flight puts it on now (refused: the guard would refuse it). */
  rung: PreflightCeremonyLevel | 'refused';
}

/** What a renewal must acknowledge. */
export interface RenewalAcknowledgement {
  /** A fresh plan pre-flight (its token) is needed. */
  needed: boolean;
  /** Why, one sentence per node that needs it. */
  reasons: string[];
  /** The nodes at the hazard rung now: each name typed by the renewer. */
  hazard: string[];
}

const rank = (rung: PreflightCeremonyLevel | 'refused') =>
  rung === 'refused'
    ? PREFLIGHT_CEREMONY_LEVELS.length
    : PREFLIGHT_CEREMONY_LEVELS.indexOf(rung);

/** What a renewal of a plan with `spec` must acknowledge, given its remaining steps now. */
export function renewalAcknowledgement(
  spec: PlanAuthoritySpec,
  remaining: readonly RenewalStepNow[],
): RenewalAcknowledgement {
  const reasons: string[] = [];
  for (const step of remaining) {
    const acknowledged = stepAcknowledgedRung(spec, step.node);
    if (step.rung === 'hazard') {
      reasons.push(`${step.node} is at the hazard rung now`);
    } else if (acknowledged === 'hazard') {
      reasons.push(
        `${step.node} was acknowledged at the hazard rung by someone else`,
      );
    } else if (rank(step.rung) > rank(acknowledged)) {
      reasons.push(
        `${step.node} is at the ${step.rung} rung now, above the ${acknowledged} rung it was acknowledged at`,
      );
    }
  }
  return {
    needed: reasons.length > 0,
    reasons,
    hazard: remaining.filter(s => s.rung === 'hazard').map(s => s.node),
  };
}

/**
 * The acknowledgement a step starts under: the latest on record that names its node (a
 * renewal's for the steps it covered, else the creation's); undefined for a plan made
 * with kubectl or before acknowledgements were recorded.
 */
export function stepAcknowledgement(
  spec: { acknowledgements?: readonly PlanAcknowledgement[] },
  node: string,
): PlanAcknowledgement | undefined {
  const all = spec.acknowledgements ?? [];
  for (let i = all.length - 1; i >= 0; i--) {
    if (all[i].rungs[node] !== undefined) return all[i];
  }
  return undefined;
}
