/*
 * Hardware health from the BMCs (docs/hardware-health.md, docs/architecture.md): the
 * operator alone reads them (decision 0001), while it leads, on three occasions:
 *
 * - a slow sweep: each ServerBMC every `intervalMs` (default 15 min), jittered by ±20 %
 *   so a rack's BMCs do not all answer at once, at most `concurrency` BMCs at a time. A
 *   sweep reads the summary (the system and its chassis: two requests) and reads
 *   everything (parts, logs, firmware) only when the summary's rollup changed, the
 *   last reading failed, or the full reading is older than `fullIntervalMs` (12 h);
 * - on request: `spec.healthRefresh.requestedAt` newer than
 *   `status.health.answeredRequestAt` is read in full at once and answered;
 * - at the start (leaving Requested) and the end of every NodeMaintenance of a node with
 *   a ServerBMC: `status.hardware.before/after`, and the log entries created between.
 *
 * A reading never blocks or fails a maintenance: it runs beside it, and a failure is
 * written to `status.health.error` (the last good parts stay). A change of rollup
 * records an Event (Normal when it became OK, Warning otherwise).
 *
 * What the sweep remembers of a BMC (the summary rollup its last full reading went with,
 * when that was) changes only once the reading's status write succeeded: a write the
 * apiserver refused must not turn the next sweep's Critical summary into "no change"
 * (docs/hardware-health.md, "Age and errors"). A refused write records a Warning Event and
 * counts in `rackside_status_write_failures_total{kind="ServerBMC"}`. Every reading carries
 * the sweep interval (`sweepIntervalSeconds`), by which servers-common's
 * hardwareReadingState judges it unknown once older than two.
 *
 * A refresh request is marked (`attemptedRequestAt`) before it is read: one still
 * unanswered at the next start never ended (the operator stopped, or died of it), and is
 * answered with an error instead of being read first again at every start.
 */
import {
  HEALTH_LIMITS,
  isTerminalPhase,
  type BmcLogEntry,
  type HealthRollup,
  type NodeMaintenance,
  type NodeMaintenanceHardware,
  type ServerBMC,
  type ServerHealth,
} from '@rackside/plugin-servers-common';
import type {
  BmcHealthReader,
  WatchCache,
} from '@rackside/plugin-servers-node';
import type { EventRecorder } from '../runtime/events';
import type { OperatorLog } from '../runtime/logger';
import type { NodeView } from '../runtime/nodeView';

/** What `status.health` is patched with (`error: null` removes the last error). */
export type HealthPatch = Omit<ServerHealth, 'error'> & {
  error?: string | null;
};

/** A merge patch of `status.health`: a whole reading, or only the fields it names. */
export type HealthWrite = HealthPatch | Partial<HealthPatch>;

export interface HealthMonitorOptions {
  bmcs: WatchCache<ServerBMC>;
  nodes: WatchCache<NodeView & { metadata?: { name?: string } }>;
  maintenances: WatchCache<NodeMaintenance>;
  /** The reader of a node's BMC; undefined when no channel reaches BMCs. */
  reader(
    node: NodeView | undefined,
    name: string,
  ): Promise<BmcHealthReader | undefined>;
  /** The text for status and Events, without the BMC's address. */
  scrub(name: string, text: string): string;
  /** A JSON merge patch of `status.health` (fields not named stay). */
  writeHealth(name: string, health: HealthWrite): Promise<void>;
  /** Counts a status write the apiserver refused (the metric). */
  onWriteFailed?(name: string): void;
  writeHardware(
    maintenance: string,
    hardware: NodeMaintenanceHardware,
  ): Promise<void>;
  recorder: EventRecorder;
  log: OperatorLog;
  /** Sweep period per BMC (ms). */
  intervalMs: number;
  /** BMCs read at once, at most. */
  concurrency: number;
  /** A full reading at least this often per BMC (ms); default 12 h. */
  fullIntervalMs?: number;
  /** One reading's deadline for all its requests (ms); default 60 s (--health-reading-deadline). */
  readingDeadlineMs?: number;
  random?: () => number;
}

