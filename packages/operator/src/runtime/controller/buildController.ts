/*
 * Builds one kind's controller from its declaration, the way controller-runtime's builder
 * does: the reconcile of one key (the kind's reconciler running its table), its watches
 * (which cache events wake which keys), the keys a start looks at, and the ports it runs
 * with (workers, the elector's predicate, metrics, log). Each kind's controller.ts is then
 * a declaration; what every controller needs is here once:
 *
 * - one keyed WorkQueue (runtime/workqueue.ts), created by start() and stopped by pause(),
 *   so that a replica runs reconciles only while it leads;
 * - leader gating: the elector's predicate is asked again before each reconcile, so a
 *   replica that has just lost the Lease (before the elector called pause) runs none;
 * - nothing dropped: a key woken while paused, or in the queue when it paused (queued,
 *   waiting out a backoff, or running, its reconcile perhaps cut short by the lost
 *   leadership), runs at the next start;
 * - the metrics under the kind's name (rackside_workqueue_depth, _retries_total,
 *   rackside_reconcile_duration_seconds by controller; rackside_reconcile_errors_total by
 *   kind) and one log line per failed reconcile;
 * - stop(): unsubscribes the watches and, when asked, waits for the reconciles under way.
 */
import { reconcileErrorFields, type OperatorLog } from '../logger';
import type { OperatorMetrics } from '../metrics';
import { WorkQueue, type Handler } from '../workqueue';

/** What a watch may do: wake a key, and ask whether the controller is running. */
export interface Wake {
  /** Queues `key` now when running; when paused, at the next start. */
  enqueue(key: string): void;
  /** Whether the queue runs (this replica leads and the controller has started). */
  running(): boolean;
}

/** What one kind's controller is made of (its controller.ts declares it). */
export interface ControllerDeclaration {
  /**
   * The kind as metrics and logs name it (the `controller` label of the queue metrics,
   * the `kind` of rackside_reconcile_errors_total): never renamed, the chart's alert rules
   * and dashboards select on it.
   */
  kind: string;
  /** Reconciles one key (the kind's reconciler); may ask to be looked at again later. */
  reconcile: Handler;
  /**
   * Subscribes to the caches the kind reads, each event waking the keys it concerns;
   * answers the unsubscribes. Called once, when the controller is built.
   */
  watches(wake: Wake): Array<() => void>;
  /** The keys a start looks at (every object of the kind, or the open ones). */
  keys(): Iterable<string>;
  /** Resolves once the caches the kind reads have listed: a start waits for it. */
  synced?(): Promise<void>;
  /** The phase of `key`'s object, for the log line of a failed reconcile. */
  phaseOf?(key: string): string | undefined;
  /** start() resolves only once the first pass over keys() has ended. */
  awaitFirstPass?: boolean;
  /**
   * How long stop() waits for the reconciles under way (0: not at all). A reconcile that
   * recorded an action sends it and writes the answer instead of leaving a record the
   * next leader can only give up on.
   */
  stopGraceMs?: number;
  /** Run once the caches have synced, right before the keys are queued. */
  beforeFirstPass?(): void;
  /** Run after the queue is created and the keys queued (after the first pass if awaited). */
  onStarted?(): void;
  /** Run when the queue stops (leadership lost, or stop()). */
  onPaused?(): void;
  /** Run last by stop(): what the kind owns beyond the shared caches (its own watches). */
  onStopped?(): Promise<void> | void;
}

/** What a controller runs with, given by startOperator. */
export interface ControllerPorts {
  /** Keys reconciled at once (at least 1). */
  workers: number;
  /** Whether this replica leads now (the elector's predicate). */
  leading(): boolean;
  metrics?: Pick<OperatorMetrics, 'queue' | 'reconcileErrors'>;
  /** Counts a failed reconcile besides the metric (tests, the plan's own hook). */
  onError?(kind: string, key: string, error: unknown): void;
  log?: OperatorLog;
}

export interface Controller {
  readonly kind: string;
  /** Waits for the caches, then runs the queue over keys() and what was held (call when leading). */
  start(): Promise<void>;
  /** Stops the queue (leadership lost); its keys are held for the next start. */
  pause(): void;
  /** Stops for good: unsubscribes, pauses, waits stopGraceMs for the reconciles under way. */
  stop(): Promise<void>;
  /** Wakes `key` from outside the watches (another kind's news). */
  enqueue(key: string): void;
  /** Whether the queue runs. */
  running(): boolean;
}

export function buildController(
  declaration: ControllerDeclaration,
  ports: ControllerPorts,
): Controller {
  const { kind } = declaration;
  const log = ports.log ?? (() => {});
  let queue: WorkQueue | undefined;
  // Keys woken while paused or dropped by a pause: the next start runs them.
  const held = new Set<string>();
  // Bumped by every pause: a start that waited for the caches across one gives up.
  let epoch = 0;
  let stopped = false;

  const enqueue = (key: string) => {
    if (queue) queue.add(key);
    else if (!stopped) held.add(key);
  };
  const running = () => queue !== undefined;

  const reconcile: Handler = async key => {
    // The elector pauses this controller when leadership goes; until it has, a reconcile
    // that would act as a leader is not started, and its key waits for the next start.
    if (!ports.leading()) {
      held.add(key);
      return undefined;
    }
    return declaration.reconcile(key);
  };

  const unsubscribe = declaration.watches({ enqueue, running });

  const pause = () => {
    const current = queue;
    queue = undefined;
    epoch++;
    if (!current) return;
    for (const key of current.stop()) held.add(key);
    declaration.onPaused?.();
  };

  return {
    kind,
    async start() {
      if (queue || stopped) return;
      const startedIn = epoch;
      await declaration.synced?.();
      if (stopped || epoch !== startedIn || queue) return;
      declaration.beforeFirstPass?.();
      const started = new WorkQueue(reconcile, {
        workers: Math.max(1, ports.workers),
        metrics: ports.metrics?.queue(kind),
        onError: (key, error) => {
          ports.metrics?.reconcileErrors.inc({ kind });
          ports.onError?.(kind, key, error);
          log(
            `reconcile ${kind} ${key}: ${(error as Error).message}`,
            reconcileErrorFields(kind, key, error, declaration.phaseOf?.(key)),
          );
        },
      });
      queue = started;
      const keys = new Set([...held, ...declaration.keys()]);
      held.clear();
      for (const key of keys) started.add(key);
      if (declaration.awaitFirstPass) {
        await started.idle();
        if (queue !== started) return;
      }
      declaration.onStarted?.();
    },
    pause,
    async stop() {
      if (stopped) return;
      stopped = true;
      const wasRunning = queue;
      pause();
      held.clear();
      for (const off of unsubscribe) off();
      const grace = declaration.stopGraceMs ?? 0;
      if (wasRunning && grace > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          wasRunning.idle(),
          new Promise<void>(resolve => {
            timer = setTimeout(resolve, grace);
          }),
        ]);
        clearTimeout(timer);
      }
      await declaration.onStopped?.();
    },
    enqueue,
    running,
  };
}
