import {
  HEALTH_LIMITS,
  type BmcLogEntry,
  type HealthPartKind,
  type HealthRollup,
  type PartHealth,
  type ServerFirmwareComponent,
  type ServerHealthPart,
} from '@rackside/plugin-servers-common';
import { Deadline } from '../../http/boundedBody';
import { RedfishError } from './errors';
import { REDFISH_BODY_LIMITS, type RedfishClient } from './RedfishClient';
import { pathOf, resolveOnBmc } from './sameOrigin';

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
  /**
   * Log entries the BMC listed that this reading did not look at: pages past the page
   * budget, or entries listed only by link beyond those read (at least this many when the
   * BMC does not give its count). 0 when every entry was considered.
   */
  logEntriesSkipped: number;
  firmware: ServerFirmwareComponent[];
  missing: string[];
}

/** How long one reading may take. */
export interface BmcReadingOptions {
  /**
   * The whole reading's deadline (ms), shared by every request it makes; default
   * {@link DEFAULT_HEALTH_READING_DEADLINE_MS}. Past it the reading fails naming the BMC.
   */
  deadlineMs?: number;
}

/** A reading's default deadline: 60 s for every request of one BMC's reading together. */
export const DEFAULT_HEALTH_READING_DEADLINE_MS = 60_000;

/**
 * Pages of one log's Entries read at most in one reading (`Members@odata.nextLink`
 * followed), the jump to the newest pages included.
 */
export const LOG_PAGE_BUDGET = 20;

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

/** Whether a member is inlined (has more than `@odata` annotations). */
function isInline(member: Json): boolean {
  return Object.keys(member).some(key => !key.startsWith('@odata'));
}

/** What every request of one reading shares: its deadline. */
interface Reading {
  get(path: string, maxBytes?: number): Promise<Json>;
}

/** Newer first: by `created`, then by `id` (numerically when both are numbers). */
export function newerFirst(a: BmcLogEntry, b: BmcLogEntry): number {
  const byTime = Date.parse(b.created) - Date.parse(a.created);
  if (byTime !== 0) return byTime;
  const numeric = /^\d{1,15}$/;
  if (numeric.test(a.id) && numeric.test(b.id))
    return Number(b.id) - Number(a.id);
  if (a.id === b.id) return 0;
  return a.id < b.id ? 1 : -1;
}

/**
 * The newest `limit` entries of however many are offered: memory holds at most twice the
 * limit, whatever the log's length (the cap is on what is kept, not on what is looked at).
 */
class NewestEntries {
  private kept: BmcLogEntry[] = [];
  constructor(private readonly limit: number) {}

  add(entry: BmcLogEntry) {
    this.kept.push(entry);
    if (this.kept.length >= 2 * this.limit) this.trim();
  }

  list(): BmcLogEntry[] {
    this.trim();
    return this.kept;
  }

  private trim() {
    this.kept = this.kept.sort(newerFirst).slice(0, this.limit);
  }
}

/** One log's newest entries and how many it listed that were not looked at. */
interface LogRead {
  entries: BmcLogEntry[];
  skipped: number;
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

  /** Runs `work` with one deadline for every request it makes. */
  private async withDeadline<T>(
    options: BmcReadingOptions,
    work: (reading: Reading) => Promise<T>,
  ): Promise<T> {
    const deadline = new Deadline(
      options.deadlineMs ?? DEFAULT_HEALTH_READING_DEADLINE_MS,
      `the health reading of Redfish BMC ${this.client.origin}`,
    );
    const reading: Reading = {
      get: (path, maxBytes) =>
        this.client.get(path, { signal: deadline.signal, maxBytes }),
    };
    try {
      return await work(reading);
    } finally {
      deadline.clear();
    }
  }

  /**
   * Two requests: the system and its first chassis. Their rollups change when any part
   * below them does, which is what tells the sweep a full reading is due.
   */
  summary(options: BmcReadingOptions = {}): Promise<BmcHealthSummary> {
    return this.withDeadline(options, r => this.readSummary(r));
  }

  private async readSummary(r: Reading): Promise<BmcHealthSummary> {
    const system = await r.get(this.systemPath);
    const chassisPath = this.chassisPath ?? this.firstChassis(system);
    const chassis = chassisPath
      ? await this.optional(r, chassisPath)
      : undefined;
    return {
      rollup: worstHealth([
        ...statusHealths(system),
        ...statusHealths(chassis),
      ]),
      state: optionalClip(system.Status?.State, HEALTH_LIMITS.state),
      chassisPath,
    };
  }

