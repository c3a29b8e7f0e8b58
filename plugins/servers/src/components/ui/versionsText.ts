/*
 * What the portal says of the versions a server runs (issue 47, docs/upgrades.md): its
 * Talos version (from the Node's osImage, on the row) and, from the BMC's firmware
 * inventory as last read, the BIOS and the BMC's own firmware.
 */

/** A firmware component as a health reading or a maintenance's status lists it. */
export interface FirmwareVersion {
  name: string;
  version: string;
  id?: string;
}

// Vendors name them differently: Redfish's FirmwareInventory has no type field for this.
const BIOS_NAME = /\b(bios|uefi|system ?rom|host firmware)\b/i;
const BMC_NAME = /\b(bmc|idrac|ilo|xcc|imm2?|ipmi|management controller)\b/i;

/**
 * The BIOS's and the BMC's versions in an inventory (the first component whose name or id
 * says which); absent when none does.
 */
export function biosAndBmcOf(firmware: readonly FirmwareVersion[]): {
  bios?: string;
  bmc?: string;
} {
  const find = (pattern: RegExp) =>
    firmware.find(c => pattern.test(c.name) || pattern.test(c.id ?? ''))
      ?.version;
  const bios = find(BIOS_NAME);
  const bmc = find(BMC_NAME);
  return {
    ...(bios !== undefined ? { bios } : {}),
    ...(bmc !== undefined ? { bmc } : {}),
  };
}

/** One component's version before and after a firmware update, and whether it changed. */
export interface FirmwareChange {
  name: string;
  before?: string;
  after?: string;
  changed: boolean;
}

/**
 * The components of a firmware update's inventories side by side (matched by id, else by
 * name), in the order the BMC listed them before.
 */
export function firmwareChanges(
  before: readonly FirmwareVersion[],
  after: readonly FirmwareVersion[] | undefined,
): FirmwareChange[] {
  const keyOf = (c: FirmwareVersion) => c.id ?? c.name;
  const afterByKey = new Map((after ?? []).map(c => [keyOf(c), c]));
  const rows: FirmwareChange[] = before.map(c => {
    const later = afterByKey.get(keyOf(c));
    afterByKey.delete(keyOf(c));
    return {
      name: c.name || keyOf(c),
      before: c.version,
      ...(later ? { after: later.version } : {}),
      changed: later !== undefined && later.version !== c.version,
    };
  });
  // A component that appeared only after (the BMC renamed or added one).
  for (const c of afterByKey.values()) {
    rows.push({ name: c.name || keyOf(c), after: c.version, changed: true });
  }
  return rows;
}
