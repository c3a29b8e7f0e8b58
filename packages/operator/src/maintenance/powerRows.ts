/*
 * The rows of the table (lifecycle.ts) that send power verbs: Drained for reboot and
 * shutdown, Rebooting, PoweredOff (readback and power-on), and what a send's answer leads
 * to. A verb is sent at most once per maintenance (docs/architecture.md, "The maintenance lifecycle"): a row first records
 * `status.power.<verb>.recordedAt` (a `record` decision with `send`), the reconciler sends
 * after that write, and the answer is written with the next phase. A recorded verb with
 * no answer (the operator stopped in between, or the channel's answer was lost) is settled
 * by observing the node, never by sending again.
 */
import {
  acknowledgedRung,
  isNodeReady,
  nodeFactsFromNode,
  quorumMaintenances,
  whyAboveAcknowledged,
  takesNodeDown,
  type NodeMaintenance,
  type NodeMaintenanceStatus,
  type PowerVerbRecord,
} from '@rackside/plugin-servers-common';
import type { Clock } from '../runtime/lifecycle/table';
import { isoOf } from '../runtime/lifecycle/table';
import { setCondition } from '../runtime/lifecycle/conditions';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import { checkNumbers, checkQuorum, refuse } from './guardCheck';
import type {
  Decision,
  MachinePorts,
  NodeView,
  PowerSendVerb,
  Row,
  SendOutcome,
} from './types';

function bootIdOf(node: NodeView | undefined): string | undefined {
  return node?.status?.nodeInfo?.bootID || undefined;
}

const VERB_TEXT: Record<PowerSendVerb, string> = {
  reboot: 'reboot',
  shutdown: 'shutdown',
  powerOn: 'power-on',
};

/** The capability rule's name of a verb (servers-common `PowerVerb`). */
const OFFER_NAME = {
  reboot: 'reboot',
  shutdown: 'shutdown',
  powerOn: 'power-on',
} as const;

type Conditions = NonNullable<NodeMaintenanceStatus['conditions']>;

/** Sets one condition of a maintenance (lifecycle/conditions.ts), at the clock's time. */
function withCondition(
  clock: Clock,
  conditions: Conditions | undefined,
  condition: Omit<Conditions[number], 'lastTransitionTime'>,
): Conditions {
  return setCondition(conditions, condition, isoOf(clock));
}

function powerWith(
  nm: NodeMaintenance,
  verb: PowerSendVerb,
  record: PowerVerbRecord,
): NodeMaintenanceStatus['power'] {
  return { ...nm.status?.power, [verb]: record };
}

/** Records the verb (before it is sent) and asks the reconciler to send it. */
function recordAndSend(
  nm: NodeMaintenance,
  verb: PowerSendVerb,
  ports: MachinePorts,
  extra: Partial<NodeMaintenanceStatus> = {},
): Decision {
  const node = ports.view.node(nm.spec.nodeName);
  const allowed = ports.power.check(OFFER_NAME[verb], node);
  if (!allowed.ok) {
    return {
      kind: 'transition',
      to: 'Failed',
      message: `${VERB_TEXT[verb]} of ${nm.spec.nodeName} was not sent: ${allowed.reason}`,
      event: { type: 'Warning', reason: MaintenanceReason.PowerVerbNotSent },
    };
  }
  const channel = ports.power.channelType();
  return {
    kind: 'record',
    message: `sending ${VERB_TEXT[verb]} to ${nm.spec.nodeName} over ${channel}`,
    status: {
      ...extra,
      power: powerWith(nm, verb, {
        recordedAt: isoOf(ports),
        channel,
        // The baseline a restart compares against (settleUnanswered): only a change
        // from the node as it is now is a sign that the verb ran.
        nodeBefore: { ready: isNodeReady(node), bootID: bootIdOf(node) },
      }),
    },
    send: verb,
  };
}

/** The time left before `since + seconds`, in ms (negative once past). */
function timeLeft(
  since: string | undefined,
  seconds: number,
  clock: Clock,
): number {
  const start = Date.parse(since ?? '');
  if (!Number.isFinite(start)) return seconds * 1000;
  return start + seconds * 1000 - clock.now();
}

const CONFIRMED = 'PowerOffConfirmed' as const;
/** status.message of a power-on held until the machine has been seen off. */
export const WAITING_FOR_SHUTDOWN = 'waiting for the shutdown to finish';
const ABANDON_PENDING = 'AbandonPending' as const;

