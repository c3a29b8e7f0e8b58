/*
 * The phases of a MaintenancePlan and of its steps (docs/plans.md), apart
 * from the resource's zod schemas (resources/maintenancePlan.ts uses them): the
 * Servers page asks whether a plan is finished, and a browser that imports this
 * builds no schema (bench README, session 14: the schemas' construction was
 * about 25 ms of the page chunk's evaluation).
 */

/** The phases of a plan (docs/plans.md). */
export const PLAN_PHASES = [
  'Pending',
  'AwaitingApproval',
  'Running',
  'Paused',
  'Waiting',
  'Complete',
  'Failed',
  'Cancelled',
] as const;
/** A plan phase. */
export type PlanPhase = (typeof PLAN_PHASES)[number];

/** Phases a plan never leaves. */
export const TERMINAL_PLAN_PHASES: readonly PlanPhase[] = [
  'Complete',
  'Failed',
  'Cancelled',
];

/** Whether a plan phase is terminal. */
export function isTerminalPlanPhase(phase: PlanPhase | undefined): boolean {
  return phase !== undefined && TERMINAL_PLAN_PHASES.includes(phase);
}

/** The phases of one node of a plan (one step). */
export const PLAN_STEP_PHASES = [
  'Pending',
  'Running',
  'Done',
  'Failed',
  'Refused',
  'Skipped',
] as const;
/** A step phase. */
export type PlanStepPhase = (typeof PLAN_STEP_PHASES)[number];

/** Step phases a step never leaves. */
export const TERMINAL_PLAN_STEP_PHASES: readonly PlanStepPhase[] = [
  'Done',
  'Failed',
  'Refused',
  'Skipped',
];