interface BmcMemory {
  /** When the sweep reads this BMC next (ms since the epoch). */
  dueAt: number;
  /** The summary rollup the last full reading went with. */
  summaryRollup?: HealthRollup;
  fullAt?: number;
  reading?: boolean;
  /** The refresh request this process started to read (it is not "one that never ended"). */
  attempted?: string;
}

/** What a reading would teach the sweep; applied only once its status write succeeded. */
interface Learned {
  summaryRollup?: HealthRollup;
  fullAt?: number;
}

const JITTER = 0.2;
const DEFAULT_FULL_INTERVAL_MS = 12 * 60 * 60 * 1000;

/** Entries created at or after `since`, newest first, at most the limit. */
export function entriesSince(
  entries: readonly BmcLogEntry[],
  since: string,
): BmcLogEntry[] {
  const from = Date.parse(since);
  return entries
    .filter(e => Date.parse(e.created) >= from)
    .slice(0, HEALTH_LIMITS.logEntries);
}

export class HealthMonitor {
  private readonly memory = new Map<string, BmcMemory>();
  private readonly waiting: Array<() => void> = [];
  private running = 0;
  private timer?: NodeJS.Timeout;
  private unsubscribe: Array<() => void> = [];
  private active = false;
  /** Maintenances whose before/after reading is under way (name/edge). */
  private readonly hardwareInFlight = new Set<string>();
  /**
   * The before-readings this process wrote, by maintenance (uid): the watch may not show
   * them yet when the maintenance ends, and a second before-reading would move the
   * window the log entries are taken from.
   */
  private readonly beforeWritten = new Map<
    string,
    { rollup: HealthRollup; readAt: string }
  >();
  private readonly random: () => number;
  private readonly fullIntervalMs: number;

  constructor(private readonly options: HealthMonitorOptions) {
    this.random = options.random ?? Math.random;
    this.fullIntervalMs = options.fullIntervalMs ?? DEFAULT_FULL_INTERVAL_MS;
  }

  /** Starts sweeping and answering (this replica leads). */
  start(): void {
    if (this.active) return;
    this.active = true;
    const { bmcs, maintenances } = this.options;
    this.unsubscribe = [
      ...(['add', 'update'] as const).map(event =>
        bmcs.on(event, (bmc: ServerBMC) => this.answerRefresh(bmc)),
      ),
      ...(['add', 'update'] as const).map(event =>
        maintenances.on(event, (nm: NodeMaintenance) => this.onMaintenance(nm)),
      ),
    ];
    for (const bmc of bmcs.list()) this.answerRefresh(bmc);
    for (const nm of maintenances.list()) this.onMaintenance(nm);
    const tick = Math.max(50, Math.min(5000, this.options.intervalMs / 10));
    this.timer = setInterval(() => this.sweep(), tick);
    this.timer.unref?.();
    this.sweep();
  }

  /** Stops (leadership lost, or the operator stops); readings under way finish. */
  pause(): void {
    this.active = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
  }

  private memoryOf(bmc: ServerBMC): BmcMemory {
    const name = bmc.metadata.name;
    let memory = this.memory.get(name);
    if (!memory) {
      // After a restart the last reading in status sets the next one, so a restart does
      // not read the whole rack at once; a BMC never read is due within one interval.
      const readAt = Date.parse(bmc.status?.health?.readAt ?? '');
      const interval = this.options.intervalMs;
      memory = {
        dueAt: Number.isNaN(readAt)
          ? Date.now() + this.random() * interval
          : readAt + this.jittered(),
      };
      if (!Number.isNaN(readAt) && bmc.status?.health?.error === undefined) {
        memory.fullAt = readAt;
      }
      this.memory.set(name, memory);
    }
    return memory;
  }

  private jittered(): number {
    const factor = 1 - JITTER + 2 * JITTER * this.random();
    return this.options.intervalMs * factor;
  }

