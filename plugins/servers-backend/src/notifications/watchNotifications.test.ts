import { mockServices } from '@backstage/backend-test-utils';
import type { AffectedEntity } from '@rackside/plugin-servers-common';
import { staticClusterRegistry } from '../cluster/clusterRegistry';
import { staticMachinesRegistry } from '../machines/machinesRegistry';
import type { MaintenanceObject } from '../cluster/types';
import {
  FakeCluster,
  fakeMaintenance,
  fakeNode,
  fakePod,
} from '../testing/fakeCluster';
import { FakeMachines, fakeReclaim } from '../testing/fakeMachines';
import type { ServersNotification, ServersNotifier } from './notifier';
import {
  watchForNotifications,
  type NotificationWatch,
  type NotifierClock,
} from './watchNotifications';
import type { WorkloadCatalog } from '../lib/workloadCatalog';

const MINUTE = 60_000;

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

/** A notifier that records, and resolves `waitFor` once a count is reached. */
class RecordingNotifier implements ServersNotifier {
  readonly sent: ServersNotification[] = [];
  private waiters: Array<() => void> = [];
  async notify(n: ServersNotification) {
    this.sent.push(n);
    this.waiters.splice(0).forEach(w => w());
  }
  async waitFor(count: number): Promise<ServersNotification[]> {
    while (this.sent.length < count) {
      await new Promise<void>(resolve => this.waiters.push(resolve));
    }
    return this.sent;
  }
}

function rack() {
  return new FakeCluster('plant-a', [
    fakeNode('cp-1', { controlPlane: true }),
    fakeNode('worker-1'),
    fakeNode('worker-2'),
  ]);
}

function withStatus(
  m: MaintenanceObject,
  status: NonNullable<MaintenanceObject['status']>,
  uid = `uid-${m.metadata.name}`,
): MaintenanceObject {
  return { ...m, metadata: { ...m.metadata, uid }, status };
}

/** Replaces the maintenance in the fake's list (a status write) and reports the change. */
async function write(
  cluster: FakeCluster,
  watch: NotificationWatch,
  m: MaintenanceObject,
) {
  const i = cluster.maintenanceList.findIndex(
    x => x.metadata.name === m.metadata.name,
  );
  if (i < 0) cluster.maintenanceList.push(m);
  else cluster.maintenanceList[i] = m;
  cluster.emitChange();
  await watch.maintenances.get(cluster.name)!.review();
}

const logger = mockServices.logger.mock();
let watches: NotificationWatch[] = [];
afterEach(() => {
  watches.forEach(w => w.stop());
  watches = [];
});

function start(
  cluster: FakeCluster,
  notifier: ServersNotifier,
  options: {
    clock?: NotifierClock;
    workloads?: WorkloadCatalog;
    machines?: FakeMachines;
  } = {},
) {
  const watch = watchForNotifications({
    clusters: staticClusterRegistry([cluster]),
    machines: options.machines
      ? staticMachinesRegistry([options.machines])
      : undefined,
    notifier,
    workloads: options.workloads,
    logger,
    blockedAfterMs: 10 * MINUTE,
    clock: options.clock ?? new FakeClock(),
  });
  watches.push(watch);
  return watch;
}

const drainOf = (name: string, requestedBy = 'user:default/ada') =>
  fakeMaintenance(name, 'worker-1', 'drain', undefined, {
    requestedBy,
    reason: 'replace the failed disk in bay 3',
  });

