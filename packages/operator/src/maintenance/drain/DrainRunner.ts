/*
 * Drains run here, outside the reconcile loop (docs/architecture.md, "The maintenance lifecycle"): one task per maintenance
 * in Draining, each with its own watch of that node's pods, so fifty drains run side by
 * side and none waits for a worker. The reconciler asks `ensure()` for a task's outcome
 * and is woken when it changes; the task never writes the phase, only progress.
 *
 * What to do with each pod is servers-common's planDrain (docs/drain.md), the same
 * plan the pre-flight showed: `rackside.dev/drain-order` groups are evicted lowest first,
 * the next only once every pod of the one before is gone; `skip` pods stay; pods with
 * `wait-completed` are waited for, never evicted; pods with data on the node stop the
 * drain unless `allowNodeLocalData`. Nothing here deletes a pod.
 */
import {
  budgetOfRefusal,
  planDrain,
  type DrainContext,
  type DrainRuleOptions,
  podKey,
  type DrainPod,
  type NodeMaintenance,
  type NodeMaintenanceDrainProgress,
  type PodDisruptionBudgetLike,
  type PodLike,
  type VirtualMachineInstanceLike,
} from '@rackside/plugin-servers-common';

/** What became of one eviction request (see CoreClient.evictPod). */
export type EvictionOutcome =
  | { outcome: 'evicted' }
  | { outcome: 'gone' }
  | { outcome: 'blocked'; message: string; causes: string[] };

/** A live view of the pods bound to one node. */
export interface NodePodWatch {
  /** Resolves once the first list is in. */
  readonly synced: Promise<void>;
  pods(): PodLike[];
  /** Calls `listener` on every pod added, changed or removed; returns unsubscribe. */
  onChange(listener: () => void): () => void;
  stop(): Promise<void>;
}

/** The edges a drain touches. */
export interface DrainPorts {
  watchPods(nodeName: string): NodePodWatch;
  evict(
    namespace: string,
    name: string,
    options: { gracePeriodSeconds?: number },
  ): Promise<EvictionOutcome>;
  /** The PodDisruptionBudgets of a namespace (to name the one behind a 429). */
  budgets(namespace: string): Promise<PodDisruptionBudgetLike[]>;
  /**
   * The node's labels, the PersistentVolumeClaims of these namespaces and the
   * PersistentVolumes: what tells node-local data apart. Read when the drain starts and
   * again when a pod names a claim not seen yet.
   */
  storage(
    nodeName: string,
    namespaces: string[],
  ): Promise<Omit<DrainContext, 'nodeName'>>;
  /**
   * The KubeVirt VirtualMachineInstances on the node, undefined where the cluster has no
   * such API; read with the storage. They change nothing the drain does (their
   * virt-launcher pods are pods like any other), so a failed read only logs.
   */
  virtualMachines?(
    nodeName: string,
  ): Promise<VirtualMachineInstanceLike[] | undefined>;
  /** Writes `status.drain` only (never the phase). */
  writeProgress(
    name: string,
    progress: NodeMaintenanceDrainProgress,
  ): Promise<void>;
  /** Asks the reconciler to look at the maintenance again. */
  wake(name: string): void;
  log?(message: string): void;
  now?(): number;
}

/** Where a drain stands. */
export type DrainOutcome =
  | { state: 'running'; progress: NodeMaintenanceDrainProgress }
  | { state: 'drained'; progress: NodeMaintenanceDrainProgress }
  | {
      state: 'failed';
      reason: string;
      progress: NodeMaintenanceDrainProgress;
    };

export interface DrainRunnerOptions {
  /** First retry of a refused or failed eviction; doubles up to `maxBackoffMs`. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** At most this many eviction calls in flight per drain. */
  evictionConcurrency?: number;
  /** Progress is written at most this often (the final write is never delayed). */
  progressIntervalMs?: number;
}

const DEFAULTS: Required<DrainRunnerOptions> = {
  initialBackoffMs: 500,
  // Short enough that a drain finishes within seconds of a budget allowing it.
  maxBackoffMs: 5000,
  evictionConcurrency: 16,
  progressIntervalMs: 500,
};

const MAX_LISTED = 2000;
/** The longest `status.message` the CRD accepts. */
const MAX_MESSAGE = 4096;

