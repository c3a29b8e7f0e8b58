/*
 * Runs the table of table.ts for one TalosMachine (with the table runner of
 * runtime/lifecycle/table.ts): the decided transition is written
 * to status (phase, message, timestamps, observedGeneration) and then emitted as an Event;
 * a wait only updates status.message when it says something new.
 */
import type {
  TalosMachine,
  TalosMachineStatus,
} from '@rackside/plugin-servers-common';
import { requeueOf, runPasses } from '../runtime/lifecycle/table';
import { joinRowFor, type JoinDecision, type JoinPorts } from './table';

export interface TalosMachineReconcilerPorts extends JoinPorts {
  view: { machine(key: string): TalosMachine | undefined };
  /** Writes status; fails (ConflictError) if `tm` is no longer the current version. */
  writeStatus(
    tm: TalosMachine,
    status: TalosMachineStatus,
  ): Promise<TalosMachine>;
  events: {
    record(
      tm: TalosMachine,
      type: 'Normal' | 'Warning',
      reason: string,
      message: string,
    ): Promise<void>;
  };
}

export class TalosMachineReconciler {
  constructor(private readonly ports: TalosMachineReconcilerPorts) {}

  reconcile(key: string): Promise<{ requeueAfterMs?: number }> {
    return runPasses(this.ports.view.machine(key), async tm => {
      const decision = await joinRowFor(tm)(tm, this.ports);
      return {
        next: await this.apply(tm, decision),
        requeueAfterMs: requeueOf(decision),
      };
    });
  }

  private async apply(
    tm: TalosMachine,
    decision: JoinDecision,
  ): Promise<TalosMachine | undefined> {
    if (decision.kind === 'done') return undefined;
    if (decision.kind === 'wait') {
      const message = decision.message?.slice(0, 4096);
      if (message && message !== tm.status?.message) {
        await this.ports.writeStatus(tm, {
          ...tm.status,
          phase: tm.status?.phase ?? 'Pending',
          message,
        });
      }
      return undefined;
    }
    const message = decision.message.slice(0, 4096);
    const written = await this.ports.writeStatus(tm, {
      ...tm.status,
      ...decision.status,
      phase: decision.to,
      message,
      observedGeneration: tm.metadata.generation,
    });
    await this.ports.events.record(
      written,
      decision.event.type,
      decision.event.reason,
      message,
    );
    this.ports.log?.(
      `TalosMachine ${tm.metadata.namespace}/${tm.metadata.name}: ${
        tm.status?.phase ?? 'Pending'
      } -> ${decision.to}: ${message}`,
    );
    return written;
  }
}
