/*
 * The NodeMaintenance lifecycle (docs/architecture.md, "The maintenance lifecycle") as a table, one row per phase, run by
 * the one table runner (lifecycle/table.ts) from reconciler.ts:
 *
 *   (new)      -> Requested   admitted: not a virtual node, the channel offers the verb,
 *                             no other open maintenance, the guard allows, the drain may
 *                             evict every pod (wasUnschedulable and the verdict recorded)
 *              -> Refused     any of those not, with the reason and the numbers
 *   Requested  -> Cordoned    the node cordoned
 *   Cordoned   -> Draining    drain, reboot, shutdown (a cordon parks here)
 *   Draining   -> Drained     every evictable pod gone (the drain runs in DrainRunner)
 *              -> Failed      the drain timed out or met a pod it may not evict
 *   Drained    -> Rebooting   reboot recorded, then sent (a drain parks here)
 *              -> PoweredOff  shutdown recorded, then sent
 *              -> Refused     the guard or the capability rule, run again first, refuses now:
 *                             nothing is sent, the node stays cordoned and drained
 *              -> Failed      the channel refused the verb, or it went unanswered with no
 *                             sign of it by the deadline (never sent twice)
 *   Rebooting  -> Returning   back: Ready with a new boot ID
 *              -> Failed      not back by the reboot deadline
 *   PoweredOff -> Returning   power-on sent once (spec.powerOn) once the machine was seen
 *                             off where the channel reads back, or returnToService
 *              -> Failed      power-on asked, but the BMC never reported the machine Off
 *   Returning  -> Complete    uncordoned (abandoned: wasUnschedulable restored), Ready;
 *                             after a power-on only once the node is back (new boot ID, or
 *                             Ready again after NotReady)
 *              -> Failed      after a power-on, not back by the deadline
 *
 *   returnToService: Requested, Cordoned, Draining, Drained, PoweredOff -> Returning
 *   abandon: any open phase but Returning -> Returning, marked abandoned; held while
 *            PoweredOff (AbandonPending) until the machine is powered on
 *
 * Each row looks at one maintenance in one phase, may act on the node through
 * `ports.nodes`, read the drain's outcome (`ports.drains`, drain/DrainRunner.ts) or the
 * power channel (`ports.power`), and answers with a Decision (types.ts). The reconciler
 * writes the decided transition to status, then emits the Event, before anything else
 * happens; a `record` decision with `send` is where a power verb goes out, after it is on
 * record (powerRows.ts). Rows only ever act idempotently, so a restart resumes from
 * whatever status says. Time comes from the ports' clock.
 */