interface PodAttempt {
  evictedAt?: number;
  retryAt?: number;
  failures: number;
}

/** One drain of one maintenance. */
class DrainTask {
  outcome: DrainOutcome;
  private cancelled = false;
  private readonly attempts = new Map<string, PodAttempt>();
  private readonly blocked = new Map<
    string,
    { pod: string; pdb: string; message: string }
  >();
  private lastError: string | undefined;
  private readonly tracked = new Set<string>();
  private readonly previouslyGone: number;
  private readonly startedAt: string;
  private lastWrite = 0;
  private lastWritten = '';
  private wakeUp: (() => void) | undefined;
  /** A pod changed since the loop last read the pods. */
  private changed = false;
  private readonly budgetsByNamespace = new Map<
    string,
    Promise<PodDisruptionBudgetLike[]>
  >();
  /** The storage last read, and the claims (`namespace/name`) it was read for. */
  private storage: DrainContext | undefined;
  private readonly claimsRead = new Set<string>();
  private storageRetryAt = 0;
  /** The order group being evicted, and the wait-completed pods still there. */
  private order: number | undefined;
  private waitingFor: string[] = [];
  /** The VMIs on the node as the plan classified them (absent without the API). */
  private virtualMachines:
    | NodeMaintenanceDrainProgress['virtualMachines']
    | undefined;

  constructor(
    private readonly nm: NodeMaintenance,
    private readonly ports: DrainPorts,
    private readonly options: Required<DrainRunnerOptions>,
  ) {
    const previous = nm.status?.drain;
    // Resuming after a restart: what was pending then is still ours to wait for.
    for (const key of previous?.pendingPods ?? []) this.tracked.add(key);
    this.previouslyGone = previous?.evicted ?? 0;
    this.startedAt = previous?.startedAt ?? new Date(this.now()).toISOString();
    // Until the pods are listed, everything recorded as pending still is.
    this.outcome = {
      state: 'running',
      progress: this.progress([...this.tracked]),
    };
  }

  private now(): number {
    return this.ports.now?.() ?? Date.now();
  }

  private get name(): string {
    return this.nm.metadata.name;
  }

  cancel(): void {
    this.cancelled = true;
    this.wakeUp?.();
  }

  private progress(pending: string[]): NodeMaintenanceDrainProgress {
    const gone = this.tracked.size - pending.length;
    return {
      startedAt: this.startedAt,
      total: this.previouslyGone + this.tracked.size,
      evicted: this.previouslyGone + gone,
      pending: pending.length,
      pendingPods: pending.slice(0, MAX_LISTED),
      blockedBy: [...this.blocked.values()].slice(0, MAX_LISTED),
      order: this.order,
      waitingFor: this.waitingFor.length
        ? this.waitingFor.slice(0, MAX_LISTED)
        : undefined,
      virtualMachines: this.virtualMachines?.slice(0, MAX_LISTED),
      lastError: this.lastError,
    };
  }

  /**
   * The storage context for these pods, read again when one of them names a claim the
   * last read did not cover. Undefined when the read failed: nothing is evicted then,
   * since a pod with data on the node would not be recognised.
   */
  private async storageFor(pods: PodLike[]): Promise<DrainContext | undefined> {
    const claims = new Set<string>();
    for (const pod of pods) {
      const ns = pod.metadata?.namespace ?? '';
      for (const v of pod.spec?.volumes ?? []) {
        const claim =
          v.persistentVolumeClaim?.claimName ??
          (v.ephemeral ? `${pod.metadata?.name}-${v.name}` : undefined);
        if (claim) claims.add(`${ns}/${claim}`);
      }
    }
    const unseen = [...claims].some(c => !this.claimsRead.has(c));
    if (this.storage && !unseen) return this.storage;
    if (this.now() < this.storageRetryAt) return undefined;
    const namespaces = [
      ...new Set(pods.map(p => p.metadata?.namespace ?? '')),
    ].sort();
    try {
      const [read, virtualMachines] = await Promise.all([
        this.ports.storage(this.nm.spec.nodeName, namespaces),
        this.readVirtualMachines(),
      ]);
      this.storage = {
        ...read,
        nodeName: this.nm.spec.nodeName,
        ...(virtualMachines ? { virtualMachines } : {}),
      };
      for (const c of claims) this.claimsRead.add(c);
      return this.storage;
    } catch (error) {
      this.storageRetryAt = this.now() + this.options.initialBackoffMs;
      this.lastError = `reading the node's volumes: ${
        (error as Error).message
      }`.slice(0, 4096);
      this.ports.log?.(`${this.name}: ${this.lastError}`);
      return undefined;
    }
  }

