/*
 * The MaintenancePlan lifecycle (docs/plans.md) as a table, run by the one table
 * runner (runtime/lifecycle/table.ts) from reconciler.ts:
 *
 *   New ──resolve nodes once (workers, then control plane, each by name)──> Pending
 *   Pending | AwaitingApproval | Running | Waiting | Paused ──advance──> the same five, or
 *        Complete (every step ended, failures within tolerance)
 *        Failed   (too many failed/refused steps, a gate timed out, the window closed)
 *        Cancelled (spec.cancel, once no step is open)
 *
 * advance is itself a table of rules, asked in order after the steps are read from their
 * NodeMaintenances; the first that answers decides:
 *
 *   stopping   a stop is on record (condition Stopping) or failures exceed the tolerance:
 *              nothing new starts; once no step is open the plan is Failed
 *   cancel     spec.cancel: nothing new starts; onCancel abandon sets abandon on each open
 *              step; once none is open the plan is Cancelled, the rest Skipped
 *   complete   every step ended: Complete
 *   approval   spec.approval awaits a second person (advanceApproval.ts): AwaitingApproval,
 *              no step starts (after a renewal replaced it: nothing new starts, running
 *              steps go on), looked at again at its expiry; rejected or expired: stop
 *   pause      paused (pause.at later than resume.at): Paused, running steps go on
 *   window     outside the window: Waiting (window), looked at again when it opens; past
 *              notAfter with steps left: stop
 *   capacity   maxParallel steps open, or a control-plane step with any step open: Running
 *              (waiting on the steps, saying what they wait on)
 *   authority  the plan's authorization lease has ended: Waiting (authorization) until
 *              someone renews it (a renewal that leaves nodes out Skips their steps)
 *   gates      previous nodes Ready, every PodDisruptionBudget healthy, no alert firing
 *              that matches gates.alerts (unknown holds unless whenUnknown: Proceed),
 *              the object gates:
 *              Waiting (gate) with why; past the gate's timeout: stop
 *   start      the next step: a NodeMaintenance `<plan>-<node>` owned by the plan
 *
 * Before the rules, a step whose maintenance says it is done gets its healthy-return
 * check (returnCheck.ts): it stays Running, and the plan waits on healthyReturn, until its
 * node has been Ready for healthyForSeconds with no alert firing past the return grace
 * (alerts that cannot be read hold it too); past the timeout it is Failed, naming the
 * alerts or saying their state was unknown.
 *
 * Each step is a NodeMaintenance, so the guard, the busy rule, the virtual-node refusal,
 * the capability rule and send-once apply to it unchanged. Steps are created before
 * status records them and their names are fixed, so a restart that finds a step's
 * NodeMaintenance adopts it instead of creating a second one.
 *
 * The rules are named beside this table: advanceEnds.ts (stopping, cancel, complete),
 * advanceApproval.ts (approval), advanceWaits.ts (pause, window, capacity, authority),
 * advanceStarts.ts (gates, start);
 * advanceHelpers.ts holds what they share, steps.ts reads the steps, types.ts the view
 * and the decision.
 */
import {
  cutList,
  type AlertSnapshot,
  type MaintenancePlan,
  type MaintenancePlanStatus,
  type PlanNode,
  type PlanPhase,
  resolvePlanNodes,
} from '@rackside/plugin-servers-common';
import { PlanReason } from '../runtime/lifecycle/reasons';
import { finished, NEW, phaseOf } from '../runtime/lifecycle/table';
import { approvalRule } from './advanceApproval';
import { cancelRule, completeRule, stoppingRule } from './advanceEnds';
import { skipExcluded } from './advanceHelpers';
import { gatesRule, startRule } from './advanceStarts';
import {
  authorityRule,
  capacityRule,
  pauseRule,
  windowRule,
} from './advanceWaits';
import { setCondition } from '../runtime/lifecycle/conditions';
import { checkReturn, needsReturnCheck } from './returnCheck';
import { resolvedUpgradeStep, withUpgradeSummary } from './upgradeSteps';
import { countsOf, iso, isTerminalStep, syncStep, withSteps } from './steps';
import {
  type Advance,
  type AdvanceRule,
  type PlanDecision,
  type PlanRow,
  type PlanView,
  untilThen,
} from './types';

