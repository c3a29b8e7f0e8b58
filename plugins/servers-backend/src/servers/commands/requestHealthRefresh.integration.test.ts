/*
 * The health refresh route and the health in the rows against the real apiserver of the
 * simulated rack, with the Backstage identity and admission policies of
 * e2e/rack/demo/backstage-access.yaml and policy-access.yaml (patch on ServerBMCs, only
 * spec.healthRefresh): the reading the operator would write (status subresource, as the
 * admin here) shows in the row and the detail; a refresh is a merge patch on the
 * resourceVersion the apiserver accepts once; a second within the minute, and one of two
 * at once, are 429 with nothing written; a node without a ServerBMC is a 404.
 */
import { KubeHttp } from '@rackside/plugin-servers-node';
import {
  eventually,
  startTestRack,
  type TestRack,
} from '@rackside/rack-testing';
import request from 'supertest';
import {
  installRackside,
  startServersBackendOnRack,
} from '../../testing/rackBackend';

jest.setTimeout(60_000);

type Obj = Record<string, any>;

const BMCS = '/apis/rackside.dev/v1alpha1/serverbmcs';
let rack: TestRack | undefined;
let admin: KubeHttp;
let server: Parameters<typeof request>[0];

async function createServerBmc(node: string) {
  await admin.request({
    method: 'POST',
    path: BMCS,
    body: {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'ServerBMC',
      metadata: { name: node },
      spec: {
        address: 'https://127.0.0.1:1',
        credentialsSecretRef: { name: `${node}-bmc` },
      },
    },
  });
  // The operator's reading, written as it writes it: the status subresource.
  await admin.request({
    method: 'PATCH',
    path: `${BMCS}/${node}/status`,
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        health: {
          rollup: 'Critical',
          readAt: '2026-12-06T10:00:00Z',
          parts: [{ kind: 'PowerSupply', name: 'PSU 1', health: 'Critical' }],
          logEntries: [
            {
              id: '1',
              created: '2026-12-06T09:59:00Z',
              severity: 'Critical',
              message: 'Power supply 1 input lost',
              service: 'System',
            },
          ],
          firmware: [{ name: 'BIOS', version: '2.19.1', updateable: true }],
          missing: [],
        },
      },
    },
  });
}

const refresh = (node: string) =>
  `/api/servers/clusters/plant-a/servers/${node}/health/refresh`;

beforeAll(async () => {
  rack = await startTestRack({ withTalos: false, withRedfish: false });
  const rackside = await installRackside(rack);
  admin = rackside.admin;
  await createServerBmc('worker-1');
  await createServerBmc('worker-2');
  const backend = await startServersBackendOnRack({
    rack,
    token: rackside.backstageToken,
  });
  server = backend.server;
}, 180_000);

afterAll(async () => {
  await rack?.stop();
}, 60_000);

describe('hardware health on the simulated rack', () => {
  it('shows the reading in the row and the detail, never the BMC address or its Secret', async () => {
    const row = await eventually(
      "worker-1's row with its health",
      async () => {
        const res = await request(server).get(
          '/api/servers/clusters/plant-a/servers',
        );
        return res.body.items?.find(
          (s: Obj) => s.name === 'worker-1' && s.health,
        );
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(row.health).toEqual({
      rollup: 'Critical',
      readAt: '2026-12-06T10:00:00Z',
      failedParts: 1,
    });
    const detail = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1',
    );
    expect(detail.body.health.parts).toEqual([
      { kind: 'PowerSupply', name: 'PSU 1', health: 'Critical' },
    ]);
    expect(detail.body.actions.uncordon.ceremony.level).toBe('typed-name');
    expect(JSON.stringify(detail.body)).not.toMatch(
      /127\.0\.0\.1:1|worker-1-bmc/,
    );
  });

  it('202 writes spec.healthRefresh through the backend identity (the policy admits it); a second within the minute is 429', async () => {
    const before: Obj = await admin.request({
      method: 'GET',
      path: `${BMCS}/worker-1`,
    });
    const first = await request(server).post(refresh('worker-1'));
    expect(first.status).toBe(202);
    const after: Obj = await admin.request({
      method: 'GET',
      path: `${BMCS}/worker-1`,
    });
    expect(after.spec).toEqual({
      ...before.spec,
      healthRefresh: {
        requestedAt: first.body.requestedAt,
        requestedBy: 'user:default/mock',
      },
    });
    expect(after.status).toEqual(before.status);

    // At once, while the backend's cache may still hold the old object: its patch on the
    // old resourceVersion conflicts, the fresh read finds the request, and it is the 429.
    const second = await request(server).post(refresh('worker-1'));
    expect(second.status).toBe(429);
    expect(Number(second.headers['retry-after'])).toBeGreaterThan(0);
    expect(second.body.error.message).toContain(
      `requested at ${first.body.requestedAt}`,
    );
    const unchanged: Obj = await admin.request({
      method: 'GET',
      path: `${BMCS}/worker-1`,
    });
    expect(unchanged.spec.healthRefresh.requestedAt).toBe(
      first.body.requestedAt,
    );
  });

  it('two requests at once: one 202, one 429, one request on the ServerBMC', async () => {
    const answers = await Promise.all([
      request(server).post(refresh('worker-2')),
      request(server).post(refresh('worker-2')),
    ]);
    expect(answers.map(a => a.status).sort()).toEqual([202, 429]);
    const accepted = answers.find(a => a.status === 202)!;
    const obj: Obj = await admin.request({
      method: 'GET',
      path: `${BMCS}/worker-2`,
    });
    expect(obj.spec.healthRefresh.requestedAt).toBe(accepted.body.requestedAt);
  });

  it('404 for a node without a ServerBMC, nothing created', async () => {
    const res = await request(server).post(refresh('worker-3'));
    expect(res.status).toBe(404);
    const list: Obj = await admin.request({ method: 'GET', path: BMCS });
    expect(list.items.map((b: Obj) => b.metadata.name).sort()).toEqual([
      'worker-1',
      'worker-2',
    ]);
  });
});
