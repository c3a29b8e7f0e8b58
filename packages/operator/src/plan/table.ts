/*
 * The MaintenancePlan lifecycle (docs/plans.md) as a table, run by the one table
 * runner (lifecycle/table.ts) from PlanReconciler.ts:
 *
 *   New ──resolve nodes once (workers, then control plane, each by name)──> Pending
 *   Pending | Running | Waiting | Paused ──advance──> the same four, or
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
 *   pause      paused (pause.at later than resume.at): Paused, running steps go on
 *   window     outside the window: Waiting (window), looked at again when it opens; past
 *              notAfter with steps left: stop
 *   capacity   maxParallel steps open, or a control-plane step with any step open: Running
 *              (waiting on the steps, saying what they wait on)
 *   authority  the plan's authorization lease has ended: Waiting (authorization) until
 *              someone renews it (a renewal that leaves nodes out Skips their steps)
 *   gates      previous nodes Ready, every PodDisruptionBudget healthy, the object gates:
 *              Waiting (gate) with why; past the gate's timeout: stop
 *   start      the next step: a NodeMaintenance `<plan>-<node>` owned by the plan
 *
 * Each step is a NodeMaintenance, so the guard, the busy rule, the virtual-node refusal,
 * the capability rule and send-once apply to it unchanged. Steps are created before
 * status records them and their names are fixed, so a restart that finds a step's
 * NodeMaintenance adopts it instead of creating a second one.
 */
import {
  completedOutcome,
  cutList,
  excludedByAuthorization,
  isNodeReady,
  isPlanPaused,
  isTerminalPhase,
  planAuthority,
  planWindowVerdict,
  quorumNumbersText,
  resolvePlanNodes,
  TERMINAL_PLAN_STEP_PHASES,
  type Condition,
  type MaintenancePlan,
  type MaintenancePlanStatus,
  type NodeMaintenance,
  type ObjectGate,
  type PlanCounts,
  type PlanNode,
  type PlanPhase,
} from '@rackside/plugin-servers-common';
import { createHash } from 'node:crypto';
import { setCondition } from '../runtime/lifecycle/conditions';
import { PlanReason } from '../runtime/lifecycle/reasons';
import {
  finished,
  NEW,
  phaseOf,
  type Clock,
  type Done,
  type Wait,
} from '../runtime/lifecycle/table';
import type { NodeView } from '../maintenance/types';
import { fitPlanStatus } from './statusLimits';

/** What the rows read: watch caches and the clock. */
export interface PlanView extends Clock {
  node(name: string): NodeView | undefined;
  nodes(): NodeView[];
  /** A NodeMaintenance by name (the reconciler's own writes included). */
  maintenance(name: string): NodeMaintenance | undefined;
  /** The PodDisruptionBudgets of the cluster that are not healthy, as namespace/name. */
  unhealthyBudgets(): string[];
  /**
   * Whether an object gate holds now, and if not why; `refused`: it cannot be checked as
   * written (a kind not allowed, no namespace, too many objects), so the plan stops.
   */
  objectGate(gate: ObjectGate): {
    holds: boolean;
    message: string;
    refused?: boolean;
  };
}

/** What a row answers. */
export type PlanDecision =
  /** Write this status (phase and all); `event` is emitted after it is written. */
  | {
      kind: 'write';
      status: MaintenancePlanStatus;
      event?: { type: 'Normal' | 'Warning'; reason: string; message: string };
      requeueAfterMs?: number;
    }
  /** Create this step's NodeMaintenance, then write status with the step Running. */
  | {
      kind: 'start';
      step: PlanNode;
      maintenance: string;
      status: MaintenancePlanStatus;
    }
  /** Ask these open steps to abandon (onCancel abandon), then look again. */
  | { kind: 'abandon'; maintenances: string[]; by: string; reason: string }
  | Wait
  | Done;

export type PlanRow = (
  plan: MaintenancePlan,
  view: PlanView,
) => Promise<PlanDecision>;

/**
 * The longest time-based wait: a window weeks away is looked at again hourly (from the
 * caches, no apiserver request), and a timer never overflows (setTimeout holds 24.8 days).
 */
export const MAX_WAIT_MS = 60 * 60_000;

