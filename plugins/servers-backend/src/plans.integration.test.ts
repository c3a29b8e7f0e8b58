/*
 * Maintenance plans on the simulated rack's real apiserver, as the Backstage identity of
 * e2e/rack/demo/backstage-access.yaml with the chart's admission policies: the plan
 * pre-flight, then POST /plans writes a MaintenancePlan the CRD's schema and CEL rules,
 * the chart's RBAC and the attribution policy admit (the user's entity ref as
 * requestedBy), the watch cache lists it, and pause, resume and cancel are written with
 * the user as `by` and a resume later than the pause. No operator runs here: the plan
 * stays Pending. The admin writes the PowerProvider a channel would advertise (reboot),
 * since a plan is refused at creation for a verb nobody can send.
 */
import { createServiceFactory } from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
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
import { advertiseTalosChannel, installRackside } from './testing/rackBackend';

jest.setTimeout(60_000);

type Obj = Record<string, any>;

let rack: TestRack | undefined;
let admin: KubeHttp;
let backend: { server: any; stop(): Promise<void> } | undefined;
const REASON = 'integration test: kernel update of plant A';
const BASE = '/api/servers/clusters/plant-a/plans';

beforeAll(async () => {
  rack = await startTestRack({ withTalos: false, withRedfish: false });
  const rackside = await installRackside(rack);
  admin = rackside.admin;
  await advertiseTalosChannel(admin);
  backend = await startTestBackend({
    features: [
      serversPlugin,
      mockServices.permissions.factory({ result: AuthorizeResult.ALLOW }),
      createServiceFactory({
        service: signalsServiceRef,
        deps: {},
        factory: () => ({ publish: async () => {} }),
      }),
      mockServices.rootConfig.factory({
        data: {
          servers: {
            // The tests poll the plan pre-flight until the pod cache has a change.
            plans: { preflightsPerMinute: 1000 },
            clusters: [
              {
                name: 'plant-a',
                url: rack.info.server,
                caFile: rack.info.caFile,
                serviceAccountToken: rackside.backstageToken,
              },
            ],
          },
        },
      }),
    ],
  });
}, 180_000);

afterAll(async () => {
  await backend?.stop();
  await rack?.stop();
}, 60_000);

const planOf = (name: string): Promise<Obj> =>
  admin.request({
    method: 'GET',
    path: `/apis/rackside.dev/v1alpha1/maintenanceplans/${name}`,
  });

