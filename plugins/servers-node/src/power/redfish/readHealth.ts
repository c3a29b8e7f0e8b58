import {
  HEALTH_LIMITS,
  type BmcLogEntry,
  type HealthPartKind,
  type HealthRollup,
  type PartHealth,
  type ServerFirmwareComponent,
  type ServerHealthPart,
} from '@rackside/plugin-servers-common';
import { RedfishError } from './errors';
import type { RedfishClient } from './RedfishClient';

type Json = Record<string, any>;

/**
 * What one reading of a BMC says, already bounded to `status.health`'s limits (every
 * string cut, every list capped), so a hostile or broken BMC cannot grow the object.
 */
export interface BmcHealthReading {
  rollup: Exclude<HealthRollup, 'Unknown'>;
  /** What `summary()` would have said at the same time (the system and its chassis). */
  summaryRollup: Exclude<HealthRollup, 'Unknown'>;
  state?: string;
  parts: ServerHealthPart[];
  logEntries: BmcLogEntry[];
  firmware: ServerFirmwareComponent[];
  missing: string[];
}

/** The cheap reading: the system's and its chassis' own Status, two requests. */
export interface BmcHealthSummary {
  rollup: Exclude<HealthRollup, 'Unknown'>;
  state?: string;
  /** The chassis read, kept so the next summary need not look it up. */
  chassisPath?: string;
}

/** Inlined members looked at in one collection (a hostile BMC may send millions). */
const MAX_INLINE_MEMBERS = 1000;

const HEALTH_ORDER: Record<PartHealth, number> = {
  OK: 0,
  Warning: 1,
  Critical: 2,
};

/** Redfish's Status.Health as one of ours, or undefined (absent, null, a vendor word). */
export function partHealth(value: unknown): PartHealth | undefined {
  return value === 'OK' || value === 'Warning' || value === 'Critical'
    ? value
    : undefined;
}

/** The worst of some healths; OK when none is known. */
export function worstHealth(
  healths: Iterable<PartHealth | undefined>,
): PartHealth {
  let worst: PartHealth = 'OK';
  for (const health of healths) {
    if (health && HEALTH_ORDER[health] > HEALTH_ORDER[worst]) worst = health;
  }
  return worst;
}