  private sweep() {
    if (!this.active) return;
    const now = Date.now();
    const names = new Set<string>();
    for (const bmc of this.options.bmcs.list()) {
      const name = bmc.metadata.name;
      names.add(name);
      const memory = this.memoryOf(bmc);
      if (memory.reading || memory.dueAt > now) continue;
      memory.dueAt = now + this.jittered();
      void this.read(name, 'sweep');
    }
    for (const name of this.memory.keys()) {
      if (!names.has(name)) this.memory.delete(name);
    }
  }

  private answerRefresh(bmc: ServerBMC) {
    if (!this.active) return;
    const requested = bmc.spec.healthRefresh?.requestedAt;
    if (!requested) return;
    const answered = bmc.status?.health?.answeredRequestAt;
    if (answered && Date.parse(answered) >= Date.parse(requested)) return;
    const memory = this.memoryOf(bmc);
    if (memory.reading) {
      // Answered when the reading under way ends (its update wakes this again).
      return;
    }
    const attempted = bmc.status?.health?.attemptedRequestAt;
    if (
      attempted &&
      Date.parse(attempted) >= Date.parse(requested) &&
      memory.attempted !== requested
    ) {
      // A reading for this request started (in an earlier process) and never ended:
      // reading it first again at every start would stall every start the same way.
      void this.answerUnread(bmc, requested);
      return;
    }
    void this.read(bmc.metadata.name, 'refresh', requested);
  }

  /** Answers a request whose reading never ended with that error; nothing is read. */
  private async answerUnread(bmc: ServerBMC, requested: string) {
    const memory = this.memoryOf(bmc);
    if (memory.reading) return;
    memory.reading = true;
    try {
      const error = `the reading for the refresh requested at ${requested} did not end (the operator stopped during it); it is not read again: the next sweep reads the BMC`;
      const written = await this.write(
        bmc,
        {
          error,
          answeredRequestAt: requested,
          sweepIntervalSeconds: this.sweepIntervalSeconds(),
        },
        undefined,
        false,
      );
      if (written) {
        await this.options.recorder.record(
          this.eventTarget(bmc),
          'Warning',
          'HealthRefreshNotRead',
          `The health refresh requested at ${requested} was answered without a reading: its reading did not end`,
        );
      }
    } finally {
      memory.reading = false;
    }
  }

  /** The sweep interval every reading carries (s, at least 1). */
  private sweepIntervalSeconds(): number {
    return Math.max(1, Math.round(this.options.intervalMs / 1000));
  }

  private eventTarget(bmc: ServerBMC) {
    return {
      apiVersion: bmc.apiVersion,
      kind: 'ServerBMC',
      name: bmc.metadata.name,
      uid: bmc.metadata.uid,
    };
  }

  private onMaintenance(nm: NodeMaintenance) {
    if (!this.active) return;
    const phase = nm.status?.phase;
    const name = nm.metadata.name;
    const node = nm.spec.nodeName;
    // Held for approval, nothing has started: the before-reading is taken once admitted.
    if (!phase || phase === 'Requested' || phase === 'AwaitingApproval') return;
    if (!this.options.bmcs.get(node)) return;
    const uid = nm.metadata.uid ?? name;
    const hardware = {
      ...nm.status?.hardware,
      before: nm.status?.hardware?.before ?? this.beforeWritten.get(uid),
    };
    const terminal = isTerminalPhase(phase);
    // Refused before it started, or ended while held for approval (never admitted):
    // nothing happened to the hardware.
    if (
      terminal &&
      !hardware?.before &&
      (phase === 'Refused' || !nm.status?.admission)
    ) {
      return;
    }
    const edge = !hardware?.before && !terminal ? 'before' : 'after';
    if (edge === 'after' && (!terminal || hardware?.after)) return;
    const key = `${name}/${edge}`;
    if (this.hardwareInFlight.has(key)) return;
    // The after-reading waits for the before-reading of the same maintenance.
    if (edge === 'after' && this.hardwareInFlight.has(`${name}/before`)) return;
    this.hardwareInFlight.add(key);
    void this.maintenanceReading(nm, edge, hardware.before).finally(() => {
      this.hardwareInFlight.delete(key);
      // A maintenance that ended while its before-reading ran is picked up again.
      const now = this.options.maintenances.get(name);
      if (now && edge === 'before') this.onMaintenance(now);
      if (edge === 'after') this.beforeWritten.delete(uid);
    });
  }