  /**
   * Everything: the summary's resources, then every part, the logs and the firmware,
   * within one deadline (`options.deadlineMs`, default 60 s) for all its requests.
   */
  read(options: BmcReadingOptions = {}): Promise<BmcHealthReading> {
    return this.withDeadline(options, r => this.readAll(r));
  }

  private async readAll(r: Reading): Promise<BmcHealthReading> {
    const missing = new Set<string>();
    const parts: ServerHealthPart[] = [];
    const system = await r.get(this.systemPath);
    const systemHealth = worstHealth(statusHealths(system));
    if (systemHealth !== 'OK') {
      parts.push(
        part('System', system.Name ?? system.Id, systemHealth, system.Status),
      );
    }
    const chassisPath = this.firstChassis(system);
    const chassis = chassisPath
      ? await this.optional(r, chassisPath)
      : undefined;
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
      await this.readPower(r, chassis, parts, missing);
      await this.readThermal(r, chassis, parts, missing);
    }
    await this.readDrives(r, system, parts, missing);
    const logs = await this.readLogs(r, system, missing);
    const firmware = await this.readFirmware(r, missing);
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
      logEntries: logs.entries,
      logEntriesSkipped: logs.skipped,
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
  private async optional(
    r: Reading,
    path: unknown,
    maxBytes?: number,
  ): Promise<Json | undefined> {
    if (typeof path !== 'string') return undefined;
    try {
      return await r.get(path, maxBytes);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  /** Whether the service root offers `$expand` (one level is all that is asked). */
  private async canExpand(r: Reading): Promise<boolean> {
    if (this.expand === undefined) {
      const root = await r.get('/redfish/v1');
      this.updateServicePath = link(root, 'UpdateService');
      const expand = root.ProtocolFeaturesSupported?.ExpandQuery;
      this.expand = expand?.Levels === true || expand?.ExpandAll === true;
    }
    return this.expand;
  }

  /** The path to read a collection by: expanded one level when the BMC offers it. */
  private async collectionPath(r: Reading, path: string): Promise<string> {
    return (await this.canExpand(r))
      ? `${path.split('?')[0]}?$expand=.($levels=1)`
      : path;
  }

  /**
   * The members of a collection of parts as JSON: one request when the BMC expands it
   * (or inlines them already), else one per member, at most `limit` of them.
   */
  private async collection(
    r: Reading,
    path: unknown,
    limit: number,
  ): Promise<Json[] | undefined> {
    if (typeof path !== 'string') return undefined;
    const collection = await this.optional(
      r,
      await this.collectionPath(r, path),
      REDFISH_BODY_LIMITS.collectionPage,
    );
    if (!collection) return undefined;
    const all = members(collection)
      .slice(0, MAX_INLINE_MEMBERS)
      .filter((m): m is Json => Boolean(m) && typeof m === 'object');
    // Inlined members cost nothing more: all are kept (the caller sorts and caps).
    if (all.every(isInline)) return all;
    const result: Json[] = [];
    for (const member of all.slice(0, limit)) {
      const fetched = await this.optional(r, member['@odata.id']);
      if (fetched) result.push(fetched);
    }
    return result;
  }

  private async readPower(
    r: Reading,
    chassis: Json,
    parts: ServerHealthPart[],
    missing: Set<string>,
  ) {
    const subsystem = await this.optional(r, link(chassis, 'PowerSubsystem'));
    if (subsystem) {
      const supplies = await this.collection(
        r,
        link(subsystem, 'PowerSupplies'),
        HEALTH_LIMITS.parts,
      );
      for (const supply of supplies ?? []) {
        addPart(parts, 'PowerSupply', supply);
      }
      return;
    }
    const power = await this.optional(r, link(chassis, 'Power'));
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
    r: Reading,
    chassis: Json,
    parts: ServerHealthPart[],
    missing: Set<string>,
  ) {
    const subsystem = await this.optional(r, link(chassis, 'ThermalSubsystem'));
    if (subsystem) {
      const fans = await this.collection(
        r,
        link(subsystem, 'Fans'),
        HEALTH_LIMITS.parts,
      );
      for (const fan of fans ?? []) addPart(parts, 'Fan', fan);
      return;
    }
    const thermal = await this.optional(r, link(chassis, 'Thermal'));
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
    r: Reading,
    system: Json,
    parts: ServerHealthPart[],
    missing: Set<string>,
  ) {
    const storages = await this.collection(
      r,
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
          const json = await this.optional(r, drive['@odata.id']);
          if (json) addPart(parts, 'Drive', json);
        }
      }
      return;
    }
    // The older SimpleStorage lists its devices inline.
    const simple = await this.collection(
      r,
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
    r: Reading,
    system: Json,
    missing: Set<string>,
  ): Promise<LogRead> {
    const systemLog = await this.logService(
      r,
      link(system, 'LogServices'),
      'System',
    );
    const managers = system.Links?.ManagedBy;
    const managerPath = Array.isArray(managers)
      ? managers[0]?.['@odata.id']
      : undefined;
    const manager = await this.optional(r, managerPath);
    const managerLog = manager
      ? await this.logService(r, link(manager, 'LogServices'), 'Manager')
      : undefined;
    if (!systemLog && !managerLog) missing.add('LogServices');
    return {
      entries: [...(systemLog?.entries ?? []), ...(managerLog?.entries ?? [])]
        .sort(newerFirst)
        .slice(0, HEALTH_LIMITS.logEntries),
      skipped: (systemLog?.skipped ?? 0) + (managerLog?.skipped ?? 0),
    };
  }

  /** The newest entries of a log-services collection's SEL (else Log1, else the first). */
  private async logService(
    r: Reading,
    path: unknown,
    service: BmcLogEntry['service'],
  ): Promise<LogRead | undefined> {
    const services = await this.optional(r, path);
    if (!services) return undefined;
    const ids = members(services)
      .map(m => (m as Json | null)?.['@odata.id'])
      .filter((id): id is string => typeof id === 'string');
    const chosen =
      ids.find(id => /\/SEL$/i.test(id)) ??
      ids.find(id => /\/Log1$/i.test(id)) ??
      ids[0];
    const logService = await this.optional(r, chosen);
    if (!logService) return undefined;
    return this.logEntries(r, link(logService, 'Entries'), service);
  }

  /**
   * The newest entries of one log, whatever its length and order: every page is followed
   * (`Members@odata.nextLink`, on the BMC's origin like every link) up to
   * {@link LOG_PAGE_BUDGET} pages, and every entry on them is considered, newest chosen by
   * `Created` then `Id`. A log listed oldest first and longer than the budget, whose
   * pages are `$skip` offsets, is read from its first page and then its last pages (the
   * entries between are skipped and counted). Entries listed only by link are read from
   * the newer end of the list (the first and last ones tell which).
   */
  private async logEntries(
    r: Reading,
    path: unknown,
    service: BmcLogEntry['service'],
  ): Promise<LogRead | undefined> {
    if (typeof path !== 'string') return undefined;
    const limit = HEALTH_LIMITS.logEntries;
    const bmc = new URL(this.client.origin);
    const newest = new NewestEntries(limit);
    // Links-only members: the first and last `limit` of them, and how many there were.
    const firstLinks: string[] = [];
    let lastLinks: string[] = [];
    let linked = 0;
    let seen = 0;
    let listed: number | undefined;
    let pages = 0;
    let next: string | undefined = await this.collectionPath(r, path);
    while (next !== undefined && pages < LOG_PAGE_BUDGET) {
      const page = await this.optional(
        r,
        next,
        REDFISH_BODY_LIMITS.collectionPage,
      );
      if (!page) {
        if (pages === 0) return undefined;
        throw new RedfishError({
          bmc: this.client.origin,
          outcome: 'refused',
          status: 404,
          message: `Redfish BMC ${this.client.origin}: the log page ${next} is gone`,
        });
      }
      pages++;
      const onPage = members(page).filter(
        (m): m is Json => Boolean(m) && typeof m === 'object',
      );
      if (pages === 1) {
        const count = page['Members@odata.count'];
        if (Number.isInteger(count) && count >= 0) listed = count;
      }
      seen += onPage.length;
      const inline: BmcLogEntry[] = [];
      for (const member of onPage) {
        if (isInline(member)) {
          const entry = logEntry(member, service);
          if (entry) inline.push(entry);
        } else if (typeof member['@odata.id'] === 'string') {
          linked++;
          if (firstLinks.length < limit) firstLinks.push(member['@odata.id']);
          lastLinks.push(member['@odata.id']);
          if (lastLinks.length > 2 * limit) lastLinks = lastLinks.slice(-limit);
        }
      }
      for (const entry of inline) newest.add(entry);
      const nextLink = page['Members@odata.nextLink'];
      if (nextLink === undefined || nextLink === null) {
        next = undefined;
        break;
      }
      const nextUrl = resolveOnBmc(
        bmc,
        nextLink,
        `Members@odata.nextLink of ${next}`,
      );
      next = pathOf(nextUrl);
      if (pages === 1) {
        const jump = jumpToNewest(nextUrl, inline, onPage.length, listed);
        if (jump) next = jump;
      }
    }
    // Without a count, a next page not read is at least one entry not looked at.
    let skipped = next !== undefined ? 1 : 0;
    if (listed !== undefined) skipped = Math.max(0, listed - seen);
    if (linked > 0) {
      const read = await this.newestLinked(
        r,
        firstLinks,
        lastLinks.slice(-limit),
        linked,
        service,
      );
      for (const entry of read) newest.add(entry);
      skipped += linked - Math.min(linked, limit);
    }
    return { entries: newest.list(), skipped };
  }

  /**
   * Entries listed only by link: all of them when there are few, else the `limit` at the
   * newer end of the list (a BMC may list oldest or newest first: its first and last
   * entries tell which).
   */
  private async newestLinked(
    r: Reading,
    first: string[],
    last: string[],
    total: number,
    service: BmcLogEntry['service'],
  ): Promise<BmcLogEntry[]> {
    const read = async (id: string) => {
      const json = await this.optional(r, id);
      return json ? logEntry(json, service) : undefined;
    };
    const limit = HEALTH_LIMITS.logEntries;
    let chosen = total <= limit ? first : last;
    const found: BmcLogEntry[] = [];
    if (total > limit) {
      const head = await read(first[0]);
      const tail = await read(last[last.length - 1]);
      if (head && tail && newerFirst(head, tail) < 0) chosen = first;
      // Already read: kept, and not asked for twice.
      if (chosen === first && head) found.push(head);
      if (chosen === last && tail) found.push(tail);
      chosen =
        chosen === first ? chosen.slice(1) : chosen.slice(0, chosen.length - 1);
    }
    for (const id of chosen) {
      const entry = await read(id);
      if (entry) found.push(entry);
    }
    return found;
  }

  private async readFirmware(
    r: Reading,
    missing: Set<string>,
  ): Promise<ServerFirmwareComponent[]> {
    // The service root is read once per reader (with what it says of $expand).
    await this.canExpand(r);
    const update = await this.optional(r, this.updateServicePath);
    const inventory = update
      ? await this.collection(
          r,
          link(update, 'FirmwareInventory'),
          HEALTH_LIMITS.firmware,
        )
      : undefined;
    if (!inventory) {
      missing.add('FirmwareInventory');
      return [];
    }
    return inventory.map(item => ({
      // Its link, which a firmware update's targets name (firmwareAlreadyAt).
      ...(typeof item['@odata.id'] === 'string'
        ? { id: clip(item['@odata.id'], HEALTH_LIMITS.firmwareName) }
        : {}),
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

/**
 * Where to read next after a log's first page, when the log is listed oldest first, pages
 * by `$skip`, says its count and is longer than the page budget: the `$skip` of the last
 * pages the budget still covers (so the newest entries are read); undefined otherwise.
 */
function jumpToNewest(
  nextUrl: URL,
  firstPage: BmcLogEntry[],
  pageSize: number,
  listed: number | undefined,
): string | undefined {
  if (listed === undefined || pageSize === 0 || firstPage.length < 2) {
    return undefined;
  }
  const skip = nextUrl.searchParams.get('$skip');
  if (skip === null || !/^\d+$/.test(skip)) return undefined;
  // Oldest first: the page's first entry is older than its last.
  const oldestFirst =
    newerFirst(firstPage[0], firstPage[firstPage.length - 1]) > 0;
  if (!oldestFirst) return undefined;
  const from = listed - (LOG_PAGE_BUDGET - 1) * pageSize;
  if (from <= Number(skip)) return undefined;
  // The query is kept as the BMC wrote it (re-encoding it would turn `$` into `%24`).
  return `${nextUrl.pathname}${nextUrl.search.replace(
    /([?&]\$skip=)\d+/,
    `$1${from}`,
  )}`;
}