/** A string cut to `max` characters (an ellipsis marks the cut). */
export function clip(value: unknown, max: number): string {
  const text = typeof value === 'string' ? value : String(value ?? '');
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function optionalClip(value: unknown, max: number): string | undefined {
  return typeof value === 'string' && value !== ''
    ? clip(value, max)
    : undefined;
}

function link(resource: Json | undefined, ...keys: string[]): unknown {
  let value: any = resource;
  for (const key of keys) value = value?.[key];
  return value?.['@odata.id'];
}

function isMissing(error: unknown): boolean {
  return error instanceof RedfishError && error.status === 404;
}

/** Members of a collection: their JSON when inlined, else their links. */
function members(collection: Json): unknown[] {
  return Array.isArray(collection.Members) ? collection.Members : [];
}

/**
 * Reads a BMC's health with `client` (same origin check, same rate limiter, same
 * session as the power verbs). A resource the BMC does not offer (no link, or 404) is
 * named in `missing`; any other failure (the BMC down, 401, a link off its origin)
 * fails the reading, since then nothing it says can be trusted to be complete.
 */
export class BmcHealthReader {
  private readonly client: RedfishClient;
  private readonly systemPath: string;
  private chassisPath?: string;
  private expand?: boolean;
  private updateServicePath?: unknown;

  constructor(client: RedfishClient, systemPath: string) {
    this.client = client;
    this.systemPath = systemPath;
  }

  /**
   * Two requests: the system and its first chassis. Their rollups change when any part
   * below them does, which is what tells the sweep a full reading is due.
   */
  async summary(): Promise<BmcHealthSummary> {
    const system = await this.client.get(this.systemPath);
    const chassisPath = this.chassisPath ?? this.firstChassis(system);
    const chassis = chassisPath ? await this.optional(chassisPath) : undefined;
    return {
      rollup: worstHealth([
        ...statusHealths(system),
        ...statusHealths(chassis),
      ]),
      state: optionalClip(system.Status?.State, HEALTH_LIMITS.state),
      chassisPath,
    };
  }

  /** Everything: the summary's resources, then every part, the logs and the firmware. */
  async read(): Promise<BmcHealthReading> {
    const missing = new Set<string>();
    const parts: ServerHealthPart[] = [];
    const system = await this.client.get(this.systemPath);
    const systemHealth = worstHealth(statusHealths(system));
    if (systemHealth !== 'OK') {
      parts.push(
        part('System', system.Name ?? system.Id, systemHealth, system.Status),
      );
    }
    const chassisPath = this.firstChassis(system);
    const chassis = chassisPath ? await this.optional(chassisPath) : undefined;
    if (!chassis) {
      missing.add('Chassis');
    } else {
      const chassisHealth = worstHealth(statusHealths(chassis));
      if (chassisHealth !== 'OK') {
        parts.push(
          part(
            'Other',
            chassis.Name ?? chassis.Id,
            chassisHealth,
            chassis.Status,
          ),
        );
      }
      await this.readPower(chassis, parts, missing);
      await this.readThermal(chassis, parts, missing);
    }
    await this.readDrives(system, parts, missing);
    const logEntries = await this.readLogs(system, missing);
    const firmware = await this.readFirmware(missing);
    const partHealths = parts.map(p => p.health);
    return {
      rollup: worstHealth([
        ...statusHealths(system),
        ...statusHealths(chassis),
        ...partHealths,
      ]),
      summaryRollup: worstHealth([
        ...statusHealths(system),
        ...statusHealths(chassis),
      ]),
      state: optionalClip(system.Status?.State, HEALTH_LIMITS.state),
      parts: parts
        .sort((a, b) => HEALTH_ORDER[b.health] - HEALTH_ORDER[a.health])
        .slice(0, HEALTH_LIMITS.parts),
      logEntries,
      firmware,
      missing: [...missing].slice(0, HEALTH_LIMITS.missing),
    };
  }

  private firstChassis(system: Json): string | undefined {
    const chassis = system.Links?.Chassis;
    const id = Array.isArray(chassis) ? chassis[0]?.['@odata.id'] : undefined;
    if (typeof id === 'string') this.chassisPath = id;
    return typeof id === 'string' ? id : undefined;
  }

  /** GET, or undefined when the BMC answers 404 (it does not offer the resource). */
  private async optional(path: unknown): Promise<Json | undefined> {
    if (typeof path !== 'string') return undefined;
    try {
      return await this.client.get(path);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  /** Whether the service root offers `$expand` (one level is all that is asked). */
  private async canExpand(): Promise<boolean> {
    if (this.expand === undefined) {
      const root = await this.client.get('/redfish/v1');
      this.updateServicePath = link(root, 'UpdateService');
      const expand = root.ProtocolFeaturesSupported?.ExpandQuery;
      this.expand = expand?.Levels === true || expand?.ExpandAll === true;
    }
    return this.expand;
  }

  /**
   * The members of a collection as JSON: one request when the BMC expands it (or inlines
   * them already), else one per member, at most `limit` of them (the last ones when
   * `newestLast`, as log services list entries oldest first).
   */
  private async collection(
    path: unknown,
    limit: number,
    newestLast = false,
  ): Promise<Json[] | undefined> {
    if (typeof path !== 'string') return undefined;
    const expanded = (await this.canExpand())
      ? `${path.split('?')[0]}?$expand=.($levels=1)`
      : path;
    const collection = await this.optional(expanded);
    if (!collection) return undefined;
    const all = members(collection)
      .slice(0, MAX_INLINE_MEMBERS)
      .filter((m): m is Json => Boolean(m) && typeof m === 'object');
    const inline = all.filter(m =>
      Object.keys(m).some(key => !key.startsWith('@odata')),
    );
    // Inlined members cost nothing more: all are kept (the caller sorts and caps).
    if (inline.length === all.length) return all;
    const links = newestLast ? all.slice(-limit) : all.slice(0, limit);
    const result: Json[] = [];
    for (const member of links) {
      const fetched = await this.optional(member['@odata.id']);
      if (fetched) result.push(fetched);
    }
    return result;
  }

  private async readPower(
    chassis: Json,
    parts: ServerHealthPart[],
    missing: Set<string>,
  ) {
    const subsystem = await this.optional(link(chassis, 'PowerSubsystem'));
    if (subsystem) {
      const supplies = await this.collection(
        link(subsystem, 'PowerSupplies'),
        HEALTH_LIMITS.parts,
      );
      for (const supply of supplies ?? []) {
        addPart(parts, 'PowerSupply', supply);
      }
      return;
    }
    const power = await this.optional(link(chassis, 'Power'));
    if (!power) {
      missing.add('Power');
      return;
    }
    // Voltages are left out: a rail out of range shows in its supply or the rollup.
    for (const supply of arrayOf(power.PowerSupplies)) {
      addPart(parts, 'PowerSupply', supply);
    }
  }

  private async readThermal(
    chassis: Json,
    parts: ServerHealthPart[],
    missing: Set<string>,
  ) {
    const subsystem = await this.optional(link(chassis, 'ThermalSubsystem'));
    if (subsystem) {
      const fans = await this.collection(
        link(subsystem, 'Fans'),
        HEALTH_LIMITS.parts,
      );
      for (const fan of fans ?? []) addPart(parts, 'Fan', fan);
      return;
    }
    const thermal = await this.optional(link(chassis, 'Thermal'));
    if (!thermal) {
      missing.add('Thermal');
      return;
    }
    for (const fan of arrayOf(thermal.Fans)) addPart(parts, 'Fan', fan);
    for (const sensor of arrayOf(thermal.Temperatures)) {
      addPart(parts, 'Temperature', sensor);
    }
  }

  private async readDrives(
    system: Json,
    parts: ServerHealthPart[],
    missing: Set<string>,
  ) {
    const storages = await this.collection(
      link(system, 'Storage'),
      HEALTH_LIMITS.parts,
    );
    if (storages) {
      for (const storage of storages) {
        // Drives are read only below a controller that rolls up something not OK: a
        // healthy one spares a request per drive.
        if (worstHealth(statusHealths(storage)) === 'OK') continue;
        const drives = arrayOf(storage.Drives).slice(0, HEALTH_LIMITS.parts);
        for (const drive of drives) {
          const json = await this.optional(drive['@odata.id']);
          if (json) addPart(parts, 'Drive', json);
        }
      }
      return;
    }
    // The older SimpleStorage lists its devices inline.
    const simple = await this.collection(
      link(system, 'SimpleStorage'),
      HEALTH_LIMITS.parts,
    );
    if (!simple) {
      missing.add('Storage');
      return;
    }
    for (const controller of simple) {
      for (const device of arrayOf(controller.Devices)) {
        addPart(parts, 'Drive', device);
      }
    }
  }

  private async readLogs(
    system: Json,
    missing: Set<string>,
  ): Promise<BmcLogEntry[]> {
    const entries: Array<BmcLogEntry | undefined> = [];
    const systemLog = await this.logService(link(system, 'LogServices'));
    if (systemLog) entries.push(...systemLog.map(e => logEntry(e, 'System')));
    const managers = system.Links?.ManagedBy;
    const managerPath = Array.isArray(managers)
      ? managers[0]?.['@odata.id']
      : undefined;
    const manager = await this.optional(managerPath);
    const managerLog = manager
      ? await this.logService(link(manager, 'LogServices'))
      : undefined;
    if (managerLog) {
      entries.push(...managerLog.map(e => logEntry(e, 'Manager')));
    }
    if (!systemLog && !managerLog) missing.add('LogServices');
    return entries
      .filter((e): e is BmcLogEntry => e !== undefined)
      .sort((a, b) => Date.parse(b.created) - Date.parse(a.created))
      .slice(0, HEALTH_LIMITS.logEntries);
  }

  /** The newest entries of a log-services collection's SEL (else Log1, else the first). */
  private async logService(path: unknown): Promise<Json[] | undefined> {
    const services = await this.optional(path);
    if (!services) return undefined;
    const ids = members(services)
      .map(m => (m as Json | null)?.['@odata.id'])
      .filter((id): id is string => typeof id === 'string');
    const chosen =
      ids.find(id => /\/SEL$/i.test(id)) ??
      ids.find(id => /\/Log1$/i.test(id)) ??
      ids[0];
    const service = await this.optional(chosen);
    if (!service) return undefined;
    return this.collection(
      link(service, 'Entries'),
      HEALTH_LIMITS.logEntries,
      true,
    );
  }

  private async readFirmware(
    missing: Set<string>,
  ): Promise<ServerFirmwareComponent[]> {
    // The service root is read once per reader (with what it says of $expand).
    await this.canExpand();
    const update = await this.optional(this.updateServicePath);
    const inventory = update
      ? await this.collection(
          link(update, 'FirmwareInventory'),
          HEALTH_LIMITS.firmware,
        )
      : undefined;
    if (!inventory) {
      missing.add('FirmwareInventory');
      return [];
    }
    return inventory.map(item => ({
      name: clip(item.Name ?? item.Id ?? '', HEALTH_LIMITS.firmwareName),
      version: clip(item.Version ?? '', HEALTH_LIMITS.firmwareVersion),
      updateable: item.Updateable === true,
    }));
  }
}

function arrayOf(value: unknown): Json[] {
  return Array.isArray(value)
    ? value.filter((v): v is Json => Boolean(v) && typeof v === 'object')
    : [];
}

function statusHealths(resource: Json | undefined): PartHealth[] {
  if (!resource) return [];
  return [
    partHealth(resource.Status?.Health),
    partHealth(resource.Status?.HealthRollup),
  ].filter((h): h is PartHealth => h !== undefined);
}

function part(
  kind: HealthPartKind,
  name: unknown,
  health: PartHealth,
  status: Json | undefined,
): ServerHealthPart {
  const conditions = arrayOf(status?.Conditions);
  return {
    kind,
    name: clip(name ?? kind, HEALTH_LIMITS.partName),
    health,
    state: optionalClip(status?.State, HEALTH_LIMITS.partState),
    message: optionalClip(conditions[0]?.Message, HEALTH_LIMITS.partMessage),
  };
}

/** Adds a part that is present and not OK (an Absent bay says nothing of health). */
function addPart(parts: ServerHealthPart[], kind: HealthPartKind, json: Json) {
  if (json.Status?.State === 'Absent') return;
  const health = worstHealth(statusHealths(json));
  if (health === 'OK') return;
  parts.push(
    part(kind, json.Name ?? json.MemberId ?? json.Id, health, json.Status),
  );
}

function logEntry(
  json: Json,
  service: 'System' | 'Manager',
): BmcLogEntry | undefined {
  const created = typeof json.Created === 'string' ? json.Created : undefined;
  if (!created || Number.isNaN(Date.parse(created))) return undefined;
  return {
    id: clip(json.Id ?? '', HEALTH_LIMITS.logEntryId),
    created: new Date(Date.parse(created)).toISOString(),
    severity: partHealth(json.Severity) ?? 'OK',
    message: clip(
      json.Message ?? json.Name ?? '',
      HEALTH_LIMITS.logEntryMessage,
    ),
    service,
  };
}