  private async maintenanceReading(
    nm: NodeMaintenance,
    edge: 'before' | 'after',
    before: { rollup: HealthRollup; readAt: string } | undefined,
  ): Promise<void> {
    const node = nm.spec.nodeName;
    // The window of the maintenance's log entries opens when the before-reading starts
    // (an entry written while it runs belongs to the maintenance) and closes when the
    // after-reading ends.
    const started = new Date().toISOString();
    const health = await this.read(node, 'maintenance');
    const rollup: HealthRollup = health?.error
      ? 'Unknown'
      : health?.rollup ?? 'Unknown';
    const readAt =
      edge === 'before' || health?.error || !health?.readAt
        ? started
        : health.readAt;
    if (edge === 'before') {
      this.beforeWritten.set(nm.metadata.uid ?? nm.metadata.name, {
        rollup,
        readAt,
      });
    }
    const hardware: NodeMaintenanceHardware =
      edge === 'before'
        ? { before: { rollup, readAt }, logEntries: [] }
        : {
            ...(before ? { before } : {}),
            after: { rollup, readAt },
            logEntries:
              before && health && !health.error
                ? entriesSince(health.logEntries, before.readAt)
                : [],
          };
    try {
      await this.options.writeHardware(nm.metadata.name, hardware);
    } catch (error) {
      this.options.log(
        `NodeMaintenance ${nm.metadata.name}: hardware ${edge} not recorded: ${
          (error as Error).message
        }`,
      );
    }
  }

  /** Waits for a reading slot (at most `concurrency` BMCs read at once). */
  private async slot(): Promise<() => void> {
    if (this.running >= this.options.concurrency) {
      await new Promise<void>(resolve => this.waiting.push(resolve));
    }
    this.running++;
    return () => {
      this.running--;
      this.waiting.shift()?.();
    };
  }

  /**
   * One reading of one BMC, written to its status. Returns what was written (undefined
   * when no channel reaches BMCs or the ServerBMC is gone). Never throws.
   */
  async read(
    name: string,
    why: 'sweep' | 'refresh' | 'maintenance',
    answering?: string,
  ): Promise<HealthPatch | undefined> {
    const bmc = this.options.bmcs.get(name);
    if (!bmc) return undefined;
    const memory = this.memoryOf(bmc);
    memory.reading = true;
    const release = await this.slot();
    try {
      return await this.readOnce(bmc, memory, why, answering);
    } finally {
      memory.reading = false;
      release();
      // A refresh asked while this reading ran waited for it to end; a reading that wrote
      // nothing new (the same error again) sends no watch event to wake it, so it is
      // looked at now. Not after a refresh's own reading: one whose write failed would
      // read again at once.
      const now = why !== 'refresh' ? this.options.bmcs.get(name) : undefined;
      if (now) this.answerRefresh(now);
    }
  }