/** How long to wait until `at`: at least 0, at most {@link MAX_WAIT_MS}. */
function untilThen(at: number, now: number): number {
  return Math.min(MAX_WAIT_MS, Math.max(0, at - now));
}

/** The condition that records a stop that counts cannot recompute (a gate, the window). */
export const STOPPING = 'Stopping';

const iso = (ms: number) => new Date(ms).toISOString();
const isTerminalStep = (s: PlanNode) =>
  TERMINAL_PLAN_STEP_PHASES.includes(s.phase);

/** The step name of a node: `<plan>-<node>`, shortened with a hash past 253 characters. */
export function stepName(plan: string, node: string): string {
  const name = `${plan}-${node}`;
  if (name.length <= 253) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return `${name.slice(0, 242).replace(/[-.]+$/, '')}-${hash}`;
}

/** Whether a NodeMaintenance is a step of this plan (its controller owner). */
export function ownedBy(nm: NodeMaintenance, plan: MaintenancePlan): boolean {
  return (nm.metadata.ownerReferences ?? []).some(
    ref =>
      ref.controller === true &&
      ref.kind === 'MaintenancePlan' &&
      ref.uid === plan.metadata.uid,
  );
}

export function countsOf(steps: readonly PlanNode[]): PlanCounts {
  const n = (phase: PlanNode['phase']) =>
    steps.filter(s => s.phase === phase).length;
  return {
    total: steps.length,
    pending: n('Pending'),
    running: n('Running'),
    done: n('Done'),
    failed: n('Failed'),
    refused: n('Refused'),
    skipped: n('Skipped'),
  };
}

function refusalText(nm: NodeMaintenance): string {
  const r = nm.status?.refusal;
  if (!r) return nm.status?.message ?? 'refused';
  const numbers = r.members !== undefined ? ` (${quorumNumbersText(r)})` : '';
  return `${r.reason}${numbers}`;
}

/** What a running step is doing, in a few words (a blocked drain names the budget). */
function runningText(nm: NodeMaintenance): string {
  const blocked = nm.status?.drain?.blockedBy ?? [];
  if (nm.status?.phase === 'Draining' && blocked.length > 0) {
    const b = blocked[0];
    const more = blocked.length > 1 ? ` and ${blocked.length - 1} more` : '';
    return `drain blocked: eviction of ${b.pod} refused by PodDisruptionBudget ${b.pdb}${more}`;
  }
  return nm.status?.phase ?? 'Requested';
}

/**
 * Why a NodeMaintenance that names the plan as its controller is not the plan's step:
 * anyone who may create NodeMaintenances can write that owner reference, so a step is
 * adopted only if it is what the plan would have created (its node, the plan's intent,
 * the plan's requester). Undefined when it is.
 */
export function adoptionMismatch(
  plan: MaintenancePlan,
  step: PlanNode,
  nm: NodeMaintenance,
): string | undefined {
  const wrong: string[] = [];
  if (nm.spec.nodeName !== step.name) {
    wrong.push(`is for node ${nm.spec.nodeName}, not ${step.name}`);
  }
  if (nm.spec.intent !== plan.spec.intent) {
    wrong.push(`has intent ${nm.spec.intent}, not ${plan.spec.intent}`);
  }
  if ((nm.spec.requestedBy ?? '') !== (plan.spec.requestedBy ?? '')) {
    wrong.push(
      `was requested by ${nm.spec.requestedBy ?? 'nobody'}, not ${
        plan.spec.requestedBy ?? 'nobody'
      }`,
    );
  }
  return wrong.length > 0 ? wrong.join(', ') : undefined;
}

/**
 * One step as its NodeMaintenance says it stands. A Pending step whose NodeMaintenance
 * exists (created, then the operator stopped before recording it) is adopted as Running.
 */
