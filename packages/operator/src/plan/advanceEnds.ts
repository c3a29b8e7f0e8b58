/*
 * The `advance` rules that end a plan (table.ts, ADVANCE_RULES): stopping, cancel,
 * complete.
 */
import { isTerminalPhase } from '@rackside/plugin-servers-common';
import { PlanReason } from '../runtime/lifecycle/reasons';
import {
  completionText,
  endOnceClosed,
  failuresOf,
  phased,
  stoppingCondition,
} from './advanceHelpers';
import { iso, isTerminalStep } from './steps';
import type { AdvanceRule } from './types';

export const stoppingRule: AdvanceRule = a => {
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
};

export const cancelRule: AdvanceRule = a => {
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
};

export const completeRule: AdvanceRule = a => {
  if (!a.steps.every(isTerminalStep)) return undefined;
  const message = completionText(a.plan, a.steps);
  const status = phased(a.status, 'Complete', message);
  return {
    kind: 'write',
    status: { ...status, completedAt: iso(a.now) },
    event: { type: 'Normal', reason: PlanReason.Complete, message },
  };
};
