/*
 * Runs the table of table.ts for one NodeMaintenance (with the table runner of
 * runtime/lifecycle/table.ts): pick the row, let it decide, write
 * the transition to status (phase, history, timestamps, observedGeneration) before the
 * next action, then emit the Event. Admission (the guard and the one-per-node rule) and
 * the guard's second run right before a power verb is recorded share one lock, so two
 * requests racing for the last margin are checked one at a time, at either moment.
 */
import type { AlertReads } from '../runtime/alertReads';
import type {
  NodeMaintenance,
  NodeMaintenanceStatus,
} from '@rackside/plugin-servers-common';
import {
  isoOf,
  requeueOf,
  runPasses,
  writeAnswer,
  type Clock,
} from '../runtime/lifecycle/table';
import { needsAdmissionLock, phaseOf, rowFor } from './table';
import { afterSend } from './powerRows';
import type {
  ClusterView,
  Decision,
  DrainPort,
  MachinePorts,
  NodePort,
  PodPort,
  PowerPort,
  PowerSendPort,
  PowerSendVerb,
  RefusalCause,
  SendOutcome,
} from './types';
import type { OperatorLog } from '../runtime/logger';
import type { SilenceLease } from './silenceLease';
import { fitMaintenanceMessage } from './statusLimits';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import {
  recordFirmwareHistory,
  type FirmwareHistoryPort,
} from './firmwareHistory';

/** status.history maxItems in the CRD. */
export const HISTORY_MAX = 50;

/** Writes status; fails (ConflictError) if `nm` is no longer the current version. */
export interface StatusPort {
  write(
    nm: NodeMaintenance,
    status: NodeMaintenanceStatus,
  ): Promise<NodeMaintenance>;
  /** Reads the maintenance from the apiserver (not a cache); undefined when it is gone. */
  read(name: string): Promise<NodeMaintenance | undefined>;
}

export interface EventPort {
  record(
    nm: NodeMaintenance,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void>;
}

/** A lock with one holder at a time. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

export interface ReconcilerPorts extends Clock {
  view: ClusterView & {
    maintenance(name: string): NodeMaintenance | undefined;
  };
  nodes: NodePort;
  pods: PodPort;
  drains: DrainPort;
  /** The channel as the rows read it. */
  power: PowerPort;
  /** Only the reconciler sends, after the verb is recorded. */
  powerSend: PowerSendPort;
  status: StatusPort;
  events: EventPort;
  admissionLock: Mutex;
  /** Alertmanager for a healthy return a maintenance asks for; absent: Ready only. */
  returnAlerts?: AlertReads;
  /** The Talos image prefixes an upgrade may install (MachinePorts). */
  upgrades?: MachinePorts['upgrades'];
  onRefused?: (cause: RefusalCause) => void;
  /** The Alertmanager silence held with the maintenance (silenceLease.ts); absent: off. */
  silences?: SilenceLease;
  /**
   * The node this replica runs on (`--node-name`, the chart's NODE_NAME) and the handover
   * of its Lease (docs/upgrades.md, "The operator's own node"): a verb for that node is
   * never recorded here; this replica hands the Lease over and a peer on another node
   * records and sends it. Absent: the node is not known, nothing is handed over.
   */
  ownNode?: { name: string; handOver(reason: string): Promise<void> };
  /**
   * The ServerBMC's firmware history (firmwareHistory.ts): a firmware maintenance that
   * ended leaves its entry there once. Absent: no history is kept.
   */
  firmwareHistory?: FirmwareHistoryPort;
  log?: OperatorLog;
}

/** A record decision's status: fields and message, the phase and history as they are. */
export function recordedStatus(
  nm: NodeMaintenance,
  decision: Extract<Decision, { kind: 'record' }>,
): NodeMaintenanceStatus {
  return {
    ...nm.status,
    ...decision.status,
    message: fitMaintenanceMessage(decision.message),
    observedGeneration: nm.metadata.generation ?? nm.status?.observedGeneration,
  };
}

