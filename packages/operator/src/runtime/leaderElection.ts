import type { KubeConfig } from '@kubernetes/client-node';
import { KubeHttp } from '@rackside/plugin-servers-node';
import { performance } from 'node:perf_hooks';

/** The fields of a coordination.k8s.io/v1 Lease the election reads and writes. */
export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    [key: string]: unknown;
  };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
    [key: string]: unknown;
  };
}

/** Where the Lease lives; every call can be aborted (the attempt's timeout). */
export interface LeaseStore {
  /** undefined when there is no Lease yet. */
  read(signal: AbortSignal): Promise<Lease | undefined>;
  /** Fails with code 409 when it exists. */
  create(lease: Lease, signal: AbortSignal): Promise<Lease>;
  /** Conditional on metadata.resourceVersion: 409 when the record changed since. */
  replace(lease: Lease, signal: AbortSignal): Promise<Lease>;
}

export interface LeaderElectionOptions {
  /** The Lease; or `kubeConfig` for the Lease `namespace/name` in that cluster. */
  store?: LeaseStore;
  kubeConfig?: KubeConfig;
  namespace: string;
  name: string;
  identity: string;
  /** How long a Lease is valid without renewal, as a standby judges it (15 s). */
  leaseDurationMs?: number;
  /**
   * A leader that has not renewed within this, counted from the start of its last
   * successful renewal, is no longer leading (10 s; shorter than the lease duration).
   */
  renewDeadlineMs?: number;
  /** How often the holder renews and a candidate retries (2 s). */
  retryPeriodMs?: number;
  /** The limit of one attempt (half the renew deadline; never past the deadline). */
  attemptTimeoutMs?: number;
  onStartedLeading: () => void;
  /** Called once when leadership ended without stop(): the deadline passed or the Lease was lost. */
  onStoppedLeading: (reason: string) => void;
  log?: (message: string) => void;
  /** A monotonic clock in ms (tests); performance.now by default. */
  now?: () => number;
}

/**
 * A Lease's times are MicroTime: the apiserver insists on six fractional digits, which
 * `Date#toISOString` (three) does not give.
 */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function statusCode(error: unknown): number | undefined {
  const e = error as { code?: number; statusCode?: number };
  return e?.statusCode ?? (typeof e?.code === 'number' ? e.code : undefined);
}

