/*
 * A plan step's healthy return (docs/alerts.md, "A return that proves health"): a step
 * whose maintenance says it is done (Complete with its verb, or Drained) stays Running
 * until servers-common's healthyReturnVerdict says its node is healthy, and is Failed,
 * naming the alerts, once it is past the timeout. The verdict is computed from the
 * maintenance's own record (when the node came back), the Node cache (Ready since when)
 * and a fresh read of Alertmanager, at the moment the plan would mark the step Done.
 */
import {
  HEALTHY_RETURN_DEFAULTS,
  healthyReturnVerdict,
  type AlertSnapshot,
  type HealthyReturnVerdict,
  type MaintenancePlan,
  type NodeMaintenance,
  type PlanNode,
} from '@rackside/plugin-servers-common';
import { nodeAlertsFor } from '../runtime/alertReads';
import { readySinceOf } from '../runtime/nodeReadiness';
import { iso } from './steps';
import type { PlanView } from './types';

/**
 * When the step's node came back, as its maintenance records it: Complete's completedAt,
 * or the time it entered Drained (a drain step never leaves its node).
 */
export function returnedAtOf(nm: NodeMaintenance): number | undefined {
  if (nm.status?.phase === 'Complete' && nm.status.completedAt) {
    return Date.parse(nm.status.completedAt);
  }
  const entered = [...(nm.status?.history ?? [])]
    .reverse()
    .find(h => h.phase === nm.status?.phase);
  return entered ? Date.parse(entered.at) : undefined;
}

/** Whether this step just ended Done by its maintenance and so needs the check. */
export function needsReturnCheck(before: PlanNode, synced: PlanNode): boolean {
  return before.phase !== 'Done' && synced.phase === 'Done';
}

/** The verdict for a node whose maintenance says it is back at `returnedAt`. */
export function returnVerdictFor(
  spec: { healthyReturn?: MaintenancePlan['spec']['healthyReturn'] },
  view: Pick<PlanView, 'node' | 'alerting' | 'hardware'>,
  nodeName: string,
  returnedAt: number,
  alerts: AlertSnapshot | undefined,
  now: number,
): HealthyReturnVerdict {
  const node = view.node(nodeName);
  const settings = spec.healthyReturn ?? HEALTHY_RETURN_DEFAULTS;
  const alerting = view.alerting;
  const firing = nodeAlertsFor(alerting, alerts, {
    name: nodeName,
    labels: node?.metadata?.labels ?? {},
  });
  return healthyReturnVerdict({
    returnedAt,
    readySince: readySinceOf(node),
    now,
    healthyForSeconds: settings.healthyForSeconds,
    timeoutSeconds: settings.timeoutSeconds,
    graceMs: alerting?.returnGraceMs ?? 0,
    alerts: firing,
    hardware: view.hardware(nodeName),
  });
}

/**
 * The step after its healthy-return check: Done (healthy), Running (waiting, with why and
 * when to look again) or Failed (past the timeout, the alerts named).
 */
export function checkReturn(
  plan: MaintenancePlan,
  synced: PlanNode,
  view: PlanView,
  alerts: AlertSnapshot | undefined,
  now: number,
): { step: PlanNode; recheckAt?: number; returning: boolean } {
  const nm = synced.maintenance
    ? view.maintenance(synced.maintenance)
    : undefined;
  const returnedAt = (nm && returnedAtOf(nm)) ?? now;
  const verdict = returnVerdictFor(
    plan.spec,
    view,
    synced.name,
    Number.isFinite(returnedAt) ? returnedAt : now,
    alerts,
    now,
  );
  switch (verdict.kind) {
    case 'healthy':
      return {
        step: {
          ...synced,
          endedAt: iso(now),
          message: `${synced.message}; ${verdict.message}`,
        },
        returning: false,
      };
    case 'failed':
      return {
        step: {
          ...synced,
          phase: 'Failed',
          endedAt: iso(now),
          message: verdict.message,
        },
        returning: false,
      };
    default: {
      const { endedAt: _notYet, ...running } = synced;
      return {
        step: { ...running, phase: 'Running', message: verdict.message },
        recheckAt: verdict.recheckAt,
        returning: true,
      };
    }
  }
}
