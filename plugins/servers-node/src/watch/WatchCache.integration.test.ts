/*
 * The watch cache against the real kube-apiserver of the simulated rack: it
 * follows creates, updates and deletes through its watch; it reconnects
 * after the connection is cut and catches up; after an apiserver restart
 * it gets 410 for its old resourceVersion and relists, emitting deletes for
 * objects removed meanwhile; it honours field selectors; and a
 * ServiceAccount without RBAC keeps retrying until it is granted access.
 */
import { KubeConfig } from '@kubernetes/client-node';
import {
  startTestRack,
  type TestRack,
  eventually,
} from '@rackside/rack-testing';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { CoreClient, NodeObject, PodObject } from '../clients/core';
import { ResourceClient } from '../clients/ResourceClient';
import { objectKey, RawKubeObject } from '../clients/types';
import { createWatchCache, WatchCache, WatchCacheOptions } from './WatchCache';

jest.setTimeout(90_000);

const LABEL = 'rackside.dev/test-watch';

async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
) {
  await eventually(what, check, { timeoutMs });
}

/** A loopback TCP proxy in front of the apiserver that can be cut and restored. */
async function tcpProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer(client => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    /** Resets every open connection and refuses new ones. */
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      cut = false;
    },
    close: () =>
      new Promise<void>(r => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

function viaServer(kc: KubeConfig, server: string): KubeConfig {
  const out = new KubeConfig();
  out.loadFromOptions({
    clusters: kc.clusters.map(c => ({ ...c, server })),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return out;
}

/** Running (a zombie waiting for its parent to reap it counts as gone). */
function isAlive(pid: number) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL if it is still there after 10 s. */
async function terminate(pid: number) {
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (isAlive(pid) && Date.now() < deadline) {
    await new Promise(r => setTimeout(r, 50));
  }
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  await waitFor(`pid ${pid} to exit`, () => !isAlive(pid));
}

describe('WatchCache against a real apiserver', () => {
  let rack: TestRack;
  let admin: KubeConfig;
  let core: CoreClient;
  let restartedApiserver: number | undefined;
  const caches: Array<WatchCache<any>> = [];
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    rack = await startTestRack({
      withTalos: false,
      withRedfish: false,
      withWorkloads: false,
    });
    admin = rack.adminKubeConfig();
    core = new CoreClient(admin);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(caches.map(c => c.stop()));
    for (const cleanup of cleanups) await cleanup();
    if (restartedApiserver && isAlive(restartedApiserver)) {
      await terminate(restartedApiserver);
    }
    await rack?.stop();
  }, 60_000);

  function watchNodes(
    kubeConfig: KubeConfig,
    extra: Partial<WatchCacheOptions<NodeObject>> = {},
  ) {
    const cache = createWatchCache<NodeObject>({
      kubeConfig,
      path: '/api/v1/nodes',
      labelSelector: `${LABEL}=yes`,
      backoff: { initialMs: 100, maxMs: 1000 },
      changedDelayMs: 20,
      ...extra,
    });
    caches.push(cache);
    const events: string[] = [];
    cache.on('add', n => events.push(`add ${n.metadata?.name}`));
    cache.on('update', n => events.push(`update ${n.metadata?.name}`));
    cache.on('delete', n => events.push(`delete ${n.metadata?.name}`));
    return { cache, events };
  }

  const createNode = (name: string) =>
    core.nodes.create({ metadata: { name, labels: { [LABEL]: 'yes' } } });
  const deleteNode = (name: string) => core.nodes.delete(name);
  const names = (cache: WatchCache<NodeObject>) =>
    cache
      .list()
      .map(n => n.metadata?.name)
      .sort();

  it('sees nodes created, updated and deleted through its watch', async () => {
    await createNode('wc-a');
    const { cache, events } = watchNodes(admin);
    const changed: string[][] = [];
    cache.on('changed', keys => changed.push([...keys]));
    await cache.synced;
    expect(names(cache)).toEqual(['wc-a']);
    expect(cache.get('wc-a')?.kind).toBe('Node');
    expect(cache.get('wc-a')?.metadata).not.toHaveProperty('managedFields');
    await waitFor('watching', () => cache.status().watching);

    await createNode('wc-b');
    await core.nodes.patch('wc-a', { spec: { unschedulable: true } });
    await deleteNode('wc-b');
    await waitFor('events', () => events.length === 4);
    expect(events).toEqual([
      'add wc-a',
      'add wc-b',
      'update wc-a',
      'delete wc-b',
    ]);
    expect(cache.get('wc-a')?.spec?.unschedulable).toBe(true);
    expect(names(cache)).toEqual(['wc-a']);
    await waitFor('changed', () => changed.flat().includes('wc-b'));
    // Everything after the first list came through the watch.
    expect(cache.status()).toMatchObject({ lists: 1, watches: 1, failures: 0 });
    await deleteNode('wc-a');
    await waitFor('wc-a gone', () => cache.size === 0);
  });

  it('reconnects after its connection is cut and catches up by watch', async () => {
    const proxy = await tcpProxy(new URL(rack.info.server));
    cleanups.push(proxy.close);
    await createNode('wc-keep');
    await createNode('wc-drop');
    const { cache, events } = watchNodes(viaServer(admin, proxy.url));
    await cache.synced;
    await waitFor('watching', () => cache.status().watching);
    events.length = 0;

    proxy.cut();
    await waitFor('noticed', () => !cache.status().watching);
    await createNode('wc-new');
    await core.nodes.patch('wc-keep', {
      metadata: { annotations: { touched: 'yes' } },
    });
    await deleteNode('wc-drop');
    const watchesBefore = cache.status().watches;
    await new Promise(r => setTimeout(r, 2000));
    // Backoff, not a tight loop: a handful of attempts in 2 s.
    const attempts = cache.status().watches - watchesBefore;
    expect(attempts).toBeLessThanOrEqual(6);
    expect(cache.status().failures).toBeGreaterThan(0);
    expect(names(cache)).toEqual(['wc-drop', 'wc-keep']);

    proxy.restore();
    await waitFor('caught up', () => names(cache).join() === 'wc-keep,wc-new');
    expect(events.sort()).toEqual([
      'add wc-new',
      'delete wc-drop',
      'update wc-keep',
    ]);
    expect(cache.get('wc-keep')?.metadata?.annotations?.touched).toBe('yes');
    // The apiserver still had the history: resumed by watch, no relist.
    expect(cache.status().lists).toBe(1);
    await waitFor('healthy', () => cache.status().failures === 0);
    await cache.stop();
    await deleteNode('wc-keep');
    await deleteNode('wc-new');
  });

  it('relists after an apiserver restart (410) and emits deletes for what vanished', async () => {
    const proxy = await tcpProxy(new URL(rack.info.server));
    cleanups.push(proxy.close);
    await createNode('wc-r1');
    await createNode('wc-r2');
    // Cache A loses its connection before the changes; cache B stays
    // connected directly and lives through the restart.
    const a = watchNodes(viaServer(admin, proxy.url));
    const b = watchNodes(admin);
    await Promise.all([a.cache.synced, b.cache.synced]);
    await waitFor('watching', () => a.cache.status().watching);
    a.events.length = 0;

    proxy.cut();
    await waitFor('A noticed', () => !a.cache.status().watching);
    await deleteNode('wc-r1');
    await createNode('wc-r3');
    await waitFor('B saw it', () => names(b.cache).join() === 'wc-r2,wc-r3');

    // Restart kube-apiserver with its own argv: its watch cache starts
    // empty, so a resourceVersion from before the restart is too old.
    const pidFile = path.join(rack.info.dir, 'pids', 'kube-apiserver.pid');
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim().split(/\s+/)[0]);
    const argv = fs
      .readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter(Boolean);
    const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
    await terminate(pid);
    await waitFor('B noticed', () => !b.cache.status().watching);
    const log = fs.openSync(
      path.join(rack.info.dir, 'logs', 'kube-apiserver.log'),
      'a',
    );
    const child = spawn(argv[0], argv.slice(1), {
      cwd,
      detached: true,
      stdio: ['ignore', log, log],
    });
    fs.closeSync(log);
    child.unref();
    restartedApiserver = child.pid!;
    // So `rack down` stops it too if this test dies before afterAll.
    fs.writeFileSync(
      path.join(rack.info.dir, 'pids', 'kube-apiserver-restarted.pid'),
      `${child.pid} ${argv[0]}\n`,
    );
    await waitFor(
      'apiserver back',
      async () =>
        (await core.nodes.list({ labelSelector: `${LABEL}=yes` })) !==
        undefined,
      60_000,
    );

    proxy.restore();
    await waitFor('A relisted', () => a.cache.status().lists === 2);
    await waitFor('A caught up', () => names(a.cache).join() === 'wc-r2,wc-r3');
    expect(a.events.sort()).toEqual(['add wc-r3', 'delete wc-r1']);

    // Both caches follow changes made after the restart.
    await createNode('wc-r4');
    await waitFor('A sees wc-r4', () => a.cache.get('wc-r4') !== undefined);
    await waitFor('B sees wc-r4', () => b.cache.get('wc-r4') !== undefined);
    expect(names(b.cache)).toEqual(['wc-r2', 'wc-r3', 'wc-r4']);
    await waitFor('B healthy', () => b.cache.status().watching);
    for (const n of ['wc-r2', 'wc-r3', 'wc-r4']) await deleteNode(n);
    await waitFor('A empty', () => a.cache.size === 0);
    await waitFor('B empty', () => b.cache.size === 0);
  });

  it('watches only the pods of one node with a field selector, stored through transform', async () => {
    for (const n of ['wc-n1', 'wc-n2']) await createNode(n);
    const pod = (name: string, nodeName: string) => ({
      metadata: { name, namespace: 'default' },
      spec: {
        nodeName,
        containers: [{ name: 'c', image: 'registry.invalid/none' }],
      },
    });
    await core.pods.create(pod('wc-p1', 'wc-n1'));
    await core.pods.create(pod('wc-p2', 'wc-n2'));
    type SlimPod = {
      metadata?: RawKubeObject['metadata'];
      nodeName?: string;
    };
    const cache = createWatchCache<SlimPod>({
      kubeConfig: admin,
      path: '/api/v1/pods',
      fieldSelector: 'spec.nodeName=wc-n1',
      transform: (p: RawKubeObject) => ({
        metadata: {
          name: p.metadata?.name,
          namespace: p.metadata?.namespace,
          resourceVersion: p.metadata?.resourceVersion,
        },
        nodeName: (p as PodObject).spec?.nodeName,
      }),
    });
    caches.push(cache);
    await cache.synced;
    expect(cache.list()).toEqual([
      {
        metadata: {
          name: 'wc-p1',
          namespace: 'default',
          resourceVersion: expect.any(String),
        },
        nodeName: 'wc-n1',
      },
    ]);
    await waitFor('watching', () => cache.status().watching);
    await core.pods.create(pod('wc-p3', 'wc-n1'));
    await core.pods.create(pod('wc-p4', 'wc-n2'));
    await waitFor('p3', () => cache.get('default/wc-p3') !== undefined);
    await core.pods.delete('wc-p1', {
      namespace: 'default',
      gracePeriodSeconds: 0,
    });
    await waitFor('p1 gone', () => cache.get('default/wc-p1') === undefined);
    expect(cache.list().map(objectKey)).toEqual(['default/wc-p3']);
    for (const p of ['wc-p2', 'wc-p3', 'wc-p4']) {
      await core.pods.delete(p, {
        namespace: 'default',
        gracePeriodSeconds: 0,
      });
    }
    for (const n of ['wc-n1', 'wc-n2']) await deleteNode(n);
  });

  it('retries a forbidden list as a ServiceAccount and syncs once RBAC allows it', async () => {
    const sa = 'wc-reader';
    await core.nodes.http.request({
      method: 'POST',
      path: '/api/v1/namespaces/default/serviceaccounts',
      body: { metadata: { name: sa } },
    });
    // TokenRequest directly: rack.serviceAccountToken() uses a dynamic
    // import() that Jest refuses without --experimental-vm-modules.
    const { status: minted } = await core.nodes.http.request<{
      status: { token: string };
    }>({
      method: 'POST',
      path: `/api/v1/namespaces/default/serviceaccounts/${sa}/token`,
      body: { spec: { expirationSeconds: 3600 } },
    });
    const token = minted.token;
    const { cache } = watchNodes(rack.tokenKubeConfig(token), {
      backoff: { initialMs: 100, maxMs: 400 },
    });
    await createNode('wc-rbac');
    await waitFor('forbidden', () => cache.status().failures >= 2);
    expect(cache.hasSynced()).toBe(false);
    expect(cache.status().lastError).toMatch(/forbidden/);

    const rbac = (plural: string, kind: string) =>
      new ResourceClient<RawKubeObject>(admin, {
        group: 'rbac.authorization.k8s.io',
        version: 'v1',
        plural,
        kind,
        namespaced: false,
      });
    await rbac('clusterroles', 'ClusterRole').create({
      metadata: { name: 'wc-node-reader' },
      rules: [
        { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
      ],
    });
    await rbac('clusterrolebindings', 'ClusterRoleBinding').create({
      metadata: { name: 'wc-node-reader' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'wc-node-reader',
      },
      subjects: [{ kind: 'ServiceAccount', name: sa, namespace: 'default' }],
    });
    await cache.synced;
    expect(names(cache)).toEqual(['wc-rbac']);
    await waitFor('healthy', () => cache.status().failures === 0);
    expect(cache.status().watching).toBe(true);
    await deleteNode('wc-rbac');
    await waitFor('deleted', () => cache.size === 0);
  });
});
