/*
 * The rows of the table (table.ts) for intent `firmware` (docs/upgrades.md, "Firmware"): a
 * Redfish firmware update drains like a reboot, then, in Drained, is checked again and
 * sent once as UpdateService.SimpleUpdate on the node's BMC, recorded before the call
 * (`status.power.firmware`, powerSend.ts) with the FirmwareInventory as it was. The BMC's
 * task is then followed one bounded read per reconcile (a requeue, never a loop that
 * holds the worker); the reset it asks for goes out through the same send-once record as
 * a reboot (`status.power.reboot`); the update is Done only when the inventory reports a
 * new version for the targeted components.
 *
 *   (new)     -> Refused    the image is outside --firmware-sources, its source requires
 *                           a checksum and it has none, the channel is not redfish, or
 *                           the BMC's last health reading is already at spec.firmware.version
 *   Drained   -> Refused    any of the above, the guard, the ceremony, a BMC without an
 *                           UpdateService, the inventory already at the version, or an
 *                           image whose sha256 is not spec.firmware.checksum: nothing is sent
 *             -> (record)   inventory before, then SimpleUpdate recorded and sent
 *             -> (record)   the task's state as it moves
 *             -> Rebooting  the task completed and the update applies on reset: the
 *                           reset recorded, then sent
 *             -> Returning  the task completed and the inventory reports the new versions
 *             -> Failed     the task failed, the versions did not change (or changed
 *                           to another than spec.firmware.version), or no end by the
 *                           deadline
 *   Rebooting -> Returning  back with a new boot ID, the inventory reporting new versions
 *             -> Failed     back, the versions unchanged; or not back by the deadline
 */
