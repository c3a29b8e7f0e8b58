/*
 * A plan pre-flight lists every claim, volume and VirtualMachineInstance of the cluster
 * once (currentImpacts in preflight/impact.ts; pods come from a watch cache): cheap per server,
 * not per request. The per-user limit keeps one user's reloads from turning that into a
 * load on the apiserver: at most `perMinute` plan pre-flights (a plan request takes one too) in
 * any sixty seconds, then 429 with Retry-After.
 */
import { CustomErrorBase } from '@backstage/errors';
import type express from 'express';

/** 429: the caller asked more plan pre-flights than the limit allows; retry later. */
export class TooManyPlanPreflightsError extends CustomErrorBase {
  name = 'TooManyPlanPreflightsError' as const;
  constructor(
    message: string,
    /** Whole seconds until the next pre-flight is allowed. */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** Counts each user's plan pre-flights over the last minute. */
export class PlanPreflightLimiter {
  private readonly taken = new Map<string, number[]>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one pre-flight for `user`, or throws {@link TooManyPlanPreflightsError}. */
  take(user: string): void {
    const now = this.now();
    const recent = (this.taken.get(user) ?? []).filter(t => t > now - 60_000);
    if (recent.length >= this.perMinute) {
      const retryAfterSeconds = Math.max(
        1,
        Math.ceil((recent[0] + 60_000 - now) / 1000),
      );
      this.taken.set(user, recent);
      throw new TooManyPlanPreflightsError(
        `at most ${this.perMinute} plan pre-flights a minute per user (servers.plans.preflightsPerMinute): retry in ${retryAfterSeconds} s`,
        retryAfterSeconds,
      );
    }
    recent.push(now);
    this.taken.set(user, recent);
    // Users who stopped asking leave nothing behind.
    for (const [other, times] of this.taken) {
      if (times[times.length - 1] <= now - 60_000) this.taken.delete(other);
    }
  }
}

/** The 429 with Retry-After, in the error shape of every other answer. */
export function sendTooManyPlanPreflights(
  req: express.Request,
  res: express.Response,
  error: TooManyPlanPreflightsError,
) {
  res
    .status(429)
    .set('Retry-After', String(error.retryAfterSeconds))
    .json({
      error: { name: error.name, message: error.message },
      request: { method: req.method, url: req.originalUrl },
      response: { statusCode: 429 },
    });
}
