/**
 * A keyed work queue in the shape of client-go's: a key is processed by at
 * most one worker at a time, a key added while it is processing runs once
 * more afterwards (never twice in parallel), duplicates collapse, and failed
 * keys come back with exponential backoff. Several workers drain the queue
 * so one slow reconcile does not hold up the others.
 */
export interface WorkQueueOptions {
  workers: number;
  /** First retry delay after a failure; doubles per consecutive failure. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Reports errors thrown by the handler (the key is retried). */
  onError?: (key: string, error: unknown) => void;
  /** Where depth, retries and reconcile durations go; none by default. */
  metrics?: WorkQueueMetrics;
}

/**
 * What a queue reports, kept free of any metrics library so the queue stays a plain
 * data structure (createMetrics().queue(controller) is the Prometheus side).
 */
export interface WorkQueueMetrics {
  /**
   * Keys waiting for a worker, at each change. As client-go counts it: keys running
   * or waiting out a delay are not in it, so a queue that keeps up reads 0.
   */
  depth(keys: number): void;
  /** A reconcile failed and its key will run again after backoff. */
  retry(): void;
  /** One handler run finished, successfully or not, after this many seconds. */
  reconciled(seconds: number): void;
}

export type Handler = (
  key: string,
) => Promise<{ requeueAfterMs?: number } | void>;

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly idleWaiters: Array<() => void> = [];
  private running = 0;
  private stopped = false;

  constructor(
    private readonly handler: Handler,
    private readonly options: WorkQueueOptions,
  ) {}

  /** Queue a key now. Cancels a pending delayed add of the same key. */
  add(key: string): void {
    if (this.stopped) return;
    const timer = this.timers.get(key);
    if (timer) {
      clearTimeout(timer);
      this.timers.delete(key);
    }
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.reportDepth();
    this.pump();
  }

  /** Queue a key after a delay; an earlier pending delay wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    if (this.timers.has(key)) return;
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref?.();
    this.timers.set(key, timer);
  }

  /** Number of keys waiting or running. */
  get length(): number {
    return this.queue.length + this.processing.size;
  }

  /** Resolves when nothing is queued or running (pending delays excluded). */
  idle(): Promise<void> {
    if (this.length === 0) return Promise.resolve();
    return new Promise(resolve => this.idleWaiters.push(resolve));
  }

  /**
   * Stops for good: nothing queued runs, no delay fires, a key running is not run again
   * (nor retried if it fails). Answers those keys (queued, waiting out a delay, running),
   * so the owner can hold them for a later queue (runtime/controller/buildController.ts).
   */
  stop(): string[] {
    this.stopped = true;
    const dropped = new Set([
      ...this.queue,
      ...this.timers.keys(),
      ...this.processing,
    ]);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.queue.length = 0;
    this.queued.clear();
    this.dirty.clear();
    this.reportDepth();
    return [...dropped];
  }

  private reportDepth(): void {
    this.options.metrics?.depth(this.queue.length);
  }

  private pump(): void {
    const before = this.queue.length;
    while (
      !this.stopped &&
      this.running < this.options.workers &&
      this.queue.length > 0
    ) {
      const key = this.queue.shift()!;
      this.queued.delete(key);
      this.processing.add(key);
      this.running++;
      void this.process(key);
    }
    if (this.queue.length !== before) this.reportDepth();
  }

  private async process(key: string): Promise<void> {
    let retryAfter: number | undefined;
    const started = process.hrtime.bigint();
    try {
      const result = await this.handler(key);
      this.failures.delete(key);
      retryAfter = result?.requeueAfterMs;
    } catch (error) {
      const count = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, count);
      const base = this.options.baseBackoffMs ?? 200;
      const max = this.options.maxBackoffMs ?? 60_000;
      retryAfter = Math.min(max, base * 2 ** (count - 1));
      // A stopped queue runs nothing again: counting a retry would overstate it.
      if (!this.stopped) this.options.metrics?.retry();
      this.options.onError?.(key, error);
    } finally {
      this.options.metrics?.reconciled(
        Number(process.hrtime.bigint() - started) / 1e9,
      );
      this.processing.delete(key);
      this.running--;
    }
    if (this.dirty.delete(key)) {
      this.add(key);
    } else if (retryAfter !== undefined) {
      this.addAfter(key, retryAfter);
    }
    this.pump();
    if (this.length === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }
}
