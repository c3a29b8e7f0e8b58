/*
 * The rows of the table (table.ts) that send power verbs: Drained for reboot and
 * shutdown, Rebooting, PoweredOff (readback and power-on), and what a send's answer leads
 * to. A verb is sent at most once per maintenance (docs/architecture.md, "The maintenance lifecycle"): a row first records
 * `status.power.<verb>.recordedAt` (a `record` decision with `send`), the reconciler sends
 * after that write, and the answer is written with the next phase. A recorded verb with
 * no answer (the operator stopped in between, or the channel's answer was lost) is settled
 * by observing the node, never by sending again.
 *
 * This file holds Drained (the send) and Rebooting; beside it powerSend.ts (recording,
 * sending, the answer), powerSettle.ts (an unanswered verb) and poweredOffRows.ts.
 */
import {
  acknowledgedRung,
  isNodeReady,
  nodeFactsFromNode,
  type NodeMaintenance,
  quorumMaintenances,
  takesNodeDown,
  whyAboveAcknowledged,
} from '@rackside/plugin-servers-common';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import { isoOf } from '../runtime/lifecycle/table';
import { whyAboveApproved } from './approvalRows';
import { checkNumbers, checkQuorum, refuse, rungOf } from './guardCheck';
import {
  bootIdOf,
  OFFER_NAME,
  recordAndSend,
  timeLeft,
  VERB_TEXT,
} from './powerSend';
import { settleUnanswered } from './powerSettle';
import type { Decision, MachinePorts, Row } from './types';

export { afterSend, WAITING_FOR_SHUTDOWN } from './powerSend';
export {
  backAfterPowerOn,
  notReadySeen,
  observedAfterPowerOn,
  poweredOff,
} from './poweredOffRows';

/** "3 of 3 control-plane members ready (margin 1)", from what was kept at admission. */
export function admittedNumbers(nm: NodeMaintenance): string | undefined {
  const a = nm.status?.admission ?? nm.spec.preflight?.quorum;
  if (!a || a.members === undefined || a.ready === undefined) return undefined;
  return `${a.ready} of ${a.members} control-plane members ready (margin ${a.margin})`;
}

/** The members that are not ready now, or going down under another maintenance. */
export function downNow(nm: NodeMaintenance, ports: MachinePorts): string {
  const members = ports.view
    .nodes()
    .map(nodeFactsFromNode)
    .filter(n => n.controlPlane && n.name !== nm.spec.nodeName);
  const notReady = members.filter(n => !n.ready).map(n => n.name);
  const parts: string[] = [];
  if (notReady.length) parts.push(`NotReady now: ${notReady.join(', ')}`);
  const going = ports.view
    .maintenances()
    .filter(
      m =>
        m.metadata.name !== nm.metadata.name &&
        members.some(n => n.ready && n.name === m.spec.nodeName) &&
        quorumMaintenances([m]).some(takesNodeDown),
    )
    .map(m => `${m.spec.nodeName} (${m.metadata.name})`);
  if (going.length) parts.push(`going down: ${going.join(', ')}`);
  return parts.join('; ');
}

/**
 * The guard and the capability rule again, right before the verb is recorded, from the
 * watch caches and under the admission lock (the reconciler holds it for this step).
 * Refused, with the numbers and what changed, when the guard now refuses, or finds a
 * hazard that the requester did not acknowledge, or (held for approval) puts the request
 * above the rung its approver approved (approvalRows.ts). Nothing is sent; the node is left
 * cordoned and drained, and return to service brings it back.
 */
export function sendTimeRefusal(
  nm: NodeMaintenance,
  verb: 'reboot' | 'shutdown' | 'upgrade' | 'firmware',
  ports: MachinePorts,
): Decision | undefined {
  const node = ports.view.node(nm.spec.nodeName);
  const allowed = ports.power.check(OFFER_NAME[verb], node);
  if (!allowed.ok) {
    const reason = `${VERB_TEXT[verb]} of ${nm.spec.nodeName} was not sent: ${allowed.reason} The node is left cordoned and drained; return it to service to bring it back.`;
    return refuse(reason, 'capability', { reason });
  }
  const check = checkQuorum(nm, ports.view, 'send');
  const rung = acknowledgedRung(
    nm.spec.preflight?.ceremony,
    nm.status?.admission?.verdict,
  );
  const why = whyAboveAcknowledged(check.result, rung);
  if (why === undefined) {
    // Held for approval: the verb goes out only at or below the rung its approver saw.
    const unapproved = whyAboveApproved(nm, ports, rungOf(nm, check));
    if (unapproved === undefined) return undefined;
    const reason = `${VERB_TEXT[verb]} of ${nm.spec.nodeName} was not sent: ${unapproved}. The node is left cordoned and drained; return it to service to bring it back.`;
    return refuse(reason.slice(0, 4096), 'approval', {
      reason: reason.slice(0, 4096),
      ...checkNumbers(check),
    });
  }
  const then = admittedNumbers(nm);
  const changed = downNow(nm, ports);
  const reason = `${VERB_TEXT[verb]} of ${
    nm.spec.nodeName
  } was not sent: the quorum changed since it was admitted.${
    then ? ` At admission: ${then}.` : ''
  } Now: ${why}${
    changed ? ` (${changed}.)` : ''
  } The node is left cordoned and drained; return it to service to bring it back.`;
  return refuse(reason, 'guard', {
    reason: reason.slice(0, 4096),
    ...checkNumbers(check),
  });
}

/** Drained, intent reboot or shutdown: check again, then send the verb once. */
export const sendFromDrained = async (
  nm: NodeMaintenance,
  verb: 'reboot' | 'shutdown',
  ports: MachinePorts,
): Promise<Decision> => {
  const record = nm.status?.power?.[verb];
  if (record) return settleUnanswered(nm, verb, ports);
  const refused = sendTimeRefusal(nm, verb, ports);
  if (refused) return refused;
  const node = ports.view.node(nm.spec.nodeName);
  // The boot ID a return compares against: after a reboot, and after a power-on.
  return recordAndSend(nm, verb, ports, { bootIdBefore: bootIdOf(node) });
};

/** Rebooting: parks until the node is Ready with a new boot ID, or the deadline. */
export const rebooting: Row = async (nm, ports) => {
  const node = ports.view.node(nm.spec.nodeName);
  const bootId = bootIdOf(node);
  if (isNodeReady(node) && bootId && bootId !== nm.status?.bootIdBefore) {
    return {
      kind: 'transition',
      to: 'Returning',
      message: `${nm.spec.nodeName} is back: Ready with boot ID ${bootId}`,
      status: { returnedAt: isoOf(ports) },
    };
  }
  const seconds = ports.power.deadlines.rebootSeconds;
  const left = timeLeft(nm.status?.rebootSentAt, seconds, ports);
  if (left <= 0) {
    return {
      kind: 'transition',
      to: 'Failed',
      message: `${
        nm.spec.nodeName
      } did not come back within ${seconds}s of the reboot (${
        isNodeReady(node)
          ? 'Ready, but with the boot ID from before'
          : 'not Ready'
      }). The node is left cordoned.`,
      event: { type: 'Warning', reason: MaintenanceReason.RebootTimedOut },
    };
  }
  return {
    kind: 'wait',
    message: `waiting for ${nm.spec.nodeName} to come back with a new boot ID`,
    requeueAfterMs: left,
  };
};
