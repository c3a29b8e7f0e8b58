/*
 * The drain pre-flight of docs/drain.md through the routes: node-local data refused
 * unless allowNodeLocalData, the option recorded on the maintenance, skip / wait-completed
 * / drain-order and StatefulSets listed with the estimate, and a token that binds them
 * (a pod that changes class after the acknowledgement, or the option flipped at request
 * time, is a 409 with nothing written).
 */
import { createServiceFactory } from '@backstage/backend-plugin-api';
import request from 'supertest';
import {
  clusterRegistryServiceRef,
  staticClusterRegistry,
} from './cluster/clusterRegistry';
import { FakeCluster, fakeNode, fakePod } from './testing/fakeCluster';
import { startServersTestBackend } from './testing/testBackend';

const REASON = 'replace the failed disk in bay 3';
const base = '/api/servers/clusters/plant-a/servers/worker-1';
const preflightUrl = `${base}/preflight?action=drain`;
const drainUrl = `${base}/actions/drain`;

function annotate(
  pod: any,
  annotations: Record<string, string>,
  grace?: number,
) {
  pod.metadata.annotations = annotations;
  if (grace !== undefined) pod.spec.terminationGracePeriodSeconds = grace;
  return pod;
}

function rack(): FakeCluster {
  const cluster = new FakeCluster('plant-a', [
    fakeNode('cp-1', { controlPlane: true }),
    fakeNode('worker-1'),
  ]);
  const db = fakePod('db-0', 'worker-1', {
    owner: 'StatefulSet/db',
    app: 'db',
  });
  db.spec!.volumes = [
    { name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } },
  ];
  db.spec!.terminationGracePeriodSeconds = 300;
  cluster.pods.set('worker-1', [
    db,
    annotate(fakePod('web-1', 'worker-1', { app: 'web' }), {}, 20),
    annotate(
      fakePod('proxy-1', 'worker-1', { app: 'proxy' }),
      { 'rackside.dev/drain-order': '9' },
      45,
    ),
    annotate(fakePod('agent-1', 'worker-1', { app: 'agent' }), {
      'rackside.dev/drain': 'skip',
    }),
    annotate(fakePod('batch-1', 'worker-1', { owner: 'Job/batch' }), {
      'rackside.dev/drain': 'wait-completed',
    }),
  ]);
  cluster.budgets = [
    {
      metadata: { name: 'db', namespace: 'shop' },
      spec: { selector: { matchLabels: { app: 'db' } } },
      status: { disruptionsAllowed: 0 },
    } as any,
  ];
  cluster.storage = {
    nodeLabels: { 'kubernetes.io/hostname': 'worker-1' },
    claims: [
      {
        metadata: { name: 'data-db-0', namespace: 'shop' },
        spec: { volumeName: 'pv-db' },
      },
    ],
    volumes: [
      { metadata: { name: 'pv-db' }, spec: { local: { path: '/mnt/db' } } },
    ],
  };
  return cluster;
}

async function backend(cluster: FakeCluster) {
  const { server } = await startServersTestBackend({
    features: [
      createServiceFactory({
        service: clusterRegistryServiceRef,
        deps: {},
        factory: () => staticClusterRegistry([cluster]),
      }),
    ],
    config: { preflight: { secret: 'shared' } },
  });
  return server;
}

