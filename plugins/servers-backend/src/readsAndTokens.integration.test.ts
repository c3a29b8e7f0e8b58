/*
 * On the simulated rack's real apiserver, as the Backstage identity of
 * e2e/rack/demo/backstage-access.yaml:
 * - a user whose servers:read is conditional (workers of plant-a) sees only plant-a in
 *   GET /clusters, counted and without the quorum, and an action on a control-plane
 *   server is a 404 with nothing written;
 * - two backend replicas sharing servers.preflight.secret, sent the same pre-flight token
 *   at the same time: exactly one NodeMaintenance is created, the other answer is a 409
 *   asking for a new pre-flight.
 */
import {
  createServiceFactory,
  type ServiceFactory,
} from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import { signalsServiceRef } from '@backstage/plugin-signals-node';
import { KubeHttp, serverConditions } from '@rackside/plugin-servers-node';
import {
  eventually,
  startTestRack,
  type TestRack,
} from '@rackside/rack-testing';
import request from 'supertest';
import { serversPlugin } from './plugin';
import { installRackside } from './testing/rackBackend';

jest.setTimeout(60_000);

type Obj = Record<string, any>;

let rack: TestRack | undefined;
let admin: KubeHttp;
let token: string;
const REASON = 'integration test: replace the PSU';
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

/** One backend replica: `clusters` names entries for the rack's apiserver. */
async function startReplica(permissions: ServiceFactory, clusters: string[]) {
  const backend = await startTestBackend({
    features: [
      serversPlugin,
      permissions,
      createServiceFactory({
        service: signalsServiceRef,
        deps: {},
        factory: () => ({ publish: async () => {} }),
      }),
      mockServices.rootConfig.factory({
        data: {
          servers: {
            clusters: clusters.map(name => ({
              name,
              url: rack!.info.server,
              caFile: rack!.info.caFile,
              serviceAccountToken: token,
            })),
            preflight: { secret: 'shared by both replicas' },
          },
        },
      }),
    ],
  });
  backends.push(backend);
  return backend.server;
}

async function maintenancesOf(node: string): Promise<Obj[]> {
  const list: Obj = await admin.request({
    method: 'GET',
    path: '/apis/rackside.dev/v1alpha1/nodemaintenances',
  });
  return list.items.filter((m: Obj) => m.spec.nodeName === node);
}

describe('GET /clusters for a user with a conditional servers:read', () => {
  const workersOfPlantA: PolicyDecision = {
    result: AuthorizeResult.CONDITIONAL,
    pluginId: 'servers',
    resourceType: 'server',
    conditions: {
      allOf: [
        serverConditions.isInCluster({ clusters: ['plant-a'] }),
        { not: serverConditions.isControlPlane({}) },
      ],
    },
  } as PolicyDecision;

  it('lists plant-a only, its workers counted, without the quorum; a control-plane action is a 404', async () => {
    const permissions = mockServices.permissions.mock({
      authorize: async requests =>
        requests.map(() => ({ result: AuthorizeResult.ALLOW })),
      authorizeConditional: async requests =>
        requests.map(r =>
          r.permission.name === 'servers:read'
            ? workersOfPlantA
            : { result: AuthorizeResult.ALLOW },
        ) as any,
    });
    // plant-b is the same apiserver under another name: readable by everything but name.
    const server = await startReplica(permissions.factory, [
      'plant-a',
      'plant-b',
    ]);
    const res = await eventually(
      'plant-a synced',
      async () => {
        const answer = await request(server).get('/api/servers/clusters');
        return answer.body.items?.[0]?.available ? answer : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([
      expect.objectContaining({
        name: 'plant-a',
        available: true,
        // worker-1..6 and virt-1 of the fixture
        servers: 7,
        quorum: expect.objectContaining({ derived: false, hidden: true }),
      }),
    ]);
    expect(JSON.stringify(res.body)).not.toMatch(/plant-b|cp-\d|members/);

    const before = (await maintenancesOf('cp-1')).length;
    const cordon = await request(server)
      .post('/api/servers/clusters/plant-a/servers/cp-1/actions/cordon')
      .send({ reason: REASON });
    expect(cordon.status).toBe(404);
    expect((await maintenancesOf('cp-1')).length).toBe(before);
  });
});

describe('a pre-flight token sent to two replicas at once', () => {
  it('creates one NodeMaintenance; the other answer is a 409 asking for a new pre-flight', async () => {
    const allow = mockServices.permissions.factory({
      result: AuthorizeResult.ALLOW,
    });
    const [a, b] = await Promise.all([
      startReplica(allow, ['plant-a']),
      startReplica(allow, ['plant-a']),
    ]);
    const query = 'action=drain&force=true&deleteEmptyDirData=true';
    const pre = await request(a).get(
      `/api/servers/clusters/plant-a/servers/worker-3/preflight?${query}`,
    );
    expect(pre.status).toBe(200);
    expect(pre.body.canProceed).toBe(true);
    const body = {
      reason: REASON,
      preflightToken: pre.body.token,
      force: true,
      deleteEmptyDirData: true,
    };
    const url = '/api/servers/clusters/plant-a/servers/worker-3/actions/drain';
    const answers = await Promise.all([
      request(a).post(url).send(body),
      request(b).post(url).send(body),
    ]);
    expect(answers.map(r => r.status).sort()).toEqual([201, 409]);
    const refused = answers.find(r => r.status === 409)!;
    expect(refused.body.error.message).toMatch(
      /pre-flight token was used already/,
    );
    expect(refused.body.preflight).toMatchObject({
      node: 'worker-3',
      token: expect.any(String),
    });
    const stored = await maintenancesOf('worker-3');
    expect(stored.map(m => m.metadata.name)).toEqual([
      answers.find(r => r.status === 201)!.body.name,
    ]);

    // Later, on either replica: still used.
    for (const replica of [a, b]) {
      const again = await request(replica).post(url).send(body);
      expect(again.status).toBe(409);
      expect(again.body.error.message).toMatch(/used already/);
    }
    expect(await maintenancesOf('worker-3')).toHaveLength(1);
  });
});
