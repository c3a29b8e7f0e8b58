/*
 * Notifications through the plugin as a backend runs it (docs/architecture.md, "The backend"): the
 * notification service is a fake that records what it is asked to send, the catalog
 * an in-memory one, the cluster a FakeCluster whose maintenances the test moves.
 */
import { createServiceFactory } from '@backstage/backend-plugin-api';
import type { Entity } from '@backstage/catalog-model';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import {
  notificationService,
  type NotificationSendOptions,
} from '@backstage/plugin-notifications-node';
import request from 'supertest';
import {
  clusterRegistryServiceRef,
  staticClusterRegistry,
} from './cluster/clusterRegistry';
import type { MaintenanceObject } from './cluster/types';
import { FakeCluster, fakeNode, fakePod } from './testing/fakeCluster';
import { startServersTestBackend } from './testing/testBackend';

const REASON = 'replace the failed disk in bay 3';

/** A notification service that records, and lets the test wait for a count. */
function recordingNotifications() {
  const sent: NotificationSendOptions[] = [];
  const waiters: Array<() => void> = [];
  return {
    sent,
    factory: createServiceFactory({
      service: notificationService,
      deps: {},
      factory: () => ({
        send: async (n: NotificationSendOptions) => {
          sent.push(n);
          waiters.splice(0).forEach(w => w());
        },
      }),
    }),
    async waitFor(count: number) {
      while (sent.length < count) {
        await new Promise<void>(resolve => waiters.push(resolve));
      }
      return sent;
    },
  };
}

function component(name: string, id: string, owner: string): Entity {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: {
      name,
      namespace: 'default',
      title: `The ${name}`,
      annotations: { 'backstage.io/kubernetes-id': id },
    },
    spec: { type: 'service', lifecycle: 'production', owner },
  };
}

function labelled(name: string, id: string) {
  const pod = fakePod(name, 'worker-1');
  pod.metadata!.labels = {
    ...pod.metadata!.labels,
    'backstage.io/kubernetes-id': id,
  };
  return pod;
}

function rack() {
  const cluster = new FakeCluster('plant-a', [
    fakeNode('cp-1', { controlPlane: true }),
    fakeNode('cp-2', { controlPlane: true }),
    fakeNode('cp-3', { controlPlane: true }),
    fakeNode('worker-1'),
  ]);
  cluster.pods.set('worker-1', [
    labelled('web-1', 'shop-web'),
    labelled('web-2', 'shop-web'),
    labelled('mystery-1', 'not-in-the-catalog'),
    fakePod('plain-1', 'worker-1'),
  ]);
  return cluster;
}

async function start(cluster: FakeCluster) {
  const notifications = recordingNotifications();
  const backend = await startServersTestBackend({
    features: [
      createServiceFactory({
        service: clusterRegistryServiceRef,
        deps: {},
        factory: () => staticClusterRegistry([cluster]),
      }),
      notifications.factory,
      catalogServiceMock.factory({
        entities: [
          component('shop-web', 'shop-web', 'shop-team'),
          component('ledger', 'ledger', 'group:default/finance'),
        ],
      }),
    ],
  });
  return { ...backend, notifications };
}

/** The operator's status write, as the watch would report it. */
function setStatus(
  cluster: FakeCluster,
  name: string,
  status: NonNullable<MaintenanceObject['status']>,
) {
  const m = cluster.maintenanceList.find(x => x.metadata.name === name)!;
  m.status = status;
  cluster.emitChange();
}

const drainUrl = '/api/servers/clusters/plant-a/servers/worker-1/actions/drain';
const preflightUrl =
  '/api/servers/clusters/plant-a/servers/worker-1/preflight?action=drain';

