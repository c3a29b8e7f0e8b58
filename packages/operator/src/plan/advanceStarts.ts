/*
 * The `advance` rules that start the next step (table.ts, ADVANCE_RULES): the gates
 * hold, then start.
 */
import {
  alertGateVerdict,
  isNodeReady,
  type PlanNode,
} from '@rackside/plugin-servers-common';
import { phased, settle, stop, waitOn } from './advanceHelpers';
import { iso, stepName, withSteps } from './steps';
import { type Advance, type AdvanceRule, untilThen } from './types';

/** The first gate that does not hold now, with its timeout. */
export function failingGate(a: Advance):
  | {
      gate: string;
      message: string;
      timeoutSeconds?: number;
      refused?: boolean;
      /** Held by alerts: read again every pollMs (Alertmanager has no watch). */
      polled?: boolean;
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
  if (gates?.alerts && a.alerts) {
    // Holds on a firing alert, and on an unknown alert state unless whenUnknown: Proceed.
    const verdict = alertGateVerdict(gates.alerts, a.alerts);
    if (verdict.holds || 'refused' in verdict) {
      return {
        gate: 'alerts',
        message: verdict.message,
        timeoutSeconds: builtInTimeout,
        refused: 'refused' in verdict,
        polled: true,
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

export const gatesRule: AdvanceRule = a => {
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
  const poll =
    failing.polled && a.view.alerting ? a.view.alerting.pollMs : undefined;
  const due = deadline !== undefined ? untilThen(deadline, a.now) : undefined;
  return settle(
    a,
    phased(
      a.status,
      a.open.length ? 'Running' : 'Waiting',
      `waiting for gate ${failing.gate}: ${failing.message}`,
      deadline !== undefined ? { ...wait, until: iso(deadline) } : wait,
    ),
    poll !== undefined && due !== undefined ? Math.min(poll, due) : poll ?? due,
  );
};

export const startRule: AdvanceRule = a => {
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
};
