/*
 * ResourceClient, CoreClient and RacksideClient against the real
 * kube-apiserver of the simulated rack: every verb, the status subresource,
 * optimistic concurrency, and the mapping of the apiserver's refusals to
 * Backstage errors (400/403/404/409) with the apiserver's own message.
 */
import {
  ConflictError,
  InputError,
  NotAllowedError,
  NotFoundError,
} from '@backstage/errors';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  racksideCustomResourceDefinitions,
  RACKSIDE_API_VERSION,
  RACKSIDE_RESOURCES,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import {
  startTestRack,
  type TestRack,
  eventually,
} from '@rackside/rack-testing';
import { createWatchCache } from '../watch/WatchCache';
import { CoreClient } from './core';
import { kubeErrorStatus } from './errors';
import { RacksideClient } from './rackside';
import { ResourceClient } from './ResourceClient';
import { RawKubeObject, resourcePath } from './types';

jest.setTimeout(60_000);

async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
) {
  await eventually(what, check, { timeoutMs });
}

const widgets = {
  group: 'test.rackside.dev',
  version: 'v1',
  plural: 'widgets',
  kind: 'Widget',
  namespaced: false,
};

interface Widget {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    generation?: number;
  };
  spec?: { size?: number; color?: string; note?: string };
  status?: { phase?: string };
}

const crds = (kc: KubeConfig) =>
  new ResourceClient<RawKubeObject>(kc, {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
  });

async function installCrd(kc: KubeConfig, crd: RawKubeObject) {
  const client = crds(kc);
  await client.create(crd);
  await waitFor(`${crd.metadata?.name} established`, async () => {
    const got = await client.get(crd.metadata!.name!);
    return (got.status?.conditions ?? []).some(
      (c: { type: string; status: string }) =>
        c.type === 'Established' && c.status === 'True',
    );
  });
}

