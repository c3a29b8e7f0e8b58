/*
 * The servers routes against the real apiserver of the simulated rack, with
 * the Backstage identity of e2e/rack/demo/backstage-access.yaml (no write on
 * Nodes): reads come from watch caches, a cordon writes a NodeMaintenance.
 */
import { createServiceFactory } from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { signalsServiceRef } from '@backstage/plugin-signals-node';
import { KubeHttp } from '@rackside/plugin-servers-node';
import {
  REPO_ROOT,
  startTestRack,
  type TestRack,
  eventually,
} from '@rackside/rack-testing';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { parseAllDocuments } from 'yaml';
import { serversPlugin } from './plugin';

jest.setTimeout(60_000);

type Obj = Record<string, any>;

let rack: TestRack | undefined;
let admin: KubeHttp;
let server: Parameters<typeof request>[0];
const REASON = 'integration test: replace the PSU';

function docsOf(file: string): Obj[] {
  return parseAllDocuments(fs.readFileSync(file, 'utf8'))
    .map(doc => doc.toJS() as Obj)
    .filter(Boolean);
}

function collectionPath(obj: Obj): string {
  const [group, version] = obj.apiVersion.includes('/')
    ? obj.apiVersion.split('/')
    : ['', obj.apiVersion];
  const root = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const ns = obj.metadata.namespace
    ? `/namespaces/${obj.metadata.namespace}`
    : '';
  return `${root}${ns}/${obj.kind.toLowerCase()}s`;
}

async function apply(obj: Obj) {
  await admin.request({
    method: 'PATCH',
    path: `${collectionPath(obj)}/${obj.metadata.name}`,
    query: { fieldManager: 'rackside-backend-test', force: true },
    body: obj,
    contentType: 'application/apply-patch+yaml',
  });
}

function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  return eventually(what, fn, { timeoutMs, intervalMs: 250 });
}

async function waitEstablished(http: KubeHttp, name: string) {
  await waitFor(`CRD ${name} established`, async () => {
    const got: Obj = await http.request({
      method: 'GET',
      path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
    });
    return got.status?.conditions?.some(
      (c: Obj) => c.type === 'Established' && c.status === 'True',
    )
      ? true
      : undefined;
  });
}

/**
 * A TokenRequest for the ServiceAccount. (`rack.serviceAccountToken` uses a
 * dynamic import that Jest refuses without --experimental-vm-modules.)
 */
async function mintToken(namespace: string, name: string): Promise<string> {
  const res: Obj = await admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    },
  });
  return res.status.token;
}

beforeAll(async () => {
  rack = await startTestRack({ withTalos: false, withRedfish: false });
  admin = new KubeHttp(rack.adminKubeConfig());
  const crdDir = path.join(REPO_ROOT, 'crds');
  const crds = fs
    .readdirSync(crdDir)
    .filter(f => f.endsWith('.yaml'))
    .flatMap(f => docsOf(path.join(crdDir, f)));
  for (const crd of crds) await apply(crd);
  await Promise.all(crds.map(crd => waitEstablished(admin, crd.metadata.name)));
  for (const obj of docsOf(
    path.join(REPO_ROOT, 'e2e/rack/demo/backstage-access.yaml'),
  )) {
    await apply(obj);
  }
  const token = await mintToken('rackside-system', 'rackside-backstage');
  const backend = await startTestBackend({
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
            clusters: [
              {
                name: 'plant-a',
                title: 'Plant A',
                url: rack.info.server,
                caFile: rack.info.caFile,
                serviceAccountToken: token,
              },
            ],
          },
        },
      }),
    ],
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
});
