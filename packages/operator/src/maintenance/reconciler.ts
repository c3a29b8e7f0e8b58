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
  type PodPort,
  phaseOf,
  type RefusalCause,
  rowFor,
} from './machine';

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
  status: StatusPort;
  events: EventPort;
  admissionLock: Mutex;
  onRefused?: (cause: RefusalCause) => void;
  log?: (message: string) => void;
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

  /** Reconciles one maintenance by name until it waits or ends. */
  async reconcile(name: string): Promise<void> {
    let nm = this.ports.view.maintenance(name);
    // Each pass writes one transition; a maintenance has few phases.
    for (let pass = 0; nm && pass < 10; pass++) {
      const current = nm;
      const step = async () => {
        const decision = await rowFor(current)(current, this.ports);
        return this.apply(current, decision);
      };
      nm =
        phaseOf(current) === 'New'
          ? await this.ports.admissionLock.run(async () => {
              // Re-read under the lock: another admission may have just landed.
              const fresh = this.ports.view.maintenance(name);
              if (!fresh || phaseOf(fresh) !== 'New') return fresh;
              const decision = await rowFor(fresh)(fresh, this.ports);
              return this.apply(fresh, decision);
            })
          : await step();
    }
  }

  /** Returns the written object to continue with, or undefined to stop. */
  private async apply(
    nm: NodeMaintenance,
    decision: Decision,
  ): Promise<NodeMaintenance | undefined> {
    if (decision.kind !== 'transition') return undefined;
    const status = nextStatus(nm, decision, new Date().toISOString());
    const written = await this.ports.status.write(nm, status);
    if (decision.refusal) this.ports.onRefused?.(decision.refusal);
    const event = decision.event ?? {
      type: 'Normal' as const,
      reason: decision.to,
    };
    await this.ports.events.record(
      written,
      event.type,
      event.reason,
      decision.message,
    );
    this.ports.log?.(
      `${nm.metadata.name}: ${phaseOf(nm)} -> ${decision.to}: ${
        decision.message
      }`,
    );
    return written;
  }
}