describe('drain pre-flight (docs/drain.md)', () => {
  it('refuses a pod with node-local data, says why, and lists every class with the estimate', async () => {
    const cluster = rack();
    const server = await backend(cluster);
    const res = await request(server).get(preflightUrl);
    expect(res.status).toBe(200);
    const p = res.body;
    expect(cluster.storageReads).toEqual([
      { node: 'worker-1', namespaces: ['shop'] },
    ]);
    expect(p.options).toEqual({
      deleteEmptyDirData: false,
      force: false,
      allowNodeLocalData: false,
    });
    expect(p.canProceed).toBe(false);
    expect(p.refused).toEqual([
      expect.objectContaining({
        causes: ['nodeLocalData'],
        message: expect.stringMatching(
          /^shop\/db-0: its data is on this node \(PersistentVolumeClaim data-db-0 is bound to local PersistentVolume pv-db\), so it cannot run elsewhere until worker-1 is back \(allowed with allowNodeLocalData\)/,
        ),
      }),
    ]);
    expect(p.skipped.map((x: any) => x.name)).toEqual(['agent-1']);
    expect(p.waitCompleted.map((x: any) => x.name)).toEqual(['batch-1']);
    expect(p.orderGroups).toEqual([
      { order: 0, pods: ['shop/web-1'] },
      { order: 9, pods: ['shop/proxy-1'] },
    ]);
    expect(p.estimate).toEqual({
      seconds: 65,
      slowest: { pod: 'shop/proxy-1', seconds: 45 },
      groups: [
        { order: 0, seconds: 20 },
        { order: 9, seconds: 45 },
      ],
      waitsForCompletion: ['shop/batch-1'],
    });
  });

  it('with allowNodeLocalData evicts it, shows it as node-local with its StatefulSet and budget, and records the option', async () => {
    const cluster = rack();
    const server = await backend(cluster);
    const p = (
      await request(server).get(`${preflightUrl}&allowNodeLocalData=true`)
    ).body;
    expect(p.refused).toEqual([]);
    expect(p.nodeLocal.map((x: any) => x.name)).toEqual(['db-0']);
    expect(p.nodeLocal[0].nodeLocalData).toEqual([
      'PersistentVolumeClaim data-db-0 is bound to local PersistentVolume pv-db',
    ]);
    expect(p.statefulSets).toEqual([
      {
        namespace: 'shop',
        name: 'db',
        pods: ['shop/db-0'],
        budgets: [{ name: 'db', disruptionsAllowed: 0, blocksNow: true }],
      },
    ]);
    expect(p.estimate.slowest).toEqual({ pod: 'shop/db-0', seconds: 300 });

    const created = await request(server).post(drainUrl).send({
      reason: REASON,
      preflightToken: p.token,
      allowNodeLocalData: true,
    });
    expect(created.status).toBe(201);
    expect(cluster.created).toHaveLength(1);
    expect(cluster.created[0].spec.drain).toMatchObject({
      allowNodeLocalData: true,
    });
  });

  it('a token for allowNodeLocalData does not carry a request without it (409, nothing written)', async () => {
    const cluster = rack();
    const server = await backend(cluster);
    const p = (
      await request(server).get(`${preflightUrl}&allowNodeLocalData=true`)
    ).body;
    const res = await request(server)
      .post(drainUrl)
      .send({ reason: REASON, preflightToken: p.token });
    expect(res.status).toBe(409);
    expect(cluster.created).toEqual([]);
  });

  it('binds the drain rules: a pod that becomes skip after the acknowledgement is a 409 with the new pre-flight', async () => {
    const cluster = rack();
    // Nothing node-local, so the drain could proceed.
    cluster.storage = { claims: [], volumes: [] };
    const server = await backend(cluster);
    const p = (await request(server).get(preflightUrl)).body;
    expect(p.canProceed).toBe(true);
    const web = cluster.pods
      .get('worker-1')!
      .find(x => x.metadata?.name === 'web-1')!;
    web.metadata!.annotations = { 'rackside.dev/drain': 'skip' };
    const res = await request(server)
      .post(drainUrl)
      .send({ reason: REASON, preflightToken: p.token });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/impact changed/);
    expect(res.body.preflight.skipped.map((x: any) => x.name)).toEqual([
      'agent-1',
      'web-1',
    ]);
    expect(cluster.created).toEqual([]);
  });

  it('binds the order groups: a pod moved to another group is a 409', async () => {
    const cluster = rack();
    cluster.storage = { claims: [], volumes: [] };
    const server = await backend(cluster);
    const p = (await request(server).get(preflightUrl)).body;
    const web = cluster.pods
      .get('worker-1')!
      .find(x => x.metadata?.name === 'web-1')!;
    web.metadata!.annotations = { 'rackside.dev/drain-order': '9' };
    const res = await request(server)
      .post(drainUrl)
      .send({ reason: REASON, preflightToken: p.token });
    expect(res.status).toBe(409);
    expect(cluster.created).toEqual([]);
  });

  it('rejects a malformed allowNodeLocalData with 400 naming it, nothing written', async () => {
    const cluster = rack();
    const server = await backend(cluster);
    const q = await request(server).get(
      `${preflightUrl}&allowNodeLocalData=yes`,
    );
    expect(q.status).toBe(400);
    expect(q.body.error.message).toMatch(
      /allowNodeLocalData must be true or false/,
    );
    const b = await request(server)
      .post(drainUrl)
      .send({ reason: REASON, allowNodeLocalData: 'yes' });
    expect(b.status).toBe(400);
    expect(b.body.error.message).toMatch(
      /allowNodeLocalData must be a boolean/,
    );
    expect(cluster.created).toEqual([]);
  });
});
