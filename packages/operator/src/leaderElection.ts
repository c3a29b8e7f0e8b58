import {
  CoordinationV1Api,
  type KubeConfig,
  type V1Lease,
} from '@kubernetes/client-node';

export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  name: string;
  identity: string;
  /** How long a lease is valid without renewal. */
  leaseDurationSeconds?: number;
  /** How often the holder renews and a candidate retries. */
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  /** Called once when a held lease could not be renewed in time. */
  onStoppedLeading: () => void;
  log?: (message: string) => void;
}

/**
 * A Lease's times are MicroTime: the apiserver insists on six fractional digits, which
 * `Date#toISOString` (three) does not give. client-node passes a string through as is.
 */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function statusCode(error: unknown): number | undefined {
  const e = error as { code?: number; statusCode?: number };
  return e?.code ?? e?.statusCode;
}

/**
 * Lease-based leader election (coordination.k8s.io/v1), so exactly one
 * operator replica acts. Like client-go, expiry is judged by when *this*
 * process last saw the record change, never by comparing clocks with the
 * holder: a skewed clock must not let two replicas lead at once.
 *
 * The renewal is the operator's one periodic apiserver request while idle: one update
 * per retry period. Like client-go, the leader renews the record it wrote last without
 * reading it first; only when that write conflicts does it read the Lease again.
 */
export class LeaderElector {
  private timer?: NodeJS.Timeout;
  private leading = false;
  private stopped = false;
  private observed?: { resourceVersion?: string; at: number };
  private lastRenew = 0;
  /** The Lease as this leader last wrote it (the renewal's fast path). */
  private written?: V1Lease;
  private readonly api: CoordinationV1Api;
  private readonly leaseDurationMs: number;
  private readonly retryPeriodMs: number;

  constructor(private readonly options: LeaderElectionOptions) {
    this.api = options.kubeConfig.makeApiClient(CoordinationV1Api);
    this.leaseDurationMs = (options.leaseDurationSeconds ?? 30) * 1000;
    this.retryPeriodMs = options.retryPeriodMs ?? 5000;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    void this.tick();
  }

  /** Stops campaigning and releases the lease if held, so a peer takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.read();
      if (lease?.spec?.holderIdentity === this.options.identity) {
        lease.spec.holderIdentity = undefined;
        lease.spec.renewTime = undefined;
        await this.api.replaceNamespacedLease({
          name: this.options.name,
          namespace: this.options.namespace,
          body: lease,
        });
      }
    } catch (error) {
      this.options.log?.(`releasing lease: ${(error as Error).message}`);
    }
  }

  private async read(): Promise<V1Lease | undefined> {
    try {
      return await this.api.readNamespacedLease({
        name: this.options.name,
        namespace: this.options.namespace,
      });
    } catch (error) {
      if (statusCode(error) === 404) return undefined;
      throw error;
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = microTime(new Date());
    const { identity, name, namespace } = this.options;
    if (this.leading && this.written) {
      const last = this.written;
      this.written = undefined;
      try {
        // The resourceVersion makes it conditional: a 409 means the record changed since.
        this.written = await this.api.replaceNamespacedLease({
          name,
          namespace,
          body: { ...last, spec: { ...last.spec, renewTime: now as any } },
        });
        return true;
      } catch (error) {
        const code = statusCode(error);
        if (code !== 409 && code !== 404) throw error;
        // Changed or gone: read it, as a candidate does.
      }
    }
    const lease = await this.read();
    const spec = {
      holderIdentity: identity,
      leaseDurationSeconds: this.leaseDurationMs / 1000,
      renewTime: now as any,
    };
    if (!lease) {
      this.written = await this.api.createNamespacedLease({
        namespace,
        body: {
          metadata: { name, namespace },
          spec: { ...spec, acquireTime: now as any, leaseTransitions: 0 },
        },
      });
      return true;
    }
    const rv = lease.metadata?.resourceVersion;
    if (this.observed?.resourceVersion !== rv) {
      this.observed = { resourceVersion: rv, at: Date.now() };
    }
    const holder = lease.spec?.holderIdentity;
    const held = holder && holder !== identity;
    const expired =
      Date.now() - (this.observed?.at ?? 0) >
      (lease.spec?.leaseDurationSeconds ?? 0) * 1000;
    if (held && !expired) return false;

    const taking = holder !== identity;
    this.written = await this.api.replaceNamespacedLease({
      name,
      namespace,
      body: {
        ...lease,
        spec: {
          ...lease.spec,
          ...spec,
          acquireTime: taking ? (now as any) : lease.spec?.acquireTime,
          leaseTransitions:
            (lease.spec?.leaseTransitions ?? 0) + (taking ? 1 : 0),
        },
      },
    });
    return true;
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    let ok = false;
    try {
      ok = await this.tryAcquireOrRenew();
    } catch (error) {
      // A 409 means somebody else wrote the lease first: not ours this round.
      if (statusCode(error) !== 409) {
        this.options.log?.(`leader election: ${(error as Error).message}`);
      }
    }
    if (this.stopped) return;
    if (ok) {
      this.lastRenew = Date.now();
      if (!this.leading) {
        this.leading = true;
        this.options.log?.(`acquired lease ${this.options.name}`);
        this.options.onStartedLeading();
      }
    } else if (
      this.leading &&
      Date.now() - this.lastRenew > this.leaseDurationMs - this.retryPeriodMs
    ) {
      // Stop before the lease can expire elsewhere, never after.
      this.leading = false;
      this.options.log?.(`lost lease ${this.options.name}`);
      this.options.onStoppedLeading();
      return;
    }
    this.timer = setTimeout(() => void this.tick(), this.retryPeriodMs);
    this.timer.unref?.();
  }
}
