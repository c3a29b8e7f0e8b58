/*
 * The servers routes against the real apiserver of the simulated rack, with
 * the Backstage identity of e2e/rack/demo/backstage-access.yaml (no write on
 * Nodes): reads come from watch caches, a cordon writes a NodeMaintenance.
 */
import { KubeHttp } from '@rackside/plugin-servers-node';
import {
  startTestRack,
  type TestRack,
  eventually,
} from '@rackside/rack-testing';
import request from 'supertest';
import {
  installRackside,
  startServersBackendOnRack,
} from './testing/rackBackend';

jest.setTimeout(60_000);

type Obj = Record<string, any>;

let rack: TestRack | undefined;
let admin: KubeHttp;
let server: Parameters<typeof request>[0];
const REASON = 'integration test: replace the PSU';

function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  return eventually(what, fn, { timeoutMs, intervalMs: 250 });
}

beforeAll(async () => {
  rack = await startTestRack({ withTalos: false, withRedfish: false });
  const rackside = await installRackside(rack);
  admin = rackside.admin;
  const backend = await startServersBackendOnRack({
    rack,
    token: rackside.backstageToken,
    cluster: { title: 'Plant A' },
  });
  server = backend.server;
}, 180_000);

afterAll(async () => {
  await rack?.stop();
}, 60_000);

const actionUrl = (node: string, action: string, cluster = 'plant-a') =>
  `/api/servers/clusters/${cluster}/servers/${node}/actions/${action}`;