  /**
   * The pods still on the node that the drain has to see gone (evicted or waited for),
   * by the plan without storage, and what it already tracked: named at a timeout when
   * the storage could not be read.
   */
  private stillThere(pods: PodLike[], options: DrainRuleOptions): string[] {
    const plan = planDrain(pods, options, { nodeName: this.nm.spec.nodeName });
    const keys = new Set([
      ...[...plan.evict, ...plan.waitCompleted].map(podKey),
      ...plan.refused.map(r => podKey(r.pod)),
    ]);
    for (const key of this.tracked) {
      if (pods.some(p => podKey(planKey(p)) === key)) keys.add(key);
    }
    return [...keys].sort();
  }

  private async readVirtualMachines(): Promise<
    VirtualMachineInstanceLike[] | undefined
  > {
    if (!this.ports.virtualMachines) return undefined;
    try {
      return await this.ports.virtualMachines(this.nm.spec.nodeName);
    } catch (error) {
      this.ports.log?.(
        `${this.name}: reading the node's VirtualMachineInstances: ${
          (error as Error).message
        }`,
      );
      return this.storage?.virtualMachines as
        | VirtualMachineInstanceLike[]
        | undefined;
    }
  }

  /**
   * The Failed outcome of a drain past its deadline: the node stays cordoned and the pods
   * still there are named, with what kept them there when the drain knows it.
   */
  private timedOut(pending: string[], why: string[]): DrainOutcome {
    const head = `the drain timed out after ${this.nm.spec.drain?.timeoutSeconds}s with ${pending.length} pod(s) still on ${this.nm.spec.nodeName}: `;
    const tail = ' The node is left cordoned.';
    const body = `${pending.slice(0, 50).join(', ')}${
      pending.length > 50 ? ', ...' : ''
    }.${why.map(w => ` ${w}`).join('')}`;
    // status.message holds 4096 characters: the list gives way, the verdict stays.
    const room = MAX_MESSAGE - head.length - tail.length;
    return {
      state: 'failed',
      reason: `${head}${
        body.length > room ? `${body.slice(0, room - 3)}...` : body
      }${tail}`,
      progress: this.progress(pending),
    };
  }

  private deadline(): number | undefined {
    const seconds = this.nm.spec.drain?.timeoutSeconds;
    if (!seconds) return undefined;
    return Date.parse(this.startedAt) + seconds * 1000;
  }

  private async write(
    progress: NodeMaintenanceDrainProgress,
    force: boolean,
  ): Promise<void> {
    if (this.cancelled) return;
    const text = JSON.stringify(progress);
    if (text === this.lastWritten) return;
    const now = this.now();
    if (!force && now - this.lastWrite < this.options.progressIntervalMs) {
      return;
    }
    this.lastWrite = now;
    this.lastWritten = text;
    try {
      await this.ports.writeProgress(this.name, progress);
    } catch (error) {
      // Progress is advisory; the next change writes it again.
      this.lastWritten = '';
      this.ports.log?.(
        `${this.name}: writing drain progress: ${(error as Error).message}`,
      );
    }
  }

  private budgets(namespace: string) {
    let cached = this.budgetsByNamespace.get(namespace);
    if (!cached) {
      cached = this.ports.budgets(namespace).catch(() => []);
      this.budgetsByNamespace.set(namespace, cached);
    }
    return cached;
  }

