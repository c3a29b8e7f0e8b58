/*
 * The steps of a plan as their NodeMaintenances say: names, ownership, adoption, counts
 * and the estimate.
 */
import {
  completedOutcome,
  isTerminalPhase,
  type MaintenancePlan,
  type MaintenancePlanStatus,
  type NodeMaintenance,
  type PlanCounts,
  type PlanNode,
  quorumNumbersText,
  TERMINAL_PLAN_STEP_PHASES,
} from '@rackside/plugin-servers-common';
import { createHash } from 'node:crypto';
import type { PlanView } from './types';
import {
  bodyMismatch,
  doneText,
  skippedAtTarget,
  withStepVersions,
  withUpgradeSummary,
} from './upgradeSteps';

/** The condition that records a stop that counts cannot recompute (a gate, the window). */
export const STOPPING = 'Stopping';

export const iso = (ms: number) => new Date(ms).toISOString();
export const isTerminalStep = (s: PlanNode) =>
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

export function refusalText(nm: NodeMaintenance): string {
  const r = nm.status?.refusal;
  if (!r) return nm.status?.message ?? 'refused';
  const numbers = r.members !== undefined ? ` (${quorumNumbersText(r)})` : '';
  return `${r.reason}${numbers}`;
}

/** What a running step is doing, in a few words (a blocked drain names the budget). */
export function runningText(nm: NodeMaintenance): string {
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
 * the plan's requester, the plan's upgrade or firmware body). Undefined when it is.
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
  const body = bodyMismatch(plan, nm);
  if (body) wrong.push(body);
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
  const running: PlanNode = withStepVersions(
    plan,
    {
      ...step,
      phase: 'Running',
      maintenance: name,
      startedAt: step.startedAt ?? nm.metadata.creationTimestamp ?? at,
    },
    nm,
  );
  const phase = nm.status?.phase;
  const ended = (p: PlanNode['phase'], message: string): PlanNode => ({
    ...running,
    phase: p,
    endedAt: nm.status?.completedAt ?? at,
    message,
  });
  if (phase === 'Refused') {
    // An upgrade refused because its node reached the target since the plan resolved it.
    const atTarget = skippedAtTarget(plan, running, nm, view.node(step.name));
    if (atTarget) return { ...atTarget, endedAt: nm.status?.completedAt ?? at };
    return ended('Refused', refusalText(nm));
  }
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
    return ended('Done', doneText(plan, running));
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
export function estimateOf(
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
export function withSteps(
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
  return withUpgradeSummary(plan, {
    ...status,
    nodes: steps,
    counts,
    ...(estimate ? { estimate } : {}),
    observedGeneration: plan.metadata.generation,
  });
}
