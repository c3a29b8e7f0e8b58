/*
 * Runs the table of table.ts for one MachineReclaim (with the table runner of
 * runtime/lifecycle/table.ts): pick the row, let it decide, do
 * what must come before the write (the credential's deletion), write status
 * with the audit entries, emit one Event per entry, then what comes after (send the reset
 * and write its answer; wake discovery). Each reconcile has a time limit (2 minutes): a
 * pass that overruns is left to finish in the background, the request is looked at again
 * at the smaller of the retry interval and its time left, and no second pass of the same
 * request starts while the first still runs.
 */
import type {
  Condition,
  MachineReclaim,
  MachineReclaimAuditEntry,
  MachineReclaimStatus,
} from '@rackside/plugin-servers-common';
import { talosFailureOutcome } from '@rackside/plugin-servers-node';
import {
  setCondition,
  withoutCondition,
} from '../runtime/lifecycle/conditions';
import { ReclaimReason } from '../runtime/lifecycle/reasons';
import {
  isoOf,
  requeueOf,
  runPasses,
  writeAnswer,
} from '../runtime/lifecycle/table';
import {
  afterReset,
  maintenanceDeadline,
  notBoundMessage,
  phaseOf,
  rowFor,
  ttlMs,
  type AuditStep,
  type Decision,
  type LifecyclePorts,
} from './table';

/** status.audit maxItems in the CRD. */
export const AUDIT_MAX = 100;

export const WAITING_CONDITION = 'Waiting';

export interface ReclaimReconcilerPorts extends LifecyclePorts {
  view: { reclaim(key: string): MachineReclaim | undefined };
  /** Writes status; fails (ConflictError) if `mr` is no longer the current version. */
  status: {
    write(
      mr: MachineReclaim,
      status: MachineReclaimStatus,
    ): Promise<MachineReclaim>;
    /** Reads the request from the apiserver (not a cache); undefined when it is gone. */
    read(namespace: string, name: string): Promise<MachineReclaim | undefined>;
  };
  events: {
    record(
      mr: MachineReclaim,
      type: 'Normal' | 'Warning',
      reason: string,
      message: string,
    ): Promise<void>;
  };
  wakeDiscovery(namespace: string, cluster: string): void;
  /** The time limit of one reconcile (2 minutes). */
  reconcileTimeoutMs: number;
  log?: (message: string) => void;
}

function auditEntries(
  steps: AuditStep[],
  at: string,
): MachineReclaimAuditEntry[] {
  return steps.map(step => ({
    at,
    event: step.event,
    message: step.message.slice(0, 4096),
    ...(step.actor ? { actor: step.actor.slice(0, 512) } : {}),
  }));
}

function withoutWaiting(conditions: Condition[] | undefined) {
  return withoutCondition(conditions, WAITING_CONDITION);
}

export class MachineReclaimReconciler {
  private readonly running = new Set<string>();
  private sendLock: Promise<void> = Promise.resolve();

  constructor(private readonly ports: ReclaimReconcilerPorts) {}

  /** When to look at a request whose pass overran: the smaller of the retry and its time left. */
  private overrunRequeue(key: string): number {
    const { limits, now } = this.ports;
    const mr = this.ports.view.reclaim(key);
    if (!mr) return limits.retryMs;
    const phase = phaseOf(mr);
    const until =
      phase === 'Pending' || phase === 'AwaitingConfirmation'
        ? Date.parse(mr.status?.expiresAt ?? '') ||
          Date.parse(mr.metadata.creationTimestamp ?? '') + ttlMs(mr, limits)
        : maintenanceDeadline(mr, limits) ?? now() + limits.retryMs;
    return Math.max(0, Math.min(limits.retryMs, until - now()));
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number }> {
    if (this.running.has(key)) {
      // The previous pass overran its limit and is still running: never two at once.
      return { requeueAfterMs: this.overrunRequeue(key) };
    }
    this.running.add(key);
    const pass = this.passes(key).finally(() => this.running.delete(key));
    let timer: NodeJS.Timeout | undefined;
    const overrun = new Promise<'overrun'>(resolve => {
      timer = setTimeout(
        () => resolve('overrun'),
        this.ports.reconcileTimeoutMs,
      );
      timer.unref?.();
    });
    try {
      const result = await Promise.race([pass, overrun]);
      if (result !== 'overrun') return result;
      pass.catch(error =>
        this.ports.log?.(
          `${key}: overrun pass failed: ${(error as Error).message}`,
        ),
      );
      this.ports.log?.(
        `${key}: reconcile exceeded ${this.ports.reconcileTimeoutMs} ms; looking again later`,
      );
      return { requeueAfterMs: this.overrunRequeue(key) };
    } finally {
      clearTimeout(timer);
    }
  }

