/*
 * The acknowledgement of a plan pre-flight, as creating a plan and renewing one check it
 * (docs/plans.md): the token against the plan pre-flight as it is now (400 for a token
 * that is not the caller's, 409 with the new pre-flight when any of it changed or it is
 * too old), no blocker (409), and every step at the hazard rung typed by name (400). One
 * function, so a renewal is held to exactly what a creation is.
 */
import { InputError } from '@backstage/errors';
import {
  HAZARD_TITLE,
  MAX_PLAN_ACKNOWLEDGEMENTS,
  type PlanAcknowledgement,
} from '@rackside/plugin-servers-common';
import { PreflightConflictError } from '../preflight/preflight';
import {
  acknowledgedRungs,
  missingHazardNames,
  planDigest,
  signPlanPreflight,
  type PlanPreflightImpact,
} from './planPreflight';
import type { PlanCommandContext } from './PlansService';

/**
 * Checks that `token` acknowledges `current` (the plan pre-flight computed now) for
 * `actor`, that nothing blocks it and that each hazard step's name is in `typedNames`.
 * Throws the error of the first that fails; returns when the acknowledged one was taken.
 */
export function verifyPlanAcknowledgement(
  ctx: Pick<PlanCommandContext, 'preflightTokens'>,
  actor: string,
  current: PlanPreflightImpact,
  token: string,
  typedNames: readonly string[],
): { takenAt: string } {
  const { takenAt } = ctx.preflightTokens.verifyDigest(
    token,
    planDigest(current),
    actor,
    new Date(),
    () => signPlanPreflight(ctx.preflightTokens, current, actor),
  );
  if (!current.canProceed) {
    throw new PreflightConflictError(
      current.blockers.join(' '),
      signPlanPreflight(ctx.preflightTokens, current, actor),
    );
  }
  // Ceremony per step: a step at the hazard rung needs what a single hazard
  // request needs, its node's name typed (and the reason, typed by the caller).
  const untyped = missingHazardNames(current, typedNames);
  if (untyped.length > 0) {
    throw new InputError(
      `ceremony not met: ${untyped.join(', ')} ${
        untyped.length === 1 ? 'consumes' : 'each consume'
      } the last of the quorum margin (${HAZARD_TITLE.toLowerCase()}): type each name in typedNames, and type the reason yourself.`,
    );
  }
  return { takenAt };
}

/** The history entry of an acknowledgement of `current` by `actor`. */
export function acknowledgementOf(
  actor: string,
  on: PlanAcknowledgement['on'],
  current: PlanPreflightImpact,
  takenAt: string,
): PlanAcknowledgement {
  return {
    by: actor,
    at: new Date().toISOString(),
    on,
    preflightTakenAt: takenAt,
    rungs: acknowledgedRungs(current),
  };
}

/**
 * The history with `entry` added: the creation's first entry and the latest ones, at most
 * MAX_PLAN_ACKNOWLEDGEMENTS in all.
 */
export function withAcknowledgement(
  history: readonly PlanAcknowledgement[] | undefined,
  entry: PlanAcknowledgement,
): PlanAcknowledgement[] {
  const all = [...(history ?? []), entry];
  if (all.length <= MAX_PLAN_ACKNOWLEDGEMENTS) return all;
  return [all[0], ...all.slice(all.length - MAX_PLAN_ACKNOWLEDGEMENTS + 1)];
}
