/*
 * The rows of the table (table.ts) for intent `upgrade` (docs/upgrades.md): a Talos
 * upgrade drains like a reboot, then, in Drained, is checked again and sent once as
 * MachineService.Upgrade through the power channel's Talos access, recorded before the
 * call exactly as a reboot (`status.power.upgrade`, powerSend.ts); in Rebooting it waits
 * for the node to come back with a new boot ID on the target version.
 *
 *   (new)     -> Refused    the image is not allowed, names no version, the channel is
 *                           not talos, or the node already runs the target
 *   Drained   -> Rebooting  upgrade recorded, then sent
 *             -> Refused    any of the above, the guard, the ceremony, or force without
 *                           the hazard rung: nothing is sent
 *   Rebooting -> Returning  Ready with a new boot ID, its Node's osImage and the machine's
 *                           Talos Version both reporting the target
 *             -> Failed     both report another version (Talos rolled the upgrade back),
 *                           or by the upgrade deadline: not back, the two disagreeing, or
 *                           Talos not answering its version
 */
import {
  isNodeReady,
  talosVersionOfImage,
  talosVersionOfOsImage,
  whyForceRefused,
  whyUpgradeImageRefused,
  type NodeMaintenance,
  type NodeMaintenanceStatus,
  type UpgradeStatus,
} from '@rackside/plugin-servers-common';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import { isoOf } from '../runtime/lifecycle/table';
import { refuse } from './guardCheck';
import { sendTimeRefusal } from './powerRows';
import { bootIdOf, recordAndSend, timeLeft } from './powerSend';
import { settleUnanswered } from './powerSettle';
import { fitMaintenanceMessage } from './statusLimits';
import type { Decision, MachinePorts, NodeView, Row } from './types';

/** An upgrade not back on its target this long after Talos accepted it fails (default). */
export const DEFAULT_UPGRADE_SECONDS = 1800;

/** The Talos version a Node reports (its osImage, `Talos (v1.12.0)`). */
export function talosVersionOfNode(
  node: NodeView | undefined,
): string | undefined {
  return talosVersionOfOsImage(node?.status?.nodeInfo?.osImage);
}

const LEFT =
  'The node is left cordoned and drained; return it to service to bring it back.';

/**
 * What refuses an upgrade before anything is sent, at admission and again right before
 * it is recorded: an image outside `--talos-image-prefixes` or without a version, a power
 * channel that is not talos (the only one that speaks the Talos API with the cluster's
 * credentials), or a node that already runs the target.
 */
export function upgradeRefusal(
  nm: NodeMaintenance,
  ports: MachinePorts,
  at: 'admission' | 'send',
): Decision | undefined {
  const request = nm.spec.upgrade;
  if (nm.spec.intent !== 'upgrade') return undefined;
  const nodeName = nm.spec.nodeName;
  const tail = at === 'send' ? ` ${LEFT}` : '';
  if (!request) {
    // The CRD's rule requires it; a schema without that rule is not acted on either.
    const reason = `upgrade of ${nodeName} refused: spec.upgrade is missing.`;
    return refuse(reason, 'upgrade', { reason });
  }
  const imageRefused = whyUpgradeImageRefused(
    request.image,
    ports.upgrades?.imagePrefixes ?? [],
  );
  if (imageRefused) {
    const reason = `upgrade of ${nodeName} was not sent: ${imageRefused}.${tail}`;
    return refuse(reason.slice(0, 4096), 'upgrade', {
      reason: reason.slice(0, 4096),
    });
  }
  const channel = ports.power.channelType();
  if (channel !== 'talos') {
    const reason = `upgrade of ${nodeName} was not sent: a Talos upgrade goes over the talos power channel, and this deployment's is ${
      channel ?? 'none'
    }.${tail}`;
    return refuse(reason, 'capability', { reason });
  }
  const target = talosVersionOfImage(request.image)!;
  const running = talosVersionOfNode(ports.view.node(nodeName));
  if (running === target) {
    const reason = `upgrade of ${nodeName} was not sent: already at ${target}.${tail}`;
    return refuse(reason, 'upgrade', { reason });
  }
  return undefined;
}

/**
 * Drained, intent upgrade: the checks again (upgradeRefusal, then the guard and the
 * ceremony as for a reboot, and force only at the hazard rung), then the upgrade recorded
 * and sent once. A record without an answer is settled by watching the node, never by
 * sending again.
 */
export async function sendUpgradeFromDrained(
  nm: NodeMaintenance,
  ports: MachinePorts,
): Promise<Decision> {
  if (nm.status?.power?.upgrade) return settleUnanswered(nm, 'upgrade', ports);
  const refused = upgradeRefusal(nm, ports, 'send');
  if (refused) return refused;
  const guarded = sendTimeRefusal(nm, 'upgrade', ports);
  if (guarded) return guarded;
  const request = nm.spec.upgrade!;
  const forceRefused = whyForceRefused(request, nm.spec.preflight?.ceremony);
  if (forceRefused) {
    const reason = `upgrade of ${nm.spec.nodeName} was not sent: ${forceRefused}. ${LEFT}`;
    return refuse(reason, 'guard', { reason });
  }
  const node = ports.view.node(nm.spec.nodeName);
  const upgrade: UpgradeStatus = {
    image: request.image,
    toVersion: talosVersionOfImage(request.image)!,
    fromVersion: talosVersionOfNode(node),
  };
  return recordAndSend(nm, 'upgrade', ports, {
    bootIdBefore: bootIdOf(node),
    upgrade,
  });
}

