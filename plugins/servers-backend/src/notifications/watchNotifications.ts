import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  evictedWorkloads,
  isTerminalReclaimPhase,
  planDrain,
  isTerminalPhase,
  type AffectedEntity,
  type MachineReclaim,
  type PodLike,
} from '@rackside/plugin-servers-common';
import type { MachinesRegistry, MachinesState } from '../cluster/machinesTypes';
import type {
  ClusterRegistry,
  ClusterState,
  MaintenanceObject,
} from '../cluster/types';
import {
  drainBlocked,
  maintenanceOutcome,
  reclaimOutcome,
  workloadOwnerNotices,
} from './messages';
import {
  claimNotification,
  NOTIFIED_ANNOTATIONS,
  reclaimClaims,
  type ClaimedEvent,
  type ClaimStore,
} from './claims';
import type { ServersNotification, ServersNotifier } from './notifier';
import type { WorkloadCatalog } from '../lib/workloadCatalog';

/** The timer functions the notifier uses (replaced in tests). */

/** Whether a maintenance has reached a terminal phase. */
function isEnded(m: MaintenanceObject): boolean {
  const phase = m.status?.phase;
  return phase !== undefined && isTerminalPhase(phase);
}

export interface NotifierClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemClock: NotifierClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: handle => clearTimeout(handle as NodeJS.Timeout),
};

/** Options of {@link watchForNotifications}. */
export interface NotificationWatchOptions {
  clusters: ClusterRegistry;
  machines?: MachinesRegistry;
  notifier: ServersNotifier;
  /** Who owns the workloads a drain evicts; without one, owners are not told. */
  workloads?: WorkloadCatalog;
  logger: LoggerService;
  /** How long a PodDisruptionBudget may block a drain before the requester is told. */
  blockedAfterMs: number;
  clock?: NotifierClock;
  /**
   * Where a cluster's NodeMaintenances are claimed before a notification about one is
   * sent (see {@link claimNotification}), so that of several replicas one sends it.
   * Without a store for a cluster, every replica that sees a change sends.
   */
  maintenanceClaims?: (cluster: string) => ClaimStore | undefined;
}

/** Intents whose maintenance drains the node. */
const DRAINING_INTENTS = new Set(['drain', 'reboot', 'shutdown']);

/** Pods read for a maintenance, and whether right before this replica created it. */
interface PodsRead {
  pods: PodLike[];
  fromCreation: boolean;
}

/** What the notifier remembers of one maintenance. */
interface TrackedMaintenance {
  /** Its uid: a maintenance deleted and made again under the same name is a new one. */
  uid?: string;
  ended: boolean;
  /** The owners of its workloads were told (or it started before we watched). */
  ownersDone: boolean;
  /** The pods on the node before the drain (read when first seen, or at creation). */
  pods?: Promise<PodsRead>;
  /**
   * Since when (our clock) a budget has blocked its drain, the pending timer, and the
   * blocked-claim annotation when it began (the claim counts up from it).
   */
  blocked?: { since: number; timer: unknown; sent: boolean; from?: string };
}

/** The annotation of a claimed notification as the watch cache has the object. */
function annotationOf(
  obj: { metadata: object },
  event: ClaimedEvent,
): string | undefined {
  const annotations = (obj.metadata as { annotations?: Record<string, string> })
    .annotations;
  return annotations?.[NOTIFIED_ANNOTATIONS[event]];
}

/** The next count of a counting claim (`blocked`): one more than the value seen. */
function nextCount(from: string | undefined): string {
  const n = Number.parseInt(from ?? '0', 10);
  return String((Number.isFinite(n) && n >= 0 ? n : 0) + 1);
}

/** The notifications worth sending: some, each to somebody. */
function toTell(
  notices: Array<ServersNotification | undefined>,
): ServersNotification[] {
  return notices.filter(
    (n): n is ServersNotification => !!n && n.recipients.length > 0,
  );
}

/** Whether the maintenance's drain has started (its phase is or was Draining). */
function drainStarted(m: MaintenanceObject): boolean {
  return (
    m.status?.phase === 'Draining' ||
    (m.status?.history ?? []).some(h => h.phase === 'Draining')
  );
}

function blockedNow(m: MaintenanceObject): boolean {
  return (
    m.status?.phase === 'Draining' &&
    (m.status?.drain?.blockedBy?.length ?? 0) > 0
  );
}

