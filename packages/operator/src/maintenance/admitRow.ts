/*
 * The (new) row of the NodeMaintenance table (table.ts): the rules every intent passes,
 * under the operator's one guard lock, and the other maintenance that keeps a node busy.
 */
import {
  busyNodeRefusal,
  nodeFactsFromNode,
  type NodeMaintenance,
  openMaintenanceOf,
  planDrain,
  virtualNodeRefusal,
  whyAboveAcknowledged,
} from '@rackside/plugin-servers-common';
import { isoOf } from '../runtime/lifecycle/table';
import { approvedText, whyAboveApproved } from './approvalRows';
import { checkNumbers, checkQuorum, refuse, rungOf } from './guardCheck';
import { DRAINING_INTENTS, VERB_OF_INTENT } from './intents';
import type { Row } from './types';
import { upgradeRefusal } from './upgradeRows';
import { firmwareRefusal } from './firmwareRows';

/**
 * The other maintenance that keeps this node busy: the node's open maintenance
 * (servers-common `openMaintenanceOf`, the one the backend shows and offers by) when it
 * is not this one: an admitted one, or a not yet admitted one that was created first.
 */
export function blockingMaintenance(
  nm: NodeMaintenance,
  all: readonly NodeMaintenance[],
): NodeMaintenance | undefined {
  const others = all.filter(other => other.metadata.name !== nm.metadata.name);
  const open = openMaintenanceOf(nm.spec.nodeName, [...others, nm]);
  return open === nm ? undefined : open;
}

/** New: the rules every intent passes, under the operator's one guard lock. */
export const admit: Row = async (nm, ports) => {
  const { view, pods, power } = ports;
  const nodeName = nm.spec.nodeName;
  const node = view.node(nodeName);
  if (!nm.spec.requestedBy?.trim()) {
    // Every act has an author: the chart's policy refuses such an object at creation; one
    // that got past it (no policy installed, made before it) is not executed either.
    const reason = `${nm.spec.intent} of ${nodeName} refused: spec.requestedBy is empty, and a maintenance is carried out only for someone. Create it again with requestedBy set to your Kubernetes username.`;
    return refuse(reason, 'attribution', { reason });
  }
  if (node && nodeFactsFromNode(node).virtual) {
    const reason = virtualNodeRefusal(nodeName);
    return refuse(reason, 'virtual', { reason });
  }
  // An upgrade's image, channel and target (upgradeRows.ts), and a firmware update's
  // source and channel (firmwareRows.ts), before anything is drained; their channel
  // first, as the backend's view judges them (servers-backend servers/view.ts offerOf).
  const upgradeRefused = upgradeRefusal(nm, ports, 'admission');
  if (upgradeRefused) return upgradeRefused;
  const firmwareRefused = firmwareRefusal(nm, ports, 'admission');
  if (firmwareRefused) return firmwareRefused;
  const verb = VERB_OF_INTENT[nm.spec.intent];
  if (verb) {
    // The capability rule, whoever made the object: kubectl cannot ask for more.
    const allowed = power.check(verb, node);
    if (!allowed.ok) {
      const reason = `${verb} of ${nodeName} is not offered: ${allowed.reason}`;
      return refuse(reason, 'capability', { reason });
    }
  }
  const others = view
    .maintenances()
    .filter(m => m.metadata.name !== nm.metadata.name);
  const busy = blockingMaintenance(nm, others);
  if (busy) {
    const reason = busyNodeRefusal(nodeName, {
      name: busy.metadata.name,
      intent: busy.spec.intent,
      phase: busy.status?.phase,
    });
    return refuse(reason, 'busy', {
      reason,
      blockingMaintenance: busy.metadata.name,
    });
  }
  const check = checkQuorum(nm, view, 'admission');
  const verdict = check.result;
  if (verdict.verdict === 'refuse') {
    return refuse(verdict.reason, 'guard', {
      reason: verdict.reason,
      ...checkNumbers(check),
    });
  }
  // A request that carries its acknowledgement (the backend's, a plan's step) goes on
  // only at or below the rung it was acknowledged at; one made with kubectl without a
  // pre-flight is admitted at its verdict (powerRows.ts holds the send to that rung).
  const acknowledged = nm.spec.preflight?.ceremony;
  const above = acknowledged && whyAboveAcknowledged(verdict, acknowledged);
  if (above) {
    const reason = `${nm.spec.intent} of ${nodeName} refused: ${above}`;
    return refuse(reason, 'guard', { reason, ...checkNumbers(check) });
  }
  // One held for approval (approvalRows.ts) goes on only once approved, and at or below
  // the rung its approver saw.
  const unapproved = whyAboveApproved(nm, ports, rungOf(nm, check));
  if (unapproved) {
    const reason = `${nm.spec.intent} of ${nodeName} refused: ${unapproved}`;
    return refuse(reason, 'approval', { reason, ...checkNumbers(check) });
  }
  if (DRAINING_INTENTS.includes(nm.spec.intent)) {
    // Checked before the cordon, so a refused drain leaves the node as it was.
    const onNode = await pods.onNode(nodeName);
    const plan = planDrain(onNode, nm.spec.drain ?? {}, {
      nodeName,
      ...(await pods.storage?.(nodeName, onNode)),
    });
    if (plan.refused.length > 0) {
      const reason = `the drain of ${nodeName} would have to evict pods it may not: ${plan.refused
        .map(r => r.message)
        .join(' ')}`;
      return refuse(reason.slice(0, 4096), 'pods', {
        reason: reason.slice(0, 4096),
      });
    }
  }
  // Recorded before anything touches the node: abandon restores exactly this.
  return {
    kind: 'transition',
    to: 'Requested',
    message: nm.spec.approval?.approvedBy
      ? `${approvedText(nm.spec.approval)}; admitted: ${verdict.reason}`
      : `Admitted: ${verdict.reason}`,
    status: {
      wasUnschedulable: node?.spec?.unschedulable === true,
      // What the check right before the power verb compares against (powerRows.ts).
      admission: {
        verdict: verdict.verdict,
        at: isoOf(ports),
        ...checkNumbers(check),
      },
    },
  };
};
