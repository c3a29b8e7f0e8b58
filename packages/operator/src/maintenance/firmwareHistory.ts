/*
 * The ServerBMC's firmware history (docs/upgrades.md, "The BMC's firmware history"): each
 * firmware maintenance that ended after its update was recorded (Complete, or Failed once
 * something may have reached the BMC) leaves one entry on its node's ServerBMC
 * (`status.firmwareHistory`): when, which maintenance, the image and each component's
 * version before and after. Written once per maintenance (keyed by its uid), so a second
 * reconcile, or a new leader after a restart, finds it there and writes nothing; the last
 * MAX_FIRMWARE_HISTORY are kept.
 */
import {
  MAX_FIRMWARE_HISTORY,
  MAX_FIRMWARE_HISTORY_COMPONENTS,
  type FirmwareComponent,
  type FirmwareHistoryEntry,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';

/** The ServerBMC's history as this process reads and writes it. */
export interface FirmwareHistoryPort {
  /** The node's ServerBMC's history as last seen; undefined when it has no ServerBMC. */
  read(nodeName: string): FirmwareHistoryEntry[] | undefined;
  /**
   * Writes `next` as the node's history, only if the ServerBMC is still the version read
   * (a conflict throws; the next reconcile reads again).
   */
  write(nodeName: string, next: FirmwareHistoryEntry[]): Promise<void>;
}

/** The component a target names: its @odata.id, or its Id (the link's last segment). */
function named(component: FirmwareComponent, target: string): boolean {
  return (
    component.id === target ||
    component.id.replace(/\/+$/, '').split('/').pop() === target
  );
}

/**
 * The entry a firmware maintenance leaves, or undefined while it has none to leave: not a
 * firmware update, not ended, or ended before its update was recorded (a refusal sent
 * nothing). The components are the targeted ones (without targets, those whose version
 * changed; none changed: every one read before), at most 16.
 */
export function firmwareHistoryEntry(
  nm: NodeMaintenance,
): FirmwareHistoryEntry | undefined {
  const phase = nm.status?.phase;
  if (nm.spec.intent !== 'firmware' || !nm.spec.firmware) return undefined;
  if (phase !== 'Complete' && phase !== 'Failed') return undefined;
  if (!nm.status?.power?.firmware?.recordedAt) return undefined;
  const before = nm.status.firmware?.before ?? [];
  const after = nm.status.firmware?.after ?? [];
  const ids = [...new Set([...before, ...after].map(c => c.id))];
  const versions = ids.map(id => ({
    id,
    before: before.find(c => c.id === id)?.version,
    after: after.find(c => c.id === id)?.version,
  }));
  const targets = nm.spec.firmware.targets;
  let components = versions;
  if (targets && targets.length > 0) {
    components = versions.filter(v =>
      targets.some(t => named({ id: v.id, name: '', version: '' }, t)),
    );
  } else {
    const changed = versions.filter(
      v => v.after !== undefined && v.after !== v.before,
    );
    if (changed.length > 0) components = changed;
  }
  const at =
    [...(nm.status.history ?? [])].reverse().find(h => h.phase === phase)?.at ??
    nm.status.power.firmware.recordedAt;
  return {
    at,
    maintenance: nm.metadata.name,
    ...(nm.metadata.uid ? { uid: nm.metadata.uid } : {}),
    imageURI: nm.spec.firmware.imageURI,
    result: phase,
    components: components.slice(0, MAX_FIRMWARE_HISTORY_COMPONENTS).map(c => ({
      id: c.id,
      ...(c.before !== undefined ? { before: c.before } : {}),
      ...(c.after !== undefined ? { after: c.after } : {}),
    })),
  };
}

/** Whether `history` already holds the entry of this maintenance (its uid, else its name). */
function holds(
  history: readonly FirmwareHistoryEntry[],
  entry: FirmwareHistoryEntry,
): boolean {
  return history.some(h =>
    entry.uid !== undefined
      ? h.uid === entry.uid
      : h.uid === undefined && h.maintenance === entry.maintenance,
  );
}

/**
 * The history with `entry` appended (the oldest dropped past MAX_FIRMWARE_HISTORY), or
 * undefined when it already holds it: nothing to write.
 */
export function appendFirmwareHistory(
  history: readonly FirmwareHistoryEntry[],
  entry: FirmwareHistoryEntry,
): FirmwareHistoryEntry[] | undefined {
  if (holds(history, entry)) return undefined;
  return [...history, entry].slice(-MAX_FIRMWARE_HISTORY);
}

/**
 * Leaves the maintenance's entry on its node's ServerBMC if it has one to leave and it is
 * not there yet. Answers whether it wrote.
 */
export async function recordFirmwareHistory(
  nm: NodeMaintenance | undefined,
  port: FirmwareHistoryPort,
): Promise<boolean> {
  if (!nm) return false;
  const entry = firmwareHistoryEntry(nm);
  if (!entry) return false;
  const history = port.read(nm.spec.nodeName);
  if (history === undefined) return false;
  const next = appendFirmwareHistory(history, entry);
  if (!next) return false;
  await port.write(nm.spec.nodeName, next);
  return true;
}
