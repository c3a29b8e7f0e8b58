/*
 * Two backend replicas that see the same change at the same instant (issue 20's
 * follow-up): each must not send its own copy, or the notifications backend can store
 * two. The fake apiserver here lets both replicas read the object before either
 * writes, so both try to claim the notification from the same resourceVersion.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { ConflictError, NotFoundError } from '@backstage/errors';
import type { AffectedEntity } from '@rackside/plugin-servers-common';
import { staticClusterRegistry } from '../cluster/clusterRegistry';
import { staticMachinesRegistry } from '../machines/machinesRegistry';
import type { MachinesState } from '../cluster/machinesTypes';
import type { MaintenanceObject } from '../cluster/types';
import {
  FakeCluster,
  fakeMaintenance,
  fakeNode,
  fakePod,
} from '../testing/fakeCluster';
import { FakeMachines, fakeReclaim } from '../testing/fakeMachines';
import {
  claimNotification,
  NOTIFIED_ANNOTATIONS,
  type ClaimableObject,
  type ClaimStore,
} from './claims';
import type { ServersNotification, ServersNotifier } from './notifier';
import {
  watchForNotifications,
  type NotificationWatch,
  type NotifierClock,
} from './watchNotifications';
import type { WorkloadCatalog } from '../lib/workloadCatalog';

const MINUTE = 60_000;

/** Resolves once `count` events have happened (a counter tests wait on, not a clock). */
class Counter {
  private n = 0;
  private waiters: Array<{ at: number; resolve: () => void }> = [];
  get value() {
    return this.n;
  }
  bump() {
    this.n++;
    this.waiters = this.waiters.filter(w => {
      if (w.at > this.n) return true;
      w.resolve();
      return false;
    });
  }
  reached(at: number): Promise<void> {
    if (this.n >= at) return Promise.resolve();
    return new Promise(resolve => this.waiters.push({ at, resolve }));
  }
}

/**
 * The apiserver's side of the objects, with its optimistic concurrency: `update`
 * succeeds only on the resourceVersion it was read at, and bumps it. Every write is
 * held until `readers` reads have been answered since the last write, so replicas
 * that race all read the same version before any of them writes.
 */
class RacingStore implements ClaimStore {
  readonly objects = new Map<string, ClaimableObject>();
  readonly reads = new Counter();
  readonly writes: string[] = [];
  private readsSinceWrite = new Counter();

  constructor(private readonly readers = 2) {}

  put(name: string, uid: string, annotations?: Record<string, string>) {
    this.objects.set(name, {
      metadata: { name, uid, resourceVersion: '1', annotations },
    });
  }

  annotations(name: string) {
    return this.objects.get(name)?.metadata.annotations ?? {};
  }

  async get(name: string): Promise<ClaimableObject> {
    const obj = this.objects.get(name);
    if (!obj) throw new NotFoundError(`${name} not found`);
    const copy = structuredClone(obj);
    this.reads.bump();
    this.readsSinceWrite.bump();
    return copy;
  }

  async update(obj: ClaimableObject): Promise<ClaimableObject> {
    await this.readsSinceWrite.reached(this.readers);
    const current = this.objects.get(obj.metadata.name)!;
    if (current.metadata.resourceVersion !== obj.metadata.resourceVersion) {
      throw new ConflictError(
        `Operation cannot be fulfilled on "${obj.metadata.name}": the object has been modified`,
      );
    }
    const next = structuredClone(obj);
    next.metadata.resourceVersion = String(
      Number(current.metadata.resourceVersion) + 1,
    );
    this.objects.set(obj.metadata.name, next);
    this.writes.push(obj.metadata.name);
    this.readsSinceWrite = new Counter();
    return next;
  }
}

/** Timers that move only when the test says so. */
class FakeClock implements NotifierClock {
  private t = 0;
  private timers: Array<{ at: number; fn: () => void }> = [];
  now() {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number) {
    const timer = { at: this.t + ms, fn };
    this.timers.push(timer);
    return timer;
  }
  clearTimeout(handle: unknown) {
    this.timers = this.timers.filter(t => t !== handle);
  }
  advance(ms: number) {
    this.t += ms;
    const due = this.timers.filter(t => t.at <= this.t);
    this.timers = this.timers.filter(t => t.at > this.t);
    due.forEach(t => t.fn());
  }
}