/** What the channel's answer to a sent verb leads to. */
export const afterSend: Record<
  PowerSendVerb,
  (nm: NodeMaintenance, outcome: SendOutcome, clock: Clock) => Decision
> = {
  reboot: (nm, outcome, clock) =>
    answered(nm, 'reboot', outcome, clock, record => ({
      kind: 'transition',
      to: 'Rebooting',
      message: `reboot of ${nm.spec.nodeName} accepted (${record.detail}); waiting for it to come back with a new boot ID`,
      status: {
        power: powerWith(nm, 'reboot', record),
        rebootSentAt: record.sentAt,
      },
    })),
  shutdown: (nm, outcome, clock) =>
    answered(nm, 'shutdown', outcome, clock, (record, confirms) => ({
      kind: 'transition',
      to: 'PoweredOff',
      message: `shutdown of ${nm.spec.nodeName} accepted (${record.detail}); parked until powerOn or returnToService`,
      status: {
        power: powerWith(nm, 'shutdown', record),
        poweredOffAt: record.sentAt,
        conditions: withCondition(
          clock,
          nm.status?.conditions,
          confirms
            ? {
                type: CONFIRMED,
                status: 'False',
                reason: 'ReadbackRunning',
                message:
                  'The shutdown was accepted; the BMC is being read until it reports PowerState Off.',
              }
            : {
                type: CONFIRMED,
                status: 'Unknown',
                reason: 'ChannelCannotObserve',
                message:
                  'The shutdown was accepted; this power channel cannot observe a machine that is off.',
              },
        ),
      },
    })),
  powerOn: (nm, outcome, clock) =>
    answered(nm, 'powerOn', outcome, clock, record => ({
      kind: 'transition',
      to: 'Returning',
      message: `power-on of ${nm.spec.nodeName} accepted (${
        record.detail
      }); waiting for it to be Ready${
        nm.spec.abandon
          ? `, then applying the abandon held since it was off (requested by ${nm.spec.abandon.by})`
          : ''
      }`,
      status: {
        power: powerWith(nm, 'powerOn', record),
        powerOnSentAt: record.sentAt,
        returnedAt: isoOf(clock),
        // The held abandon: Returning restores wasUnschedulable instead of uncordoning.
        ...(nm.spec.abandon
          ? {
              abandoned: true,
              conditions: withCondition(clock, nm.status?.conditions, {
                type: ABANDON_PENDING,
                status: 'False',
                reason: 'PoweredOn',
                message:
                  'The machine was powered on; the abandon is applied as it returns.',
              }),
            }
          : {}),
      },
      event: nm.spec.abandon
        ? { type: 'Normal', reason: MaintenanceReason.Abandoned }
        : undefined,
    })),
};

function answered(
  nm: NodeMaintenance,
  verb: PowerSendVerb,
  outcome: SendOutcome,
  clock: Clock,
  next: (record: PowerVerbRecord, confirmsPowerOff: boolean) => Decision,
): Decision {
  const recorded = nm.status?.power?.[verb] ?? { recordedAt: isoOf(clock) };
  if (outcome.ok) {
    return next(
      {
        ...recorded,
        sentAt: outcome.receipt.acceptedAt,
        detail: outcome.receipt.detail.slice(0, 1024),
      },
      outcome.confirmsPowerOff === true,
    );
  }
  const error = outcome.message.slice(0, 4096);
  if (outcome.outcome === 'unknown') {
    // It may have run: watch the node (settleUnanswered) rather than sending again.
    return {
      kind: 'record',
      message: `${VERB_TEXT[verb]} of ${nm.spec.nodeName}: the channel's answer was lost (${error}); watching the node`,
      status: { power: powerWith(nm, verb, { ...recorded, error }) },
      event: { type: 'Warning', reason: MaintenanceReason.PowerVerbUnanswered },
    };
  }
  return {
    kind: 'transition',
    to: 'Failed',
    message: `${VERB_TEXT[verb]} of ${nm.spec.nodeName} ${
      outcome.outcome === 'notSent'
        ? 'could not be sent'
        : 'was refused by the channel'
    }: ${error}. It is not retried.${
      verb === 'powerOn' ? ' The machine is still off.' : ''
    }`,
    status: { power: powerWith(nm, verb, { ...recorded, error }) },
    event: { type: 'Warning', reason: MaintenanceReason.PowerVerbFailed },
  };
}