export function syncStep(
  plan: MaintenancePlan,
  step: PlanNode,
  view: PlanView,
): PlanNode {
  if (isTerminalStep(step)) return step;
  const name = step.maintenance ?? stepName(plan.metadata.name, step.name);
  const nm = view.maintenance(name);
  const at = iso(view.now());
  if (!nm) {
    if (step.phase === 'Running') {
      return {
        ...step,
        phase: 'Failed',
        endedAt: at,
        message: `its NodeMaintenance ${name} is gone`,
      };
    }
    return step;
  }
  if (!ownedBy(nm, plan)) {
    return {
      ...step,
      phase: 'Failed',
      endedAt: at,
      message: `NodeMaintenance ${name} exists and is not this plan's`,
    };
  }
  const mismatch = adoptionMismatch(plan, step, nm);
  if (mismatch) {
    return {
      ...step,
      phase: 'Failed',
      endedAt: at,
      message: `NodeMaintenance ${name} names this plan as its owner but ${mismatch}: not adopted, nothing is done on ${step.name}`,
    };
  }
  const running: PlanNode = {
    ...step,
    phase: 'Running',
    maintenance: name,
    startedAt: step.startedAt ?? nm.metadata.creationTimestamp ?? at,
  };
  const phase = nm.status?.phase;
  const ended = (p: PlanNode['phase'], message: string): PlanNode => ({
    ...running,
    phase: p,
    endedAt: nm.status?.completedAt ?? at,
    message,
  });
  if (phase === 'Refused') return ended('Refused', refusalText(nm));
  if (phase === 'Failed') {
    return ended('Failed', nm.status?.message ?? 'the maintenance failed');
  }
  if (phase === 'Complete') {
    // Complete says the node is back, not that anything was done to it.
    const outcome = completedOutcome(nm);
    if (outcome.kind === 'abandoned') {
      return ended(
        'Skipped',
        `abandoned by ${nm.spec.abandon?.by ?? 'someone'}`,
      );
    }
    if (outcome.kind === 'without-verb') {
      return ended('Skipped', outcome.text);
    }
    return ended(
      'Done',
      nm.spec.intent === 'reboot'
        ? 'rebooted and returned'
        : 'drained, then returned to service',
    );
  }
  if (nm.spec.intent === 'drain' && phase === 'Drained') {
    return ended(
      'Done',
      'drained: the node stays cordoned until it is returned to service',
    );
  }
  if (phase && isTerminalPhase(phase)) return ended('Failed', phase);
  return { ...running, message: runningText(nm) };
}

/** The mean duration of the finished steps, and what is left at that pace. */
function estimateOf(
  plan: MaintenancePlan,
  steps: readonly PlanNode[],
  now: number,
): MaintenancePlanStatus['estimate'] {
  const durations = steps
    .filter(s => s.phase === 'Done' && s.startedAt && s.endedAt)
    .map(s => (Date.parse(s.endedAt!) - Date.parse(s.startedAt!)) / 1000)
    .filter(d => Number.isFinite(d) && d >= 0);
  if (durations.length === 0) return undefined;
  const step = durations.reduce((a, b) => a + b, 0) / durations.length;
  const open = steps.filter(
    s => s.phase === 'Pending' || s.phase === 'Running',
  );
  const workers = open.filter(s => !s.controlPlane).length;
  const controlPlane = open.length - workers;
  const rounds =
    Math.ceil(workers / Math.max(1, plan.spec.maxParallel)) + controlPlane;
  const remaining = Math.round(rounds * step);
  return {
    stepSeconds: Math.round(step),
    remainingSeconds: remaining,
    completesAt: iso(now + remaining * 1000),
  };
}

/** The status with these steps: counts, and the estimate when a step has ended since. */
function withSteps(
  plan: MaintenancePlan,
  steps: PlanNode[],
  now: number,
): MaintenancePlanStatus {
  const status = plan.status ?? {};
  const counts = countsOf(steps);
  const ended = (c?: PlanCounts) =>
    c ? c.done + c.failed + c.refused + c.skipped : -1;
  const estimate =
    ended(counts) !== ended(status.counts) || !status.estimate
      ? estimateOf(plan, steps, now) ?? status.estimate
      : status.estimate;
  return {
    ...status,
    nodes: steps,
    counts,
    ...(estimate ? { estimate } : {}),
    observedGeneration: plan.metadata.generation,
  };
}

/** A status with this phase, message and wait (none: cleared). */
function phased(
  status: MaintenancePlanStatus,
  phase: PlanPhase,
  message: string,
  waiting?: MaintenancePlanStatus['waiting'],
): MaintenancePlanStatus {
  const { waiting: _old, ...rest } = status;
  return { ...rest, phase, message, ...(waiting ? { waiting } : {}) };
}