import {
  firmwareAlreadyAt,
  isNodeReady,
  parseFirmwareSource,
  whyFirmwareChecksumMissing,
  whyFirmwareSourceRefused,
  type FirmwareComponent,
  type FirmwareStatus,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import { isoOf } from '../runtime/lifecycle/table';
import { refuse } from './guardCheck';
import { sendTimeRefusal } from './powerRows';
import { bootIdOf, recordAndSend, timeLeft } from './powerSend';
import { settleUnanswered } from './powerSettle';
import type { ChecksumReading, Decision, MachinePorts, Row } from './types';

/** A firmware update not applied this long after the BMC accepted it fails (default). */
export const DEFAULT_FIRMWARE_SECONDS = 3600;
/** How often a running task is read again. */
export const FIRMWARE_TASK_POLL_MS = 2000;

const LEFT =
  'The node is left cordoned and drained; return it to service to bring it back.';

function failed(message: string, status?: FirmwareStatus): Decision {
  return {
    kind: 'transition',
    to: 'Failed',
    message: message.slice(0, 4096),
    ...(status ? { status: { firmware: status } } : {}),
    event: { type: 'Warning', reason: MaintenanceReason.FirmwareFailed },
  };
}

/**
 * What refuses a firmware update before anything is sent, at admission and again right
 * before it is recorded: an image outside `--firmware-sources` (whoever wrote the
 * object), or a power channel that is not redfish (the only one that reaches a BMC).
 */
export function firmwareRefusal(
  nm: NodeMaintenance,
  ports: MachinePorts,
  at: 'admission' | 'send',
): Decision | undefined {
  if (nm.spec.intent !== 'firmware') return undefined;
  const nodeName = nm.spec.nodeName;
  const tail = at === 'send' ? ` ${LEFT}` : '';
  const request = nm.spec.firmware;
  if (!request) {
    const reason = `firmware update of ${nodeName} refused: spec.firmware is missing.`;
    return refuse(reason, 'capability', { reason });
  }
  const sourceRefused = whyFirmwareSourceRefused(
    request.imageURI,
    ports.upgrades?.firmwareSources ?? [],
  );
  if (sourceRefused) {
    const reason =
      `firmware update of ${nodeName} was not sent: ${sourceRefused}.${tail}`.slice(
        0,
        4096,
      );
    return refuse(reason, 'capability', { reason });
  }
  const checksumRefused = whyFirmwareChecksumMissing(
    request,
    operatorFirmwareSources(ports),
  );
  if (checksumRefused) {
    const reason =
      `firmware update of ${nodeName} was not sent: ${checksumRefused} (--firmware-sources-requiring-checksum).${tail}`.slice(
        0,
        4096,
      );
    return refuse(reason, 'capability', { reason });
  }
  const incapable = firmwareCapabilityRefusal(nm, ports, undefined, tail);
  if (incapable) return incapable;
  if (at === 'admission') {
    // The BMC's last health reading already reports the version: nothing is drained.
    // The inventory is read again right before sending (sendFirmwareFromDrained).
    const already = firmwareAlreadyAt(
      request.version,
      ports.view.firmwareReading?.(nodeName),
      request.targets,
    );
    if (already) return alreadyAtRefusal(nodeName, already, 'health', '');
  }
  return undefined;
}

/** The operator's sources as the rule reads them: each origin, and whether it requires a checksum. */
function operatorFirmwareSources(ports: MachinePorts) {
  const required = new Set(
    (ports.upgrades?.firmwareChecksumRequired ?? []).flatMap(source => {
      const origin = parseFirmwareSource(source);
      return origin ? [origin] : [];
    }),
  );
  return (ports.upgrades?.firmwareSources ?? []).flatMap(source => {
    const origin = parseFirmwareSource(source);
    return origin ? [{ origin, checksumRequired: required.has(origin) }] : [];
  });
}

/** Refused: every targeted component already reports the version asked. */
function alreadyAtRefusal(
  nodeName: string,
  already: string,
  readFrom: 'health' | 'inventory',
  tail: string,
): Decision {
  const reason = `firmware update of ${nodeName} refused: ${already} (${
    readFrom === 'health'
      ? "the BMC's last health reading"
      : "the BMC's FirmwareInventory"
  } reports it for the targeted components); nothing was sent.${tail}`;
  return refuse(reason.slice(0, 4096), 'upgrade', {
    reason: reason.slice(0, 4096),
  });
}

/**
 * The capability rule for a firmware update (servers-common `invokeFirmware`, the rule the
 * backend applies too): a redfish channel that knows the node's BMC, and, once read, an
 * UpdateService on it.
 */
function firmwareCapabilityRefusal(
  nm: NodeMaintenance,
  ports: MachinePorts,
  updateService: boolean | undefined,
  tail: string,
): Decision | undefined {
  const nodeName = nm.spec.nodeName;
  const node = ports.view.node(nodeName);
  const channel = ports.power.channelType();
  const result =
    ports.power.checkFirmware?.(node, updateService) ??
    (channel === 'redfish'
      ? { ok: true as const }
      : {
          ok: false as const,
          reason: `A firmware update goes through a BMC's Redfish UpdateService, and the power channel is ${
            channel ?? 'none'
          }.`,
        });
  if (result.ok) return undefined;
  const reason = `firmware update of ${nodeName} was not sent: ${result.reason}${tail}`;
  return refuse(reason.slice(0, 4096), 'capability', {
    reason: reason.slice(0, 4096),
  });
}

/** Seconds from the accepted update to its new versions reported. */
export function firmwareSeconds(ports: MachinePorts): number {
  return ports.power.deadlines.upgradeSeconds ?? DEFAULT_FIRMWARE_SECONDS;
}

/** The component a target names: its @odata.id, or its Id (the link's last segment). */
function matches(component: FirmwareComponent, target: string): boolean {
  return (
    component.id === target ||
    component.id.replace(/\/+$/, '').split('/').pop() === target
  );
}

/**
 * With a version asked (spec.firmware.version), the components that changed must report
 * it: a different new version is not the update asked, named with both.
 */
function notTheVersion(
  changed: Array<{ after: FirmwareComponent; before?: FirmwareComponent }>,
  version: string | undefined,
): string | undefined {
  if (version === undefined) return undefined;
  const other = changed.filter(p => p.after.version !== version);
  if (other.length === 0) return undefined;
  return other
    .map(
      p =>
        `${p.after.name || p.after.id} ${p.before?.version ?? '(new)'} -> ${
          p.after.version
        }, not ${version}`,
    )
    .join('; ');
}

/**
 * Whether the update is applied: every targeted component (every component, without
 * targets: at least one) reports a version other than before. Answers the sentence
 * for the message either way.
 */
export function judgeVersions(
  before: FirmwareComponent[],
  after: FirmwareComponent[],
  targets: readonly string[] | undefined,
  version?: string,
): { changed: boolean; text: string; otherVersion?: boolean } {
  const pairs = after.map(a => ({
    after: a,
    before: before.find(b => b.id === a.id),
  }));
  const line = (p: (typeof pairs)[number]) =>
    `${p.after.name || p.after.id} ${p.before?.version ?? '(new)'} -> ${
      p.after.version
    }`;
  if (targets && targets.length > 0) {
    const targeted = targets.map(t => ({
      target: t,
      pair: pairs.find(p => matches(p.after, t)),
    }));
    const missing = targeted.filter(t => !t.pair).map(t => t.target);
    if (missing.length > 0) {
      return {
        changed: false,
        text: `the FirmwareInventory has no ${missing.join(', ')}`,
      };
    }
    const same = targeted.filter(
      t => t.pair!.before?.version === t.pair!.after.version,
    );
    if (same.length > 0) {
      return {
        changed: false,
        text: `the FirmwareInventory reports no new version: ${same
          .map(
            t =>
              `${t.pair!.after.name || t.target} still ${
                t.pair!.after.version
              }`,
          )
          .join(', ')}`,
      };
    }
    const other = notTheVersion(
      targeted.map(t => t.pair!),
      version,
    );
    if (other) return { changed: false, otherVersion: true, text: other };
    return { changed: true, text: targeted.map(t => line(t.pair!)).join(', ') };
  }
  const updated = pairs.filter(p => p.before?.version !== p.after.version);
  if (updated.length === 0) {
    return {
      changed: false,
      text: 'the FirmwareInventory reports no new version for any component',
    };
  }
  const other = notTheVersion(updated, version);
  if (other) return { changed: false, otherVersion: true, text: other };
  return { changed: true, text: updated.map(line).join(', ') };
}

/**
 * Reads the inventory after the update and answers Returning or Failed. With `untilDeadline`
 * (an update whose answer was lost: no task to follow) an unchanged inventory is read again
 * until the deadline instead of failing at once, since the BMC may still be applying it.
 */
async function judgeApplied(
  nm: NodeMaintenance,
  ports: MachinePorts,
  status: FirmwareStatus,
  since: string | undefined,
  untilDeadline = false,
): Promise<Decision> {
  const nodeName = nm.spec.nodeName;
  const node = ports.view.node(nodeName);
  let after: FirmwareComponent[];
  try {
    after = await ports.power.firmware!.inventory(node);
  } catch (error) {
    const seconds = firmwareSeconds(ports);
    const left = timeLeft(since, seconds, ports);
    if (left <= 0) {
      return failed(
        `the FirmwareInventory of ${nodeName}'s BMC could not be read within ${seconds}s of the update: ${
          (error as Error).message
        }. The node is left cordoned.`,
        status,
      );
    }
    return {
      kind: 'wait',
      message: `reading the FirmwareInventory of ${nodeName} again: ${
        (error as Error).message
      }`.slice(0, 1024),
      requeueAfterMs: Math.min(left, FIRMWARE_TASK_POLL_MS * 5),
    };
  }
  const judged = judgeVersions(
    status.before,
    after,
    nm.spec.firmware?.targets,
    nm.spec.firmware?.version,
  );
  const recorded: FirmwareStatus = { ...status, after };
  if (judged.otherVersion) {
    return failed(
      `firmware update of ${nodeName} did not reach ${nm.spec.firmware?.version}: ${judged.text}. The node is left cordoned.`,
      recorded,
    );
  }
  if (judged.changed) {
    return {
      kind: 'transition',
      to: 'Returning',
      message: `firmware of ${nodeName} updated: ${judged.text}`.slice(0, 4096),
      status: { returnedAt: isoOf(ports), firmware: recorded },
    };
  }
  if (untilDeadline) {
    const seconds = firmwareSeconds(ports);
    const left = timeLeft(since, seconds, ports);
    if (left > 0) {
      return {
        kind: 'wait',
        message: `the firmware update of ${nodeName} was recorded but its answer was lost; it is not sent again: waiting for the FirmwareInventory to report a new version`,
        requeueAfterMs: Math.min(left, FIRMWARE_TASK_POLL_MS * 5),
      };
    }
    return failed(
      `firmware update of ${nodeName} was recorded at ${since} but no answer of the BMC was recorded, and ${judged.text} after ${seconds}s. It is not sent again: look at the BMC. The node is left cordoned.`,
      recorded,
    );
  }
  const said = status.messages?.length
    ? ` The BMC said: ${status.messages.join(' ')}`
    : '';
  return failed(
    `firmware update of ${nodeName} did not apply: ${judged.text}.${said} The node is left cordoned.`,
    recorded,
  );
}

/** The task as last recorded moved enough to be written again (its state, or 10 points). */
function moved(status: FirmwareStatus, state: string, percent?: number) {
  if (status.taskState !== state) return true;
  if (percent === undefined) return false;
  return Math.abs((status.percent ?? 0) - percent) >= 10;
}

/**
 * Drained, intent firmware: before the update, the checks again (firmwareRefusal, the
 * guard and the ceremony as for a reboot, an UpdateService on the BMC), the inventory
 * read, then SimpleUpdate recorded and sent once. After it, one read of the task per
 * reconcile until it ends; then the reset it asks for, or the versions judged.
 */
export async function sendFirmwareFromDrained(
  nm: NodeMaintenance,
  ports: MachinePorts,
): Promise<Decision> {
  const nodeName = nm.spec.nodeName;
  const power = nm.status?.power;
  // The reset recorded: it is settled as any reboot, never sent again.
  if (power?.reboot) return settleUnanswered(nm, 'reboot', ports);
  const record = power?.firmware;
  const status = nm.status?.firmware;
  if (record && status) {
    if (!record.sentAt) {
      // Recorded, and the BMC's answer was lost: nothing tells whether a task runs.
      // Never sent again; the inventory says whether it was applied (an Immediate
      // update), else it fails for a person to look.
      return judgeApplied(nm, ports, status, record.recordedAt, true);
    }
    return followTask(nm, ports, status, record.sentAt);
  }
  const refused = firmwareRefusal(nm, ports, 'send');
  if (refused) return refused;
  const guarded = sendTimeRefusal(nm, 'firmware', ports);
  if (guarded) return guarded;
  // Before the BMC's reads: while the image is fetched, the row waits without asking the BMC.
  const mismatch = checksumRefusal(nm, ports);
  if (mismatch) return mismatch;
  const reads = ports.power.firmware;
  const node = ports.view.node(nodeName);
  if (!reads) {
    const reason = `firmware update of ${nodeName} was not sent: the power channel reads no firmware. ${LEFT}`;
    return refuse(reason, 'capability', { reason });
  }
  let before: FirmwareComponent[];
  try {
    const offered = await reads.offered(node);
    const incapable = firmwareCapabilityRefusal(nm, ports, offered, ` ${LEFT}`);
    if (incapable) return incapable;
    if (!offered) {
      const reason = `firmware update of ${nodeName} was not sent: its BMC offers no Redfish UpdateService (no SimpleUpdate and no multipart push). ${LEFT}`;
      return refuse(reason, 'capability', { reason });
    }
    before = await reads.inventory(node);
  } catch (error) {
    return failed(
      `firmware update of ${nodeName} was not sent: the BMC's UpdateService or FirmwareInventory could not be read (${
        (error as Error).message
      }). ${LEFT}`,
    );
  }
  const request = nm.spec.firmware!;
  // Read from the BMC at the moment it acts: the health reading may be old.
  const already = firmwareAlreadyAt(request.version, before, request.targets);
  if (already)
    return alreadyAtRefusal(nodeName, already, 'inventory', ` ${LEFT}`);
  return recordAndSend(nm, 'firmware', ports, { firmware: { before } });
}

/**
 * With spec.firmware.checksum: the operator fetches the image itself (bounded, hashed as
 * it streams in) and refuses before anything is recorded or sent when its sha256 is
 * another. The fetch runs in the background (this row holds the admission lock): while
 * it runs the row waits, and checks everything again when it asks next. With
 * SimpleUpdate the BMC fetches the image again afterwards (docs/upgrades.md,
 * "Checksums"); a multipart push uploads bytes the channel checks once more.
 */
function checksumRefusal(
  nm: NodeMaintenance,
  ports: MachinePorts,
): Decision | undefined {
  const request = nm.spec.firmware!;
  if (!request.checksum) return undefined;
  const nodeName = nm.spec.nodeName;
  const shown = imageShown(request.imageURI);
  const checksumOf = ports.power.firmware?.checksum;
  const reading: ChecksumReading = checksumOf
    ? checksumOf(request.imageURI)
    : { state: 'failed', message: 'the power channel fetches no image' };
  if (reading.state === 'fetching') {
    return {
      kind: 'wait',
      message: `fetching ${shown} to check its sha256 before the update of ${nodeName} is sent`,
      requeueAfterMs: FIRMWARE_TASK_POLL_MS,
    };
  }
  if (reading.state === 'failed') {
    const reason = `firmware update of ${nodeName} was not sent: the image ${shown} could not be fetched to check its checksum (${reading.message}). ${LEFT}`;
    return refuse(reason.slice(0, 4096), 'capability', {
      reason: reason.slice(0, 4096),
    });
  }
  if (reading.checksum === request.checksum) return undefined;
  const reason = `firmware update of ${nodeName} was not sent: the checksum of ${shown} is ${reading.checksum}, not ${request.checksum}. ${LEFT}`;
  return refuse(reason.slice(0, 4096), 'capability', {
    reason: reason.slice(0, 4096),
  });
}

/** An image URI as a message shows it: origin and path, never a query. */
function imageShown(imageURI: string): string {
  try {
    const url = new URL(imageURI);
    return `${url.origin}${url.pathname}`;
  } catch {
    return JSON.stringify(imageURI.slice(0, 200));
  }
}

async function followTask(
  nm: NodeMaintenance,
  ports: MachinePorts,
  status: FirmwareStatus,
  sentAt: string,
): Promise<Decision> {
  const nodeName = nm.spec.nodeName;
  const node = ports.view.node(nodeName);
  const seconds = firmwareSeconds(ports);
  const left = timeLeft(sentAt, seconds, ports);
  if (!status.taskUri) {
    // The BMC named no task: the inventory alone says whether it applied.
    return judgeApplied(nm, ports, status, sentAt);
  }
  let reading;
  try {
    reading = await ports.power.firmware!.task(node, status.taskUri);
  } catch (error) {
    if (left <= 0) {
      return failed(
        `the firmware task of ${nodeName} could not be read within ${seconds}s of the update: ${
          (error as Error).message
        }. The node is left cordoned.`,
        status,
      );
    }
    return {
      kind: 'wait',
      message: `reading the firmware task of ${nodeName} again: ${
        (error as Error).message
      }`.slice(0, 1024),
      requeueAfterMs: Math.min(left, FIRMWARE_TASK_POLL_MS * 5),
    };
  }
  const now: FirmwareStatus = {
    ...status,
    taskState: reading.state,
    ...(reading.percent !== undefined ? { percent: reading.percent } : {}),
    ...(reading.messages.length ? { messages: reading.messages } : {}),
    checkedAt: isoOf(ports),
  };
  if (reading.failed) {
    return failed(
      `the firmware task of ${nodeName} ended ${reading.state}${
        reading.messages.length
          ? `: ${reading.messages.join(' ')}`
          : ' without a message'
      }. The node is left cordoned.`,
      now,
    );
  }
  if (!reading.finished) {
    if (left <= 0) {
      return failed(
        `the firmware task of ${nodeName} did not end within ${seconds}s (last ${
          reading.state
        }${
          reading.percent !== undefined ? `, ${reading.percent}%` : ''
        }). The node is left cordoned.`,
        now,
      );
    }
    if (moved(status, reading.state, reading.percent)) {
      return {
        kind: 'record',
        message: `firmware task of ${nodeName}: ${reading.state}${
          reading.percent !== undefined ? ` ${reading.percent}%` : ''
        }`,
        status: { firmware: now },
      };
    }
    return {
      kind: 'wait',
      message: `following the firmware task of ${nodeName} (${reading.state})`,
      requeueAfterMs: Math.min(left, FIRMWARE_TASK_POLL_MS),
    };
  }
  const onReset =
    nm.spec.firmware?.applyTime === 'OnReset' || reading.resetRequired;
  if (onReset) {
    // The reset that applies it: recorded first, sent once, settled like a reboot.
    return recordAndSend(nm, 'reboot', ports, {
      bootIdBefore: bootIdOf(node),
      firmware: now,
    });
  }
  return judgeApplied(nm, ports, now, sentAt);
}

/**
 * Rebooting, intent firmware: the reset the update asked for went out. Parks until the
 * node is Ready with a new boot ID, then judges the versions the inventory reports.
 */
export const firmwareRebooting: Row = async (nm, ports) => {
  const nodeName = nm.spec.nodeName;
  const node = ports.view.node(nodeName);
  const bootId = bootIdOf(node);
  const status = nm.status?.firmware ?? { before: [] };
  if (isNodeReady(node) && bootId && bootId !== nm.status?.bootIdBefore) {
    return judgeApplied(nm, ports, status, nm.status?.rebootSentAt);
  }
  const seconds = ports.power.deadlines.rebootSeconds;
  const left = timeLeft(nm.status?.rebootSentAt, seconds, ports);
  if (left <= 0) {
    return failed(
      `${nodeName} did not come back with a new boot ID within ${seconds}s of the reset that applies its firmware update. The node is left cordoned.`,
      status,
    );
  }
  return {
    kind: 'wait',
    message: `waiting for ${nodeName} to come back from the reset that applies its firmware`,
    requeueAfterMs: left,
  };
};