  private async evictOne(pod: DrainPod, source: PodLike): Promise<void> {
    const key = podKey(pod);
    const attempt = this.attempts.get(key) ?? { failures: 0 };
    this.attempts.set(key, attempt);
    const gracePeriodSeconds = this.nm.spec.drain?.gracePeriodSeconds;
    const backoff = () =>
      Math.min(
        this.options.maxBackoffMs,
        this.options.initialBackoffMs * 2 ** Math.min(attempt.failures - 1, 20),
      );
    try {
      const result = await this.ports.evict(pod.namespace, pod.name, {
        gracePeriodSeconds,
      });
      if (result.outcome === 'blocked') {
        attempt.failures++;
        attempt.retryAt = this.now() + backoff();
        const pdb =
          budgetOfRefusal(
            result.causes,
            source,
            await this.budgets(pod.namespace),
          ) ?? 'unknown';
        if (!this.blocked.has(key)) {
          this.ports.log?.(
            `${this.name}: eviction of ${key} refused by PodDisruptionBudget ${pdb}; retrying`,
          );
        }
        this.blocked.set(key, { pod: key, pdb, message: result.message });
        return;
      }
      attempt.evictedAt = this.now();
      attempt.retryAt = undefined;
      this.blocked.delete(key);
    } catch (error) {
      attempt.failures++;
      attempt.retryAt = this.now() + backoff();
      this.lastError = `evicting ${key}: ${(error as Error).message}`.slice(
        0,
        4096,
      );
      this.ports.log?.(`${this.name}: ${this.lastError}`);
    }
  }

  /**
   * Waits until a pod changed since the loop last looked, a retry is due, the deadline
   * passes, or cancel. A change that arrived while the loop was busy counts: `changed` is
   * set by a listener that stays subscribed for the whole drain, so no wake-up is lost.
   */
  private sleep(untilMs: number | undefined) {
    if (this.changed || this.cancelled) return Promise.resolve();
    return new Promise<void>(resolve => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        if (timer) clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      if (untilMs !== undefined) {
        timer = setTimeout(done, Math.max(0, untilMs - this.now()));
      }
      this.wakeUp = done;
    });
  }

  async run(): Promise<void> {
    const watch = this.ports.watchPods(this.nm.spec.nodeName);
    this.ports.log?.(
      `${this.name}: drain of ${this.nm.spec.nodeName} ${
        this.tracked.size ? `resumed (${this.tracked.size} pending)` : 'started'
      }`,
    );
    const off = watch.onChange(() => {
      this.changed = true;
      this.wakeUp?.();
    });
    try {
      await watch.synced;
      const options = this.nm.spec.drain ?? {};
      while (!this.cancelled) {
        this.changed = false;
        const pods = watch.pods();
        const storage = await this.storageFor(pods);
        if (!storage) {
          // Nothing is evicted blind; the deadline holds all the same.
          const deadline = this.deadline();
          if (deadline !== undefined && this.now() >= deadline) {
            const still = this.stillThere(pods, options);
            for (const key of still) this.tracked.add(key);
            this.finish(
              this.timedOut(still, [
                `Evictions waited for the node's volumes, which could not be read (${this.lastError}).`,
              ]),
            );
            break;
          }
          // Retried after a backoff, or at once when a pod changes.
          this.outcome = {
            state: 'running',
            progress: this.progress(this.outcome.progress.pendingPods ?? []),
          };
          await this.write(this.outcome.progress, false);
          await this.sleep(Math.min(this.storageRetryAt, deadline ?? Infinity));
          continue;
        }
        const plan = planDrain(pods, options, storage);
        const byKey = new Map(pods.map(p => [podKey(planKey(p)), p]));
        for (const pod of plan.evict) this.tracked.add(podKey(pod));
        for (const pod of plan.waitCompleted) this.tracked.add(podKey(pod));
        const present = new Set(
          [...plan.evict, ...plan.waitCompleted].map(podKey),
        );
        const pending = [...this.tracked].filter(key => present.has(key));
        this.waitingFor = plan.waitCompleted.map(podKey);
        this.virtualMachines = plan.virtualMachines?.map(v => ({
          vmi: `${v.namespace}/${v.name}`,
          action: v.action,
        }));
        // The lowest group with a pod still there (terminating ones included).
        this.order = plan.orderGroups[0]?.order;
        for (const key of [...this.blocked.keys()]) {
          if (!present.has(key)) this.blocked.delete(key);
        }
        if (plan.refused.length > 0) {
          // A pod the drain may not evict arrived after admission checked the node.
          this.finish({
            state: 'failed',
            reason: `the drain stopped: pods it may not evict are on ${
              this.nm.spec.nodeName
            }: ${plan.refused
              .map(r => r.message)
              .join(' ')} The node is left cordoned.`,
            progress: this.progress(pending),
          });
          break;
        }
        if (pending.length === 0) {
          this.finish({ state: 'drained', progress: this.progress([]) });
          break;
        }
        const deadline = this.deadline();
        if (deadline !== undefined && this.now() >= deadline) {
          const blocking = (plan.virtualMachines ?? []).filter(
            v => v.action === 'blocks',
          );
          this.finish(
            this.timedOut(
              pending,
              blocking.length
                ? [
                    `VirtualMachineInstances that keep their pods from being evicted: ${blocking
                      .slice(0, 20)
                      .map(v => `${v.namespace}/${v.name} (${v.reason})`)
                      .join('; ')}.`,
                  ]
                : [],
            ),
          );
          break;
        }
        const now = this.now();
        const due = plan.evict.filter(pod => {
          if (pod.terminating || (pod.order ?? 0) !== this.order) return false;
          const attempt = this.attempts.get(podKey(pod));
          if (!attempt) return true;
          if (attempt.evictedAt !== undefined) return false;
          return (attempt.retryAt ?? 0) <= now;
        });
        await pool(due, this.options.evictionConcurrency, pod =>
          this.evictOne(pod, byKey.get(podKey(pod))!),
        );
        this.outcome = { state: 'running', progress: this.progress(pending) };
        await this.write(this.outcome.progress, false);
        const retries = [...this.attempts.values()]
          .filter(a => a.evictedAt === undefined && a.retryAt !== undefined)
          .map(a => a.retryAt!);
        const nextAt = Math.min(
          ...retries,
          deadline ?? Infinity,
          // Pending progress that the throttle held back gets written.
          this.lastWritten === JSON.stringify(this.outcome.progress)
            ? Infinity
            : this.lastWrite + this.options.progressIntervalMs,
        );
        // Evictions that went out show their effect through the watch.
        await this.sleep(Number.isFinite(nextAt) ? nextAt : undefined);
      }
    } catch (error) {
      this.finish({
        state: 'failed',
        reason: `the drain failed: ${(error as Error).message}`,
        progress: this.outcome.progress,
      });
    } finally {
      off();
      await watch.stop().catch(() => undefined);
    }
  }

  private finish(outcome: DrainOutcome) {
    this.outcome = outcome;
    this.ports.log?.(
      `${this.name}: drain ${outcome.state}${
        outcome.state === 'failed' ? `: ${outcome.reason}` : ''
      }`,
    );
    if (!this.cancelled) this.ports.wake(this.name);
  }
}