/** The same wait as before keeps its `since` (a gate timeout counts from there). */
function waitOn(
  status: MaintenancePlanStatus,
  wait: Omit<NonNullable<MaintenancePlanStatus['waiting']>, 'since'>,
  now: number,
): NonNullable<MaintenancePlanStatus['waiting']> {
  const old = status.waiting;
  const same = old && old.on === wait.on && old.gate === wait.gate;
  return { ...wait, since: same ? old.since : iso(now) };
}

/** Everything a rule of `advance` reads. */
interface Advance {
  plan: MaintenancePlan;
  view: PlanView;
  now: number;
  steps: PlanNode[];
  /** The status with the steps as their maintenances say. */
  status: MaintenancePlanStatus;
  open: PlanNode[];
}

type AdvanceRule = (a: Advance) => PlanDecision | undefined;

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
function settle(
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

function openText(open: readonly PlanNode[]): string {
  return open.map(s => `${s.name}: ${s.message ?? 'running'}`).join('; ');
}

/** The steps not started are Skipped with this message. */
function skipRest(steps: PlanNode[], message: string, at: string): PlanNode[] {
  return steps.map(s =>
    s.phase === 'Pending'
      ? { ...s, phase: 'Skipped', endedAt: at, message }
      : s,
  );
}

/** Ends the plan in `phase` once no step is open; until then nothing new starts. */
function endOnceClosed(
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

function stoppingCondition(plan: MaintenancePlan): Condition | undefined {
  return plan.status?.conditions?.find(
    c => c.type === STOPPING && c.status === 'True',
  );
}

/** Records a stop (gate timeout, window closed) so it holds until the plan ends. */
function stop(a: Advance, reason: string, message: string): PlanDecision {
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

const failuresOf = (steps: readonly PlanNode[]) =>
  steps.filter(s => s.phase === 'Failed' || s.phase === 'Refused');

/** The rules of `advance`, in the order they are asked. */
export const ADVANCE_RULES: ReadonlyArray<[string, AdvanceRule]> = [
  [
    'stopping',
    a => {
      const stopped = stoppingCondition(a.plan);
      if (stopped) {
        return endOnceClosed(a, 'Failed', stopped.message, PlanReason.Failed);
      }
      const failures = failuresOf(a.steps);
      const tolerate = a.plan.spec.failurePolicy?.tolerate ?? 0;
      if (failures.length <= tolerate) return undefined;
      const list = failures
        .map(s => `${s.name} ${s.phase.toLowerCase()}: ${s.message ?? ''}`)
        .join('; ');
      return endOnceClosed(
        a,
        'Failed',
        `${failures.length} step(s) failed or were refused (tolerated: ${tolerate}): ${list}`,
        PlanReason.Failed,
      );
    },
  ],
  [
    'cancel',
    a => {
      const cancel = a.plan.spec.cancel;
      if (!cancel) return undefined;
      if (a.plan.spec.onCancel === 'abandon') {
        const toAbandon = a.open
          .map(s => s.maintenance!)
          .filter(name => {
            const nm = a.view.maintenance(name);
            return (
              nm &&
              !nm.spec.abandon &&
              !isTerminalPhase(nm.status?.phase ?? 'Requested')
            );
          });
        if (toAbandon.length > 0) {
          return {
            kind: 'abandon',
            maintenances: toAbandon,
            by: cancel.by,
            reason: cancel.reason,
          };
        }
      }
      return endOnceClosed(
        a,
        'Cancelled',
        `cancelled by ${cancel.by}: ${cancel.reason}`,
        PlanReason.Cancelled,
      );
    },
  ],
  [
    'complete',
    a => {
      if (!a.steps.every(isTerminalStep)) return undefined;
      const message = completionText(a.plan, a.steps);
      const status = phased(a.status, 'Complete', message);
      return {
        kind: 'write',
        status: { ...status, completedAt: iso(a.now) },
        event: { type: 'Normal', reason: PlanReason.Complete, message },
      };
    },
  ],
  [
    'pause',
    a => {
      const pause = a.plan.spec.pause;
      if (!pause || !isPlanPaused(a.plan.spec)) return undefined;
      const message = `paused by ${pause.by}: ${pause.reason}`;
      return settle(
        a,
        phased(
          a.status,
          'Paused',
          a.open.length ? `${message}; running: ${openText(a.open)}` : message,
          waitOn(a.status, { on: 'pause', message }, a.now),
        ),
        undefined,
        a.plan.status?.phase === 'Paused'
          ? undefined
          : { type: 'Normal', reason: PlanReason.Paused, message },
      );
    },
  ],
  [
    'window',
    a => {
      const verdict = planWindowVerdict(a.plan.spec.window, a.now);
      if (verdict.open) return undefined;
      if (verdict.opensAt === undefined) {
        return stop(
          a,
          'WindowClosed',
          `${verdict.message}: ${
            countsOf(a.steps).pending
          } step(s) not started`,
        );
      }
      return settle(
        a,
        phased(
          a.status,
          a.open.length ? 'Running' : 'Waiting',
          a.open.length
            ? `${verdict.message}; running: ${openText(a.open)}`
            : verdict.message,
          waitOn(
            a.status,
            {
              on: 'window',
              message: verdict.message,
              until: iso(verdict.opensAt),
            },
            a.now,
          ),
        ),
        untilThen(verdict.opensAt, a.now),
      );
    },
  ],
  [
    'capacity',
    a => {
      const next = a.steps.find(s => s.phase === 'Pending');
      if (!next) {
        return settle(
          a,
          phased(
            a.status,
            'Running',
            `${a.open.length} step(s) running: ${openText(a.open)}`,
            waitOn(a.status, { on: 'step', message: openText(a.open) }, a.now),
          ),
        );
      }
      const limit = next.controlPlane ? 1 : a.plan.spec.maxParallel;
      if (a.open.length < limit) return undefined;
      const why = next.controlPlane
        ? `control-plane nodes go one at a time: ${
            next.name
          } waits for ${openText(a.open)}`
        : `${a.open.length} of ${limit} steps open: ${openText(a.open)}`;
      return settle(
        a,
        phased(
          a.status,
          'Running',
          why,
          waitOn(a.status, { on: 'step', message: why }, a.now),
        ),
      );
    },
  ],
  [
    'authority',
    a => {
      const authority = planAuthority(
        a.plan.spec,
        a.plan.metadata.creationTimestamp,
        a.now,
      );
      if (authority.valid) return undefined;
      const wait = waitOn(
        a.status,
        { on: 'authorization', message: authority.message },
        a.now,
      );
      const news = a.plan.status?.waiting?.on !== 'authorization';
      return settle(
        a,
        phased(
          a.status,
          a.open.length ? 'Running' : 'Waiting',
          a.open.length
            ? `${authority.message}; running: ${openText(a.open)}`
            : authority.message,
          wait,
        ),
        undefined,
        news
          ? {
              type: 'Warning',
              reason: PlanReason.AuthorizationExpired,
              message: authority.message,
            }
          : undefined,
      );
    },
  ],
  [
    'gates',
    a => {
      const failing = failingGate(a);
      if (!failing) return undefined;
      if (failing.refused) {
        return stop(
          a,
          'GateRefused',
          `gate ${failing.gate} refused: ${failing.message}`,
        );
      }
      const wait = waitOn(
        a.status,
        { on: 'gate', gate: failing.gate, message: failing.message },
        a.now,
      );
      const deadline =
        failing.timeoutSeconds !== undefined
          ? Date.parse(wait.since) + failing.timeoutSeconds * 1000
          : undefined;
      if (deadline !== undefined && a.now >= deadline) {
        return stop(
          a,
          'GateTimedOut',
          `gate ${failing.gate} did not hold within ${failing.timeoutSeconds}s: ${failing.message}`,
        );
      }
      return settle(
        a,
        phased(
          a.status,
          a.open.length ? 'Running' : 'Waiting',
          `waiting for gate ${failing.gate}: ${failing.message}`,
          deadline !== undefined ? { ...wait, until: iso(deadline) } : wait,
        ),
        deadline !== undefined ? untilThen(deadline, a.now) : undefined,
      );
    },
  ],
  [
    'start',
    a => {
      const next = a.steps.find(s => s.phase === 'Pending')!;
      const maintenance = stepName(a.plan.metadata.name, next.name);
      const at = iso(a.now);
      const step: PlanNode = {
        ...next,
        phase: 'Running',
        maintenance,
        startedAt: at,
        message: 'Requested',
      };
      const steps = a.steps.map(s => (s.name === next.name ? step : s));
      const status = phased(
        withSteps(a.plan, steps, a.now),
        'Running',
        `started ${next.name}`,
      );
      return {
        kind: 'start',
        step,
        maintenance,
        status: { ...status, startedAt: status.startedAt ?? at },
      };
    },
  ],
];

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
  const parts = [
    `${c.done} of ${c.total} ${
      plan.spec.intent === 'reboot' ? 'rebooted' : 'drained'
    }`,
  ];
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

/** The first gate that does not hold now, with its timeout. */
function failingGate(a: Advance):
  | {
      gate: string;
      message: string;
      timeoutSeconds?: number;
      refused?: boolean;
    }
  | undefined {
  const gates = a.plan.spec.gates;
  const builtInTimeout = gates?.timeoutSeconds;
  if (gates?.previousNodeReady ?? true) {
    const notReady = a.steps
      .filter(s => s.phase === 'Done')
      .filter(s => !isNodeReady(a.view.node(s.name)))
      .map(s => s.name);
    if (notReady.length > 0) {
      return {
        gate: 'previousNodeReady',
        message: `not Ready: ${notReady.join(', ')}`,
        timeoutSeconds: builtInTimeout,
      };
    }
  }
  if (gates?.podDisruptionBudgetsHealthy ?? true) {
    const unhealthy = a.view.unhealthyBudgets();
    if (unhealthy.length > 0) {
      return {
        gate: 'podDisruptionBudgetsHealthy',
        message: `PodDisruptionBudgets below their desired healthy pods: ${unhealthy.join(
          ', ',
        )}`,
        timeoutSeconds: builtInTimeout,
      };
    }
  }
  for (const gate of gates?.objects ?? []) {
    const verdict = a.view.objectGate(gate);
    if (!verdict.holds) {
      return {
        gate: gate.name,
        message: verdict.message,
        timeoutSeconds: gate.timeoutSeconds,
        refused: verdict.refused,
      };
    }
  }
  return undefined;
}

/**
 * A step not started whose node a renewal of the authorization left out (the renewer
 * may not act on it) is Skipped: nobody vouches for it any more.
 */
function skipExcluded(
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

/** Pending, Running, Waiting, Paused: read the steps, then ask the rules in order. */
const advance: PlanRow = async (plan, view) => {
  const now = view.now();
  const steps = (plan.status?.nodes ?? [])
    .map(s => syncStep(plan, s, view))
    .map(s => skipExcluded(plan, s, now));
  const a: Advance = {
    plan,
    view,
    now,
    steps,
    status: withSteps(plan, steps, now),
    open: steps.filter(s => s.phase === 'Running'),
  };
  for (const [, rule] of ADVANCE_RULES) {
    const decision = rule(a);
    if (decision) return withStepEvents(plan, a, decision);
  }
  return { kind: 'wait' };
};

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
  const steps: PlanNode[] = planned.map(n =>
    n.missing
      ? {
          name: n.name,
          controlPlane: false,
          phase: 'Skipped',
          endedAt: at,
          message: 'no such Node',
        }
      : { name: n.name, controlPlane: n.controlPlane, phase: 'Pending' },
  );
  const message = `${steps.length} node(s): ${cutList(
    steps.map(s => s.name),
    10,
  )}`;
  return {
    kind: 'write',
    status: {
      phase: 'Pending',
      message,
      resolvedAt: at,
      nodes: steps,
      counts: countsOf(steps),
      observedGeneration: plan.metadata.generation,
    },
    event: { type: 'Normal', reason: PlanReason.Resolved, message },
  };
};

/** The table: one row per plan phase. */
export const planTransitions: Record<PlanPhase | typeof NEW, PlanRow> = {
  [NEW]: resolve,
  Pending: advance,
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
