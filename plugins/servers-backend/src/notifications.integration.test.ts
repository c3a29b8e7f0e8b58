/*
 * Notifications on the simulated rack's real apiserver (issue 18): two backend
 * replicas, as the Backstage identity of e2e/rack/demo/backstage-access.yaml, watch
 * the same NodeMaintenances. One of them takes a drain request for a worker running
 * the fixture's shop/web pods (labelled backstage.io/kubernetes-id: shop-web); the
 * test then writes the status the operator would (Draining, Complete) as the admin.
 * Each replica's notification service is a fake that records: both send the owners'
 * notification when the drain starts and the requester's when it completes, the
 * same payloads with the same scope, which the notifications backend keeps as one.
 */
import { createServiceFactory } from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import {
  notificationService,
  type NotificationSendOptions,
} from '@backstage/plugin-notifications-node';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { signalsServiceRef } from '@backstage/plugin-signals-node';
import { KubeHttp } from '@rackside/plugin-servers-node';
import {
  eventually,
  startTestRack,
  type TestRack,
} from '@rackside/rack-testing';
import request from 'supertest';
import { serversPlugin } from './plugin';
import { installRackside } from './testing/rackBackend';

jest.setTimeout(120_000);

type Obj = Record<string, any>;

let rack: TestRack | undefined;
let admin: KubeHttp;
let token: string;
const REASON = 'integration test: replace the NIC';
const backends: Array<{ stop(): Promise<void> }> = [];

beforeAll(async () => {
  rack = await startTestRack({ withTalos: false, withRedfish: false });
  const rackside = await installRackside(rack);
  admin = rackside.admin;
  token = rackside.backstageToken;
}, 180_000);

afterAll(async () => {
  for (const backend of backends) await backend.stop();
  await rack?.stop();
}, 60_000);

/** One replica, whose notification service records what it is asked to send. */
async function startReplica() {
  const sent: NotificationSendOptions[] = [];
  const backend = await startTestBackend({
    features: [
      serversPlugin,
      mockServices.permissions.factory({ result: AuthorizeResult.ALLOW }),
      createServiceFactory({
        service: signalsServiceRef,
        deps: {},
        factory: () => ({ publish: async () => {} }),
      }),
      createServiceFactory({
        service: notificationService,
        deps: {},
        factory: () => ({
          send: async (n: NotificationSendOptions) => {
            sent.push(n);
          },
        }),
      }),
      catalogServiceMock.factory({
        entities: [
          {
            apiVersion: 'backstage.io/v1alpha1',
            kind: 'Component',
            metadata: {
              name: 'shop-web',
              namespace: 'default',
              title: 'Shop web front end',
              annotations: { 'backstage.io/kubernetes-id': 'shop-web' },
            },
            spec: {
              type: 'service',
              lifecycle: 'production',
              owner: 'group:default/plant-admins',
            },
          },
        ],
      }),
      mockServices.rootConfig.factory({
        data: {
          servers: {
            clusters: [
              {
                name: 'plant-a',
                url: rack!.info.server,
                caFile: rack!.info.caFile,
                serviceAccountToken: token,
              },
            ],
            preflight: { secret: 'shared by both replicas' },
          },
        },
      }),
    ],
  });
  backends.push(backend);
  return { server: backend.server, sent };
}

async function get(path: string): Promise<Obj> {
  return admin.request({ method: 'GET', path });
}

/** Writes a NodeMaintenance's status as the operator would (the status subresource). */
async function writeStatus(name: string, status: Obj) {
  const path = `/apis/rackside.dev/v1alpha1/nodemaintenances/${name}`;
  const current = await get(path);
  await admin.request({
    method: 'PUT',
    path: `${path}/status`,
    body: { ...current, status },
  });
}