/** Runs `review` once at a time; a change during a review asks for one more. */
function serialised(review: () => Promise<void>, logger: LoggerService) {
  let running: Promise<void> | undefined;
  let again = false;
  const run = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await review();
        } catch (error) {
          logger.warn(`notifications: could not review changes: ${error}`);
        }
      } while (again);
    })().finally(() => {
      running = undefined;
    });
    return running;
  };
  return run;
}

/**
 * Follows one cluster's NodeMaintenances in the backend's watch cache and tells:
 * the requester when one ends (Complete, Refused, Failed) and when its drain has been
 * blocked longer than `blockedAfterMs`; the owners of the workloads a drain evicts when
 * the drain starts. What a maintenance was when the watch first synced is the baseline:
 * an outcome or a drain start from before is not told again after a restart (another
 * replica, running then, told it). Every notification's scope is the maintenance's
 * name, and with a claim store (`maintenanceClaims`) each is claimed on the
 * NodeMaintenance first (an annotation written on its resourceVersion), so of the
 * replicas that see the same change exactly one sends it.
 */
export class MaintenanceNotifications {
  private readonly tracked = new Map<string, TrackedMaintenance>();
  private baselined = false;
  private stopped = false;
  /** Pods read by this replica right before it created a maintenance (see `rememberPods`). */
  private readonly podsAtCreation = new Map<string, PodLike[]>();
  /** Claims and sends started by the review under way (it waits for them). */
  private pending: Promise<void>[] = [];
  private readonly claims: ClaimStore | undefined;
  readonly review: () => Promise<void>;

  constructor(
    private readonly cluster: ClusterState,
    private readonly options: NotificationWatchOptions,
    private readonly clock: NotifierClock = options.clock ?? systemClock,
  ) {
    this.claims = options.maintenanceClaims?.(cluster.name);
    this.review = serialised(() => this.reviewOnce(), options.logger);
  }

  /**
   * The pods on the node when this replica created the maintenance: its drain may evict
   * them before the watch reports the maintenance, so they are read first.
   */
  rememberPods(maintenance: string, pods: PodLike[]): boolean {
    if (this.podsAtCreation.has(maintenance) || this.tracked.has(maintenance)) {
      return false;
    }
    this.podsAtCreation.set(maintenance, pods);
    return true;
  }

  /** The create failed: the pods read for it belong to nothing. */
  forgetPods(maintenance: string) {
    this.podsAtCreation.delete(maintenance);
  }

  private async reviewOnce() {
    if (this.stopped) return;
    const list = await this.cluster.maintenances();
    const first = !this.baselined;
    this.baselined = true;
    const seen = new Set<string>();
    for (const m of list) {
      const name = m.metadata.name;
      seen.add(name);
      let t = this.tracked.get(name);
      if (t && t.uid !== m.metadata.uid) {
        this.forget(name);
        t = undefined;
      }
      if (!t) {
        const terminal = isEnded(m);
        t = {
          uid: m.metadata.uid,
          ended: first && terminal,
          ownersDone: first && drainStarted(m),
        };
        this.tracked.set(name, t);
      }
      this.follow(m, t);
    }
    for (const name of [...this.tracked.keys()]) {
      if (!seen.has(name)) this.forget(name);
    }
    const pending = this.pending.splice(0);
    await Promise.all(pending);
  }

  /**
   * Sends the notices of one event of `m` once the replica has claimed it on the
   * object (without a claim store, at once). Nothing to tell claims nothing.
   */
  private claimAndSend(
    m: MaintenanceObject,
    event: ClaimedEvent,
    claim: { from?: string; to: string },
    notices: Array<ServersNotification | undefined>,
  ): Promise<void> {
    const tell = toTell(notices);
    if (tell.length === 0) return Promise.resolve();
    if (!this.claims) {
      tell.forEach(n => this.send(n));
      return Promise.resolve();
    }
    return claimNotification(
      this.claims,
      { name: m.metadata.name, uid: m.metadata.uid, event, ...claim },
      this.options.logger,
    ).then(result => {
      if (result !== 'lost') tell.forEach(n => this.send(n));
    });
  }

