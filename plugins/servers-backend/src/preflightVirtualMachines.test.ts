/*
 * KubeVirt VirtualMachineInstances in the drain pre-flight (docs/drain.md): listed
 * with what the drain does to each where the cluster has the API, no section (and no
 * error) where it has not, and a token that binds them.
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

function vmi(name: string, strategy: string | undefined, migratable: boolean) {
  return {
    metadata: { name, namespace: 'vms' },
    spec: strategy ? { evictionStrategy: strategy } : {},
    status: {
      nodeName: 'worker-1',
      phase: 'Running',
      conditions: [
        { type: 'LiveMigratable', status: migratable ? 'True' : 'False' },
      ],
    },
  };
}

function rack(): FakeCluster {
  const cluster = new FakeCluster('plant-a', [
    fakeNode('cp-1', { controlPlane: true }),
    fakeNode('worker-1'),
  ]);
  cluster.pods.set('worker-1', [fakePod('web-1', 'worker-1', { app: 'web' })]);
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

describe('drain pre-flight: virtual machines (docs/drain.md)', () => {
  it('lists each VMI of the node as migrated, shut down or blocking, without stopping the drain', async () => {
    const cluster = rack();
    cluster.storage = {
      claims: [],
      volumes: [],
      virtualMachines: [
        vmi('web', 'LiveMigrate', true),
        vmi('build', 'LiveMigrateIfPossible', false),
        vmi('scratch', undefined, true),
        vmi('gpu', 'LiveMigrate', false),
      ],
    };
    const server = await backend(cluster);
    const res = await request(server).get(preflightUrl);
    expect(res.status).toBe(200);
    expect(
      res.body.virtualMachines.map((v: any) => [
        `${v.namespace}/${v.name}`,
        v.action,
      ]),
    ).toEqual([
      ['vms/build', 'shutdown'],
      ['vms/gpu', 'blocks'],
      ['vms/scratch', 'shutdown'],
      ['vms/web', 'migrate'],
    ]);
    expect(res.body.virtualMachines[1].reason).toMatch(
      /LiveMigrate but it cannot be live-migrated.*the drain waits for it until its timeout/,
    );
    // Shown, like a budget that blocks now; the drain itself may still be requested.
    expect(res.body.canProceed).toBe(true);
  });

  it('has no virtual machine section where the cluster has no VirtualMachineInstance API', async () => {
    const cluster = rack();
    const server = await backend(cluster);
    const res = await request(server).get(preflightUrl);
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('virtualMachines');
    expect(res.body.canProceed).toBe(true);
  });

  it('binds them: a VMI that stops being migratable after the acknowledgement is a 409 with the new pre-flight', async () => {
    const cluster = rack();
    const web = vmi('web', 'LiveMigrate', true);
    cluster.storage = { claims: [], volumes: [], virtualMachines: [web] };
    const server = await backend(cluster);
    const p = (await request(server).get(preflightUrl)).body;
    expect(p.virtualMachines.map((v: any) => v.action)).toEqual(['migrate']);
    web.status.conditions[0].status = 'False';
    const res = await request(server)
      .post(drainUrl)
      .send({ reason: REASON, preflightToken: p.token });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/impact changed/);
    expect(
      res.body.preflight.virtualMachines.map((v: any) => v.action),
    ).toEqual(['blocks']);
    expect(cluster.created).toEqual([]);

    // Acknowledged again as it now is: accepted.
    const again = await request(server)
      .post(drainUrl)
      .send({ reason: REASON, preflightToken: res.body.preflight.token });
    expect(again.status).toBe(201);
    expect(cluster.created).toHaveLength(1);
  });
});
