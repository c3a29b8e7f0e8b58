/** Time source of the limiter (tests pass their own). */
export interface LimiterClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: LimiterClock = {
  now: () => Date.now(),
  sleep: ms => new Promise(resolve => setTimeout(resolve, ms)),
};

/**
 * Spaces the requests to one BMC: at least `minIntervalMs` between the starts of two
 * requests to the same host, whichever client sends them. BMCs are small computers that
 * fall over under bursts; hosts do not wait for each other.
 */
export class BmcRateLimiter {
  readonly minIntervalMs: number;
  private readonly clock: LimiterClock;
  private readonly nextSlot = new Map<string, number>();

  constructor(options: { minIntervalMs?: number; clock?: LimiterClock } = {}) {
    const interval = options.minIntervalMs ?? 200;
    if (!Number.isFinite(interval) || interval < 0) {
      throw new RangeError(
        `minIntervalMs must be a non-negative number, got ${interval}`,
      );
    }
    this.minIntervalMs = interval;
    this.clock = options.clock ?? realClock;
  }

  /** Resolves when a request to `host` may start, and books the slot after it. */
  async acquire(host: string): Promise<void> {
    const now = this.clock.now();
    const slot = Math.max(now, this.nextSlot.get(host) ?? 0);
    this.nextSlot.set(host, slot + this.minIntervalMs);
    if (slot > now) await this.clock.sleep(slot - now);
    // Forget hosts that have been idle for a full interval, so the map stays small.
    if (this.nextSlot.size > 1024) {
      const cutoff = this.clock.now();
      for (const [key, next] of this.nextSlot) {
        if (next < cutoff) this.nextSlot.delete(key);
      }
    }
  }
}
