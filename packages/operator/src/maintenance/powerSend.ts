/*
 * How a power verb goes out (powerRows.ts): recorded first, then sent by the reconciler,
 * and what its answer leads to (afterSend), with the time it has left.
 */
import {
  isNodeReady,
  type NodeMaintenance,
  type NodeMaintenanceStatus,
  type PowerVerbRecord,
} from '@rackside/plugin-servers-common';
import { setCondition } from '../runtime/lifecycle/conditions';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import { type Clock, isoOf } from '../runtime/lifecycle/table';
import type {
  Decision,
  MachinePorts,
  NodeView,
  PowerSendVerb,
  SendOutcome,
} from './types';

export function bootIdOf(node: NodeView | undefined): string | undefined {
  return node?.status?.nodeInfo?.bootID || undefined;
}

export const VERB_TEXT: Record<PowerSendVerb, string> = {
  reboot: 'reboot',
  shutdown: 'shutdown',
  powerOn: 'power-on',
  upgrade: 'upgrade',
  firmware: 'firmware update',
};

/** The capability rule's name of a verb (servers-common `PowerVerb`). */
export const OFFER_NAME = {
  reboot: 'reboot',
  shutdown: 'shutdown',
  powerOn: 'power-on',
  // What the capability rule asks of the channel: the upgrade ends in a reboot.
  upgrade: 'reboot',
  // A firmware update is applied with a reset: the channel must be able to reboot.
  firmware: 'reboot',
} as const;

type Conditions = NonNullable<NodeMaintenanceStatus['conditions']>;

/** Sets one condition of a maintenance (lifecycle/conditions.ts), at the clock's time. */
export function withCondition(
  clock: Clock,
  conditions: Conditions | undefined,
  condition: Omit<Conditions[number], 'lastTransitionTime'>,
): Conditions {
  return setCondition(conditions, condition, isoOf(clock));
}

export function powerWith(
  nm: NodeMaintenance,
  verb: PowerSendVerb,
  record: PowerVerbRecord,
): NodeMaintenanceStatus['power'] {
  return { ...nm.status?.power, [verb]: record };
}

/** Records the verb (before it is sent) and asks the reconciler to send it. */
export function recordAndSend(
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
export function timeLeft(
  since: string | undefined,
  seconds: number,
  clock: Clock,
): number {
  const start = Date.parse(since ?? '');
  if (!Number.isFinite(start)) return seconds * 1000;
  return start + seconds * 1000 - clock.now();
}

export const CONFIRMED = 'PowerOffConfirmed' as const;
/** status.message of a power-on held until the machine has been seen off. */
export const WAITING_FOR_SHUTDOWN = 'waiting for the shutdown to finish';
export const ABANDON_PENDING = 'AbandonPending' as const;

export function answered(
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
  upgrade: (nm, outcome, clock) =>
    answered(nm, 'upgrade', outcome, clock, record => ({
      kind: 'transition',
      to: 'Rebooting',
      message: `upgrade of ${nm.spec.nodeName} to ${
        nm.status?.upgrade?.toVersion ?? nm.spec.upgrade?.image
      } accepted (${
        record.detail
      }); waiting for it to come back on it with a new boot ID`,
      status: {
        power: powerWith(nm, 'upgrade', record),
        rebootSentAt: record.sentAt,
        ...(nm.status?.upgrade
          ? { upgrade: { ...nm.status.upgrade, sentAt: record.sentAt } }
          : {}),
      },
    })),
  // Accepted: the maintenance stays Drained while firmwareRows.ts follows the BMC's task.
  firmware: (nm, outcome, clock) =>
    answered(nm, 'firmware', outcome, clock, record => ({
      kind: 'record',
      message: `firmware update of ${nm.spec.nodeName} accepted (${record.detail}); following the BMC's task`,
      status: {
        power: powerWith(nm, 'firmware', record),
        firmware: {
          before: nm.status?.firmware?.before ?? [],
          ...nm.status?.firmware,
          taskUri: outcome.ok
            ? outcome.receipt.taskUri?.slice(0, 512)
            : undefined,
          checkedAt: isoOf(clock),
        },
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
