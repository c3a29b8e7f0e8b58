/*
 * The Returning row of the NodeMaintenance table (table.ts): schedulable again (or, abandoned,
 * as it was), Ready, and after a power-on only once the node is back.
 */
import {
  healthyReturnVerdict,
  isNodeReady,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import { nodeAlertsFor } from '../runtime/alertReads';
import { readySinceOf } from '../runtime/nodeReadiness';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import { isoOf } from '../runtime/lifecycle/table';
import {
  backAfterPowerOn,
  notReadySeen,
  observedAfterPowerOn,
} from './powerRows';
import { fitMaintenanceMessage } from './statusLimits';
import type { Decision, MachinePorts, Row } from './types';

/**
 * Returning: make the node schedulable again (or, abandoned, as it was before), then wait
 * for it to be Ready (the node watch wakes us).
 */
export const returning: Row = async (nm, ports) => {
  const { view, nodes } = ports;
  const abandoned = nm.status?.abandoned === true;
  const restore = abandoned ? nm.status?.wasUnschedulable : false;
  const node = view.node(nm.spec.nodeName);
  const machine = node && poweredOnMachine(nm, ports);
  if (machine) return machine;
  if (
    restore !== undefined &&
    node &&
    (node.spec?.unschedulable === true) !== restore
  ) {
    await nodes.setUnschedulable(nm.spec.nodeName, restore);
  }
  if (!node) {
    return {
      kind: 'transition',
      to: 'Complete',
      message: `${nm.spec.nodeName} no longer exists; nothing to return`,
      status: { completedAt: isoOf(ports) },
    };
  }
  // An abandon held while the machine was off still waits for the machine it powered on.
  const waitForReady = !abandoned || !!nm.status?.powerOnSentAt;
  if (waitForReady && !isNodeReady(node)) {
    return {
      kind: 'wait',
      message: `waiting for ${nm.spec.nodeName} to be Ready`,
    };
  }
  if (!abandoned && nm.spec.healthyReturn) {
    const held = await healthyReturnHeld(nm, ports);
    if (held) return held;
  }
  return {
    kind: 'transition',
    to: 'Complete',
    message: abandoned
      ? `Abandoned; ${nm.spec.nodeName} left ${
          restore ? 'unschedulable as it was before' : 'schedulable'
        }`
      : `${nm.spec.nodeName} is schedulable and Ready${
          nm.spec.healthyReturn ? ', and its return healthy' : ''
        }`,
    status: { completedAt: isoOf(ports) },
  };
};

/**
 * The healthy return a maintenance asked for (spec.healthyReturn, opt-in): it stays
 * Returning until servers-common's healthyReturnVerdict says the node is healthy (Ready
 * for healthyForSeconds since it came back, and with Alertmanager none of its alerts
 * firing, seen through Rackside's own silence; its BMC not reporting Critical); past
 * the timeout it is Failed, naming the alerts or the parts. Undefined: healthy, go on to Complete.
 */
async function healthyReturnHeld(
  nm: NodeMaintenance,
  ports: MachinePorts,
): Promise<Decision | undefined> {
  const settings = nm.spec.healthyReturn!;
  const now = ports.now();
  const returnedAt = Date.parse(nm.status?.returnedAt ?? '');
  const alerting = ports.returnAlerts;
  const snapshot = alerting ? await alerting.snapshot() : undefined;
  const node = ports.view.node(nm.spec.nodeName);
  const verdict = healthyReturnVerdict({
    returnedAt: Number.isFinite(returnedAt) ? returnedAt : now,
    readySince: readySinceOf(node),
    now,
    healthyForSeconds: settings.healthyForSeconds,
    timeoutSeconds: settings.timeoutSeconds,
    graceMs: alerting?.returnGraceMs ?? 0,
    alerts: nodeAlertsFor(alerting, snapshot, {
      name: nm.spec.nodeName,
      labels: node?.metadata?.labels ?? {},
    }),
    hardware: ports.view.hardware?.(nm.spec.nodeName),
  });
  if (verdict.kind === 'healthy') return undefined;
  if (verdict.kind === 'failed') {
    return {
      kind: 'transition',
      to: 'Failed',
      message: `${nm.spec.nodeName} is back in service but ${verdict.message}`,
      event: {
        type: 'Warning',
        reason: MaintenanceReason.HealthyReturnFailed,
      },
    };
  }
  // Say why once (the words are stable, so this is written only when they change),
  // compared as stored: cut to the schema's limit, or an over-long one is always "news".
  if (nm.status?.message !== fitMaintenanceMessage(verdict.message)) {
    return { kind: 'record', message: verdict.message, status: {} };
  }
  // Alerts have no watch: while held by them, read them again every pollMs.
  const due = Math.max(0, verdict.recheckAt - now);
  return {
    kind: 'wait',
    message: verdict.message,
    requeueAfterMs: alerting ? Math.min(due, alerting.pollMs) : due,
  };
}

/**
 * Returning after a power-on: the machine is back only when the node says so (a new
 * boot ID, or Ready again after it was seen NotReady), not because it still looks Ready
 * while a shutdown may be finishing. Until then the node stays cordoned; past the
 * deadline (counted from the power-on) the maintenance fails with what was observed.
 */
export function poweredOnMachine(
  nm: NodeMaintenance,
  ports: MachinePorts,
): Decision | undefined {
  if (!nm.status?.powerOnSentAt) return undefined;
  const node = ports.view.node(nm.spec.nodeName);
  if (backAfterPowerOn(nm, node)) return undefined;
  const seen = notReadySeen(nm, ports);
  if (seen) return seen;
  const seconds = ports.power.deadlines.rebootSeconds;
  const sent = Date.parse(nm.status.powerOnSentAt);
  const left = Number.isFinite(sent)
    ? sent + seconds * 1000 - ports.now()
    : seconds * 1000;
  if (left <= 0) {
    return {
      kind: 'transition',
      to: 'Failed',
      message: `${
        nm.spec.nodeName
      } did not come back within ${seconds}s of the power-on: ${observedAfterPowerOn(
        nm,
        node,
      )}. The node is left cordoned.`,
      event: { type: 'Warning', reason: MaintenanceReason.PowerOnTimedOut },
    };
  }
  return {
    kind: 'wait',
    message: `waiting for ${nm.spec.nodeName} to come back after the power-on (a new boot ID, or Ready again after NotReady)`,
    requeueAfterMs: left,
  };
}
