/*
 * The one table runner behind the operator's lifecycles: NodeMaintenance
 * (maintenance/table.ts), MaintenancePlan (plan/table.ts), MachineReclaim
 * (reclaim/table.ts) and TalosMachine (talos-machine/table.ts), each with one row per
 * phase; and the kinds without a phase of their own, whose rows are keyed by a state read
 * from the object: TalosCluster (talos-cluster/table.ts: a pass due or not), ServerBMC
 * (serverbmc/table.ts: checked or not) and PowerProvider (powerprovider/table.ts: its
 * channel built or not). A row looks at the object and answers with a decision, never
 * writing; its reconciler applies the decision (status first, then the Event) and hands
 * back the written object, and the runner asks the row of the new phase, until a row
 * waits or the object is finished.
 *
 * What they share lives here once: the phase of an object nothing has looked at
 * (`New`), the row of finished phases, the pass loop with its one limit, and the clock
 * rows and reconcilers read time from (injected, so tests set it).
 */
import { ConflictError } from '@backstage/errors';

/** Where time comes from: `Date.now` in the operator, a settable one in tests. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** An instant of a clock as status and Events write it (RFC 3339). */
export function isoOf(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

/** The phase of an object no row has decided on yet (`status.phase` absent). */
export const NEW = 'New' as const;

/** `status.phase`, or {@link NEW} when it has none yet. */
export function phaseOf<P extends string>(object: {
  status?: { phase?: P };
}): P | typeof NEW {
  return object.status?.phase ?? NEW;
}

/** What every table's rows may answer besides their own decisions. */
export type Wait = { kind: 'wait'; requeueAfterMs?: number };
export type Done = { kind: 'done' };

/** The row of a finished phase: nothing is ever done again. */
export async function finished(): Promise<Done> {
  return { kind: 'done' };
}

/**
 * Passes per reconcile: each writes one transition or record, and a lifecycle has few
 * phases, so a reconcile that reaches this many has a row that does not settle.
 */
export const MAX_PASSES = 12;

/** What one pass did: the written object to go on with (none: stop), and its wait. */
export interface PassResult<O> {
  next?: O;
  /** Set when the pass ended in a wait with a time to look again. */
  requeueAfterMs?: number;
}

/**
 * Runs passes over one object until a pass hands back nothing (a wait, a finished phase,
 * the object gone) or {@link MAX_PASSES} is reached. Answers when to look again, taken
 * from the last pass: a wait on time rather than on a watch event.
 */
export async function runPasses<O>(
  first: O | undefined,
  pass: (current: O) => Promise<PassResult<O>>,
): Promise<{ requeueAfterMs?: number }> {
  let current = first;
  let requeueAfterMs: number | undefined;
  for (let n = 0; current !== undefined && n < MAX_PASSES; n++) {
    const result = await pass(current);
    requeueAfterMs = result.requeueAfterMs;
    current = result.next;
  }
  return { requeueAfterMs };
}

/** The requeue a decision asks for: a wait's time, nothing for any other decision. */
export function requeueOf(decision: {
  kind: string;
  requeueAfterMs?: number;
}): number | undefined {
  return decision.kind === 'wait' ? decision.requeueAfterMs : undefined;
}

/** Writes of a sent action's answer: the first, then one on a fresh read per conflict. */
export const ANSWER_WRITES = 4;

/**
 * Writes the answer of an action sent once (a power verb, a Talos Reset). The answer
 * exists only in this process until it is written, so a conflict (another writer or a
 * `kubectl label` moved the resourceVersion while the action was out) must not drop it
 * and leave the object to be settled by observation as if the operator had crashed: the
 * object is read again and, while it still awaits this answer, written again. Any other
 * failure is thrown, and is settled as a crash would be.
 */
export async function writeAnswer<O>(
  written: O,
  writeOn: (current: O) => Promise<O | undefined>,
  fresh: {
    read(): Promise<O | undefined>;
    /** Whether `latest` is still the record `written` made, without an answer. */
    awaitsAnswer(latest: O): boolean;
    log?: (message: string) => void;
  },
): Promise<O | undefined> {
  let current = written;
  for (let attempt = 1; ; attempt++) {
    try {
      return await writeOn(current);
    } catch (error) {
      // Every status writer of the operator fails a stale write so (ResourceClient).
      if (!(error instanceof ConflictError) || attempt >= ANSWER_WRITES)
        throw error;
      const latest = await fresh.read();
      // Gone, answered, or recorded again by another replica: the next pass's to look at.
      if (latest === undefined || !fresh.awaitsAnswer(latest)) return latest;
      fresh.log?.(
        `the answer's write conflicted (${
          (error as Error).message
        }); writing it again on a fresh read`,
      );
      current = latest;
    }
  }
}