/** The condition that says whether the alert gate could read Alertmanager. */
export const ALERTS_KNOWN = 'AlertsKnown';

export {
  MAX_WAIT_MS,
  type PlanDecision,
  type PlanRow,
  type PlanView,
} from './types';
export {
  adoptionMismatch,
  countsOf,
  ownedBy,
  STOPPING,
  stepName,
  syncStep,
} from './steps';
export { canonical, completionText } from './advanceHelpers';

/** The rules of `advance`, in the order they are asked; the first that answers decides. */
export const ADVANCE_RULES: ReadonlyArray<[string, AdvanceRule]> = [
  ['stopping', stoppingRule],
  ['cancel', cancelRule],
  ['complete', completeRule],
  ['approval', approvalRule],
  ['pause', pauseRule],
  ['window', windowRule],
  ['capacity', capacityRule],
  ['authority', authorityRule],
  ['gates', gatesRule],
  ['start', startRule],
];

/** Pending, AwaitingApproval, Running, Waiting, Paused: read the steps, then ask the rules in order. */
const advance: PlanRow = async (plan, view) => {
  const now = view.now();
  const before = plan.status?.nodes ?? [];
  const synced = before
    .map(s => syncStep(plan, s, view))
    .map(s => skipExcluded(plan, s, now));
  // Alertmanager is read once a pass, and only when the gate or a return needs it.
  const checking = synced.some((s, i) => needsReturnCheck(before[i], s));
  const alerts = await alertsFor(plan, view, checking);
  const returning: PlanNode[] = [];
  let recheckAt: number | undefined;
  const steps = synced.map((s, i) => {
    if (!needsReturnCheck(before[i], s)) return s;
    const checked = checkReturn(plan, s, view, alerts, now);
    if (checked.returning) returning.push(checked.step);
    recheckAt = earliest(recheckAt, checked.recheckAt);
    return checked.step;
  });
  // Alerts have no watch: a return held by them is read again every pollMs.
  if (returning.length > 0 && view.alerting) {
    recheckAt = earliest(recheckAt, now + view.alerting.pollMs);
  }
  const a: Advance = {
    plan,
    view,
    now,
    steps,
    status: withAlertsCondition(plan, withSteps(plan, steps, now), alerts, now),
    open: steps.filter(s => s.phase === 'Running'),
    alerts,
    returning,
    recheckAt,
  };
  for (const [, rule] of ADVANCE_RULES) {
    const decision = rule(a);
    if (decision) return withRecheck(withStepEvents(plan, a, decision), a);
  }
  return withRecheck({ kind: 'wait' }, a);
};

function earliest(
  a: number | undefined,
  b: number | undefined,
): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/**
 * What Alertmanager says now, when the plan needs it: its alert gate (before a step may
 * start) or a step's healthy return. No Alertmanager configured: the gate is unknown (and
 * holds unless the plan says whenUnknown: Proceed); a healthy return checks Ready only.
 */
async function alertsFor(
  plan: MaintenancePlan,
  view: PlanView,
  checkingReturn: boolean,
): Promise<AlertSnapshot | undefined> {
  const gated = plan.spec.gates?.alerts !== undefined;
  if (!view.alerting) {
    return gated
      ? {
          known: false,
          reason: 'no Alertmanager is configured (--alertmanager-url)',
        }
      : undefined;
  }
  if (!gated && !checkingReturn) return undefined;
  return view.alerting.snapshot();
}

/** The condition AlertsKnown on a plan with an alert gate: whether its last read worked. */
function withAlertsCondition(
  plan: MaintenancePlan,
  status: MaintenancePlanStatus,
  alerts: AlertSnapshot | undefined,
  now: number,
): MaintenancePlanStatus {
  if (!plan.spec.gates?.alerts || !alerts) return status;
  return {
    ...status,
    conditions: setCondition(
      status.conditions,
      alerts.known
        ? {
            type: ALERTS_KNOWN,
            status: 'True',
            reason: 'Read',
            message: 'the alert gate reads Alertmanager',
          }
        : {
            type: ALERTS_KNOWN,
            status: 'False',
            reason: 'Unknown',
            message: `alert state unknown: ${alerts.reason}; ${
              plan.spec.gates.alerts.whenUnknown === 'Proceed'
                ? 'the gate proceeds (whenUnknown: Proceed)'
                : 'the alert gate holds'
            }`,
          },
      iso(now),
    ),
  };
}