  private async readOnce(
    bmc: ServerBMC,
    memory: BmcMemory,
    why: 'sweep' | 'refresh' | 'maintenance',
    answering?: string,
  ): Promise<HealthPatch | undefined> {
    const name = bmc.metadata.name;
    const previous = this.options.bmcs.get(name)?.status?.health;
    // Only a reading asked for answers a request; a sweep keeps the last answer.
    const answeredRequestAt = answering ?? previous?.answeredRequestAt;
    const sweepIntervalSeconds = this.sweepIntervalSeconds();
    const learned: Learned = {};
    let patch: HealthPatch;
    try {
      const reader = await this.options.reader(
        this.options.nodes.get(name),
        name,
      );
      if (!reader) return undefined;
      if (answering) {
        // Marked before it is read: if this reading never ends, the next start answers
        // the request with that instead of reading it first again.
        memory.attempted = answering;
        const marked = await this.write(
          bmc,
          previous
            ? { attemptedRequestAt: answering }
            : {
                rollup: 'Unknown',
                parts: [],
                logEntries: [],
                firmware: [],
                missing: [],
                attemptedRequestAt: answering,
              },
          undefined,
          false,
        );
        if (!marked) return undefined;
      }
      const now = Date.now();
      let full = why !== 'sweep' || !previous || previous.error !== undefined;
      full ||=
        memory.fullAt === undefined ||
        now - memory.fullAt >= this.fullIntervalMs;
      if (!full) {
        const summary = await reader.summary({
          deadlineMs: this.options.readingDeadlineMs,
        });
        if (summary.rollup === memory.summaryRollup && previous) {
          patch = {
            ...previous,
            state: summary.state,
            readAt: new Date().toISOString(),
            error: null,
            answeredRequestAt,
            sweepIntervalSeconds,
          };
          await this.write(bmc, patch, previous);
          return patch;
        }
      }
      const reading = await reader.read({
        deadlineMs: this.options.readingDeadlineMs,
      });
      learned.summaryRollup = reading.summaryRollup;
      learned.fullAt = Date.now();
      patch = {
        rollup: reading.rollup,
        state: reading.state,
        readAt: new Date().toISOString(),
        error: null,
        answeredRequestAt,
        parts: reading.parts,
        logEntries: reading.logEntries,
        logEntriesSkipped: reading.logEntriesSkipped,
        firmware: reading.firmware,
        missing: reading.missing,
        sweepIntervalSeconds,
      };
    } catch (error) {
      const message = this.options
        .scrub(name, (error as Error)?.message ?? String(error))
        .slice(0, HEALTH_LIMITS.error);
      patch = {
        rollup: previous?.readAt ? previous.rollup : 'Unknown',
        state: previous?.state,
        readAt: previous?.readAt,
        error: message,
        answeredRequestAt,
        parts: previous?.parts ?? [],
        logEntries: previous?.logEntries ?? [],
        firmware: previous?.firmware ?? [],
        missing: previous?.missing ?? [],
        sweepIntervalSeconds,
      };
      this.options.log(`ServerBMC ${name}: health reading failed: ${message}`);
    }
    if (await this.write(bmc, patch, previous)) {
      // Only what status now says is remembered: a refused write leaves the sweep to
      // compare the next summary with what status still shows.
      if (learned.summaryRollup !== undefined) {
        memory.summaryRollup = learned.summaryRollup;
      }
      if (learned.fullAt !== undefined) memory.fullAt = learned.fullAt;
    }
    return patch;
  }

  /**
   * Writes a health patch; true once the apiserver took it. A refused write is logged,
   * counted and recorded as a Warning Event (the reading status shows is the older one).
   * With `rollupEvent`, a change of rollup from `previous` records its Event.
   */
  private async write(
    bmc: ServerBMC,
    patch: HealthWrite,
    previous: ServerHealth | undefined,
    rollupEvent = true,
  ): Promise<boolean> {
    const name = bmc.metadata.name;
    try {
      await this.options.writeHealth(name, patch);
    } catch (error) {
      const message = this.options
        .scrub(name, (error as Error)?.message ?? String(error))
        .slice(0, HEALTH_LIMITS.error);
      this.options.log(`ServerBMC ${name}: health not written: ${message}`);
      this.options.onWriteFailed?.(name);
      await this.options.recorder.record(
        this.eventTarget(bmc),
        'Warning',
        'StatusWriteFailed',
        `A health reading${
          patch.rollup ? ` (${patch.rollup})` : ''
        } could not be written to status: ${message}; status still shows the one before, and the next sweep reads again`,
      );
      return false;
    }
    if (!rollupEvent || !patch.rollup) return true;
    const before = previous?.rollup ?? 'Unknown';
    if (patch.rollup === before) return true;
    const named = (patch.parts ?? [])
      .slice(0, 3)
      .map(p => `${p.name} ${p.health}`)
      .join(', ');
    await this.options.recorder.record(
      this.eventTarget(bmc),
      patch.rollup === 'OK' ? 'Normal' : 'Warning',
      `Health${patch.rollup}`,
      `The BMC's health went from ${before} to ${patch.rollup}${
        named ? ` (${named})` : ''
      }`,
    );
    return true;
  }
}