  private follow(m: MaintenanceObject, t: TrackedMaintenance) {
    const name = m.metadata.name;
    const terminal = isEnded(m);
    if (terminal) {
      this.clearBlocked(t);
      this.podsAtCreation.delete(name);
      if (!t.ended) {
        t.ended = true;
        this.pending.push(
          this.claimAndSend(m, 'outcome', { to: String(m.status?.phase) }, [
            maintenanceOutcome(this.cluster.name, m),
          ]),
        );
      }
      return;
    }
    if (
      DRAINING_INTENTS.has(m.spec.intent) &&
      !t.ownersDone &&
      this.options.workloads
    ) {
      // Read before the drain evicts them; the catalog is asked only once it starts.
      t.pods ??= this.podsBefore(m);
      if (drainStarted(m)) {
        t.ownersDone = true;
        this.podsAtCreation.delete(name);
        this.entitiesOf(m, t.pods).then(
          found =>
            found &&
            // Claimed only by a replica that knows every owner (see entitiesOf).
            this.claimAndSend(
              m,
              'owners',
              { to: new Date().toISOString() },
              workloadOwnerNotices(this.cluster.name, m, found),
            ),
          error =>
            this.options.logger.warn(
              `notifications: could not find the owners of the workloads on ${m.spec.nodeName}: ${error}`,
            ),
        );
      }
    }
    if (blockedNow(m)) {
      if (!t.blocked) {
        t.blocked = {
          since: this.clock.now(),
          sent: false,
          from: annotationOf(m, 'blocked'),
          timer: this.clock.setTimeout(
            () => this.blockedTimeUp(name),
            this.options.blockedAfterMs,
          ),
        };
      }
    } else {
      this.clearBlocked(t);
    }
  }

  /**
   * The pods this replica read right before creating it (`fromCreation`), or the pods
   * on the node now.
   */
  private podsBefore(m: MaintenanceObject): Promise<PodsRead> {
    const remembered = this.podsAtCreation.get(m.metadata.name);
    if (remembered) {
      return Promise.resolve({ pods: remembered, fromCreation: true });
    }
    return this.cluster.podsOnNode(m.spec.nodeName).then(
      pods => ({ pods, fromCreation: false }),
      error => {
        this.options.logger.warn(
          `notifications: could not read the pods on ${m.spec.nodeName}: ${error}`,
        );
        return { pods: [], fromCreation: false };
      },
    );
  }

  /**
   * The catalog entities of the pods the drain evicts (with the maintenance's options),
   * or undefined when this replica cannot know them all: a maintenance made through
   * the routes names the pods its requester acknowledged (`spec.preflight.pods`), and
   * a replica that did not create it and no longer finds every one of them on the node
   * (the operator was faster than its watch) leaves the notification to the replica
   * that read them before the create, rather than send a shorter list that, sharing
   * the scope, could replace the full one.
   */
  private async entitiesOf(
    m: MaintenanceObject,
    podsBefore: Promise<PodsRead>,
  ): Promise<AffectedEntity[] | undefined> {
    const { pods, fromCreation } = await podsBefore;
    const acknowledged = m.spec.preflight?.pods;
    if (!fromCreation && acknowledged) {
      const present = new Set(
        pods.map(p => `${p.metadata?.namespace}/${p.metadata?.name}`),
      );
      const missing = acknowledged.filter(
        p => !present.has(`${p.namespace}/${p.name}`),
      );
      if (missing.length > 0) {
        this.options.logger.debug(
          `notifications: ${missing.length} pod(s) of ${m.metadata.name} already gone here; the replica that created it tells the owners`,
        );
        return undefined;
      }
    }
    const plan = planDrain(
      pods,
      {
        deleteEmptyDirData: m.spec.drain?.deleteEmptyDirData ?? false,
        force: m.spec.drain?.force ?? false,
        allowNodeLocalData: m.spec.drain?.allowNodeLocalData ?? false,
      },
      { nodeName: m.spec.nodeName },
    );
    // Refused pods are not evicted; node-local ones allowed on purpose are in `evict`.
    const workloads = evictedWorkloads(pods, plan.evict);
    return workloads.length
      ? this.options.workloads!.entitiesOf(workloads)
      : [];
  }

  private async blockedTimeUp(name: string) {
    const t = this.tracked.get(name);
    if (!t?.blocked || t.blocked.sent || this.stopped) return;
    t.blocked.sent = true;
    const m = (await this.cluster.maintenances()).find(
      x => x.metadata.name === name,
    );
    if (!m || !blockedNow(m)) return;
    // Every replica that saw this block begin saw the same count: one counts it up.
    const from = t.blocked.from;
    await this.claimAndSend(m, 'blocked', { from, to: nextCount(from) }, [
      drainBlocked(this.cluster.name, m, this.options.blockedAfterMs),
    ]);
  }