  private passes(key: string): Promise<{ requeueAfterMs?: number }> {
    return runPasses(this.ports.view.reclaim(key), async current => {
      if (
        phaseOf(current) === 'AwaitingConfirmation' &&
        current.spec.confirmUUID
      ) {
        // The last check (the foreign etcd read again, resets of other requests counted)
        // and the record of the Reset run under one lock: two requests confirmed at once
        // cannot both pass on a margin that holds only one of them.
        const step = await this.underSendLock(async () => {
          const decision = await rowFor(current)(current, this.ports);
          if (decision.kind !== 'reset') return { decision };
          return {
            decision,
            recorded: await this.recordReset(current, decision),
          };
        });
        return {
          next:
            step.recorded && step.decision.kind === 'reset'
              ? await this.sendReset(step.recorded, step.decision)
              : await this.apply(current, step.decision),
          requeueAfterMs: requeueOf(step.decision),
        };
      }
      const decision = await rowFor(current)(current, this.ports);
      return {
        next: await this.apply(current, decision),
        requeueAfterMs: requeueOf(decision),
      };
    });
  }

  /** Runs `fn` after every earlier holder of the send lock has finished. */
  private async underSendLock<T>(fn: () => Promise<T>): Promise<T> {
    const before = this.sendLock;
    let release!: () => void;
    this.sendLock = new Promise<void>(resolve => {
      release = resolve;
    });
    await before;
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Returns the written object to continue with, or undefined to stop. */
  private async apply(
    mr: MachineReclaim,
    decision: Decision,
  ): Promise<MachineReclaim | undefined> {
    switch (decision.kind) {
      case 'done':
        return undefined;
      case 'wait':
        await this.showWaiting(mr, decision.waiting);
        return undefined;
      case 'record':
      case 'transition':
        return this.commit(mr, decision, await this.prepare(mr, decision));
      case 'reset':
        return this.sendReset(await this.recordReset(mr, decision), decision);
      default:
        return undefined;
    }
  }

  /**
   * The side effects of a record or transition, done once before its write: the
   * credential's deletion when it is owed. Answers the status changes and audit steps.
   */
  private async prepare(
    mr: MachineReclaim,
    decision: Extract<Decision, { kind: 'record' | 'transition' }>,
  ): Promise<{ status: Partial<MachineReclaimStatus>; steps: AuditStep[] }> {
    const status: Partial<MachineReclaimStatus> = { ...decision.status };
    const steps = [...decision.audit];
    if (
      decision.deleteCredential &&
      !mr.status?.credentialDeletedAt &&
      !mr.status?.credentialLeftAt
    ) {
      if (decision.kind === 'record') {
        // Only the deletion is owed: a failure is retried with backoff.
        steps.push(await this.deleteCredential(mr, status));
      } else {
        // The transition is recorded either way; the rule above the table retries.
        steps.push(
          await this.deleteCredential(mr, status).catch(
            (error): AuditStep => ({
              event: ReclaimReason.CredentialDeletionFailed,
              warning: true,
              message: `The credential Secret ${
                mr.spec.credentialSecretRef.name
              } could not be deleted yet: ${(error as Error).message}`,
            }),
          ),
        );
      }
    }
    return { status, steps };
  }

  /** Writes a prepared record or transition onto `mr`; wakes discovery when asked. */
  private async commit(
    mr: MachineReclaim,
    decision: Extract<Decision, { kind: 'record' | 'transition' }>,
    prepared: { status: Partial<MachineReclaimStatus>; steps: AuditStep[] },
  ): Promise<MachineReclaim> {
    const written = await this.write(
      mr,
      decision.kind === 'transition' ? decision.to : undefined,
      prepared.status,
      prepared.steps,
    );
    if (decision.kind === 'transition' && decision.wakeDiscovery) {
      this.ports.wakeDiscovery(
        written.metadata.namespace ?? '',
        written.spec.targetCluster,
      );
    }
    return written;
  }

  /** On record before it is sent: a crash after this write never sends it again. */
  private recordReset(
    mr: MachineReclaim,
    decision: Extract<Decision, { kind: 'reset' }>,
  ): Promise<MachineReclaim> {
    return this.write(mr, 'Resetting', decision.status, [...decision.audit]);
  }

  /** Sends the recorded Reset once and writes its answer. */
  private async sendReset(
    written: MachineReclaim,
    decision: Extract<Decision, { kind: 'reset' }>,
  ): Promise<MachineReclaim | undefined> {
    const outcome = await this.ports.talos
      .reset(
        // Checked against the allowed networks right before the Reset was recorded.
        decision.dial,
        decision.talosconfig.identity,
        this.ports.limits.callTimeoutMs,
      )
      .then(
        ack => ({
          ok: true as const,
          actorId: ack.actorId,
          at: isoOf(this.ports),
        }),
        error => ({
          ok: false as const,
          outcome: talosFailureOutcome(error),
          message: (error as Error).message,
        }),
      );
    const answer = afterReset(written, outcome, this.ports.limits);
    // The credential is deleted once; only the write is repeated on a fresh read.
    const prepared = await this.prepare(written, answer);
    const { name, namespace } = written.metadata;
    return writeAnswer(
      written,
      current => this.commit(current, answer, prepared),
      {
        read: () => this.ports.status.read(namespace ?? '', name),
        awaitsAnswer: latest =>
          latest.metadata.uid === written.metadata.uid &&
          phaseOf(latest) === 'Resetting' &&
          latest.status?.resetRecordedAt === written.status?.resetRecordedAt &&
          latest.status?.resetSentAt === undefined,
        log: message =>
          this.ports.log?.(`${namespace}/${name}: Reset: ${message}`),
      },
    );
  }

  /**
   * Deletes the credential, which the port does only for a Secret bound to the request;
   * one that is not is left as it was, and recorded so (credentialLeftAt).
   */
  private async deleteCredential(
    mr: MachineReclaim,
    status: Partial<MachineReclaimStatus>,
  ): Promise<AuditStep> {
    const deletion = await this.ports.credential.delete(mr);
    const at = isoOf(this.ports);
    const name = mr.spec.credentialSecretRef.name;
    if (deletion.outcome === 'notBound') {
      status.credentialLeftAt = at;
      return {
        event: ReclaimReason.CredentialNotBound,
        warning: true,
        message: notBoundMessage(mr, deletion.problems),
      };
    }
    status.credentialDeletedAt = at;
    return {
      event: ReclaimReason.CredentialDeleted,
      message:
        deletion.outcome === 'deleted'
          ? `The credential Secret ${name} was deleted: it is single use.`
          : `The credential Secret ${name} was already gone.`,
    };
  }

  /** Shows why a request waits in the Waiting condition. */
  private async showWaiting(
    mr: MachineReclaim,
    waiting: { reason: string; message: string } | undefined,
  ): Promise<void> {
    if (!waiting) return;
    const current = mr.status?.conditions?.find(
      c => c.type === WAITING_CONDITION,
    );
    const message = waiting.message.slice(0, 4096);
    // Written when the reason changes, not for every new wording of the same error.
    if (current?.status === 'True' && current.reason === waiting.reason) {
      return;
    }
    await this.ports.status.write(mr, {
      ...mr.status,
      conditions: setCondition(
        mr.status?.conditions,
        {
          type: WAITING_CONDITION,
          status: 'True',
          reason: waiting.reason,
          message,
          observedGeneration: mr.metadata.generation,
        },
        isoOf(this.ports),
      ),
    });
    this.ports.log?.(`${mr.metadata.name}: waiting: ${message}`);
  }

  private async write(
    mr: MachineReclaim,
    to: MachineReclaimStatus['phase'] | undefined,
    changes: Partial<MachineReclaimStatus>,
    steps: AuditStep[],
  ): Promise<MachineReclaim> {
    const at = isoOf(this.ports);
    const status: MachineReclaimStatus = {
      ...mr.status,
      ...changes,
      ...(to ? { phase: to } : {}),
      audit: [...(mr.status?.audit ?? []), ...auditEntries(steps, at)].slice(
        -AUDIT_MAX,
      ),
      // A transition ends the wait it was shown for.
      conditions:
        to && mr.status?.conditions
          ? withoutWaiting(mr.status.conditions)
          : mr.status?.conditions,
      observedGeneration: mr.metadata.generation,
    };
    const written = await this.ports.status.write(mr, status);
    for (const step of steps) {
      await this.ports.events.record(
        written,
        step.warning ? 'Warning' : 'Normal',
        step.event,
        step.message,
      );
    }
    this.ports.log?.(
      `${mr.metadata.namespace}/${mr.metadata.name}: ${phaseOf(mr)} -> ${
        to ?? phaseOf(mr)
      }${steps.length ? `: ${steps.map(s => s.event).join(', ')}` : ''}`,
    );
    return written;
  }
}