describe('notifications of the servers plugin', () => {
  it('the pre-flight lists the workloads it evicts and the catalog entities they belong to, with owners', async () => {
    const { server } = await start(rack());
    const res = await request(server).get(preflightUrl);
    expect(res.status).toBe(200);
    expect(res.body.workloads).toEqual([
      { kubernetesId: 'not-in-the-catalog', pods: ['shop/mystery-1'] },
      { kubernetesId: 'shop-web', pods: ['shop/web-1', 'shop/web-2'] },
    ]);
    expect(res.body.affectedEntities).toEqual([
      {
        entityRef: 'component:default/shop-web',
        title: 'The shop-web',
        owner: 'group:default/shop-team',
        kubernetesId: 'shop-web',
        pods: ['shop/web-1', 'shop/web-2'],
      },
    ]);
  });

  it('a drain from the routes tells the owners when it starts and the requester when it ends, each scoped to the maintenance', async () => {
    const cluster = rack();
    const { server, notifications } = await start(cluster);
    const pre = await request(server).get(preflightUrl);
    const res = await request(server)
      .post(drainUrl)
      .send({ reason: REASON, preflightToken: pre.body.token });
    expect(res.status).toBe(201);
    const name: string = res.body.name;
    // The operator evicts at once: the pods the backend read before creating it count.
    cluster.pods.set('worker-1', []);
    setStatus(cluster, name, { phase: 'Cordoned' });
    setStatus(cluster, name, {
      phase: 'Draining',
      drain: {
        startedAt: '2026-12-02T01:30:00Z',
        total: 3,
        evicted: 0,
        pending: 3,
      },
    });
    const [owners] = await notifications.waitFor(1);
    expect(owners).toEqual({
      recipients: { type: 'entity', entityRef: ['group:default/shop-team'] },
      payload: {
        title:
          'worker-1 (plant-a) is being drained: The shop-web loses 2 pods there',
        description:
          'The drain of worker-1 in cluster plant-a started at 2026-12-02 01:30 UTC, requested by user:default/mock: replace the failed disk in bay 3. Evicted (rescheduled elsewhere by their controllers): component:default/shop-web (shop/web-1, shop/web-2).',
        link: `/servers/maintenances/plant-a/${name}`,
        severity: 'normal',
        scope: name,
        topic: 'Workloads on servers under maintenance',
      },
    });

    setStatus(cluster, name, { phase: 'Drained' });
    setStatus(cluster, name, {
      phase: 'Complete',
      history: [
        { phase: 'Drained', at: '2026-12-02T01:40:00Z' },
        { phase: 'Returning', at: '2026-12-02T01:59:00Z' },
        { phase: 'Complete', at: '2026-12-02T02:00:00Z' },
      ],
    });
    const sent = await notifications.waitFor(2);
    expect(sent[1]).toEqual({
      recipients: { type: 'entity', entityRef: ['user:default/mock'] },
      payload: {
        title: 'The drain of worker-1 (plant-a) is complete',
        description: `worker-1 is back in service (at 2026-12-02 02:00 UTC). Requested for: ${REASON}`,
        link: `/servers/maintenances/plant-a/${name}`,
        severity: 'normal',
        scope: name,
        topic: 'Server maintenance',
      },
    });
    expect(sent).toHaveLength(2);
  });

  it('two backends on one cluster send the same notification (same scope), so the notifications backend keeps one', async () => {
    const cluster = rack();
    const one = await start(cluster);
    const two = await start(cluster);
    const pre = await request(one.server).get(preflightUrl);
    const res = await request(one.server)
      .post(drainUrl)
      .send({ reason: REASON, preflightToken: pre.body.token });
    expect(res.status).toBe(201);
    const name: string = res.body.name;
    setStatus(cluster, name, {
      phase: 'Refused',
      refusal: {
        reason: 'draining worker-1 is refused: the node is being replaced',
        members: 3,
        quorum: 2,
        ready: 3,
        margin: 1,
      },
    });
    const [a] = await one.notifications.waitFor(1);
    const [b] = await two.notifications.waitFor(1);
    expect(b).toEqual(a);
    expect(a.payload).toMatchObject({
      scope: name,
      severity: 'high',
      link: `/servers/maintenances/plant-a/${name}`,
      title: 'The drain of worker-1 (plant-a) was refused',
    });
    expect(a.payload.description).toContain(
      '(members 3, quorum 2, ready 3, margin 1)',
    );
    // Two backends start in this test: Jest's 5 s went by on a busy machine (the test
    // command runs a rack lane beside these suites). The waits above are for events.
  }, 30_000);
});