/** Applies a transition decision: status first, then the Event. */
export function nextStatus(
  nm: NodeMaintenance,
  decision: Extract<Decision, { kind: 'transition' }>,
  now: string,
): NodeMaintenanceStatus {
  const history = [
    ...(nm.status?.history ?? []),
    { phase: decision.to, at: now, message: decision.message.slice(0, 1024) },
  ].slice(-HISTORY_MAX);
  return {
    ...nm.status,
    ...decision.status,
    phase: decision.to,
    message: fitMaintenanceMessage(decision.message),
    history,
    observedGeneration: nm.metadata.generation ?? nm.status?.observedGeneration,
  };
}

/** Whether `latest` is still `recorded`'s record of `verb`, without an answer. */
function awaitsAnswer(
  latest: NodeMaintenance,
  recorded: NodeMaintenance,
  verb: PowerSendVerb,
): boolean {
  const record = latest.status?.power?.[verb];
  return (
    latest.metadata.uid === recorded.metadata.uid &&
    latest.status?.phase === recorded.status?.phase &&
    record !== undefined &&
    record.recordedAt === recorded.status?.power?.[verb]?.recordedAt &&
    record.sentAt === undefined &&
    record.error === undefined
  );
}

/** The sooner of two requeues (undefined: none asked). */
function earliest(a?: number, b?: number): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}

export class MaintenanceReconciler {
  constructor(private readonly ports: ReconcilerPorts) {}

  /**
   * Reconciles one maintenance by name until it waits or ends; answers when to look
   * again if a row waits on time rather than on a watch event.
   */
  async reconcile(name: string): Promise<{ requeueAfterMs?: number }> {
    const result = await this.reconcileTable(name);
    // After the table (an ended maintenance passes through it at once): a firmware update
    // that ended leaves its entry on the ServerBMC, once, also after a restart.
    if (this.ports.firmwareHistory) {
      await recordFirmwareHistory(
        this.ports.view.maintenance(name),
        this.ports.firmwareHistory,
      );
    }
    return result;
  }

  private async reconcileTable(
    name: string,
  ): Promise<{ requeueAfterMs?: number }> {
    type Step = {
      nm?: NodeMaintenance;
      send?: PowerSendVerb;
      requeueAfterMs?: number;
    };
    const step = async (current: NodeMaintenance): Promise<Step> => {
      const decision = await rowFor(current)(current, this.ports);
      return {
        ...(await this.apply(current, decision)),
        requeueAfterMs: requeueOf(decision),
      };
    };
    return runPasses(this.ports.view.maintenance(name), async seen => {
      // The silence first: a reboot that follows its cordon in one reconcile goes out with
      // the node's alerts already silenced. It never holds the table up (silenceLease.ts).
      const silence = this.ports.silences
        ? await this.ports.silences.sync(seen)
        : { nm: seen };
      const nm = silence.nm;
      // Admission, and the check right before a power verb is recorded: one at a time,
      // each re-reading under the lock what the one before it may have just written.
      // The verb itself is sent after the lock is released: it is on record by then,
      // so the next check counts this node as going down.
      const result = needsAdmissionLock(nm)
        ? await this.ports.admissionLock.run(async (): Promise<Step> => {
            const fresh = this.ports.view.maintenance(name);
            if (!fresh || !needsAdmissionLock(fresh)) return { nm: fresh };
            return step(fresh);
          })
        : await step(nm);
      const next = result.send
        ? await this.send(result.nm!, result.send)
        : result.nm;
      return {
        next,
        requeueAfterMs: earliest(result.requeueAfterMs, silence.requeueAfterMs),
      };
    });
  }

