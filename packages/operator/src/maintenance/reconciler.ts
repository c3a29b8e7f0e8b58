/*
 * Runs the table of machine.ts for one NodeMaintenance: pick the row, let it decide, write
 * the transition to status (phase, history, timestamps, observedGeneration) before the
 * next action, then emit the Event. Admission (the guard and the one-per-node rule) runs
 * under one lock, so two requests racing for the last margin are checked one at a time.
 */
import type {
  NodeMaintenance,
  NodeMaintenanceStatus,
} from '@rackside/plugin-servers-common';
import {
  type ClusterView,
  type Decision,
  type DrainPort,
  type NodePort,
  type NodeView,
  type PodPort,
  phaseOf,
  type PowerPort,
  type PowerSendVerb,
  type RefusalCause,
  rowFor,
  type SendOutcome,
} from './machine';
import { afterSend } from './powerRows';

/** status.history maxItems in the CRD. */
export const HISTORY_MAX = 50;

/** Writes status; fails (ConflictError) if `nm` is no longer the current version. */
export interface StatusPort {
  write(
    nm: NodeMaintenance,
    status: NodeMaintenanceStatus,
  ): Promise<NodeMaintenance>;
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

export interface ReconcilerPorts {
  view: ClusterView & {
    maintenance(name: string): NodeMaintenance | undefined;
  };
  nodes: NodePort;
  pods: PodPort;
  drains: DrainPort;
  /** The rows read the channel; only the reconciler sends, after the verb is recorded. */
  power: PowerPort & {
    send(verb: PowerSendVerb, node: NodeView | undefined): Promise<SendOutcome>;
  };
  status: StatusPort;
  events: EventPort;
  admissionLock: Mutex;
  onRefused?: (cause: RefusalCause) => void;
  log?: (message: string) => void;
}

/** A record decision's status: fields and message, the phase and history as they are. */
export function recordedStatus(
  nm: NodeMaintenance,
  decision: Extract<Decision, { kind: 'record' }>,
): NodeMaintenanceStatus {
  return {
    ...nm.status,
    ...decision.status,
    message: decision.message.slice(0, 4096),
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
    message: decision.message.slice(0, 4096),
    history,
    observedGeneration: nm.metadata.generation ?? nm.status?.observedGeneration,
  };
}

export class MaintenanceReconciler {
  constructor(private readonly ports: ReconcilerPorts) {}

  /**
   * Reconciles one maintenance by name until it waits or ends; answers when to look
   * again if a row waits on time rather than on a watch event.
   */
  async reconcile(name: string): Promise<{ requeueAfterMs?: number }> {
    let nm = this.ports.view.maintenance(name);
    let requeueAfterMs: number | undefined;
    const step = async (current: NodeMaintenance) => {
      const decision = await rowFor(current)(current, this.ports);
      requeueAfterMs =
        decision.kind === 'wait' ? decision.requeueAfterMs : undefined;
      return this.apply(current, decision);
    };
    // Each pass writes one transition or record; a maintenance has few phases.
    for (let pass = 0; nm && pass < 12; pass++) {
      nm =
        phaseOf(nm) === 'New'
          ? await this.ports.admissionLock.run(async () => {
              // Re-read under the lock: another admission may have just landed.
              const fresh = this.ports.view.maintenance(name);
              if (!fresh || phaseOf(fresh) !== 'New') return fresh;
              return step(fresh);
            })
          : await step(nm);
    }
    return { requeueAfterMs };
  }

  /** Returns the written object to continue with, or undefined to stop. */
  private async apply(
    nm: NodeMaintenance,
    decision: Decision,
  ): Promise<NodeMaintenance | undefined> {
    if (decision.kind === 'record') {
      const written = await this.write(
        nm,
        recordedStatus(nm, decision),
        decision.event,
        decision.message,
        phaseOf(nm),
      );
      if (!decision.send) return written;
      // The verb is on record: send it now, and write its answer with the next phase.
      const outcome = await this.ports.power
        .send(decision.send, this.ports.view.node(nm.spec.nodeName))
        .catch(
          (error): SendOutcome => ({
            ok: false,
            outcome: 'unknown',
            message: (error as Error).message,
          }),
        );
      return this.apply(written, afterSend[decision.send](written, outcome));
    }
    if (decision.kind !== 'transition') return undefined;
    const status = nextStatus(nm, decision, new Date().toISOString());
    const written = await this.write(
      nm,
      status,
      decision.event ?? { type: 'Normal', reason: decision.to },
      decision.message,
      decision.to,
    );
    if (decision.refusal) this.ports.onRefused?.(decision.refusal);
    return written;
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
    this.ports.log?.(
      `${nm.metadata.name}: ${phaseOf(nm)} -> ${to}: ${message}`,
    );
    return written;
  }
}
