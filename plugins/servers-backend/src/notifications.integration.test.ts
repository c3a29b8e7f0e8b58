/*
 * Notifications on the simulated rack's real apiserver (issue 18): two backend
 * replicas, as the Backstage identity of e2e/rack/demo/backstage-access.yaml, watch
 * the same NodeMaintenances. One of them takes a drain request for a worker running
 * the fixture's shop/web pods (labelled backstage.io/kubernetes-id: shop-web); the
 * test then writes the status the operator would (Draining, Complete) as the admin,
 * and both replicas' watches see each write at once. Each replica's notification
 * service is a fake that records (one stored row per send): the owners' notification
 * when the drain starts and the requester's when it completes are each sent by
 * exactly one replica, the one whose claim (an annotation written on the
 * NodeMaintenance's resourceVersion) the apiserver took; the other reads the claim
 * and sends nothing, which the test waits to see in its log.
 */
import {
  coreServices,
  createServiceFactory,
  type LoggerService,
} from '@backstage/backend-plugin-api';
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

/** A root logger that keeps what it is told (every plugin logger is itself). */
function recordingLogger() {
  const lines: string[] = [];
  const logger: LoggerService & { addRedactions(): void } = {
    error: m => void lines.push(`error ${m}`),
    warn: m => void lines.push(`warn ${m}`),
    info: m => void lines.push(`info ${m}`),
    debug: m => void lines.push(`debug ${m}`),
    child: () => logger,
    addRedactions: () => {},
  };
  return { lines, logger };
}

/**
 * One replica, whose notification service records what it is asked to send and whose
 * log is kept.
 */
async function startReplica() {
  const sent: NotificationSendOptions[] = [];
  const log = recordingLogger();
  const backend = await startTestBackend({
    features: [
      serversPlugin,
      createServiceFactory({
        service: coreServices.rootLogger,
        deps: {},
        factory: () => log.logger,
      }),
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
  return {
    server: backend.server,
    sent,
    /** This replica read another's claim of the notification and sent nothing. */
    lost: (event: string, name: string) =>
      log.lines.some(l =>
        l.includes(
          `the ${event} notification of ${name} was claimed by another replica`,
        ),
      ),
  };
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
  it('one of them tells the owners when the drain starts and one the requester when it completes', async () => {
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
    /**
     * The notifications of one topic from the replicas that sent one, once one sent
     * and the other read its claim (or as soon as both sent).
     */
    const sentOf = async (event: string, topic: string) => {
      const senders = await eventually(
        `the ${event} notification from one replica, the other reading its claim`,
        async () => {
          const found = [a, b].filter(r =>
            r.sent.some(n => n.payload.topic === topic),
          );
          if (found.length === 0) return undefined;
          const other = [a, b].find(r => !found.includes(r));
          return !other || other.lost(event, name) ? found : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      return senders.flatMap(r =>
        r.sent.filter(n => n.payload.topic === topic),
      );
    };
    const owners = await sentOf(
      'owners',
      'Workloads on servers under maintenance',
    );
    expect(owners).toHaveLength(1);
    expect(owners[0]).toEqual({
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

    await writeStatus(name, {
      phase: 'Complete',
      completedAt: '2026-12-02T02:00:00Z',
      history: [
        { phase: 'Draining', at: '2026-12-02T01:30:00Z' },
        { phase: 'Drained', at: '2026-12-02T01:45:00Z' },
        { phase: 'Returning', at: '2026-12-02T01:59:00Z' },
        { phase: 'Complete', at: '2026-12-02T02:00:00Z' },
      ],
    });
    // Both replicas see the end: each answers it Complete.
    for (const replica of [a, b]) {
      await eventually(
        'the end in the replica',
        async () => {
          const answer = await request(replica.server).get(
            `/api/servers/clusters/plant-a/maintenances/${name}`,
          );
          return answer.body.phase === 'Complete' || undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
    }
    const outcome = await sentOf('outcome', 'Server maintenance');
    expect(outcome).toHaveLength(1);
    expect([...a.sent, ...b.sent]).toHaveLength(2);
    expect(outcome[0]).toEqual({
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
    // The claims, on the object, as the apiserver has it.
    const stored = await get(
      `/apis/rackside.dev/v1alpha1/nodemaintenances/${name}`,
    );
    expect(stored.metadata.annotations).toMatchObject({
      'rackside.dev/notified-owners': expect.any(String),
      'rackside.dev/notified-outcome': 'Complete',
    });
  });
});