/** A decision that waits is looked at again by the time a return or a held gate needs it. */
function withRecheck(decision: PlanDecision, a: Advance): PlanDecision {
  if (a.recheckAt === undefined) return decision;
  if (decision.kind !== 'wait' && decision.kind !== 'write') return decision;
  const due = untilThen(a.recheckAt, a.now);
  return {
    ...decision,
    requeueAfterMs: Math.min(decision.requeueAfterMs ?? due, due),
  };
}

/** A write that also ends or adopts steps says so in its Event when it has none. */
function withStepEvents(
  plan: MaintenancePlan,
  a: Advance,
  decision: PlanDecision,
): PlanDecision {
  if (decision.kind !== 'write' || decision.event) return decision;
  const before = new Map(
    (plan.status?.nodes ?? []).map(s => [s.name, s.phase]),
  );
  const ended = a.steps.filter(
    s => isTerminalStep(s) && before.get(s.name) !== s.phase,
  );
  if (ended.length === 0) return decision;
  const bad = ended.some(s => s.phase === 'Failed' || s.phase === 'Refused');
  return {
    ...decision,
    event: {
      type: bad ? 'Warning' : 'Normal',
      reason: PlanReason.StepEnded,
      message: ended
        .map(s => `${s.name} ${s.phase}${s.message ? `: ${s.message}` : ''}`)
        .join('; '),
    },
  };
}

/** New: resolve the nodes once, in the order they go. */
const resolve: PlanRow = async (plan, view) => {
  const planned = resolvePlanNodes(
    plan.spec,
    view.nodes().map(n => ({
      name: n.metadata?.name ?? '',
      labels: n.metadata?.labels,
    })),
  );
  const at = iso(view.now());
  if (planned.length === 0) {
    return {
      kind: 'write',
      status: {
        phase: 'Failed',
        message: 'no node matches the selector',
        resolvedAt: at,
        nodes: [],
        counts: countsOf([]),
        completedAt: at,
        observedGeneration: plan.metadata.generation,
      },
      event: {
        type: 'Warning',
        reason: PlanReason.Failed,
        message: 'no node matches the selector',
      },
    };
  }
  const steps: PlanNode[] = planned.map(n => {
    if (n.missing) {
      return {
        name: n.name,
        controlPlane: false,
        phase: 'Skipped',
        endedAt: at,
        message: 'no such Node',
      };
    }
    const step: PlanNode = {
      name: n.name,
      controlPlane: n.controlPlane,
      phase: 'Pending',
    };
    // An upgrade plan leaves out, up front, the nodes that already run its target.
    return (
      resolvedUpgradeStep(
        plan,
        step,
        view.node(n.name),
        at,
        view.firmwareReading?.(n.name),
      ) ?? step
    );
  });
  const atTarget = steps.filter(
    s => s.phase === 'Skipped' && s.message?.startsWith('already at '),
  ).length;
  const message = `${steps.length} node(s): ${cutList(
    steps.map(s => s.name),
    10,
  )}${atTarget > 0 ? `; ${atTarget} already at the target, skipped` : ''}`;
  return {
    kind: 'write',
    status: withUpgradeSummary(plan, {
      phase: 'Pending',
      message,
      resolvedAt: at,
      nodes: steps,
      counts: countsOf(steps),
      observedGeneration: plan.metadata.generation,
    }),
    event: { type: 'Normal', reason: PlanReason.Resolved, message },
  };
};

/** The table: one row per plan phase. */
export const planTransitions: Record<PlanPhase | typeof NEW, PlanRow> = {
  [NEW]: resolve,
  Pending: advance,
  AwaitingApproval: advance,
  Running: advance,
  Waiting: advance,
  Paused: advance,
  Complete: finished,
  Failed: finished,
  Cancelled: finished,
};

export function planRowFor(plan: MaintenancePlan): PlanRow {
  return planTransitions[phaseOf(plan)];
}