describe('servers routes on the simulated rack', () => {
  it('lists the fixture nodes from the watch cache', async () => {
    const res = await request(server).get(
      '/api/servers/clusters/plant-a/servers',
    );
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(
      res.body.items.map((s: Obj) => [s.name, s]),
    );
    expect(Object.keys(byName).sort()).toEqual([
      'cp-1',
      'cp-2',
      'cp-3',
      'virt-1',
      'worker-1',
      'worker-2',
      'worker-3',
      'worker-4',
      'worker-5',
      'worker-6',
    ]);
    for (const cp of ['cp-1', 'cp-2', 'cp-3']) {
      expect(byName[cp].controlPlane).toBe(true);
    }
    expect(byName['worker-1'].controlPlane).toBe(false);
    expect(byName['virt-1'].virtual).toBe(true);
    expect(byName['worker-1'].virtual).toBe(false);

    const clusters = await request(server).get('/api/servers/clusters');
    expect(clusters.body.items[0]).toMatchObject({
      name: 'plant-a',
      title: 'Plant A',
      quorum: { derived: true, members: 3, quorum: 2 },
    });
  });

  it('cordons worker-1: the NodeMaintenance is in the apiserver', async () => {
    const res = await request(server)
      .post(actionUrl('worker-1', 'cordon'))
      .send({ reason: REASON });
    expect(res.status).toBe(201);
    const name: string = res.body.name;
    const stored: Obj = await admin.request({
      method: 'GET',
      path: `/apis/rackside.dev/v1alpha1/nodemaintenances/${name}`,
    });
    expect(stored.spec).toMatchObject({
      nodeName: 'worker-1',
      intent: 'cordon',
      reason: REASON,
      requestedBy: 'user:default/mock',
    });

    // Once the cache has it, a second request is a 409 naming it.
    await waitFor('the maintenance in the cache', async () => {
      const list = await request(server).get(
        '/api/servers/clusters/plant-a/maintenances?node=worker-1',
      );
      return list.body.items?.some((m: Obj) => m.name === name)
        ? true
        : undefined;
    });
    const again = await request(server)
      .post(actionUrl('worker-1', 'cordon'))
      .send({ reason: REASON });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain(name);

    // Return to service sets the flag through an update (no patch granted).
    const back = await request(server)
      .post(actionUrl('worker-1', 'uncordon'))
      .send({ reason: REASON });
    expect(back.status).toBe(200);
    expect(back.body).toEqual({ name });
    const updated: Obj = await admin.request({
      method: 'GET',
      path: `/apis/rackside.dev/v1alpha1/nodemaintenances/${name}`,
    });
    expect(updated.spec.returnToService).toMatchObject({
      by: 'user:default/mock',
      reason: REASON,
    });
  });

  it('answers 404 for an unknown node or cluster, writing nothing', async () => {
    const before: Obj = await admin.request({
      method: 'GET',
      path: '/apis/rackside.dev/v1alpha1/nodemaintenances',
    });
    expect(
      (
        await request(server)
          .post(actionUrl('worker-99', 'cordon'))
          .send({ reason: REASON })
      ).status,
    ).toBe(404);
    expect(
      (
        await request(server)
          .post(actionUrl('worker-2', 'cordon', 'plant-z'))
          .send({ reason: REASON })
      ).status,
    ).toBe(404);
    const after: Obj = await admin.request({
      method: 'GET',
      path: '/apis/rackside.dev/v1alpha1/nodemaintenances',
    });
    expect(after.items).toHaveLength(before.items.length);
  });

  it('answers 400 for a bad body or a reason the policy rejects, writing nothing', async () => {
    const list = async () =>
      (
        (await admin.request({
          method: 'GET',
          path: '/apis/rackside.dev/v1alpha1/nodemaintenances',
        })) as Obj
      ).items.length;
    const before = await list();
    const noReason = await request(server)
      .post(actionUrl('worker-3', 'cordon'))
      .send({ typedName: 'worker-3' });
    expect(noReason.status).toBe(400);
    expect(noReason.body.error.message).toMatch(/reason/);
    const short = await request(server)
      .post(actionUrl('worker-3', 'cordon'))
      .send({ reason: 'too short' });
    expect(short.status).toBe(400);
    expect(short.body.error.message).toMatch(/at least 10 characters/);
    expect(await list()).toBe(before);
  });

  it('refuses the virtual node with 409 and the quorum numbers', async () => {
    const res = await request(server)
      .post(actionUrl('virt-1', 'cordon'))
      .send({ reason: REASON });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ members: 3, quorum: 2 });
  });

  it('pre-flights a drain of worker-2 from the real pods and PDBs, and records the acknowledged snapshot', async () => {
    const preflightUrl = (query: string) =>
      `/api/servers/clusters/plant-a/servers/worker-2/preflight?${query}`;
    const pre = await request(server).get(preflightUrl('action=drain'));
    expect(pre.status).toBe(200);
    // The fixture's unmanaged pod lives on worker-2: refused without force.
    expect(pre.body.canProceed).toBe(false);
    expect(
      pre.body.refused.map((r: Obj) => `${r.pod.namespace}/${r.pod.name}`),
    ).toContain('ops/debug-shell');
    expect(pre.body.daemonSet.map((p: Obj) => p.namespace)).toEqual([
      'monitoring',
    ]);
    expect(pre.body.quorum).toMatchObject({ verdict: 'allow', members: 3 });

    const forced = await request(server).get(
      preflightUrl('action=drain&force=true&deleteEmptyDirData=true'),
    );
    expect(forced.body.canProceed).toBe(true);
    expect(forced.body.evict.map((p: Obj) => p.name)).toContain('debug-shell');
    const res = await request(server)
      .post(actionUrl('worker-2', 'drain'))
      .send({
        reason: REASON,
        preflightToken: forced.body.token,
        force: true,
        deleteEmptyDirData: true,
      });
    expect(res.status).toBe(201);
    const stored: Obj = await admin.request({
      method: 'GET',
      path: `/apis/rackside.dev/v1alpha1/nodemaintenances/${res.body.name}`,
    });
    expect(stored.spec).toMatchObject({
      nodeName: 'worker-2',
      intent: 'drain',
      drain: { force: true, deleteEmptyDirData: true },
      preflight: {
        ceremony: 'preflight',
        token: forced.body.token,
        takenAt: forced.body.takenAt,
        quorum: { members: 3, quorum: 2 },
      },
    });
    expect(stored.spec.preflight.pods).toEqual(
      forced.body.evict.map((p: Obj) => ({
        namespace: p.namespace,
        name: p.name,
      })),
    );
  });
  it("pre-flights the fixture worker-5 (docs/drain.md): lab/db-0's node-local data, the order groups, the estimate, the skip and wait-completed pods and the KubeVirt VMIs", async () => {
    const preflightUrl = (query: string) =>
      `/api/servers/clusters/plant-a/servers/worker-5/preflight?${query}`;
    const keys = (pods: Obj[]) => pods.map(p => `${p.namespace}/${p.name}`);
    const pre = await request(server).get(preflightUrl('action=drain'));
    expect(pre.status).toBe(200);
    expect(pre.body.canProceed).toBe(false);
    expect(pre.body.refused).toEqual([
      expect.objectContaining({
        pod: expect.objectContaining({ namespace: 'lab', name: 'db-0' }),
        causes: ['nodeLocalData'],
        message: expect.stringContaining(
          'PersistentVolumeClaim data-db-0 is bound to local PersistentVolume lab-db-worker-5',
        ),
      }),
    ]);
    // Read with the Backstage identity (the chart's RBAC) from the real CRD.
    expect(
      pre.body.virtualMachines.map((v: Obj) => [v.name, v.action]),
    ).toEqual([
      ['vm-build', 'shutdown'],
      ['vm-gpu', 'blocks'],
      ['vm-scratch', 'shutdown'],
      ['vm-web', 'migrate'],
    ]);

    const allowed = await request(server).get(
      preflightUrl('action=drain&allowNodeLocalData=true'),
    );
    expect(allowed.status).toBe(200);
    const p = allowed.body;
    expect(p.canProceed).toBe(true);
    expect(keys(p.nodeLocal)).toEqual(['lab/db-0']);
    expect(p.statefulSets).toEqual([
      { namespace: 'lab', name: 'db', pods: ['lab/db-0'], budgets: [] },
    ]);
    expect(p.orderGroups.map((g: Obj) => [g.order, g.pods.length])).toEqual([
      [0, 1],
      [1, 1],
      [10, 1],
    ]);
    expect(p.orderGroups[2].pods).toEqual(['lab/db-0']);
    expect(keys(p.skipped)).toEqual([
      expect.stringMatching(/^lab\/local-agent-/),
    ]);
    expect(keys(p.waitCompleted)).toEqual([
      expect.stringMatching(/^lab\/nightly-report-/),
    ]);
    expect(p.estimate).toMatchObject({
      seconds: 1860,
      slowest: { pod: expect.stringMatching(/^lab\/archiver-/), seconds: 1800 },
    });
  });
});
