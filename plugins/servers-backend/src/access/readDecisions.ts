/*
 * A user's read decisions, asked once per burst of reads. A Servers page asks
 * `/clusters`, then a window of each cluster, then more windows as the user scrolls,
 * and every open page refetches its windows on the same change signal: without reuse
 * each of these is a round trip to the permission backend with the same nine
 * questions and the same answers. Reuse is for reads only and short: an action
 * (`requireAction`, a plan's intent on every node) is always asked afresh, so a
 * revoked permission stops every change at once and stops reads within `maxAgeMs`.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';

/** How long a user's read decisions are reused unless `servers.readDecisionReuseMs` says. */
export const DEFAULT_READ_DECISION_REUSE_MS = 2_000;

/**
 * What names one user's decisions: the user, on whose behalf (an actor), and the
 * token's expiry (a new token, with its own ownership claims, asks again). Undefined
 * (never reused) for anything but a user: a service's access is rare and decided by
 * its own policy lines.
 */
export function readDecisionKeyOf(
  credentials: BackstageCredentials,
): string | undefined {
  const principal = credentials.principal as {
    type?: string;
    userEntityRef?: string;
    actor?: { subject?: string };
  };
  if (principal.type !== 'user' || !principal.userEntityRef) return undefined;
  return JSON.stringify([
    principal.userEntityRef,
    principal.actor?.subject ?? null,
    credentials.expiresAt?.getTime() ?? null,
  ]);
}

/**
 * Answers of `ask` kept per key for `maxAgeMs` from when they were asked, shared by
 * the calls that come in meanwhile (one question in flight per key). A failed answer
 * is not kept. `maxAgeMs` 0 asks every time.
 */
export class ReuseWindow<V> {
  private readonly entries = new Map<
    string,
    { askedAt: number; value: Promise<V> }
  >();

  constructor(
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string | undefined, ask: () => Promise<V>): Promise<V> {
    if (key === undefined || this.maxAgeMs <= 0) return ask();
    const at = this.now();
    const kept = this.entries.get(key);
    if (kept && at - kept.askedAt < this.maxAgeMs) return kept.value;
    this.forgetOlderThan(at);
    const value = ask();
    const entry = { askedAt: at, value };
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return value;
  }

  /** How many answers are kept (for tests). */
  get size(): number {
    return this.entries.size;
  }

  private forgetOlderThan(at: number) {
    for (const [key, entry] of this.entries) {
      if (at - entry.askedAt >= this.maxAgeMs) this.entries.delete(key);
    }
  }
}