describe('clients against a real apiserver', () => {
  let rack: TestRack;
  let admin: KubeConfig;
  let client: ResourceClient<Widget>;
  let core: CoreClient;

  beforeAll(async () => {
    rack = await startTestRack({
      withTalos: false,
      withRedfish: false,
      withWorkloads: false,
    });
    admin = rack.adminKubeConfig();
    core = new CoreClient(admin);
    await installCrd(admin, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.test.rackside.dev' },
      spec: {
        group: 'test.rackside.dev',
        scope: 'Cluster',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: {
                      size: { type: 'integer', minimum: 0 },
                      color: {
                        type: 'string',
                        'x-kubernetes-validations': [
                          {
                            rule: 'self == oldSelf',
                            message: 'color is immutable',
                          },
                        ],
                      },
                      note: { type: 'string' },
                    },
                  },
                  status: {
                    type: 'object',
                    properties: { phase: { type: 'string' } },
                  },
                },
              },
            },
          },
        ],
      },
    });
    client = new ResourceClient<Widget>(admin, widgets, {
      fieldManager: 'rackside-test',
    });
    // The CRD is Established a moment before its endpoint serves.
    await waitFor('widgets served', async () => !!(await client.list()));
  }, 180_000);

  afterAll(async () => {
    await rack?.stop();
  }, 60_000);

  it('creates, reads, lists, updates and deletes', async () => {
    const created = await client.create({
      metadata: { name: 'w1', labels: { team: 'a' } },
      spec: { size: 1, color: 'red' },
    });
    expect(created).toMatchObject({
      apiVersion: 'test.rackside.dev/v1',
      kind: 'Widget',
      metadata: { name: 'w1', generation: 1 },
      spec: { size: 1, color: 'red' },
    });
    await client.create({ metadata: { name: 'w2', labels: { team: 'b' } } });

    const got = await client.get('w1');
    expect(got.metadata?.resourceVersion).toBe(
      created.metadata?.resourceVersion,
    );
    const { items, resourceVersion } = await client.list({
      labelSelector: 'team=a',
    });
    expect(items.map(i => [i.kind, i.metadata?.name])).toEqual([
      ['Widget', 'w1'],
    ]);
    expect(resourceVersion).toMatch(/^\d+$/);
    expect((await client.list({ pageSize: 1 })).items).toHaveLength(2);

    const updated = await client.update({
      ...got,
      spec: { ...got.spec, size: 2 },
    });
    expect(updated.spec?.size).toBe(2);
    // Replaying the old resourceVersion is a conflict.
    const stale = await client
      .update({ ...got, spec: { ...got.spec, size: 3 } })
      .catch(e => e);
    expect(stale).toBeInstanceOf(ConflictError);
    expect(stale.message).toMatch(/the object has been modified/);
    expect(kubeErrorStatus(stale)).toMatchObject({
      code: 409,
      reason: 'Conflict',
    });

    await client.delete('w1');
    await client.delete('w2');
    expect(await client.find('w1')).toBeUndefined();
  });

  it('patches with merge patch, JSON patch and server-side apply', async () => {
    await client.create({
      metadata: { name: 'p1' },
      spec: { size: 1, note: 'x' },
    });
    const merged = await client.patch('p1', { spec: { size: 5, note: null } });
    expect(merged.spec).toEqual({ size: 5 });

    const jsonPatched = await client.patch('p1', [
      { op: 'test', path: '/spec/size', value: 5 },
      { op: 'replace', path: '/spec/size', value: 6 },
    ]);
    expect(jsonPatched.spec?.size).toBe(6);
    // A failed test operation refuses the whole patch.
    const failedTest = await client
      .patch('p1', [
        { op: 'test', path: '/metadata/resourceVersion', value: '1' },
        { op: 'replace', path: '/spec/size', value: 7 },
      ])
      .catch(e => e);
    expect([InputError, ConflictError].some(t => failedTest instanceof t)).toBe(
      true,
    );
    expect((await client.get('p1')).spec?.size).toBe(6);

    const applied = await client.apply(
      {
        apiVersion: 'test.rackside.dev/v1',
        kind: 'Widget',
        metadata: { name: 'p2' },
        spec: { size: 9 },
      },
      { fieldManager: 'applier' },
    );
    expect(applied.spec?.size).toBe(9);
    // Another manager changing an applied field conflicts without force.
    const contested = await client
      .apply({ metadata: { name: 'p2' }, spec: { size: 10 } })
      .catch(e => e);
    expect(contested).toBeInstanceOf(ConflictError);
    const forced = await client.apply(
      { metadata: { name: 'p2' }, spec: { size: 10 } },
      { force: true },
    );
    expect(forced.spec?.size).toBe(10);
    await client.delete('p1');
    await client.delete('p2');
  });

  it('writes status only through the status subresource', async () => {
    await client.create({ metadata: { name: 's1' }, spec: { size: 1 } });
    const ignored = await client.patch('s1', { status: { phase: 'Ready' } });
    expect(ignored.status).toBeUndefined();

    const patched = await client.patchStatus('s1', {
      status: { phase: 'Ready' },
    });
    expect(patched.status?.phase).toBe('Ready');
    expect(patched.metadata?.generation).toBe(1);

    const current = await client.get('s1');
    const replaced = await client.updateStatus({
      ...current,
      spec: { size: 99 },
      status: { phase: 'Done' },
    });
    expect(replaced.status?.phase).toBe('Done');
    expect(replaced.spec?.size).toBe(1);
    await client.delete('s1');
  });

  it('maps refusals to Backstage errors with the apiserver message', async () => {
    await client.create({ metadata: { name: 'e1' }, spec: { color: 'red' } });

    const duplicate = await client
      .create({ metadata: { name: 'e1' } })
      .catch(e => e);
    expect(duplicate).toBeInstanceOf(ConflictError);
    expect(duplicate.message).toBe(
      'widgets.test.rackside.dev "e1" already exists',
    );

    const invalid = await client
      .create({ metadata: { name: 'e2' }, spec: { size: -1 } })
      .catch(e => e);
    expect(invalid).toBeInstanceOf(InputError);
    expect(invalid.message).toMatch(
      /spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0/,
    );

    const immutable = await client
      .patch('e1', { spec: { color: 'blue' } })
      .catch(e => e);
    expect(immutable).toBeInstanceOf(InputError);
    expect(immutable.message).toMatch(/color is immutable/);

    const missing = await client.get('nope').catch(e => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.message).toBe('widgets.test.rackside.dev "nope" not found');
    await expect(client.delete('nope')).rejects.toBeInstanceOf(NotFoundError);
    await client.delete('nope', { ignoreNotFound: true });

    const badPatch = await client
      .patch('e1', [{ op: 'replace', path: '/spec/nothere/deep', value: 1 }])
      .catch(e => e);
    expect(badPatch).toBeInstanceOf(InputError);

    // A ServiceAccount without RBAC.
    await core.nodes.http.request({
      method: 'POST',
      path: '/api/v1/namespaces/default/serviceaccounts',
      body: { metadata: { name: 'rc-nobody' } },
    });
    const { status: minted } = await core.nodes.http.request<{
      status: { token: string };
    }>({
      method: 'POST',
      path: '/api/v1/namespaces/default/serviceaccounts/rc-nobody/token',
      body: { spec: { expirationSeconds: 600 } },
    });
    const nobody = new ResourceClient<Widget>(
      rack.tokenKubeConfig(minted.token),
      widgets,
    );
    const forbidden = await nobody.get('e1').catch(e => e);
    expect(forbidden).toBeInstanceOf(NotAllowedError);
    expect(forbidden.message).toBe(
      'widgets.test.rackside.dev "e1" is forbidden: User "system:serviceaccount:default:rc-nobody" cannot get resource "widgets" in API group "test.rackside.dev" at the cluster scope',
    );
    await client.delete('e1');
  });

  it('lists pods by node, evicts through PodDisruptionBudgets and records events', async () => {
    const node = 'worker-1';
    await core.nodes.http.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { metadata: { name: 'rc-evict' } },
    });
    const pod = (name: string, app: string) => ({
      metadata: { name, namespace: 'rc-evict', labels: { app } },
      spec: {
        nodeName: node,
        containers: [{ name: 'c', image: 'registry.invalid/none' }],
      },
    });
    await core.pods.create(pod('guarded', 'guarded'));
    await core.pods.create(pod('free', 'free'));
    await core.podDisruptionBudgets.create({
      metadata: { name: 'guarded', namespace: 'rc-evict' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } },
    });
    // kwok makes the pods Running and Ready; the disruption controller then
    // counts the guarded one as healthy and allows no disruption.
    await waitFor('pdb observed', async () => {
      const pdb = await core.podDisruptionBudgets.get('guarded', {
        namespace: 'rc-evict',
      });
      return (
        pdb.status?.currentHealthy === 1 && pdb.status?.disruptionsAllowed === 0
      );
    });

    const onNode = await core.podsOnNode(node);
    expect(
      onNode
        .filter(p => p.metadata?.namespace === 'rc-evict')
        .map(p => p.metadata?.name)
        .sort(),
    ).toEqual(['free', 'guarded']);

    const blocked = await core.evictPod('rc-evict', 'guarded');
    expect(blocked).toMatchObject({ outcome: 'blocked' });
    expect(JSON.stringify(blocked)).toMatch(/disruption budget/);
    expect(await core.evictPod('rc-evict', 'free')).toEqual({
      outcome: 'evicted',
    });
    expect(await core.evictPod('rc-evict', 'never-was')).toEqual({
      outcome: 'gone',
    });

    const target = await core.nodes.get(node);
    const event = await core.recordEvent(
      target,
      {
        type: 'Normal',
        reason: 'RacksideTest',
        message: 'hello from the test',
      },
      { component: 'rackside-test', instance: 'jest' },
    );
    expect(event.metadata?.namespace).toBe('default');
    const events = await core.events.list({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${node},reason=RacksideTest`,
    });
    expect(events.items.map(e => [e.involvedObject.kind, e.message])).toEqual([
      ['Node', 'hello from the test'],
    ]);
  });

  it('drives Rackside kinds with RacksideClient and watches them', async () => {
    for (const crd of racksideCustomResourceDefinitions()) {
      await installCrd(admin, crd as unknown as RawKubeObject);
    }
    const rackside = new RacksideClient(admin);
    await waitFor('nodemaintenances served', async () =>
      Array.isArray((await rackside.nodeMaintenances.list()).items),
    );
    const cache = createWatchCache<NodeMaintenance>({
      kubeConfig: admin,
      path: resourcePath(RACKSIDE_RESOURCES.NodeMaintenance),
    });
    try {
      await cache.synced;
      const created = await rackside.nodeMaintenances.create({
        apiVersion: RACKSIDE_API_VERSION,
        kind: 'NodeMaintenance',
        metadata: { name: 'worker-2-cordon' },
        spec: {
          nodeName: 'worker-2',
          intent: 'cordon',
          reason: 'Replace a fan',
          requestedBy: 'user:default/jane',
        },
      });
      expect(created.spec.nodeName).toBe('worker-2');
      await waitFor('cached', () => cache.get('worker-2-cordon') !== undefined);

      // CEL keeps the node immutable: the apiserver's message comes through.
      const moved = await rackside.nodeMaintenances
        .patch('worker-2-cordon', { spec: { nodeName: 'worker-3' } })
        .catch(e => e);
      expect(moved).toBeInstanceOf(InputError);
      expect(moved.message).toMatch(/nodeName/);

      const updated = await rackside.nodeMaintenances.patchStatus(
        'worker-2-cordon',
        { status: { phase: 'Cordoned' } },
      );
      expect(updated.status?.phase).toBe('Cordoned');
      await waitFor(
        'status cached',
        () => cache.get('worker-2-cordon')?.status?.phase === 'Cordoned',
      );
      await rackside.nodeMaintenances.delete('worker-2-cordon');
      await waitFor('gone', () => cache.size === 0);
    } finally {
      await cache.stop();
    }
  });
});