  /** Sends a recorded verb and writes its answer with the next phase. */
  private async send(
    written: NodeMaintenance,
    verb: PowerSendVerb,
  ): Promise<NodeMaintenance | undefined> {
    const outcome = await this.ports.powerSend
      .send(
        verb,
        this.ports.view.node(written.spec.nodeName),
        written.spec.upgrade,
        written.spec.firmware,
      )
      .catch(
        (error): SendOutcome => ({
          ok: false,
          outcome: 'unknown',
          message: (error as Error).message,
        }),
      );
    const name = written.metadata.name;
    return writeAnswer(
      written,
      async current =>
        (
          await this.apply(
            current,
            afterSend[verb](current, outcome, this.ports),
          )
        )?.nm,
      {
        read: () => this.ports.status.read(name),
        awaitsAnswer: latest => awaitsAnswer(latest, written, verb),
        log: message => this.ports.log?.(`${name}: ${verb}: ${message}`),
      },
    );
  }

  /**
   * Writes a decision. Returns the written object to continue with (undefined to stop),
   * and, for a record with `send`, the verb that is now on record and still to be sent.
   */
  private async apply(
    nm: NodeMaintenance,
    decision: Decision,
  ): Promise<{ nm?: NodeMaintenance; send?: PowerSendVerb } | undefined> {
    if (decision.kind === 'record') {
      if (decision.send && nm.spec.nodeName === this.ports.ownNode?.name) {
        await this.handOver(nm, decision.send);
        return undefined;
      }
      const written = await this.write(
        nm,
        recordedStatus(nm, decision),
        decision.event,
        decision.message,
        phaseOf(nm),
      );
      return { nm: written, send: decision.send };
    }
    if (decision.kind !== 'transition') return undefined;
    const status = nextStatus(nm, decision, isoOf(this.ports));
    const written = await this.write(
      nm,
      status,
      decision.event ?? { type: 'Normal', reason: decision.to },
      decision.message,
      decision.to,
    );
    if (decision.refusal) this.ports.onRefused?.(decision.refusal);
    return { nm: written };
  }

  /**
   * A verb for this replica's own node: nothing is recorded (a record would bind the
   * send to whoever holds it, and this replica must not take its own node down while it
   * leads); an Event says why, then the Lease is handed over. The peer that takes it
   * reconciles the maintenance afresh, from the same phase, and records and sends.
   */
  private async handOver(nm: NodeMaintenance, verb: PowerSendVerb) {
    const node = nm.spec.nodeName;
    const reason = `${verb} of ${node}: this operator replica runs on ${node}, so it hands the Lease over and another replica sends it`;
    await this.ports.events
      .record(nm, 'Normal', MaintenanceReason.LeaderHandover, reason)
      .catch(error =>
        this.ports.log?.(
          `${nm.metadata.name}: event: ${(error as Error).message}`,
        ),
      );
    this.ports.log?.(`${nm.metadata.name}: ${reason}`, {
      level: 'warn',
      kind: 'NodeMaintenance',
      name: nm.metadata.name,
      reason: MaintenanceReason.LeaderHandover,
    });
    await this.ports.ownNode!.handOver(reason);
  }

  private async write(
    nm: NodeMaintenance,
    status: NodeMaintenanceStatus,
    event: { type: 'Normal' | 'Warning'; reason: string } | undefined,
    message: string,
    to: string,
  ): Promise<NodeMaintenance> {
    const written = await this.ports.status.write(nm, status);
    if (event) {
      await this.ports.events.record(
        written,
        event.type,
        event.reason,
        message,
      );
    }
    // The state change's info line is the Event's (runtime/events.ts); this one adds the phase
    // it came from, for debugging.
    this.ports.log?.(
      `${nm.metadata.name}: ${phaseOf(nm)} -> ${to}: ${message}`,
      {
        level: event ? 'debug' : 'info',
        kind: 'NodeMaintenance',
        name: nm.metadata.name,
        phase: to,
        from: phaseOf(nm),
      },
    );
    return written;
  }
}
