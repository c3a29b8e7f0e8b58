/*
 * The PoweredOff row (powerRows.ts): the readback of the machine off, the power-on sent
 * once, and the signs that the node is back after it.
 */
import {
  isNodeReady,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import { isoOf } from '../runtime/lifecycle/table';
import {
  ABANDON_PENDING,
  bootIdOf,
  CONFIRMED,
  recordAndSend,
  timeLeft,
  WAITING_FOR_SHUTDOWN,
  withCondition,
} from './powerSend';
import { settleUnanswered } from './powerSettle';
import type { Decision, MachinePorts, NodeView, Row } from './types';

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
export function confirmedOff(
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
export async function untilSeenOff(
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

export function bootIdText(
  now: string | undefined,
  before: string | undefined,
) {
  if (!now || !before) return 'no boot ID to compare';
  return now === before
    ? `its boot ID is the one from before the shutdown (${now})`
    : `its boot ID is new (${now})`;
}

/** The conditions once the readback window closed without the BMC reporting Off. */
export function readbackWindowClosed(
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