describe('notifications from two replicas on one rack', () => {
  it('both tell the owners when the drain starts and the requester when it completes, with one scope', async () => {
    const pods: Obj = await get('/api/v1/namespaces/shop/pods');
    const web = pods.items.filter(
      (p: Obj) =>
        p.metadata.labels?.['backstage.io/kubernetes-id'] === 'shop-web' &&
        p.spec.nodeName,
    );
    expect(web.length).toBeGreaterThan(0);
    const node: string = web[0].spec.nodeName;
    const webPods = web
      .filter((p: Obj) => p.spec.nodeName === node)
      .map((p: Obj) => `shop/${p.metadata.name}`)
      .sort();

    const [a, b] = await Promise.all([startReplica(), startReplica()]);
    const query = 'action=drain&force=true&deleteEmptyDirData=true';
    const pre = await eventually(
      'a pre-flight once the caches synced',
      async () => {
        const answer = await request(a.server).get(
          `/api/servers/clusters/plant-a/servers/${node}/preflight?${query}`,
        );
        return answer.status === 200 ? answer : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(pre.body.affectedEntities).toEqual([
      {
        entityRef: 'component:default/shop-web',
        title: 'Shop web front end',
        owner: 'group:default/plant-admins',
        kubernetesId: 'shop-web',
        pods: webPods,
      },
    ]);
    const created = await request(a.server)
      .post(`/api/servers/clusters/plant-a/servers/${node}/actions/drain`)
      .send({
        reason: REASON,
        preflightToken: pre.body.token,
        force: true,
        deleteEmptyDirData: true,
      });
    expect(created.status).toBe(201);
    const name: string = created.body.name;
    // Both replicas have seen it before the status moves (the second is the one that
    // did not create it, so it read the pods when its watch showed the maintenance).
    for (const replica of [a, b]) {
      await eventually(
        'the maintenance in the replica',
        async () => {
          const list = await request(replica.server).get(
            `/api/servers/clusters/plant-a/maintenances/${name}`,
          );
          return list.status === 200 || undefined;
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
    }

    await writeStatus(name, {
      phase: 'Draining',
      drain: {
        startedAt: '2026-12-02T01:30:00Z',
        total: webPods.length,
        evicted: 0,
        pending: webPods.length,
      },
    });
    await eventually(
      'the owners notification from both replicas',
      async () => (a.sent.length >= 1 && b.sent.length >= 1) || undefined,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(a.sent[0]).toEqual({
      recipients: { type: 'entity', entityRef: ['group:default/plant-admins'] },
      payload: {
        title: `${node} (plant-a) is being drained: Shop web front end loses ${
          webPods.length === 1 ? 'a pod' : `${webPods.length} pods`
        } there`,
        description: `The drain of ${node} in cluster plant-a started at 2026-12-02 01:30 UTC, requested by user:default/mock: ${REASON}. Evicted (rescheduled elsewhere by their controllers): component:default/shop-web (${webPods.join(
          ', ',
        )}).`,
        link: `/servers/maintenances/plant-a/${name}`,
        severity: 'normal',
        scope: name,
        topic: 'Workloads on servers under maintenance',
      },
    });
    expect(b.sent[0]).toEqual(a.sent[0]);

    await writeStatus(name, {
      phase: 'Complete',
      completedAt: '2026-12-02T02:00:00Z',
      history: [
        { phase: 'Draining', at: '2026-12-02T01:30:00Z' },
        { phase: 'Complete', at: '2026-12-02T02:00:00Z' },
      ],
    });
    await eventually(
      'the requester notification from both replicas',
      async () => (a.sent.length >= 2 && b.sent.length >= 2) || undefined,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(a.sent[1]).toEqual({
      recipients: { type: 'entity', entityRef: ['user:default/mock'] },
      payload: {
        title: `The drain of ${node} (plant-a) is complete`,
        description: `${node} is back in service (at 2026-12-02 02:00 UTC). Requested for: ${REASON}`,
        link: `/servers/maintenances/plant-a/${name}`,
        severity: 'normal',
        scope: name,
        topic: 'Server maintenance',
      },
    });
    expect(b.sent).toEqual(a.sent);
    expect(new Set([...a.sent, ...b.sent].map(n => n.payload.scope))).toEqual(
      new Set([name]),
    );
  });
});