describe('a maintenance plan from the routes, on the apiserver', () => {
  it('is created as the pre-flight showed it, listed, paused, resumed and cancelled', async () => {
    const server = backend!.server;
    const pre = await eventually(
      'plant-a synced',
      async () => {
        const answer = await request(server).get(
          `${BASE}/preflight?intent=reboot&nodes=worker-3,worker-1&maxParallel=2&force=true&deleteEmptyDirData=true`,
        );
        return answer.status === 200 ? answer : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(pre.body).toMatchObject({
      intent: 'reboot',
      maxParallel: 2,
      typedCount: 2,
      steps: [expect.objectContaining({ nodes: ['worker-1', 'worker-3'] })],
      token: expect.any(String),
    });
    expect(pre.body.blockers).toEqual([]);

    const created = await request(server)
      .post(BASE)
      .send({
        intent: 'reboot',
        nodes: ['worker-1', 'worker-3'],
        maxParallel: 2,
        drain: { force: true, deleteEmptyDirData: true },
        window: {
          timeZone: 'Europe/Berlin',
          hours: { start: '22:00', end: '04:00' },
        },
        reason: REASON,
        preflightToken: pre.body.token,
        typedCount: 2,
      });
    expect(created.status).toBe(201);
    const name = created.body.name;
    const stored = await planOf(name);
    expect(stored.spec).toMatchObject({
      intent: 'reboot',
      nodes: ['worker-1', 'worker-3'],
      maxParallel: 2,
      reason: REASON,
      requestedBy: 'user:default/mock',
      drain: { force: true, deleteEmptyDirData: true },
      window: { timeZone: 'Europe/Berlin' },
      failurePolicy: { tolerate: 0 },
    });

    // The watch cache has it.
    const listed = await eventually(
      'the plan is listed',
      async () => {
        const answer = await request(server).get(BASE);
        return answer.body.items?.some((p: Obj) => p.name === name)
          ? answer
          : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    expect(listed.body.items[0]).toMatchObject({
      name,
      phase: 'Pending',
      nodes: [{ name: 'worker-1' }, { name: 'worker-3' }],
    });

    // The same token again: the plan named after it exists (409), nothing more written.
    const again = await request(server)
      .post(BASE)
      .send({
        intent: 'reboot',
        nodes: ['worker-1', 'worker-3'],
        maxParallel: 2,
        drain: { force: true, deleteEmptyDirData: true },
        reason: REASON,
        preflightToken: pre.body.token,
        typedCount: 2,
      });
    expect(again.status).toBe(409);

    const control = (what: string) =>
      request(server)
        .post(`${BASE}/${name}/${what}`)
        .send({ reason: `${REASON}: ${what}` });
    expect((await control('pause')).status).toBe(200);
    // Read-modify-write reads the apiserver: the resume follows at once.
    expect((await control('resume')).status).toBe(200);
    const toggled = (await planOf(name)).spec;
    expect(toggled.pause).toMatchObject({ by: 'user:default/mock' });
    expect(Date.parse(toggled.resume.at)).toBeGreaterThan(
      Date.parse(toggled.pause.at),
    );
    expect((await control('cancel')).status).toBe(200);
    expect((await planOf(name)).spec.cancel).toMatchObject({
      by: 'user:default/mock',
      reason: `${REASON}: cancel`,
    });
  });
});

describe('the plan pre-flight reads many servers at once', () => {
  it('shows each server as its own pre-flight does (pods, node-local data, budgets), read in one batch', async () => {
    const server = backend!.server;
    const pod = (name: string, node: string, volume: Obj) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', labels: { app: name } },
      spec: {
        nodeName: node,
        containers: [{ name: 'c', image: 'registry.invalid/app:1' }],
        volumes: [{ name: 'v', ...volume }],
      },
    });
    for (const p of [
      pod('scratch', 'worker-1', { emptyDir: {} }),
      pod('local-data', 'worker-2', { hostPath: { path: '/srv/data' } }),
      pod('plain', 'worker-3', { configMap: { name: 'x' } }),
    ]) {
      await admin.request({
        method: 'POST',
        path: '/api/v1/namespaces/default/pods',
        body: p,
      });
    }
    const names = (
      await request(server).get('/api/servers/clusters/plant-a/servers')
    ).body.items
      .map((s: Obj) => s.name)
      .sort();
    // More than a handful: the batched read, not a pod list per server.
    expect(names.length).toBeGreaterThan(4);
    const plan = await request(server).get(
      `${BASE}/preflight?intent=drain&nodes=${names.join(',')}`,
    );
    expect(plan.status).toBe(200);
    const shown = (impact: Obj) => ({
      node: impact.node,
      evict: impact.evict.map((e: Obj) => e.name).sort(),
      blockers: impact.blockers,
      ceremony: impact.ceremony.level,
    });
    for (const node of names) {
      const single = await request(server).get(
        `/api/servers/clusters/plant-a/servers/${node}/preflight?action=drain`,
      );
      expect(single.status).toBe(200);
      expect(shown(plan.body.nodes.find((n: Obj) => n.node === node))).toEqual(
        shown(single.body),
      );
    }
    const byNode = new Map(plan.body.nodes.map((n: Obj) => [n.node, n]));
    // emptyDir data is lost by a drain: without deleteEmptyDirData it blocks, as alone.
    expect((byNode.get('worker-1') as Obj).blockers.join(' ')).toContain(
      'scratch',
    );
    // hostPath is data on the node: the drain is blocked without allowNodeLocalData.
    expect((byNode.get('worker-2') as Obj).blockers.join(' ')).toContain(
      'local-data',
    );

    // Many servers are read from the pod cache plan pre-flights keep: a pod that
    // arrives later is in the next pre-flight (its watch follows the cluster).
    await admin.request({
      method: 'POST',
      path: '/api/v1/namespaces/default/pods',
      body: pod('late-data', 'worker-3', { hostPath: { path: '/srv/late' } }),
    });
    await eventually(
      'the plan pre-flight sees the pod that arrived',
      async () => {
        const again = await request(server).get(
          `${BASE}/preflight?intent=drain&nodes=${names.join(',')}`,
        );
        const worker3 = again.body.nodes?.find(
          (n: Obj) => n.node === 'worker-3',
        );
        return worker3?.blockers.join(' ').includes('late-data') || undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
  });
});

describe('a renewal is a new acknowledgement, on the apiserver', () => {
  it("needs the renewer's pre-flight and typed name for a hazard step; the CRD and the admission policies take the renewer's acknowledgement and its record", async () => {
    const server = backend!.server;
    const preflightOf = (query: string) =>
      eventually(
        'the plan pre-flight answers',
        async () => {
          const answer = await request(server).get(
            `${BASE}/preflight?${query}`,
          );
          return answer.status === 200 ? answer : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
    // cp-1 at the last margin of three members: the hazard rung.
    const pre = await preflightOf('intent=reboot&nodes=cp-1');
    expect(pre.body.nodes[0].ceremony.level).toBe('hazard');
    const created = await request(server)
      .post(BASE)
      .send({
        intent: 'reboot',
        nodes: ['cp-1'],
        reason: REASON,
        preflightToken: pre.body.token,
        typedCount: 1,
        typedNames: ['cp-1'],
      });
    expect(created.status).toBe(201);
    const name = created.body.name;
    const before = (await planOf(name)).spec;
    expect(before.acknowledgements).toEqual([
      expect.objectContaining({ on: 'create', rungs: { 'cp-1': 'hazard' } }),
    ]);
    await eventually(
      'the plan is listed',
      async () =>
        (await request(server).get(`${BASE}/${name}`)).status === 200 ||
        undefined,
      { timeoutMs: 15_000, intervalMs: 200 },
    );

    const url = `${BASE}/${name}/renew`;
    const reason = `${REASON}: renewed`;
    // A reason alone no longer renews it: nothing is written.
    const bare = await request(server).post(url).send({ reason });
    expect(bare.status).toBe(400);
    expect(bare.body.error.message).toMatch(/cp-1 is at the hazard rung now/);
    expect((await planOf(name)).spec).toEqual(before);

    const renewal = await preflightOf('intent=reboot&nodes=cp-1');
    const ok = await request(server)
      .post(url)
      .send({
        reason,
        preflightToken: renewal.body.token,
        typedNames: ['cp-1'],
      });
    expect(ok.status).toBe(200);
    const after = (await planOf(name)).spec;
    expect(after.authorization.at).not.toBe(before.authorization.at);
    expect(after.acknowledged).toEqual({ 'cp-1': 'hazard' });
    expect(after.acknowledgements).toEqual([
      before.acknowledgements[0],
      expect.objectContaining({
        by: 'user:default/mock',
        on: 'renew',
        preflightTakenAt: renewal.body.takenAt,
        rungs: { 'cp-1': 'hazard' },
      }),
    ]);
    await request(server)
      .post(`${BASE}/${name}/cancel`)
      .send({ reason: `${REASON}: done` });
  });
});