/**
 * What the node shows of a verb that was recorded but has no answer, compared with the
 * node when it was recorded (records written before the baseline existed fall back to
 * what was known then: Ready before a reboot or shutdown, NotReady before a power-on).
 */
async function signOfVerb(
  nm: NodeMaintenance,
  verb: PowerSendVerb,
  record: PowerVerbRecord,
  node: NodeView | undefined,
  ports: MachinePorts,
): Promise<string | undefined> {
  const before = record.nodeBefore;
  const wasReady = before?.ready ?? verb !== 'powerOn';
  const bootBefore = before?.bootID ?? nm.status?.bootIdBefore;
  const bootId = bootIdOf(node);
  const ready = isNodeReady(node);
  const newBoot =
    !!bootId && !!bootBefore && bootId !== bootBefore
      ? 'the node came back with a new boot ID'
      : undefined;
  const wentNotReady =
    wasReady && !ready ? 'the node went NotReady' : undefined;
  if (verb === 'reboot') return newBoot ?? wentNotReady;
  const state = await ports.power.powerState(node).catch(() => undefined);
  if (verb === 'shutdown') {
    // Off says something only of a machine that was on: Ready when recorded.
    if (state === 'Off' && wasReady) return 'the BMC reports PowerState Off';
    return wentNotReady;
  }
  const seenOff =
    !wasReady ||
    nm.status?.conditions?.some(
      c => c.type === CONFIRMED && c.status === 'True',
    );
  if (state === 'On' && seenOff) return 'the BMC reports PowerState On';
  if (!wasReady && ready) {
    return 'the node is Ready (it was NotReady when the power-on was recorded)';
  }
  return newBoot;
}

/**
 * A recorded verb without an answer: look at the node. Signs that the verb ran move on
 * as if it had been answered; no sign until the deadline fails the maintenance, and the
 * verb is never sent again. A sign is a change from the node as it was when the verb was
 * recorded (`nodeBefore`): a node that was already NotReady going NotReady says nothing.
 */
async function settleUnanswered(
  nm: NodeMaintenance,
  verb: PowerSendVerb,
  ports: MachinePorts,
): Promise<Decision> {
  const record = nm.status!.power![verb]!;
  const node = ports.view.node(nm.spec.nodeName);
  const sign = await signOfVerb(nm, verb, record, node, ports);
  if (sign) {
    return afterSend[verb](
      nm,
      {
        ok: true,
        receipt: {
          acceptedAt: isoOf(ports),
          detail: `no answer was recorded; ${sign}`,
        },
        confirmsPowerOff: ports.power.readback() !== undefined,
      },
      ports,
    );
  }
  const left = timeLeft(
    record.recordedAt,
    ports.power.deadlines.unansweredSeconds,
    ports,
  );
  if (left <= 0) {
    return {
      kind: 'transition',
      to: 'Failed',
      message: `${VERB_TEXT[verb]} of ${nm.spec.nodeName} was recorded at ${
        record.recordedAt
      } but no answer of the channel was recorded${
        record.error ? ` (${record.error})` : ''
      }, and the node shows no sign of it after ${
        ports.power.deadlines.unansweredSeconds
      }s. It is not sent again: look at the machine.`,
      event: {
        type: 'Warning',
        reason: MaintenanceReason.PowerVerbUnconfirmed,
      },
    };
  }
  return {
    kind: 'wait',
    message: `${VERB_TEXT[verb]} recorded without an answer: watching ${nm.spec.nodeName}`,
    requeueAfterMs: Math.min(5000, left),
  };
}

/** "3 of 3 control-plane members ready (margin 1)", from what was kept at admission. */
function admittedNumbers(nm: NodeMaintenance): string | undefined {
  const a = nm.status?.admission ?? nm.spec.preflight?.quorum;
  if (!a || a.members === undefined || a.ready === undefined) return undefined;
  return `${a.ready} of ${a.members} control-plane members ready (margin ${a.margin})`;
}