/** Seconds from the accepted upgrade to the node back on its target. */
export function upgradeSeconds(ports: MachinePorts): number {
  return ports.power.deadlines.upgradeSeconds ?? DEFAULT_UPGRADE_SECONDS;
}

/** How often a node back with a new boot is asked its version again while it is not judged. */
const VERSION_RECHECK_MS = 5_000;

/** The most of Talos's error quoted in a message (the rest is in the operator's log). */
const TALOS_ERROR_CHARS = 300;

/** What the machine's Talos API answered for its version: the tag, or why it did not. */
type TalosVersionReading = { version: string } | { unanswered: string };

async function readTalosVersion(
  ports: MachinePorts,
  node: NodeView | undefined,
): Promise<TalosVersionReading> {
  if (!ports.power.talosVersion) {
    return { unanswered: 'the power channel reads no Talos version' };
  }
  try {
    return { version: await ports.power.talosVersion(node) };
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    return { unanswered: text.slice(0, TALOS_ERROR_CHARS) };
  }
}

/**
 * Rebooting, intent upgrade: parks until the node is Ready with a new boot ID, then
 * judges the version it came back on by two witnesses, the Node's osImage (the kubelet's
 * report) and the machine's own Talos API (`Version`, after the channel's identity
 * check). Done only when both name the target; both naming another version is a
 * failure (Talos boots the previous version when the new one fails to come up, so the
 * old version is a rollback, named as such). While they disagree, or Talos does not
 * answer, the row holds (a gate that cannot see does not pass) until the upgrade
 * deadline, then fails naming what it saw.
 */
export const upgrading: Row = async (nm, ports) => {
  const nodeName = nm.spec.nodeName;
  const node = ports.view.node(nodeName);
  const bootId = bootIdOf(node);
  const upgrade = nm.status?.upgrade;
  const target =
    upgrade?.toVersion ?? talosVersionOfImage(nm.spec.upgrade?.image ?? '');
  const seconds = upgradeSeconds(ports);
  const left = timeLeft(nm.status?.rebootSentAt, seconds, ports);
  const failed = (message: string, status?: Partial<NodeMaintenanceStatus>) =>
    ({
      kind: 'transition',
      to: 'Failed',
      message: `${message} The node is left cordoned.`,
      status,
      event: { type: 'Warning', reason: MaintenanceReason.UpgradeFailed },
    } as const);
  if (isNodeReady(node) && bootId && bootId !== nm.status?.bootIdBefore) {
    const osImage = node?.status?.nodeInfo?.osImage;
    const byNode = talosVersionOfNode(node);
    const nodeSays =
      byNode ?? `no version (osImage ${JSON.stringify(osImage ?? '')})`;
    const talos = await readTalosVersion(ports, node);
    if ('version' in talos && byNode && talos.version === byNode) {
      const running = byNode;
      const status = upgrade ? { ...upgrade, cameBackOn: running } : upgrade;
      if (running === target) {
        return {
          kind: 'transition',
          to: 'Returning',
          message: `${nodeName} is back on ${target}${
            upgrade?.fromVersion ? ` (was ${upgrade.fromVersion})` : ''
          }: Ready with boot ID ${bootId}, its Node and Talos both report ${target}`,
          status: { returnedAt: isoOf(ports), upgrade: status },
        };
      }
      const rolledBack =
        running === upgrade?.fromVersion
          ? ' (Talos rolled the upgrade back)'
          : '';
      return failed(
        `${nodeName} came back on ${running}, not ${target}${rolledBack}.`,
        { upgrade: status },
      );
    }
    const seen =
      'version' in talos
        ? `its Node's osImage says ${nodeSays}, Talos reports ${talos.version}`
        : `its Node's osImage says ${nodeSays}, and Talos did not answer its version (${talos.unanswered})`;
    if (left <= 0) {
      return failed(
        'version' in talos
          ? `${nodeName} came back with boot ID ${bootId}, but its versions did not agree on ${target} within ${seconds}s of the upgrade: ${seen}.`
          : `${nodeName} came back with boot ID ${bootId}, but Talos did not answer its version within ${seconds}s of the upgrade, so it cannot be judged on ${target}: ${seen}.`,
      );
    }
    // Said once in status.message (kubectl shows why it holds), then waited on.
    const message = `${nodeName} is back with boot ID ${bootId}; waiting for its Node and Talos to agree on ${target}: ${seen}`;
    if (fitMaintenanceMessage(message) !== nm.status?.message) {
      return { kind: 'record', message, status: {} };
    }
    return {
      kind: 'wait',
      message,
      requeueAfterMs: Math.min(left, VERSION_RECHECK_MS),
    };
  }
  if (left <= 0) {
    return failed(
      `${nodeName} did not come back on ${target} within ${seconds}s of the upgrade (${
        isNodeReady(node)
          ? 'Ready, but with the boot ID from before'
          : 'not Ready'
      }).`,
    );
  }
  return {
    kind: 'wait',
    message: `waiting for ${nodeName} to come back on ${target} with a new boot ID`,
    requeueAfterMs: left,
  };
};