function planKey(pod: PodLike) {
  return {
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
  };
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from(
    { length: Math.min(limit, items.length) },
    async () => {
      while (next < items.length) await fn(items[next++]);
    },
  );
  await Promise.all(workers);
}

/** The drains in flight, by maintenance name. */
export class DrainRunner {
  private readonly tasks = new Map<string, DrainTask>();
  private readonly options: Required<DrainRunnerOptions>;

  constructor(
    private readonly ports: DrainPorts,
    options: DrainRunnerOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /**
   * The drain of this maintenance: started if none runs, else its outcome so far. A
   * finished outcome stays until the maintenance leaves Draining and the operator calls
   * {@link DrainRunner.cancel}, so a failed status write can be retried.
   */
  ensure(nm: NodeMaintenance): DrainOutcome {
    const name = nm.metadata.name;
    let task = this.tasks.get(name);
    if (!task) {
      task = new DrainTask(nm, this.ports, this.options);
      this.tasks.set(name, task);
      const started = task;
      started
        .run()
        .catch(error =>
          this.ports.log?.(`${name}: drain: ${(error as Error).message}`),
        );
    }
    return task.outcome;
  }

  /** Stops and forgets the drain of a maintenance that left Draining or is gone. */
  cancel(name: string): void {
    const task = this.tasks.get(name);
    if (!task) return;
    task.cancel();
    this.tasks.delete(name);
  }

  /** Names of the maintenances with a drain in flight. */
  running(): string[] {
    return [...this.tasks.entries()]
      .filter(([, task]) => task.outcome.state === 'running')
      .map(([name]) => name);
  }

  stop(): void {
    for (const name of [...this.tasks.keys()]) this.cancel(name);
  }
}