/** The members that are not ready now, or going down under another maintenance. */
function downNow(nm: NodeMaintenance, ports: MachinePorts): string {
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
 * hazard that the requester did not acknowledge. Nothing is sent; the node is left
 * cordoned and drained, and return to service brings it back.
 */
function sendTimeRefusal(
  nm: NodeMaintenance,
  verb: 'reboot' | 'shutdown',
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
  if (why === undefined) return undefined;
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

/**
 * PoweredOff: read the BMC until it confirms Off or the window closes; power on once when
 * asked; a return to service without power-on waits for a person to power the machine.
 */
export const poweredOff: Row = async (nm, ports) => {
  const seen = notReadySeen(nm, ports);
  if (seen) return seen;
  if (nm.spec.powerOn) {
    const record = nm.status?.power?.powerOn;
    if (record) return settleUnanswered(nm, 'powerOn', ports);
    return (
      (await untilSeenOff(nm, ports)) ?? recordAndSend(nm, 'powerOn', ports)
    );
  }
  if (nm.spec.returnToService) {
    return {
      kind: 'transition',
      to: 'Returning',
      message: `Return to service requested by ${nm.spec.returnToService.by}: ${nm.spec.returnToService.reason}; waiting for the machine to be powered on and Ready`,
      status: { returnedAt: isoOf(ports) },
    };
  }
  const abandon = nm.spec.abandon;
  const pending = nm.status?.conditions?.find(c => c.type === ABANDON_PENDING);
  if (abandon && pending?.status !== 'True') {
    // Held, not applied: abandon never sends a power verb, so applying it now would
    // leave the machine off with nothing in the product to bring it back.
    const message = `Abandon requested by ${abandon.by} (${abandon.reason}) is held: ${nm.spec.nodeName} is powered off and abandon never sends a power verb. Power it on (spec.powerOn); the abandon is applied once it is on.`;
    return {
      kind: 'record',
      message,
      status: {
        conditions: withCondition(ports, nm.status?.conditions, {
          type: ABANDON_PENDING,
          status: 'True',
          reason: 'MachineOff',
          message,
        }),
      },
      event: { type: 'Warning', reason: MaintenanceReason.AbandonPending },
    };
  }
  const condition = nm.status?.conditions?.find(c => c.type === CONFIRMED);
  const readback = ports.power.readback();
  if (condition?.status !== 'False' || !readback) {
    return { kind: 'wait', message: 'parked until powerOn or returnToService' };
  }
  const left = timeLeft(nm.status?.poweredOffAt, readback.windowSeconds, ports);
  if (left <= 0) {
    return {
      kind: 'record',
      message: `the BMC did not report ${nm.spec.nodeName} Off within ${readback.windowSeconds}s; parked until powerOn or returnToService`,
      status: {
        conditions: readbackWindowClosed(ports, nm, readback.windowSeconds),
      },
      event: { type: 'Warning', reason: MaintenanceReason.PowerOffUnconfirmed },
    };
  }
  const node = ports.view.node(nm.spec.nodeName);
  const state = await ports.power.powerState(node).catch(() => undefined);
  if (state === 'Off') {
    return confirmedOff(
      nm,
      ports,
      `the BMC reports ${nm.spec.nodeName} Off; parked until powerOn or returnToService`,
    );
  }
  return {
    kind: 'wait',
    message: 'reading the BMC for PowerState Off',
    requeueAfterMs: Math.min(readback.intervalSeconds * 1000, left),
  };
};

/** PowerOffConfirmed True: the BMC reported PowerState Off. */
function confirmedOff(
  nm: NodeMaintenance,
  ports: MachinePorts,
  message: string,
): Decision {
  return {
    kind: 'record',
    message,
    status: {
      conditions: withCondition(ports, nm.status?.conditions, {
        type: CONFIRMED,
        status: 'True',
        reason: 'PowerStateOff',
        message: 'The BMC reports PowerState Off.',
      }),
    },
    event: { type: 'Normal', reason: MaintenanceReason.PowerOffConfirmed },
  };
}

/**
 * A power-on waits until the machine has been seen off, where the channel can see it: a
 * power-on sent while the graceful shutdown is still running is accepted by a machine
 * that then goes dark. While the readback window runs the BMC is read at its cadence;
 * after it closed, once more, and a machine still not seen off fails the maintenance
 * with what was read (nothing is sent). Where the channel cannot see the machine, the
 * power-on goes out at once and the return is judged by the node (Returning).
 */
async function untilSeenOff(
  nm: NodeMaintenance,
  ports: MachinePorts,
): Promise<Decision | undefined> {
  const condition = nm.status?.conditions?.find(c => c.type === CONFIRMED);
  const readback = ports.power.readback();
  if (condition?.status === 'True' || !readback) return undefined;
  const node = ports.view.node(nm.spec.nodeName);
  const state = await ports.power.powerState(node).catch(() => undefined);
  if (state === 'Off') {
    return confirmedOff(
      nm,
      ports,
      `the BMC reports ${nm.spec.nodeName} Off; powering it on next`,
    );
  }
  const read =
    state === 'On'
      ? 'the BMC reports PowerState On'
      : 'the BMC could not be read';
  const left = timeLeft(nm.status?.poweredOffAt, readback.windowSeconds, ports);
  if (left > 0) {
    const message = `${WAITING_FOR_SHUTDOWN}: power-on of ${nm.spec.nodeName} is sent once the BMC reports it Off`;
    // Shown once in status.message (what the portal and kubectl show), then read again
    // at the readback's cadence without writing.
    if (nm.status?.message !== message) {
      return { kind: 'record', message, status: {} };
    }
    return {
      kind: 'wait',
      message: `${message} (${read})`,
      requeueAfterMs: Math.min(readback.intervalSeconds * 1000, left),
    };
  }
  return {
    kind: 'transition',
    to: 'Failed',
    message: `power-on of ${nm.spec.nodeName} was not sent: the machine was never seen off (${read} ${readback.windowSeconds}s and more after the shutdown was accepted, so the shutdown did not finish). The node is left cordoned; look at the machine, then return it to service.`,
    status: {
      conditions: readbackWindowClosed(ports, nm, readback.windowSeconds),
    },
    event: { type: 'Warning', reason: MaintenanceReason.PowerVerbNotSent },
  };
}

/**
 * Records the first time the node is seen NotReady after the shutdown was accepted (the
 * PoweredOff and Returning rows watch the node): with Ready again after a power-on, the
 * machine went off and came back, where no boot ID change says so.
 */
export function notReadySeen(
  nm: NodeMaintenance,
  ports: MachinePorts,
): Decision | undefined {
  if (!nm.status?.poweredOffAt || nm.status.nodeSeenNotReadyAt)
    return undefined;
  const node = ports.view.node(nm.spec.nodeName);
  if (!node || isNodeReady(node)) return undefined;
  return {
    kind: 'record',
    message: `${nm.spec.nodeName} is NotReady`,
    status: { nodeSeenNotReadyAt: isoOf(ports) },
  };
}

/**
 * Whether the machine is back after a power-on: Ready with a boot ID other than the one
 * before the shutdown, or Ready again after it was seen NotReady. A node that never went
 * NotReady and kept its boot ID may be a machine whose shutdown had not finished yet.
 */
export function backAfterPowerOn(
  nm: NodeMaintenance,
  node: NodeView | undefined,
): boolean {
  if (!isNodeReady(node)) return false;
  const bootId = bootIdOf(node);
  const before = nm.status?.bootIdBefore;
  return (
    (!!bootId && !!before && bootId !== before) ||
    !!nm.status?.nodeSeenNotReadyAt
  );
}

/** What was and was not observed of a node after its power-on, for a Failed message. */
export function observedAfterPowerOn(
  nm: NodeMaintenance,
  node: NodeView | undefined,
): string {
  const bootId = bootIdOf(node);
  const before = nm.status?.bootIdBefore;
  const confirmed = nm.status?.conditions?.find(c => c.type === CONFIRMED);
  return [
    confirmed?.status === 'True'
      ? 'the BMC reported the machine Off before the power-on'
      : 'the machine was not seen off by the channel',
    nm.status?.nodeSeenNotReadyAt
      ? `the node was seen NotReady at ${nm.status.nodeSeenNotReadyAt}`
      : 'the node was never seen NotReady',
    isNodeReady(node) ? 'it is Ready now' : 'it is not Ready now',
    bootIdText(bootId, before),
  ].join('; ');
}

function bootIdText(now: string | undefined, before: string | undefined) {
  if (!now || !before) return 'no boot ID to compare';
  return now === before
    ? `its boot ID is the one from before the shutdown (${now})`
    : `its boot ID is new (${now})`;
}

/** The conditions once the readback window closed without the BMC reporting Off. */
function readbackWindowClosed(
  ports: MachinePorts,
  nm: NodeMaintenance,
  windowSeconds: number,
) {
  return withCondition(ports, nm.status?.conditions, {
    type: CONFIRMED,
    status: 'Unknown',
    reason: 'ReadbackWindowClosed',
    message: `The BMC did not report PowerState Off within ${windowSeconds}s of the accepted shutdown.`,
  });
}