describe('maintenance notifications', () => {
  it('tells the requester once when a maintenance completes, not for what had ended before it started', async () => {
    const cluster = rack();
    cluster.maintenanceList.push(
      withStatus(drainOf('old-drain'), { phase: 'Complete' }),
    );
    const notifier = new RecordingNotifier();
    const watch = start(cluster, notifier);
    await watch.ready;
    expect(notifier.sent).toEqual([]);

    const m = drainOf('worker-1-drain-a');
    await write(cluster, watch, withStatus(m, { phase: 'Drained' }));
    expect(notifier.sent).toEqual([]);
    const complete = withStatus(m, {
      phase: 'Complete',
      history: [
        { phase: 'Drained', at: '2026-12-02T01:00:00Z' },
        { phase: 'Complete', at: '2026-12-02T01:20:00Z' },
      ],
    });
    await write(cluster, watch, complete);
    await write(cluster, watch, complete);
    expect(notifier.sent).toEqual([
      {
        recipients: ['user:default/ada'],
        title: 'The drain of worker-1 (plant-a) is complete',
        description:
          'worker-1 is back in service (at 2026-12-02 01:20 UTC). Requested for: replace the failed disk in bay 3',
        link: '/servers/maintenances/plant-a/worker-1-drain-a',
        severity: 'normal',
        scope: 'worker-1-drain-a',
        topic: 'Server maintenance',
      },
    ]);
  });

  it('tells a refusal with its numbers (high) and a failure with the pods left (critical)', async () => {
    const cluster = rack();
    const notifier = new RecordingNotifier();
    const watch = start(cluster, notifier);
    await watch.ready;
    await write(
      cluster,
      watch,
      withStatus(
        fakeMaintenance('cp-1-reboot-x', 'cp-1', 'reboot', undefined, {
          requestedBy: 'user:default/ada',
          reason: 'firmware update FW-12',
        }),
        {
          phase: 'Refused',
          refusal: {
            reason: 'rebooting cp-1 would leave 1 of 3 members ready.',
            members: 3,
            quorum: 2,
            ready: 2,
            margin: 0,
          },
        },
      ),
    );
    await write(
      cluster,
      watch,
      withStatus(drainOf('worker-1-drain-b'), {
        phase: 'Failed',
        message: 'the drain timed out after 600 s',
        drain: {
          total: 2,
          evicted: 1,
          pending: 1,
          pendingPods: ['shop/payments-0'],
        },
      }),
    );
    const [refused, failed] = await notifier.waitFor(2);
    expect(refused).toMatchObject({
      recipients: ['user:default/ada'],
      severity: 'high',
      scope: 'cp-1-reboot-x',
      link: '/servers/maintenances/plant-a/cp-1-reboot-x',
      title: 'The reboot of cp-1 (plant-a) was refused',
    });
    expect(refused.description).toContain(
      'rebooting cp-1 would leave 1 of 3 members ready (members 3, quorum 2, ready 2, margin 0)',
    );
    expect(failed).toMatchObject({
      severity: 'critical',
      scope: 'worker-1-drain-b',
      title: 'The drain of worker-1 (plant-a) failed',
    });
    expect(failed.description).toContain(
      'the drain timed out after 600 s. The node is left cordoned. Pods still on the node: shop/payments-0.',
    );
  });

  it('tells nobody of a maintenance made with kubectl (no Backstage requester)', async () => {
    const cluster = rack();
    const notifier = new RecordingNotifier();
    const watch = start(cluster, notifier);
    await watch.ready;
    await write(
      cluster,
      watch,
      withStatus(drainOf('kubectl-drain', 'kubernetes-admin'), {
        phase: 'Complete',
      }),
    );
    // A later outcome of a Backstage one is still told: the kubectl one was skipped, not queued.
    await write(
      cluster,
      watch,
      withStatus(drainOf('portal-drain'), { phase: 'Complete' }),
    );
    expect(notifier.sent.map(n => n.scope)).toEqual(['portal-drain']);
  });

  it('tells the requester when a budget has blocked the drain longer than blockedAfter, naming the budget and pods', async () => {
    const cluster = rack();
    const clock = new FakeClock();
    const notifier = new RecordingNotifier();
    const watch = start(cluster, notifier, { clock });
    await watch.ready;
    const m = drainOf('worker-1-drain-c');
    const blocked = withStatus(m, {
      phase: 'Draining',
      drain: {
        total: 3,
        evicted: 1,
        pending: 2,
        blockedBy: [
          {
            pod: 'shop/payments-0',
            pdb: 'payments',
            message:
              "Cannot evict pod as it would violate the pod's disruption budget.",
          },
          {
            pod: 'shop/payments-1',
            pdb: 'payments',
            message:
              "Cannot evict pod as it would violate the pod's disruption budget.",
          },
        ],
      },
    });
    await write(cluster, watch, blocked);
    clock.advance(9 * MINUTE);
    // Progress while still blocked does not restart the clock.
    await write(cluster, watch, {
      ...blocked,
      status: {
        ...blocked.status,
        drain: { ...blocked.status!.drain!, evicted: 1 },
      },
    });
    expect(notifier.sent).toEqual([]);
    clock.advance(1 * MINUTE);
    const [n] = await notifier.waitFor(1);
    expect(n).toMatchObject({
      recipients: ['user:default/ada'],
      severity: 'high',
      scope: 'worker-1-drain-c',
      link: '/servers/maintenances/plant-a/worker-1-drain-c',
      title:
        'The drain of worker-1 (plant-a) is blocked by PodDisruptionBudget shop/payments',
    });
    expect(n.description).toContain(
      'Blocked for more than 10 minutes: PodDisruptionBudget shop/payments refuses the eviction of shop/payments-0, shop/payments-1.',
    );
    clock.advance(60 * MINUTE);
    expect(notifier.sent).toHaveLength(1);

    // A block that clears before blockedAfter tells nothing.
    const other = withStatus(drainOf('worker-1-drain-d'), blocked.status!);
    await write(cluster, watch, other);
    clock.advance(5 * MINUTE);
    await write(
      cluster,
      watch,
      withStatus(drainOf('worker-1-drain-d'), {
        phase: 'Draining',
        drain: { total: 3, evicted: 3, pending: 0 },
      }),
    );
    clock.advance(30 * MINUTE);
    expect(notifier.sent).toHaveLength(1);
  });

  it('tells the owners of the evicted workloads once when the drain starts, from the pods read before it', async () => {
    const cluster = rack();
    const labelled = (name: string, id: string) => {
      const pod = fakePod(name, 'worker-1');
      pod.metadata!.labels = {
        ...pod.metadata!.labels,
        'backstage.io/kubernetes-id': id,
      };
      return pod;
    };
    cluster.pods.set('worker-1', [
      labelled('web-1', 'shop-web'),
      labelled('web-2', 'shop-web'),
      labelled('ledger-1', 'ledger'),
      fakePod('unlabelled-1', 'worker-1'),
    ]);
    const asked: string[][] = [];
    const workloads: WorkloadCatalog = {
      async entitiesOf(ws) {
        asked.push(ws.map(w => w.kubernetesId));
        const owners: Record<string, string> = {
          'shop-web': 'group:default/shop-team',
          ledger: 'group:default/finance',
        };
        return ws.map(
          (w): AffectedEntity => ({
            entityRef: `component:default/${w.kubernetesId}`,
            title: w.kubernetesId,
            owner: owners[w.kubernetesId],
            kubernetesId: w.kubernetesId,
            pods: w.pods,
          }),
        );
      },
    };
    const notifier = new RecordingNotifier();
    const watch = start(cluster, notifier, { workloads });
    await watch.ready;
    const m = drainOf('worker-1-drain-e');
    await write(cluster, watch, withStatus(m, { phase: 'Requested' }));
    // The operator evicts before the backend hears of Draining: the pods read first count.
    cluster.pods.set('worker-1', []);
    expect(asked).toEqual([]);
    const draining = withStatus(m, {
      phase: 'Draining',
      drain: {
        startedAt: '2026-12-02T01:30:00Z',
        total: 3,
        evicted: 0,
        pending: 3,
      },
    });
    await write(cluster, watch, draining);
    await write(cluster, watch, {
      ...draining,
      status: {
        ...draining.status,
        drain: { ...draining.status!.drain!, evicted: 2 },
      },
    });
    const sent = await notifier.waitFor(2);
    expect(asked).toEqual([['ledger', 'shop-web']]);
    expect(sent).toHaveLength(2);
    const byOwner = Object.fromEntries(sent.map(n => [n.recipients[0], n]));
    expect(byOwner['group:default/shop-team']).toMatchObject({
      recipients: ['group:default/shop-team'],
      scope: 'worker-1-drain-e',
      link: '/servers/maintenances/plant-a/worker-1-drain-e',
      severity: 'normal',
      topic: 'Workloads on servers under maintenance',
      title: 'worker-1 (plant-a) is being drained: shop-web loses 2 pods there',
      description:
        'The drain of worker-1 in cluster plant-a started at 2026-12-02 01:30 UTC, requested by user:default/ada: replace the failed disk in bay 3. Evicted (rescheduled elsewhere by their controllers): component:default/shop-web (shop/web-1, shop/web-2).',
    });
    expect(byOwner['group:default/finance'].description).toContain(
      'component:default/ledger (shop/ledger-1)',
    );
    // Done once: the outcome later goes to the requester only.
    await write(cluster, watch, withStatus(m, { phase: 'Complete' }));
    const all = await notifier.waitFor(3);
    expect(all).toHaveLength(3);
    expect(all[2].recipients).toEqual(['user:default/ada']);
  });

  it('a replica that finds acknowledged pods already gone leaves the owners to the replica that read them before the create', async () => {
    const cluster = rack();
    const [pod, pod2] = ['web-1', 'web-2'].map(name => {
      const p = fakePod(name, 'worker-1');
      p.metadata!.labels = {
        ...p.metadata!.labels,
        'backstage.io/kubernetes-id': 'shop-web',
      };
      return p;
    });
    // What the other replica finds when its watch shows the maintenance: web-1 is gone.
    cluster.pods.set('worker-1', [pod2]);
    const workloads: WorkloadCatalog = {
      async entitiesOf(ws) {
        return ws.map(w => ({
          entityRef: `component:default/${w.kubernetesId}`,
          title: w.kubernetesId,
          owner: 'group:default/shop-team',
          kubernetesId: w.kubernetesId,
          pods: w.pods,
        }));
      },
    };
    const creator = new RecordingNotifier();
    const other = new RecordingNotifier();
    const watchA = start(cluster, creator, { workloads });
    const watchB = start(cluster, other, { workloads });
    await Promise.all([watchA.ready, watchB.ready]);
    const m = fakeMaintenance(
      'worker-1-drain-g',
      'worker-1',
      'drain',
      undefined,
      {
        requestedBy: 'user:default/ada',
        reason: 'replace the failed disk in bay 3',
        preflight: {
          takenAt: '2026-12-02T01:29:00Z',
          ceremony: 'preflight',
          pods: [{ namespace: 'shop', name: 'web-1' }],
        },
      },
    );
    // The creating replica read the pods right before its create; then the drain ran.
    expect(
      watchA.maintenances
        .get('plant-a')!
        .rememberPods(m.metadata.name, [pod, pod2]),
    ).toBe(true);
    cluster.maintenanceList.push(
      withStatus(m, {
        phase: 'Draining',
        drain: { total: 1, evicted: 1, pending: 0 },
      }),
    );
    cluster.emitChange();
    await Promise.all(
      [watchA, watchB].map(w => w.maintenances.get('plant-a')!.review()),
    );
    const [sent] = await creator.waitFor(1);
    expect(sent).toMatchObject({
      recipients: ['group:default/shop-team'],
      scope: 'worker-1-drain-g',
    });
    expect(sent.description).toContain(
      'component:default/shop-web (shop/web-1, shop/web-2)',
    );
    // Once the maintenance is Complete, the other replica has said nothing to the owners.
    cluster.maintenanceList[0] = withStatus(m, { phase: 'Complete' });
    cluster.emitChange();
    await Promise.all(
      [watchA, watchB].map(w => w.maintenances.get('plant-a')!.review()),
    );
    await other.waitFor(1);
    expect(other.sent.map(n => n.recipients)).toEqual([['user:default/ada']]);
  });

  it('two notifiers on the same changes send the same notifications, so the scope makes them one', async () => {
    const cluster = rack();
    const clock = new FakeClock();
    const a = new RecordingNotifier();
    const b = new RecordingNotifier();
    const watchA = start(cluster, a, { clock });
    const watchB = start(cluster, b, { clock });
    await Promise.all([watchA.ready, watchB.ready]);
    const m = drainOf('worker-1-drain-f');
    const blocked = withStatus(m, {
      phase: 'Draining',
      drain: {
        total: 1,
        evicted: 0,
        pending: 1,
        blockedBy: [
          { pod: 'shop/payments-0', pdb: 'payments', message: 'no room' },
        ],
      },
    });
    cluster.maintenanceList.push(blocked);
    cluster.emitChange();
    await Promise.all(
      [watchA, watchB].map(w => w.maintenances.get('plant-a')!.review()),
    );
    clock.advance(10 * MINUTE);
    await Promise.all([a.waitFor(1), b.waitFor(1)]);
    cluster.maintenanceList[0] = withStatus(m, {
      phase: 'Failed',
      message: 'timed out',
    });
    cluster.emitChange();
    await Promise.all(
      [watchA, watchB].map(w => w.maintenances.get('plant-a')!.review()),
    );
    await Promise.all([a.waitFor(2), b.waitFor(2)]);
    expect(b.sent).toEqual(a.sent);
    // What the notifications backend keeps: one per recipient and scope (the later replaces).
    const inbox = new Map<string, ServersNotification>();
    for (const n of [...a.sent, ...b.sent]) {
      for (const r of n.recipients) inbox.set(`${r}|${n.scope}`, n);
    }
    expect([...inbox.keys()]).toEqual(['user:default/ada|worker-1-drain-f']);
    expect(inbox.get('user:default/ada|worker-1-drain-f')!.severity).toBe(
      'critical',
    );
  });
});

