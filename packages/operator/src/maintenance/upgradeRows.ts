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
 *   Rebooting -> Returning  Ready with a new boot ID, reporting the target version
 *             -> Failed     back on another version (Talos rolled the upgrade back), or
 *                           not back on the target by the upgrade deadline
 */
import {
  isNodeReady,
  talosVersionOfImage,
  talosVersionOfOsImage,
  whyForceRefused,
  whyUpgradeImageRefused,
  type NodeMaintenance,
  type UpgradeStatus,
} from '@rackside/plugin-servers-common';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import { isoOf } from '../runtime/lifecycle/table';
import { refuse } from './guardCheck';
import { sendTimeRefusal } from './powerRows';
import { bootIdOf, recordAndSend, timeLeft } from './powerSend';
import { settleUnanswered } from './powerSettle';
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

/**
 * Rebooting, intent upgrade: parks until the node is Ready with a new boot ID, then
 * judges the version it reports. Talos boots the previous version when the new one fails
 * to come up, so a node back on the old version is a rollback, named as such.
 */
export const upgrading: Row = async (nm, ports) => {
  const nodeName = nm.spec.nodeName;
  const node = ports.view.node(nodeName);
  const bootId = bootIdOf(node);
  const upgrade = nm.status?.upgrade;
  const target =
    upgrade?.toVersion ?? talosVersionOfImage(nm.spec.upgrade?.image ?? '');
  if (isNodeReady(node) && bootId && bootId !== nm.status?.bootIdBefore) {
    const running = talosVersionOfNode(node);
    const status =
      upgrade && running ? { ...upgrade, cameBackOn: running } : upgrade;
    if (running && running === target) {
      return {
        kind: 'transition',
        to: 'Returning',
        message: `${nodeName} is back on ${target}${
          upgrade?.fromVersion ? ` (was ${upgrade.fromVersion})` : ''
        }: Ready with boot ID ${bootId}`,
        status: { returnedAt: isoOf(ports), upgrade: status },
      };
    }
    const osImage = node?.status?.nodeInfo?.osImage;
    const rolledBack =
      running && running === upgrade?.fromVersion
        ? ' (Talos rolled the upgrade back)'
        : '';
    return {
      kind: 'transition',
      to: 'Failed',
      message: `${nodeName} came back on ${
        running ??
        `an unknown version (osImage ${JSON.stringify(osImage ?? '')})`
      }, not ${target}${rolledBack}. The node is left cordoned.`,
      status: { upgrade: status },
      event: { type: 'Warning', reason: MaintenanceReason.UpgradeFailed },
    };
  }
  const seconds = upgradeSeconds(ports);
  const left = timeLeft(nm.status?.rebootSentAt, seconds, ports);
  if (left <= 0) {
    return {
      kind: 'transition',
      to: 'Failed',
      message: `${nodeName} did not come back on ${target} within ${seconds}s of the upgrade (${
        isNodeReady(node)
          ? 'Ready, but with the boot ID from before'
          : 'not Ready'
      }). The node is left cordoned.`,
      event: { type: 'Warning', reason: MaintenanceReason.UpgradeFailed },
    };
  }
  return {
    kind: 'wait',
    message: `waiting for ${nodeName} to come back on ${target} with a new boot ID`,
    requeueAfterMs: left,
  };
};