  private clearBlocked(t: TrackedMaintenance) {
    if (t.blocked) this.clock.clearTimeout(t.blocked.timer);
    t.blocked = undefined;
  }

  private forget(name: string) {
    const t = this.tracked.get(name);
    if (t) this.clearBlocked(t);
    this.tracked.delete(name);
  }

  private send(n: ServersNotification) {
    this.options.notifier
      .notify(n)
      .catch(error =>
        this.options.logger.warn(
          `notifications: could not send "${n.title}" (scope ${n.scope}): ${error}`,
        ),
      );
  }

  stop() {
    this.stopped = true;
    for (const name of [...this.tracked.keys()]) this.forget(name);
  }
}

/**
 * Follows one cluster's MachineReclaims and tells the requester when one ends Done,
 * Failed or Expired, with its result text; the same baseline rule as maintenances.
 * Each end is claimed on the MachineReclaim first (through the machines state, which
 * reads afresh and writes on the resourceVersion), so one replica tells it.
 */
export class ReclaimNotifications {
  private readonly ended = new Map<string, string | undefined>();
  private baselined = false;
  private readonly claims: ClaimStore;
  readonly review: () => Promise<void>;

  constructor(
    private readonly machines: MachinesState,
    private readonly options: NotificationWatchOptions,
  ) {
    this.claims = reclaimClaims(machines);
    this.review = serialised(() => this.reviewOnce(), options.logger);
  }

  private async reviewOnce() {
    const list: MachineReclaim[] = await this.machines.reclaims();
    const first = !this.baselined;
    this.baselined = true;
    const seen = new Set<string>();
    const claimed: Promise<void>[] = [];
    for (const r of list) {
      const name = r.metadata.name;
      seen.add(name);
      const phase = r.status?.phase;
      const terminal = phase !== undefined && isTerminalReclaimPhase(phase);
      if (!terminal) continue;
      const uid = r.metadata.uid;
      if (this.ended.has(name) && this.ended.get(name) === uid) continue;
      this.ended.set(name, uid);
      if (first) continue;
      const [n] = toTell([reclaimOutcome(this.machines.cluster, r)]);
      if (!n) continue;
      claimed.push(
        claimNotification(
          this.claims,
          { name, uid, event: 'outcome', to: phase },
          this.options.logger,
        ).then(result => {
          if (result === 'lost') return;
          this.options.notifier
            .notify(n)
            .catch(error =>
              this.options.logger.warn(
                `notifications: could not send "${n.title}" (scope ${n.scope}): ${error}`,
              ),
            );
        }),
      );
    }
    for (const name of [...this.ended.keys()]) {
      if (!seen.has(name)) this.ended.delete(name);
    }
    await Promise.all(claimed);
  }
}

/** What {@link watchForNotifications} started: the per-cluster followers, and stop. */
export interface NotificationWatch {
  maintenances: Map<string, MaintenanceNotifications>;
  reclaims: Map<string, ReclaimNotifications>;
  /** Resolves once every follower has taken its baseline. */
  ready: Promise<void>;
  stop(): void;
}

/**
 * Starts following every configured cluster's maintenances and reclaims for
 * notifications (docs/architecture.md, "The backend"), from the watch caches the routes read.
 */
export function watchForNotifications(
  options: NotificationWatchOptions,
): NotificationWatch {
  const maintenances = new Map<string, MaintenanceNotifications>();
  const reclaims = new Map<string, ReclaimNotifications>();
  const offs: Array<() => void> = [];
  const firsts: Promise<void>[] = [];
  for (const cluster of options.clusters.list()) {
    const follower = new MaintenanceNotifications(cluster, options);
    maintenances.set(cluster.name, follower);
    offs.push(cluster.onChange(() => void follower.review()));
    firsts.push(follower.review());
  }
  for (const state of options.machines?.list() ?? []) {
    const follower = new ReclaimNotifications(state, options);
    reclaims.set(state.cluster, follower);
    offs.push(state.onChange(() => void follower.review()));
    firsts.push(follower.review());
  }
  return {
    maintenances,
    reclaims,
    ready: Promise.all(firsts).then(() => undefined),
    stop() {
      offs.splice(0).forEach(off => off());
      maintenances.forEach(f => f.stop());
    },
  };
}