describe('reclaim notifications', () => {
  it('tells the requester when a reclaim ends Done, Expired or Failed, with its result text', async () => {
    const cluster = rack();
    const machines = new FakeMachines('plant-a', {
      reclaims: [
        fakeReclaim('before-start', '127.0.10.9', 'plant-a', { phase: 'Done' }),
      ],
    });
    const notifier = new RecordingNotifier();
    const watch = start(cluster, notifier, { machines });
    await watch.ready;
    const reclaims = watch.reclaims.get('plant-a')!;
    const end = async (
      name: string,
      status: Parameters<typeof fakeReclaim>[3],
    ) => {
      machines.reclaimList.push(
        fakeReclaim(name, '127.0.10.21', 'plant-a', status),
      );
      await reclaims.review();
    };
    await end('reclaim-pending', { phase: 'AwaitingConfirmation' });
    await end('reclaim-done', {
      phase: 'Done',
      machineUUID: 'b3c1a0de-0000-4000-8000-000000000001',
      result: 'The machine is in maintenance mode and joining plant-a.',
    });
    await end('reclaim-expired', {
      phase: 'Expired',
      result: 'Not confirmed in time.',
    });
    await end('reclaim-failed', {
      phase: 'Failed',
      result:
        'No maintenance-mode machine answered: look for its new DHCP address.',
    });
    await reclaims.review();
    expect(
      notifier.sent.map(n => [n.scope, n.severity, n.link, n.recipients]),
    ).toEqual([
      ['reclaim-done', 'normal', '/servers/add-node', ['user:default/someone']],
      [
        'reclaim-expired',
        'high',
        '/servers/add-node',
        ['user:default/someone'],
      ],
      [
        'reclaim-failed',
        'critical',
        '/servers/add-node',
        ['user:default/someone'],
      ],
    ]);
    expect(notifier.sent[0].title).toBe(
      'Reset and add of 127.0.10.21 into plant-a (plant-a) is done',
    );
    expect(notifier.sent[0].description).toContain(
      'The machine is in maintenance mode and joining plant-a.',
    );
    expect(notifier.sent[1].description).toContain('Not confirmed in time.');
    expect(notifier.sent[2].description).toContain(
      'look for its new DHCP address.',
    );
  });
});