/** The notifications backend both replicas send to: every send is one stored row. */
class Inbox implements ServersNotifier {
  readonly rows: Array<ServersNotification & { from: string }> = [];
  readonly count = new Counter();
  from(replica: string): ServersNotifier {
    return {
      notify: async n => {
        this.rows.push({ ...n, from: replica });
        this.count.bump();
      },
    };
  }
  async notify(n: ServersNotification) {
    await this.from('?').notify(n);
  }
}

const logger = mockServices.logger.mock();
let watches: NotificationWatch[] = [];
afterEach(() => {
  watches.forEach(w => w.stop());
  watches = [];
});

function rack() {
  return new FakeCluster('plant-a', [
    fakeNode('cp-1', { controlPlane: true }),
    fakeNode('worker-1'),
  ]);
}

const UID = 'uid-worker-1-drain-a';
const NAME = 'worker-1-drain-a';

function drain(status?: MaintenanceObject['status']): MaintenanceObject {
  const m = fakeMaintenance(NAME, 'worker-1', 'drain', undefined, {
    requestedBy: 'user:default/ada',
    reason: 'replace the failed disk in bay 3',
  });
  return { ...m, metadata: { ...m.metadata, uid: UID }, status };
}

/** The drain ended Complete after it drained (the record a notification reads). */
function drained(completedAt?: string): MaintenanceObject {
  return drain({
    phase: 'Complete',
    ...(completedAt ? { completedAt } : {}),
    history: [
      { phase: 'Drained', at: '2026-12-02T01:40:00Z' },
      { phase: 'Complete', at: completedAt ?? '2026-12-02T02:00:00Z' },
    ],
  } as MaintenanceObject['status']);
}

/**
 * Waits until both replicas have decided a claim that is not awaited by their review
 * (`reads` reads of the store, then the `rows`th row sent), or until one row more than
 * that was stored (the duplicate this guards against), whichever comes first.
 */
async function settled(
  store: RacingStore,
  inbox: Inbox,
  reads: number,
  rows: number,
) {
  await Promise.race([
    store.reads.reached(reads).then(() => inbox.count.reached(rows)),
    inbox.count.reached(rows + 1),
  ]);
  await new Promise(resolve => setImmediate(resolve));
}

/** Two replicas over the same cluster and the same racing apiserver. */
async function twoReplicas(
  cluster: FakeCluster,
  inbox: Inbox,
  store: ClaimStore | undefined,
  extra: {
    clock?: NotifierClock;
    workloads?: WorkloadCatalog;
    machines?: [MachinesState, MachinesState];
  } = {},
) {
  const replicas = (['a', 'b'] as const).map((replica, i) =>
    watchForNotifications({
      clusters: staticClusterRegistry([cluster]),
      machines: extra.machines
        ? staticMachinesRegistry([extra.machines[i]])
        : undefined,
      notifier: inbox.from(replica),
      workloads: extra.workloads,
      logger,
      blockedAfterMs: 10 * MINUTE,
      clock: extra.clock ?? new FakeClock(),
      maintenanceClaims: name => (name === cluster.name ? store : undefined),
    }),
  );
  watches.push(...replicas);
  await Promise.all(replicas.map(r => r.ready));
  return replicas;
}

/** Both replicas review the same change at once (as both watches report it). */
async function seenByBoth(
  cluster: FakeCluster,
  replicas: NotificationWatch[],
  m: MaintenanceObject,
) {
  cluster.maintenanceList = [m];
  await Promise.all(
    replicas.map(r => r.maintenances.get(cluster.name)!.review()),
  );
}