/** The Lease `namespace/name` over the apiserver (plain JSON, abortable). */
export function kubeLeaseStore(
  kubeConfig: KubeConfig,
  namespace: string,
  name: string,
): LeaseStore {
  const http = new KubeHttp(kubeConfig);
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(
    namespace,
  )}/leases`;
  const item = `${collection}/${encodeURIComponent(name)}`;
  return {
    async read(signal) {
      try {
        return await http.request<Lease>({ method: 'GET', path: item, signal });
      } catch (error) {
        if (statusCode(error) === 404) return undefined;
        throw error;
      }
    },
    create: (lease, signal) =>
      http.request<Lease>({
        method: 'POST',
        path: collection,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease },
        signal,
      }),
    replace: (lease, signal) =>
      http.request<Lease>({
        method: 'PUT',
        path: item,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease },
        signal,
      }),
  };
}

/** What an action refused for want of leadership throws. */
export class NotLeadingError extends Error {
  constructor(what: string) {
    super(`not leading: ${what} not done`);
    this.name = 'NotLeadingError';
  }
}

/**
 * Lease-based leader election (coordination.k8s.io/v1), so that at most one operator
 * replica acts at any moment.
 *
 * - A standby judges expiry by when *it* last saw the record change (never by comparing
 *   clocks with the holder), like client-go: it may take the Lease `leaseDuration` after
 *   the holder's last write reached the apiserver.
 * - The holder counts its deadline from the *start* of its last successful renewal, on
 *   the monotonic clock: that write landed after the start, so the standby's count starts
 *   later, and `renewDeadline < leaseDuration` leaves a margin between the two.
 * - `isLeader` is that predicate, evaluated when asked: `leading && now < deadline`. A
 *   process frozen (SIGSTOP, a paused VM) and resumed sees its deadline passed at once,
 *   before any timer or callback of its own could act, and a timer that fired late
 *   cannot make it lead. Past the deadline it never leads again (the process exits).
 * - Each attempt has its own timeout and is aborted at the deadline, so a hung request
 *   cannot keep the loop from noticing.
 *
 * The renewal is the operator's one periodic apiserver request while idle: one update per
 * retry period, without reading the Lease first; only a conflict makes it read.
 */
export class LeaderElector {
  private timer?: NodeJS.Timeout;
  private deadlineTimer?: NodeJS.Timeout;
  private leading = false;
  private ended = false;
  private stopped = false;
  private observed?: { resourceVersion?: string; at: number };
  /** Start (monotonic) of the last successful renewal or acquisition. */
  private renewedAt = 0;
  /** The Lease as this leader last wrote it (the renewal's fast path). */
  private written?: Lease;
  private inFlight?: AbortController;
  private readonly store: LeaseStore;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly attemptTimeoutMs: number;
  private readonly now: () => number;

  constructor(private readonly options: LeaderElectionOptions) {
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.attemptTimeoutMs =
      options.attemptTimeoutMs ?? this.renewDeadlineMs / 2;
    if (!(this.renewDeadlineMs < this.leaseDurationMs)) {
      throw new Error(
        `the renew deadline (${this.renewDeadlineMs} ms) must be shorter than the lease duration (${this.leaseDurationMs} ms)`,
      );
    }
    if (!(this.retryPeriodMs < this.renewDeadlineMs)) {
      throw new Error(
        `the retry period (${this.retryPeriodMs} ms) must be shorter than the renew deadline (${this.renewDeadlineMs} ms)`,
      );
    }
    this.now = options.now ?? (() => performance.now());
    if (options.store) {
      this.store = options.store;
    } else if (options.kubeConfig) {
      this.store = kubeLeaseStore(
        options.kubeConfig,
        options.namespace,
        options.name,
      );
    } else {
      throw new Error('leader election needs a store or a kubeConfig');
    }
  }

  /**
   * Whether this replica may act now: it holds the Lease and its renew deadline has not
   * passed. Every action of the operator asks this right before it goes out.
   */
  get isLeader(): boolean {
    if (!this.leading) return false;
    if (this.now() < this.renewedAt + this.renewDeadlineMs) return true;
    // Past the deadline: false from now on, whatever a timer does or does not do. The
    // state changes here; whoever asked is told after it returns.
    this.end('the renew deadline passed');
    return false;
  }

  start(): void {
    void this.tick();
  }

  /** Stops campaigning and releases the Lease if still held, so a peer takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    const wasLeading = this.isLeader;
    this.ended = true;
    this.leading = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.inFlight?.abort();
    if (!wasLeading) return;
    await this.release();
  }

  /**
   * Steps down so that a peer leads (docs/upgrades.md, "The operator's own node"): this
   * replica stops acting at once (isLeader is false before the release goes out), clears
   * the Lease's holder (conditional on the record it read: never a successor's), and ends
   * as a lost Lease ends: onStoppedLeading, after which main exits and the replica comes
   * back only as a new process, a standby behind the peer that took the Lease within its
   * retry period. Answers false when this replica was not leading (nothing done).
   */
  async handOver(reason: string): Promise<boolean> {
    if (!this.isLeader) return false;
    this.leading = false;
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.inFlight?.abort();
    await this.release();
    if (!this.stopped) {
      this.options.log?.(`handed lease ${this.options.name} over: ${reason}`);
      this.options.onStoppedLeading(`handed over: ${reason}`);
    }
    return true;
  }

  /** Clears the holder of the Lease this replica holds, so a peer takes it on its next try. */
  private async release(): Promise<void> {
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), this.attemptTimeoutMs);
    try {
      const lease = await this.store.read(controller.signal);
      if (lease?.spec?.holderIdentity === this.options.identity) {
        // Conditional on the resourceVersion read: never clears a successor's record.
        await this.store.replace(
          {
            ...lease,
            spec: {
              ...lease.spec,
              holderIdentity: undefined,
              renewTime: undefined,
            },
          },
          controller.signal,
        );
      }
    } catch (error) {
      this.options.log?.(`releasing lease: ${(error as Error).message}`);
    } finally {
      clearTimeout(timeout);
    }
  }

  /** Leadership is over (once): the deadline passed or the Lease is someone else's. */
  private end(reason: string) {
    this.leading = false;
    if (this.ended) return;
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.inFlight?.abort();
    queueMicrotask(() => {
      if (this.stopped) return;
      this.options.log?.(`lost lease ${this.options.name}: ${reason}`);
      this.options.onStoppedLeading(reason);
    });
  }

  /** true: this replica holds the Lease now; false: not this round; a string: who holds it. */
  private async tryAcquireOrRenew(
    signal: AbortSignal,
  ): Promise<boolean | string> {
    const now = microTime(new Date());
    const { identity, name, namespace } = this.options;
    if (this.leading && this.written) {
      const last = this.written;
      this.written = undefined;
      try {
        // The resourceVersion makes it conditional: a 409 means the record changed since.
        this.written = await this.store.replace(
          { ...last, spec: { ...last.spec, renewTime: now } },
          signal,
        );
        return true;
      } catch (error) {
        const code = statusCode(error);
        if (code !== 409 && code !== 404) throw error;
        // Changed or gone: read it, as a candidate does.
      }
    }
    const lease = await this.store.read(signal);
    const spec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      renewTime: now,
    };
    if (!lease) {
      this.written = await this.store.create(
        {
          metadata: { name, namespace },
          spec: { ...spec, acquireTime: now, leaseTransitions: 0 },
        },
        signal,
      );
      return true;
    }
    const rv = lease.metadata?.resourceVersion;
    if (this.observed?.resourceVersion !== rv) {
      this.observed = { resourceVersion: rv, at: this.now() };
    }
    const holder = lease.spec?.holderIdentity;
    const held = !!holder && holder !== identity;
    // The holder's own duration when it wrote one, else ours; never shorter than ours.
    const duration = Math.max(
      (lease.spec?.leaseDurationSeconds ?? 0) * 1000,
      this.leaseDurationMs,
    );
    const expired = this.now() - (this.observed?.at ?? 0) > duration;
    if (held && !expired) return holder;

    const taking = holder !== identity;
    this.written = await this.store.replace(
      {
        ...lease,
        spec: {
          ...lease.spec,
          ...spec,
          acquireTime: taking ? now : lease.spec?.acquireTime,
          leaseTransitions:
            (lease.spec?.leaseTransitions ?? 0) + (taking ? 1 : 0),
        },
      },
      signal,
    );
    return true;
  }

  private armDeadline() {
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    const wait = Math.max(
      0,
      this.renewedAt + this.renewDeadlineMs - this.now(),
    );
    // Only to act on it promptly: isLeader is false past the deadline with or without it.
    this.deadlineTimer = setTimeout(() => void this.isLeader, wait + 1);
    this.deadlineTimer.unref?.();
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.ended) return;
    // First thing after a freeze: a leader past its deadline ends here, before renewing.
    if (this.leading && !this.isLeader) return;
    const started = this.now();
    const limit = this.leading
      ? Math.min(
          this.attemptTimeoutMs,
          this.renewedAt + this.renewDeadlineMs - started,
        )
      : this.attemptTimeoutMs;
    const controller = new AbortController();
    this.inFlight = controller;
    const timeout = setTimeout(() => controller.abort(), Math.max(1, limit));
    let result: boolean | string = false;
    try {
      result = await this.tryAcquireOrRenew(controller.signal);
    } catch (error) {
      // A 409 means somebody else wrote the lease first: not ours this round.
      if (statusCode(error) !== 409) {
        this.options.log?.(
          `leader election: ${
            controller.signal.aborted
              ? `attempt timed out after ${Math.round(limit)} ms`
              : (error as Error).message
          }`,
        );
      }
    } finally {
      clearTimeout(timeout);
      if (this.inFlight === controller) this.inFlight = undefined;
    }
    if (this.stopped || this.ended) return;
    const ok = result === true;
    if (ok && this.leading) {
      // A renewal that answered after the deadline is too late to count: once past it,
      // this replica has already stopped acting and others may count on that.
      if (!this.isLeader) return;
      this.renewedAt = started;
      this.armDeadline();
    } else if (ok) {
      this.renewedAt = started;
      this.leading = true;
      this.armDeadline();
      this.options.log?.(`acquired lease ${this.options.name}`);
      this.options.onStartedLeading();
    } else if (this.leading && typeof result === 'string') {
      // Our renewal conflicted and the record names another holder: it is theirs.
      this.end(`the Lease is held by ${result}`);
      return;
    }
    // A failed renewal is retried until the deadline (isLeader ends it then).
    this.timer = setTimeout(() => void this.tick(), this.retryPeriodMs);
    this.timer.unref?.();
  }
}

/**
 * The cluster access of the controllers: reads pass on every replica (the caches of a
 * standby stay warm), anything else (create, update, patch, delete: a status write, a
 * cordon, an eviction, an Event) is refused with {@link NotLeadingError} unless
 * `leading()` holds at the moment the request is about to go out, after its credentials
 * were prepared. One gate for every write, so no controller can forget to ask.
 */
export function leaderGatedKubeConfig(
  kubeConfig: KubeConfig,
  leading: () => boolean,
): KubeConfig {
  const gate = (method: string | undefined, what: () => string) => {
    const verb = (method ?? 'GET').toUpperCase();
    if (verb !== 'GET' && !leading()) {
      throw new NotLeadingError(`${verb} ${what()}`);
    }
  };
  const gated = Object.create(kubeConfig) as KubeConfig;
  // KubeHttp (ResourceClient, CoreClient, watch caches).
  gated.applyToHTTPSOptions = async (options: any) => {
    await kubeConfig.applyToHTTPSOptions(options);
    gate(options.method, () => String(options.path ?? 'request'));
  };
  // client-node's generated clients (makeApiClient), e.g. the Event recorder.
  gated.applySecurityAuthentication = async (context: any) => {
    await kubeConfig.applySecurityAuthentication(context);
    gate(context.getHttpMethod?.(), () =>
      String(context.getUrl?.() ?? 'request'),
    );
  };
  return gated;
}

/**
 * The same gate for a port that reaches outside the apiserver (a power channel, the Talos
 * API): the named methods act only while `leading()`, asked right before the call.
 */
export function leaderGated<T extends object>(
  port: T,
  methods: readonly (keyof T)[],
  leading: () => boolean,
): T {
  const gated = Object.create(port) as T;
  for (const method of methods) {
    const original = port[method];
    if (typeof original !== 'function') continue;
    const gatedMethod = (...args: unknown[]) => {
      if (!leading()) {
        return Promise.reject(new NotLeadingError(String(method)));
      }
      return original.apply(port, args);
    };
    // The same method, asking the elector first: its type is the original's.
    gated[method] = gatedMethod as T[keyof T];
  }
  return gated;
}
