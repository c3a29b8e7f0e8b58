/*
 * The NodeMaintenance lifecycle (docs/architecture.md, "The maintenance lifecycle") as a table, one row per phase, run by
 * the one table runner (runtime/lifecycle/table.ts) from reconciler.ts:
 *
 *   (new)      -> AwaitingApproval  spec.approval awaits a second person (approvalRows.ts):
 *                             held before admission, nothing touches the node
 *              -> Refused     its approval was rejected, or expired, already
 *              -> Requested   admitted: not a virtual node, the channel offers the verb,
 *                             no other open maintenance, the guard allows, the drain may
 *                             evict every pod (wasUnschedulable and the verdict recorded)
 *              -> Refused     any of those not, with the reason and the numbers (an
 *                             approved one also above the rung its approver saw)
 *   AwaitingApproval
 *              -> Requested   approved: the whole admission of (new), from the cluster as
 *                             it is now; the message names the approver
 *              -> Refused     rejected ("rejected by X: reason"), the approval expired
 *                             ("approval expired"), or any admission rule not met
 *              -> Complete    abandon or returnToService: nothing was done, nothing to undo
 *                             (waits otherwise, looked at again at expiresAt)
 *   Requested  -> Cordoned    the node cordoned
 *   Cordoned   -> Draining    drain, reboot, shutdown (a cordon parks here)
 *   Draining   -> Drained     every evictable pod gone (the drain runs in DrainRunner)
 *              -> Failed      the drain timed out or met a pod it may not evict
 *   Drained    -> Rebooting   reboot recorded, then sent (a drain parks here)
 *              -> PoweredOff  shutdown recorded, then sent
 *              -> Refused     the guard or the capability rule, run again first, refuses now,
 *                             or the rung grew past the one approved: nothing is sent, the
 *                             node stays cordoned and drained
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
 *            PoweredOff (AbandonPending) until the machine is powered on;
 *            AwaitingApproval -> Complete at once, marked abandoned
 *
 * Each row looks at one maintenance in one phase, may act on the node through
 * `ports.nodes`, read the drain's outcome (`ports.drains`, drain/DrainRunner.ts) or the
 * power channel (`ports.power`), and answers with a Decision (types.ts). The reconciler
 * writes the decided transition to status, then emits the Event, before anything else
 * happens; a `record` decision with `send` is where a power verb goes out, after it is on
 * record (powerRows.ts). Rows only ever act idempotently, so a restart resumes from
 * whatever status says. Time comes from the ports' clock.
 *
 * The rows that do not fit here live beside: admitRow.ts ((new)), approvalRows.ts
 * (the hold at (new), AwaitingApproval), returningRow.ts (Returning), powerRows.ts
 * (Drained's send, Rebooting, PoweredOff), and the two intents that change what runs on
 * the machine, each with its own table in its header: upgradeRows.ts (a Talos upgrade:
 * sent from Drained, Done in Rebooting only on the target version) and firmwareRows.ts
 * (a Redfish firmware update: sent from Drained, its task followed there, the reset it
 * asks for sent once).
 */
import {
  abandonWouldStrand,
  isTerminalPhase,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import {
  finished,
  isoOf,
  NEW,
  phaseOf as tablePhaseOf,
} from '../runtime/lifecycle/table';
import { admit } from './admitRow';
import {
  awaitingApproval,
  holdForApproval,
  withdrawnWhileAwaiting,
} from './approvalRows';
import { DRAINING_INTENTS, RECORD_OF_INTENT, VERB_OF_INTENT } from './intents';
import { poweredOff, rebooting, sendFromDrained } from './powerRows';
import { returning } from './returningRow';
import { sendUpgradeFromDrained, upgrading } from './upgradeRows';
import { firmwareRebooting, sendFirmwareFromDrained } from './firmwareRows';
import type { Decision, MachinePorts, Phase, Row } from './types';

export { blockingMaintenance } from './admitRow';

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
    if (nm.spec.intent === 'upgrade') return sendUpgradeFromDrained(nm, ports);
    if (nm.spec.intent === 'firmware') {
      return sendFirmwareFromDrained(nm, ports);
    }
    return sendFromDrained(nm, verb, ports);
  }
  return (
    returnRequested(nm, ports) ?? {
      kind: 'wait',
      message: 'parked until returnToService or abandon',
    }
  );
};

/** New: held first when it awaits approval (approvalRows.ts), else admitted. */
const admitUnlessHeld: Row = async (nm, ports) =>
  holdForApproval(nm, ports) ?? admit(nm, ports);

/** The table: one row per phase. */
export const transitions: Record<Phase, Row> = {
  [NEW]: admitUnlessHeld,
  AwaitingApproval: awaitingApproval(admit),
  Requested: cordon,
  Cordoned: cordoned,
  Draining: draining,
  Drained: drained,
  Rebooting: (nm, ports) => {
    if (nm.spec.intent === 'upgrade') return upgrading(nm, ports);
    if (nm.spec.intent === 'firmware') return firmwareRebooting(nm, ports);
    return rebooting(nm, ports);
  },
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
  if (nm.spec.abandon && phase === 'AwaitingApproval') {
    // Nothing was done to the node: nothing to return, it ends at once.
    return withdrawnWhileAwaiting;
  }
  return nm.spec.abandon && abandonable && !held
    ? abandonRule
    : transitions[phase];
}

/**
 * Whether the next step of this maintenance must run under the admission lock: its
 * admission (at (new), or once approved while AwaitingApproval), and the check right
 * before its power verb is recorded. Both read the quorum and decide on it, so two of
 * them never interleave.
 */
export function needsAdmissionLock(nm: NodeMaintenance): boolean {
  const phase = phaseOf(nm);
  if (phase === NEW || phase === 'AwaitingApproval') return true;
  const verb = RECORD_OF_INTENT[nm.spec.intent];
  return (
    phase === 'Drained' &&
    !!verb &&
    !nm.status?.power?.[verb] &&
    !nm.spec.returnToService &&
    !nm.spec.abandon
  );
}