import {
  abandonWouldStrand,
  busyNodeRefusal,
  isNodeReady,
  isTerminalPhase,
  nodeFactsFromNode,
  openMaintenanceOf,
  planDrain,
  virtualNodeRefusal,
  whyAboveAcknowledged,
  type MaintenanceIntent,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import {
  finished,
  isoOf,
  NEW,
  phaseOf as tablePhaseOf,
} from '../runtime/lifecycle/table';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import { checkNumbers, checkQuorum, refuse } from './guardCheck';
import {
  backAfterPowerOn,
  notReadySeen,
  observedAfterPowerOn,
  poweredOff,
  rebooting,
  sendFromDrained,
} from './powerRows';
import type { Decision, MachinePorts, Phase, Row } from './types';

/** Intents whose maintenance drains the node after cordoning it. */
const DRAINING_INTENTS: readonly MaintenanceIntent[] = [
  'drain',
  'reboot',
  'shutdown',
];

/** The power verb an intent sends once drained. */
const VERB_OF_INTENT: Partial<
  Record<MaintenanceIntent, 'reboot' | 'shutdown'>
> = { reboot: 'reboot', shutdown: 'shutdown' };

function returnRequested(
  nm: NodeMaintenance,
  ports: MachinePorts,
): Decision | undefined {
  if (!nm.spec.returnToService) return undefined;
  return {
    kind: 'transition',
    to: 'Returning',
    message: `Return to service requested by ${nm.spec.returnToService.by}: ${nm.spec.returnToService.reason}`,
    status: { returnedAt: isoOf(ports) },
  };
}

export function phaseOf(nm: NodeMaintenance): Phase {
  return tablePhaseOf(nm);
}

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
const admit: Row = async (nm, ports) => {
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
    message: `Admitted: ${verdict.reason}`,
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

/** Requested: cordon (a no-op if a crash left it done), then record Cordoned. */
const cordon: Row = async (nm, ports) => {
  const back = returnRequested(nm, ports);
  if (back) return back;
  await ports.nodes.setUnschedulable(nm.spec.nodeName, true);
  return {
    kind: 'transition',
    to: 'Cordoned',
    message: DRAINING_INTENTS.includes(nm.spec.intent)
      ? `${nm.spec.nodeName} cordoned; draining next`
      : `${nm.spec.nodeName} cordoned; parked until returnToService or abandon`,
    status: { cordonedAt: isoOf(ports) },
  };
};

/** Cordoned: a cordon parks here; every other intent starts its drain. */
const cordoned: Row = async (nm, ports) => {
  const back = returnRequested(nm, ports);
  if (back) return back;
  if (!DRAINING_INTENTS.includes(nm.spec.intent)) {
    return { kind: 'wait', message: 'parked until returnToService or abandon' };
  }
  return {
    kind: 'transition',
    to: 'Draining',
    message: `draining ${nm.spec.nodeName}: evicting its pods and waiting for them to be gone`,
    status: {
      drain: {
        startedAt: isoOf(ports),
        total: 0,
        evicted: 0,
        pending: 0,
      },
    },
  };
};

/** Draining: the drain runs in DrainRunner; this row reads its outcome when woken. */
const draining: Row = async (nm, ports) => {
  const back = returnRequested(nm, ports);
  if (back) return back;
  const outcome = ports.drains.ensure(nm);
  switch (outcome.state) {
    case 'running':
      return {
        kind: 'wait',
        message: `draining: ${outcome.progress.evicted} of ${outcome.progress.total} pods gone`,
      };
    case 'drained':
      return {
        kind: 'transition',
        to: 'Drained',
        message: `${nm.spec.nodeName} drained: ${
          outcome.progress.total
        } pod(s) evicted and gone${
          VERB_OF_INTENT[nm.spec.intent]
            ? `; ${nm.spec.intent} next`
            : '; parked until returnToService or abandon'
        }`,
        status: { drain: outcome.progress },
      };
    case 'failed':
    default:
      return {
        kind: 'transition',
        to: 'Failed',
        message: outcome.reason,
        status: { drain: outcome.progress },
        event: { type: 'Warning', reason: MaintenanceReason.DrainFailed },
      };
  }
};

/** Drained: a drain parks until returnToService; reboot and shutdown send their verb. */
const drained: Row = async (nm, ports) => {
  const verb = VERB_OF_INTENT[nm.spec.intent];
  if (verb && !nm.spec.returnToService) {
    return sendFromDrained(nm, verb, ports);
  }
  return (
    returnRequested(nm, ports) ?? {
      kind: 'wait',
      message: 'parked until returnToService or abandon',
    }
  );
};

/**
 * Returning: make the node schedulable again (or, abandoned, as it was before), then wait
 * for it to be Ready (the node watch wakes us).
 */
const returning: Row = async (nm, ports) => {
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
  return {
    kind: 'transition',
    to: 'Complete',
    message: abandoned
      ? `Abandoned; ${nm.spec.nodeName} left ${
          restore ? 'unschedulable as it was before' : 'schedulable'
        }`
      : `${nm.spec.nodeName} is schedulable and Ready`,
    status: { completedAt: isoOf(ports) },
  };
};

/**
 * Returning after a power-on: the machine is back only when the node says so (a new
 * boot ID, or Ready again after it was seen NotReady), not because it still looks Ready
 * while a shutdown may be finishing. Until then the node stays cordoned; past the
 * deadline (counted from the power-on) the maintenance fails with what was observed.
 */
function poweredOnMachine(
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

/** The table: one row per phase. */
export const transitions: Record<Phase, Row> = {
  [NEW]: admit,
  Requested: cordon,
  Cordoned: cordoned,
  Draining: draining,
  Drained: drained,
  Rebooting: rebooting,
  PoweredOff: poweredOff,
  Returning: returning,
  Complete: finished,
  Refused: finished,
  Failed: finished,
};

/** The rule above the table: abandon leads from any non-terminal phase to Returning. */
export const abandonRule: Row = async (nm, ports) => ({
  kind: 'transition',
  to: 'Returning',
  message: `Abandon requested by ${nm.spec.abandon!.by}: ${
    nm.spec.abandon!.reason
  }`,
  status: { abandoned: true, returnedAt: isoOf(ports) },
  event: { type: 'Normal', reason: MaintenanceReason.Abandoned },
});

/**
 * The row that applies to this maintenance now. An abandon on a maintenance that has the
 * machine off is not applied: abandon never sends a power verb, so it would leave the
 * machine off with nothing to bring it back. The PoweredOff row holds it (AbandonPending)
 * until power-on, and Returning then applies it.
 */
export function rowFor(nm: NodeMaintenance): Row {
  const phase = phaseOf(nm);
  const abandonable =
    phase === NEW || (phase !== 'Returning' && !isTerminalPhase(phase));
  const held = abandonWouldStrand({
    intent: nm.spec.intent,
    phase: phase === NEW ? undefined : phase,
  });
  return nm.spec.abandon && abandonable && !held
    ? abandonRule
    : transitions[phase];
}

/**
 * Whether the next step of this maintenance must run under the admission lock: its
 * admission, and the check right before its power verb is recorded. Both read the quorum
 * and decide on it, so two of them never interleave.
 */
export function needsAdmissionLock(nm: NodeMaintenance): boolean {
  const phase = phaseOf(nm);
  if (phase === NEW) return true;
  const verb = VERB_OF_INTENT[nm.spec.intent];
  return (
    phase === 'Drained' &&
    !!verb &&
    !nm.status?.power?.[verb] &&
    !nm.spec.returnToService &&
    !nm.spec.abandon
  );
}