describe('two replicas that see the same change at once', () => {
  it('send the end of a maintenance once: the replica whose claim is written sends it', async () => {
    const cluster = rack();
    const store = new RacingStore();
    store.put(NAME, UID);
    const inbox = new Inbox();
    const replicas = await twoReplicas(cluster, inbox, store);
    await seenByBoth(cluster, replicas, drain({ phase: 'Draining' }));
    expect(inbox.rows).toEqual([]);

    await seenByBoth(cluster, replicas, drained('2026-12-02T02:00:00Z'));
    expect(inbox.rows).toHaveLength(1);
    // Both read the version before either wrote; one write succeeded.
    expect(store.reads.value).toBeGreaterThanOrEqual(2);
    expect(store.writes).toEqual([NAME]);
    expect(inbox.rows[0]).toMatchObject({
      recipients: ['user:default/ada'],
      scope: NAME,
      title: 'The drain of worker-1 (plant-a) is complete',
    });
    expect(store.annotations(NAME)).toEqual({
      [NOTIFIED_ANNOTATIONS.outcome]: 'Complete',
    });
  });

  it('a replica that sees the end after the other told it sends nothing', async () => {
    const cluster = rack();
    const store = new RacingStore(1);
    store.put(NAME, UID, { [NOTIFIED_ANNOTATIONS.outcome]: 'Failed' });
    const inbox = new Inbox();
    const replicas = await twoReplicas(cluster, inbox, store);
    await seenByBoth(cluster, replicas, drain({ phase: 'Draining' }));
    await seenByBoth(cluster, replicas, drain({ phase: 'Failed' }));
    expect(inbox.rows).toEqual([]);
    expect(store.writes).toEqual([]);
  });

  it('tell the owners of the evicted workloads once when the drain starts', async () => {
    const cluster = rack();
    const pod = fakePod('web-1', 'worker-1');
    pod.metadata!.labels = {
      ...pod.metadata!.labels,
      'backstage.io/kubernetes-id': 'shop-web',
    };
    cluster.pods.set('worker-1', [pod]);
    const workloads: WorkloadCatalog = {
      async entitiesOf(ws) {
        return ws.map(
          (w): AffectedEntity => ({
            entityRef: `component:default/${w.kubernetesId}`,
            title: w.kubernetesId,
            owner: 'group:default/shop-team',
            kubernetesId: w.kubernetesId,
            pods: w.pods,
          }),
        );
      },
    };
    const store = new RacingStore();
    store.put(NAME, UID);
    const inbox = new Inbox();
    const replicas = await twoReplicas(cluster, inbox, store, { workloads });
    await seenByBoth(cluster, replicas, drain({ phase: 'Requested' }));
    await seenByBoth(
      cluster,
      replicas,
      drain({
        phase: 'Draining',
        drain: {
          startedAt: '2026-12-02T01:30:00Z',
          total: 1,
          evicted: 0,
          pending: 1,
        },
      }),
    );
    // Until the loser has decided (the winner's read, the loser's, and the loser's
    // read again after its conflict), or a second row was stored.
    await settled(store, inbox, 3, 1);
    expect(inbox.rows.map(r => [r.recipients, r.topic])).toEqual([
      [['group:default/shop-team'], 'Workloads on servers under maintenance'],
    ]);
    expect(Object.keys(store.annotations(NAME))).toEqual([
      NOTIFIED_ANNOTATIONS.owners,
    ]);
  });

  it('tell the requester once per block of the drain, counting the blocks on the object', async () => {
    const cluster = rack();
    const store = new RacingStore();
    store.put(NAME, UID);
    const inbox = new Inbox();
    const clock = new FakeClock();
    const replicas = await twoReplicas(cluster, inbox, store, { clock });
    const blocked = drain({
      phase: 'Draining',
      drain: {
        total: 1,
        evicted: 0,
        pending: 1,
        blockedBy: [{ pod: 'shop/payments-0', pdb: 'payments', message: 'no' }],
      },
    });
    const cache = () => cluster.maintenanceList[0];
    /** The watch caches follow the apiserver's annotations (the claim write). */
    const withClaims = (m: MaintenanceObject): MaintenanceObject => ({
      ...m,
      metadata: {
        ...m.metadata,
        annotations: store.annotations(NAME),
      } as MaintenanceObject['metadata'],
    });

    await seenByBoth(cluster, replicas, blocked);
    clock.advance(10 * MINUTE);
    await settled(store, inbox, 3, 1);
    expect(inbox.rows).toHaveLength(1);
    expect(store.annotations(NAME)).toEqual({
      [NOTIFIED_ANNOTATIONS.blocked]: '1',
    });

    // Unblocked, then blocked again: a new block, told once more.
    await seenByBoth(
      cluster,
      replicas,
      withClaims({
        ...cache(),
        status: {
          phase: 'Draining',
          drain: { total: 1, evicted: 0, pending: 1 },
        },
      }),
    );
    await seenByBoth(cluster, replicas, withClaims(blocked));
    clock.advance(10 * MINUTE);
    await settled(store, inbox, 6, 2);
    expect(inbox.rows).toHaveLength(2);
    expect(inbox.rows.map(r => r.title)).toEqual([
      'The drain of worker-1 (plant-a) is blocked by PodDisruptionBudget shop/payments',
      'The drain of worker-1 (plant-a) is blocked by PodDisruptionBudget shop/payments',
    ]);
    expect(store.annotations(NAME)).toEqual({
      [NOTIFIED_ANNOTATIONS.blocked]: '2',
    });
  });

  it('send the end of a reclaim once', async () => {
    const cluster = rack();
    const machines = new FakeMachines('plant-a', { reclaims: [] });
    // Each replica reads the reclaim through its own view of the same apiserver, and
    // neither writes before both have read.
    const reads = new Counter();
    let readsSinceWrite = new Counter();
    const replicaView = (): MachinesState =>
      new Proxy(machines, {
        get(target, prop, receiver) {
          if (prop === 'freshReclaim') {
            return async (name: string) => {
              const r = await target.freshReclaim(name);
              reads.bump();
              readsSinceWrite.bump();
              return r;
            };
          }
          if (prop === 'updateReclaim') {
            return async (obj: any) => {
              await readsSinceWrite.reached(2);
              const written = await target.updateReclaim(obj);
              readsSinceWrite = new Counter();
              return written;
            };
          }
          const value = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    const inbox = new Inbox();
    const replicas = await twoReplicas(cluster, inbox, undefined, {
      machines: [replicaView(), replicaView()],
    });
    machines.reclaimList.push(
      fakeReclaim('reclaim-done', '127.0.10.21', 'plant-a', {
        phase: 'Done',
        result: 'The machine is in maintenance mode and joining plant-a.',
      }),
    );
    await Promise.all(replicas.map(r => r.reclaims.get('plant-a')!.review()));
    expect(inbox.rows.map(r => r.scope)).toEqual(['reclaim-done']);
    expect(reads.value).toBeGreaterThanOrEqual(2);
    expect(machines.reclaimList[0].metadata.annotations).toEqual({
      [NOTIFIED_ANNOTATIONS.outcome]: 'Done',
    });
  });

  it('without a claim store both send, as before (one replica, or a cluster not configured)', async () => {
    const cluster = rack();
    const inbox = new Inbox();
    const replicas = await twoReplicas(cluster, inbox, undefined);
    await seenByBoth(cluster, replicas, drain({ phase: 'Draining' }));
    await seenByBoth(cluster, replicas, drained());
    expect(inbox.rows.map(r => r.from).sort()).toEqual(['a', 'b']);
  });
});

describe('claimNotification', () => {
  const claim = {
    name: NAME,
    uid: UID,
    event: 'outcome' as const,
    to: 'Complete',
  };

  it('reads again after a conflict with another write, and wins when nobody claimed', async () => {
    const store = new RacingStore(1);
    store.put(NAME, UID);
    const update = store.update.bind(store);
    let first = true;
    store.update = async obj => {
      if (first) {
        first = false;
        // The operator's status write lands between our read and our write.
        const current = store.objects.get(NAME)!;
        current.metadata.resourceVersion = '2';
      }
      return update(obj);
    };
    await expect(claimNotification(store, claim, logger)).resolves.toBe('won');
    expect(store.reads.value).toBe(2);
    expect(store.annotations(NAME)).toEqual({
      [NOTIFIED_ANNOTATIONS.outcome]: 'Complete',
    });
  });

  it('is unclaimed (the caller sends anyway) when the object cannot be read, was replaced, or the write is refused', async () => {
    const gone = new RacingStore(1);
    await expect(claimNotification(gone, claim, logger)).resolves.toBe(
      'unclaimed',
    );

    const replaced = new RacingStore(1);
    replaced.put(NAME, 'another-uid');
    await expect(claimNotification(replaced, claim, logger)).resolves.toBe(
      'unclaimed',
    );
    expect(replaced.writes).toEqual([]);

    const refused = new RacingStore(1);
    refused.put(NAME, UID);
    refused.update = async () => {
      throw new Error('forbidden: cannot update nodemaintenances');
    };
    await expect(claimNotification(refused, claim, logger)).resolves.toBe(
      'unclaimed',
    );
  });

  it('counts from the value it saw: another value means another replica counted', async () => {
    const store = new RacingStore(1);
    store.put(NAME, UID, { [NOTIFIED_ANNOTATIONS.blocked]: '2' });
    await expect(
      claimNotification(
        store,
        { ...claim, event: 'blocked', from: '1', to: '2' },
        logger,
      ),
    ).resolves.toBe('lost');
    await expect(
      claimNotification(
        store,
        { ...claim, event: 'blocked', from: '2', to: '3' },
        logger,
      ),
    ).resolves.toBe('won');
  });
});
