/*
 * The building blocks of the `advance` rules: statuses with a phase or a wait, ending
 * once no step is open, recording a stop, and the words of a finished plan.
 */
import {
  type Condition,
  excludedByAuthorization,
  type MaintenancePlan,
  type MaintenancePlanStatus,
  type PlanNode,
  type PlanPhase,
} from '@rackside/plugin-servers-common';
import { setCondition } from '../runtime/lifecycle/conditions';
import { PlanReason } from '../runtime/lifecycle/reasons';
import { fitPlanStatus } from './statusLimits';
import { countsOf, iso, STOPPING, withSteps } from './steps';
import { doneVerb } from './upgradeSteps';
import type { Advance, PlanDecision } from './types';

/** A status with this phase, message and wait (none: cleared). */
export function phased(
  status: MaintenancePlanStatus,
  phase: PlanPhase,
  message: string,
  waiting?: MaintenancePlanStatus['waiting'],
): MaintenancePlanStatus {
  const { waiting: _old, ...rest } = status;
  return { ...rest, phase, message, ...(waiting ? { waiting } : {}) };
}

/** The same wait as before keeps its `since` (a gate timeout counts from there). */
export function waitOn(
  status: MaintenancePlanStatus,
  wait: Omit<NonNullable<MaintenancePlanStatus['waiting']>, 'since'>,
  now: number,
): NonNullable<MaintenancePlanStatus['waiting']> {
  const old = status.waiting;
  const same = old && old.on === wait.on && old.gate === wait.gate;
  return { ...wait, since: same ? old.since : iso(now) };
}

/** JSON with sorted keys: the apiserver answers with its own key order. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map(k => [k, v[k]]),
        )
      : v,
  );
}

/** Writes `status` if it differs from what is stored; otherwise waits. */
export function settle(
  a: Advance,
  wanted: MaintenancePlanStatus,
  requeueAfterMs?: number,
  event?: { type: 'Normal' | 'Warning'; reason: string; message: string },
): PlanDecision {
  // Compared as it is written: cut to the schema (a long message is never "news" again).
  const status = fitPlanStatus(wanted);
  if (canonical(status) === canonical(a.plan.status)) {
    return { kind: 'wait', requeueAfterMs };
  }
  return { kind: 'write', status, event, requeueAfterMs };
}

export function openText(open: readonly PlanNode[]): string {
  return open.map(s => `${s.name}: ${s.message ?? 'running'}`).join('; ');
}

/** The steps not started are Skipped with this message. */
export function skipRest(
  steps: PlanNode[],
  message: string,
  at: string,
): PlanNode[] {
  return steps.map(s =>
    s.phase === 'Pending'
      ? { ...s, phase: 'Skipped', endedAt: at, message }
      : s,
  );
}

/** Ends the plan in `phase` once no step is open; until then nothing new starts. */
export function endOnceClosed(
  a: Advance,
  phase: 'Failed' | 'Cancelled',
  why: string,
  reason: string,
): PlanDecision {
  if (a.open.length > 0) {
    return settle(
      a,
      phased(
        a.status,
        a.status.phase === 'Paused' ? 'Paused' : 'Running',
        `${why}; nothing new starts, waiting for ${
          a.open.length
        } open step(s): ${openText(a.open)}`,
        waitOn(
          a.status,
          {
            on: 'step',
            message: `waiting for ${a.open.length} open step(s) before ending`,
          },
          a.now,
        ),
      ),
    );
  }
  const at = iso(a.now);
  const steps = skipRest(
    a.steps,
    phase === 'Cancelled' ? 'the plan was cancelled' : 'the plan stopped',
    at,
  );
  const status = phased(withSteps(a.plan, steps, a.now), phase, why);
  return {
    kind: 'write',
    status: { ...status, completedAt: at },
    event: {
      type: phase === 'Failed' ? 'Warning' : 'Normal',
      reason,
      message: why,
    },
  };
}

export function stoppingCondition(
  plan: MaintenancePlan,
): Condition | undefined {
  return plan.status?.conditions?.find(
    c => c.type === STOPPING && c.status === 'True',
  );
}

/** Records a stop (gate timeout, window closed) so it holds until the plan ends. */
export function stop(
  a: Advance,
  reason: string,
  message: string,
): PlanDecision {
  return {
    kind: 'write',
    status: {
      ...a.status,
      conditions: setCondition(
        a.status.conditions,
        { type: STOPPING, status: 'True', reason, message },
        iso(a.now),
      ),
    },
    event: { type: 'Warning', reason: PlanReason.Stopping, message },
  };
}

export const failuresOf = (steps: readonly PlanNode[]) =>
  steps.filter(s => s.phase === 'Failed' || s.phase === 'Refused');

/**
 * What a finished plan did, in its own words: "2 of 3 rebooted, 1 returned to service
 * before the reboot". Skipped steps are grouped by why; only steps whose verb happened
 * count as rebooted or drained.
 */
export function completionText(
  plan: MaintenancePlan,
  steps: readonly PlanNode[],
): string {
  const c = countsOf(steps);
  const parts = [`${c.done} of ${c.total} ${doneVerb(plan)}`];
  if (c.failed) parts.push(`${c.failed} failed`);
  if (c.refused) parts.push(`${c.refused} refused`);
  const skipped = new Map<string, number>();
  for (const s of steps) {
    if (s.phase !== 'Skipped') continue;
    const why = s.message ?? 'skipped';
    skipped.set(why, (skipped.get(why) ?? 0) + 1);
  }
  for (const [why, n] of skipped) {
    parts.push(
      why.startsWith('returned to service')
        ? `${n} ${why}`
        : `${n} skipped (${why})`,
    );
  }
  return parts.join(', ');
}

/**
 * A step not started whose node a renewal of the authorization left out (the renewer
 * may not act on it) is Skipped: nobody vouches for it any more.
 */
export function skipExcluded(
  plan: MaintenancePlan,
  step: PlanNode,
  now: number,
): PlanNode {
  if (
    step.phase !== 'Pending' ||
    !excludedByAuthorization(plan.spec, step.name)
  )
    return step;
  return {
    ...step,
    phase: 'Skipped',
    endedAt: iso(now),
    message: `left out when ${
      plan.spec.authorization!.by
    } renewed the plan's authorization: they may not ${plan.spec.intent} it`,
  };
}
