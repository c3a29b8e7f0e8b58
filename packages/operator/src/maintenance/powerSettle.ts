/*
 * A recorded verb with no answer (the operator stopped in between, or the channel's
 * answer was lost) is settled by observing the node, never by sending again.
 */
import {
  isNodeReady,
  type NodeMaintenance,
  type PowerVerbRecord,
} from '@rackside/plugin-servers-common';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import { isoOf } from '../runtime/lifecycle/table';
import {
  afterSend,
  bootIdOf,
  CONFIRMED,
  timeLeft,
  VERB_TEXT,
} from './powerSend';
import type { Decision, MachinePorts, NodeView, PowerSendVerb } from './types';

/**
 * What the node shows of a verb that was recorded but has no answer, compared with the
 * node when it was recorded (records written before the baseline existed fall back to
 * what was known then: Ready before a reboot or shutdown, NotReady before a power-on).
 */
export async function signOfVerb(
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
  if (verb === 'reboot' || verb === 'upgrade') return newBoot ?? wentNotReady;
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
export async function settleUnanswered(
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
  // An upgrade shows itself only when Talos reboots, once its installer has run.
  const seconds =
    verb === 'upgrade'
      ? ports.power.deadlines.upgradeSeconds ??
        ports.power.deadlines.unansweredSeconds
      : ports.power.deadlines.unansweredSeconds;
  const left = timeLeft(record.recordedAt, seconds, ports);
  if (left <= 0) {
    return {
      kind: 'transition',
      to: 'Failed',
      message: `${VERB_TEXT[verb]} of ${nm.spec.nodeName} was recorded at ${
        record.recordedAt
      } but no answer of the channel was recorded${
        record.error ? ` (${record.error})` : ''
      }, and the node shows no sign of it after ${seconds}s. It is not sent again: look at the machine.`,
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
