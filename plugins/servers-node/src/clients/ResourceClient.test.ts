import {
  ConflictError,
  InputError,
  NotAllowedError,
  NotFoundError,
  ServiceUnavailableError,
} from '@backstage/errors';
import { KubeConfig } from '@kubernetes/client-node';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreClient } from './core';
import { KubeApiError, kubeErrorStatus, toBackstageError } from './errors';
import { KubeHttp, StreamIdleError } from './kubeHttp';
import { ResourceClient } from './ResourceClient';
import { objectKey, resourcePath } from './types';

interface Seen {
  method: string;
  url: string;
  contentType?: string;
  authorization?: string;
  body?: any;
}

type Reply = (
  req: Seen,
  res: http.ServerResponse,
) => void | { status?: number; body?: unknown };

/** A scripted HTTP server standing in for the apiserver. */
async function fakeServer(reply: Reply) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', c => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const entry: Seen = {
        method: req.method!,
        url: req.url!,
        contentType: req.headers['content-type'],
        authorization: req.headers.authorization,
        body: text ? JSON.parse(text) : undefined,
      };
      seen.push(entry);
      const answer = reply(entry, res);
      if (answer) {
        res.writeHead(answer.status ?? 200, {
          'Content-Type': 'application/json',
        });
        res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
      }
    });
  });
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true },
    ],
    users: [{ name: 'u', token: 'tok' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return {
    kc,
    seen,
    close: () =>
      new Promise<void>(r => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const widgets = {
  group: 'test.rackside.dev',
  version: 'v1',
  plural: 'widgets',
  kind: 'Widget',
  namespaced: false,
};
const gadgets = {
  ...widgets,
  plural: 'gadgets',
  kind: 'Gadget',
  namespaced: true,
};

type Widget = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  spec?: { size?: number; color?: string };
  status?: { phase?: string };
};

function status(code: number, reason: string, message: string) {
  return {
    status: code,
    body: {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code,
      reason,
      message,
    },
  };
}

describe('resourcePath and objectKey', () => {
  it('builds core, grouped, namespaced and all-namespaces paths', () => {
    expect(resourcePath(widgets)).toBe('/apis/test.rackside.dev/v1/widgets');
    expect(resourcePath(gadgets, 'ns')).toBe(
      '/apis/test.rackside.dev/v1/namespaces/ns/gadgets',
    );
    expect(resourcePath(gadgets)).toBe('/apis/test.rackside.dev/v1/gadgets');
    expect(
      resourcePath({ ...widgets, group: '', version: 'v1', plural: 'nodes' }),
    ).toBe('/api/v1/nodes');
    expect(() => resourcePath(widgets, 'ns')).toThrow(/cluster-scoped/);
    expect(objectKey({ metadata: { name: 'a', namespace: 'n' } })).toBe('n/a');
    expect(objectKey({ metadata: { name: 'a' } })).toBe('a');
  });
});

describe('ResourceClient', () => {
  let server: Awaited<ReturnType<typeof fakeServer>> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('sends each verb to the right path with the right content type', async () => {
    server = await fakeServer(req => ({
      status: req.method === 'POST' ? 201 : 200,
      body: { metadata: { name: 'w1', resourceVersion: '5' } },
    }));
    const client = new ResourceClient<Widget>(server.kc, widgets, {
      fieldManager: 'rackside-test',
    });
    await client.get('w1');
    await client.create({ metadata: { name: 'w1' }, spec: { size: 1 } });
    await client.update({ metadata: { name: 'w1', resourceVersion: '5' } });
    await client.updateStatus({
      metadata: { name: 'w1' },
      status: { phase: 'Ready' },
    });
    await client.patch('w1', { spec: { color: null } });
    await client.patch('w1', [{ op: 'replace', path: '/spec/size', value: 2 }]);
    await client.patchStatus('w1', { status: { phase: 'Done' } });
    await client.patch('w1', { spec: { size: 3 } }, { type: 'strategic' });
    await client.apply({ metadata: { name: 'w1' } }, { force: true });
    await client.delete('w1', { propagationPolicy: 'Foreground' });
    await client.create({ metadata: { name: 'w2' } }, { dryRun: true });

    const base = '/apis/test.rackside.dev/v1/widgets';
    expect(
      server.seen.map(s => [
        s.method,
        decodeURIComponent(s.url),
        s.contentType,
      ]),
    ).toEqual([
      ['GET', `${base}/w1`, undefined],
      ['POST', `${base}?fieldManager=rackside-test`, 'application/json'],
      ['PUT', `${base}/w1?fieldManager=rackside-test`, 'application/json'],
      [
        'PUT',
        `${base}/w1/status?fieldManager=rackside-test`,
        'application/json',
      ],
      [
        'PATCH',
        `${base}/w1?fieldManager=rackside-test`,
        'application/merge-patch+json',
      ],
      [
        'PATCH',
        `${base}/w1?fieldManager=rackside-test`,
        'application/json-patch+json',
      ],
      [
        'PATCH',
        `${base}/w1/status?fieldManager=rackside-test`,
        'application/merge-patch+json',
      ],
      [
        'PATCH',
        `${base}/w1?fieldManager=rackside-test`,
        'application/strategic-merge-patch+json',
      ],
      [
        'PATCH',
        `${base}/w1?fieldManager=rackside-test&force=true`,
        'application/apply-patch+yaml',
      ],
      ['DELETE', `${base}/w1`, 'application/json'],
      [
        'POST',
        `${base}?fieldManager=rackside-test&dryRun=All`,
        'application/json',
      ],
    ]);
    expect(server.seen.every(s => s.authorization === 'Bearer tok')).toBe(true);
    expect(server.seen[1].body).toEqual({
      apiVersion: 'test.rackside.dev/v1',
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { size: 1 },
    });
    expect(server.seen[4].body).toEqual({ spec: { color: null } });
    expect(server.seen[9].body).toMatchObject({
      kind: 'DeleteOptions',
      propagationPolicy: 'Foreground',
    });
  });

  it('requires a namespace for namespaced kinds and takes it from the object', async () => {
    server = await fakeServer(() => ({ body: { items: [], metadata: {} } }));
    const client = new ResourceClient<Widget>(server.kc, gadgets);
    await expect(client.get('g')).rejects.toThrow(/namespaced/);
    await client.create({ metadata: { name: 'g', namespace: 'ns1' } });
    await client.list();
    await client.list({ namespace: 'ns2', labelSelector: 'a=b' });
    expect(server.seen.map(s => decodeURIComponent(s.url))).toEqual([
      '/apis/test.rackside.dev/v1/namespaces/ns1/gadgets?fieldManager=rackside',
      '/apis/test.rackside.dev/v1/gadgets?limit=500',
      '/apis/test.rackside.dev/v1/namespaces/ns2/gadgets?labelSelector=a=b&limit=500',
    ]);
  });

  it('follows list pagination and fills in kind and apiVersion', async () => {
    server = await fakeServer(req => {
      const url = new URL(req.url, 'http://x');
      const cont = url.searchParams.get('continue');
      return {
        body: {
          kind: 'WidgetList',
          metadata: {
            resourceVersion: cont ? '11' : '10',
            continue: cont ? '' : 'next',
          },
          items: [{ metadata: { name: cont ? 'b' : 'a' } }],
        },
      };
    });
    const client = new ResourceClient<Widget>(server.kc, widgets);
    const { items, resourceVersion } = await client.list({ pageSize: 1 });
    expect(items).toEqual([
      {
        apiVersion: 'test.rackside.dev/v1',
        kind: 'Widget',
        metadata: { name: 'a' },
      },
      {
        apiVersion: 'test.rackside.dev/v1',
        kind: 'Widget',
        metadata: { name: 'b' },
      },
    ]);
    expect(resourceVersion).toBe('11');
    expect(server.seen.map(s => s.url)).toEqual([
      '/apis/test.rackside.dev/v1/widgets?limit=1',
      '/apis/test.rackside.dev/v1/widgets?limit=1&continue=next',
    ]);
  });

  it('maps apiserver errors to Backstage errors with the apiserver message', async () => {
    const answers: Record<string, ReturnType<typeof status>> = {
      nf: status(404, 'NotFound', 'widgets.test.rackside.dev "nf" not found'),
      cf: status(409, 'Conflict', 'the object has been modified'),
      inv: status(422, 'Invalid', 'spec.size: Invalid value: -1'),
      bad: status(400, 'BadRequest', 'bad patch'),
      no: status(403, 'Forbidden', 'widgets is forbidden: User "x" cannot get'),
      busy: status(429, 'TooManyRequests', 'slow down'),
      down: status(503, 'ServiceUnavailable', 'etcd down'),
      auth: status(401, 'Unauthorized', 'Unauthorized'),
    };
    server = await fakeServer(req => answers[req.url.split('/').pop()!]);
    const client = new ResourceClient<Widget>(server.kc, widgets);
    const expectations: Array<[string, new (...a: any[]) => Error, RegExp]> = [
      ['nf', NotFoundError, /"nf" not found/],
      ['cf', ConflictError, /has been modified/],
      ['inv', InputError, /Invalid value: -1/],
      ['bad', InputError, /bad patch/],
      ['no', NotAllowedError, /forbidden/],
      ['busy', ServiceUnavailableError, /slow down/],
      ['down', ServiceUnavailableError, /etcd down/],
      ['auth', ServiceUnavailableError, /rejected Rackside's credentials/],
    ];
    for (const [name, type, message] of expectations) {
      const error = await client.get(name).catch(e => e);
      expect(error).toBeInstanceOf(type);
      expect(error.message).toMatch(message);
      expect(kubeErrorStatus(error)?.code).toBe(answers[name].status);
    }
    expect(await client.find('nf')).toBeUndefined();
    await expect(client.delete('nf', { ignoreNotFound: true })).resolves.toBe(
      undefined,
    );
    await expect(client.delete('nf')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('reports an unreachable cluster as ServiceUnavailableError', async () => {
    server = await fakeServer(() => ({}));
    const kc = server.kc;
    await server.close();
    server = undefined;
    const client = new ResourceClient<Widget>(kc, widgets);
    const error = await client.get('x').catch(e => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error.message).toMatch(/ECONNREFUSED|unreachable/);
  });

  it('refuses a patch whose shape contradicts its type', async () => {
    server = await fakeServer(() => ({ body: {} }));
    const client = new ResourceClient<Widget>(server.kc, widgets);
    await expect(
      client.patch('w', { spec: { size: 1 } }, { type: 'json' }),
    ).rejects.toThrow(/must be an array/);
    expect(server.seen).toHaveLength(0);
  });
});

describe('CoreClient', () => {
  let server: Awaited<ReturnType<typeof fakeServer>> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('lists the pods of a node, evicts, and records events', async () => {
    server = await fakeServer(req => {
      if (req.url.includes('/pods/busy/eviction')) {
        return {
          status: 429,
          body: {
            kind: 'Status',
            code: 429,
            reason: 'TooManyRequests',
            message:
              "Cannot evict pod as it would violate the pod's disruption budget.",
            details: {
              causes: [
                {
                  reason: 'DisruptionBudget',
                  message: 'The disruption budget web-pdb needs 2 healthy pods',
                },
              ],
            },
          },
        };
      }
      if (req.url.includes('/pods/gone/eviction')) {
        return status(404, 'NotFound', 'pods "gone" not found');
      }
      if (req.url.includes('/pods/locked/eviction')) {
        return status(403, 'Forbidden', 'no');
      }
      if (req.method === 'POST') return { status: 201, body: req.body };
      return {
        body: {
          items: [{ metadata: { name: 'p1', namespace: 'a' } }],
          metadata: {},
        },
      };
    });
    const core = new CoreClient(server.kc);
    const pods = await core.podsOnNode('w-1');
    expect(pods.map(p => p.metadata?.name)).toEqual(['p1']);
    expect(pods[0].kind).toBe('Pod');
    expect(decodeURIComponent(server.seen[0].url)).toBe(
      '/api/v1/pods?fieldSelector=spec.nodeName=w-1&limit=500',
    );

    expect(await core.evictPod('a', 'p1', { gracePeriodSeconds: 5 })).toEqual({
      outcome: 'evicted',
    });
    expect(server.seen[1]).toMatchObject({
      method: 'POST',
      url: '/api/v1/namespaces/a/pods/p1/eviction',
      body: {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'p1', namespace: 'a' },
        deleteOptions: { gracePeriodSeconds: 5 },
      },
    });
    expect(await core.evictPod('a', 'busy')).toEqual({
      outcome: 'blocked',
      message:
        "Cannot evict pod as it would violate the pod's disruption budget.",
      causes: ['The disruption budget web-pdb needs 2 healthy pods'],
    });
    expect(await core.evictPod('a', 'gone')).toEqual({ outcome: 'gone' });
    await expect(core.evictPod('a', 'locked')).rejects.toBeInstanceOf(
      NotAllowedError,
    );

    const event = await core.recordEvent(
      {
        apiVersion: 'rackside.dev/v1alpha1',
        kind: 'NodeMaintenance',
        metadata: { name: 'm1', uid: 'u1', resourceVersion: '7' },
      },
      {
        type: 'Normal',
        reason: 'Cordoned',
        message: 'node w-1 cordoned',
        action: 'Cordon',
      },
      { component: 'rackside-operator', instance: 'op-0' },
    );
    const post = server.seen[server.seen.length - 1];
    expect(post.url).toBe(
      '/api/v1/namespaces/default/events?fieldManager=rackside',
    );
    expect(event).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace: 'default' },
      involvedObject: {
        apiVersion: 'rackside.dev/v1alpha1',
        kind: 'NodeMaintenance',
        name: 'm1',
        uid: 'u1',
      },
      type: 'Normal',
      reason: 'Cordoned',
      reportingComponent: 'rackside-operator',
      reportingInstance: 'op-0',
      count: 1,
    });
    expect(event.metadata?.name).toMatch(/^m1\.[0-9a-f]+$/);
  });
});

describe('KubeHttp.stream', () => {
  let server: Awaited<ReturnType<typeof fakeServer>> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('hands over lines split across chunks and resolves when the server ends', async () => {
    server = await fakeServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"type":"ADDED","object":{"a":');
      setTimeout(() => {
        res.write('1}}\n{"type":"DELETED","object":{"a":2}}\n');
        res.end();
      }, 20);
    });
    const lines: string[] = [];
    const opened = jest.fn();
    const stream = new KubeHttp(server.kc).stream(
      { method: 'GET', path: '/api/v1/nodes', query: { watch: 'true' } },
      { onLine: l => lines.push(l), onOpen: opened },
    );
    await stream.done;
    expect(opened).toHaveBeenCalledTimes(1);
    expect(lines.map(l => JSON.parse(l).object.a)).toEqual([1, 2]);
    expect(server.seen[0].url).toBe('/api/v1/nodes?watch=true');
  });

  it('rejects with the Status of a non-200 answer', async () => {
    server = await fakeServer(() =>
      status(410, 'Expired', 'too old resource version: 1 (5)'),
    );
    const stream = new KubeHttp(server.kc).stream(
      { method: 'GET', path: '/api/v1/nodes' },
      { onLine: () => {} },
    );
    const error = await stream.done.catch(e => e);
    expect(error).toBeInstanceOf(KubeApiError);
    expect(error.statusCode).toBe(410);
    expect(error.reason).toBe('Expired');
    expect(error.message).toBe('too old resource version: 1 (5)');
  });

  it('ends a silent stream after the idle timeout', async () => {
    server = await fakeServer((_req, res) => {
      res.writeHead(200);
      res.write('\n');
    });
    const stream = new KubeHttp(server.kc).stream(
      { method: 'GET', path: '/api/v1/nodes' },
      { onLine: () => {}, idleTimeoutMs: 100 },
    );
    await expect(stream.done).rejects.toBeInstanceOf(StreamIdleError);
  });

  it('rejects when the connection breaks mid-stream and resolves when aborted', async () => {
    server = await fakeServer((_req, res) => {
      res.writeHead(200);
      res.write('{"type":"BOOKMARK","object":{}}\n');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const broken = new KubeHttp(server.kc).stream(
      { method: 'GET', path: '/a' },
      { onLine: () => {} },
    );
    await expect(broken.done).rejects.toThrow(/reset|closed|aborted/);

    const lines: string[] = [];
    const aborted = new KubeHttp(server.kc).stream(
      { method: 'GET', path: '/b' },
      { onLine: l => lines.push(l) },
    );
    aborted.abort();
    await expect(aborted.done).resolves.toBeUndefined();
  });

  it('ends the stream with the error its line handler throws', async () => {
    server = await fakeServer((_req, res) => {
      res.writeHead(200);
      res.write('not json\n');
    });
    const stream = new KubeHttp(server.kc).stream(
      { method: 'GET', path: '/a' },
      { onLine: l => JSON.parse(l) },
    );
    await expect(stream.done).rejects.toThrow(SyntaxError);
  });
});

describe('toBackstageError', () => {
  it('understands client-node ApiException and watch errors', () => {
    const apiException = Object.assign(new Error('HTTP-Code: 404'), {
      code: 404,
      body: JSON.stringify({
        kind: 'Status',
        code: 404,
        message: 'nodes "x" not found',
      }),
    });
    const mapped = toBackstageError(apiException);
    expect(mapped).toBeInstanceOf(NotFoundError);
    expect(mapped.message).toBe('nodes "x" not found');
    expect((mapped as NotFoundError).cause).toBeInstanceOf(KubeApiError);
    expect(kubeErrorStatus(mapped)).toMatchObject({ code: 404 });

    const parsedBody = Object.assign(new Error('x'), {
      code: 409,
      body: { message: 'already exists', reason: 'AlreadyExists' },
    });
    expect(toBackstageError(parsedBody)).toBeInstanceOf(ConflictError);

    const watchError = Object.assign(new Error('Forbidden'), {
      statusCode: 403,
    });
    expect(toBackstageError(watchError)).toBeInstanceOf(NotAllowedError);
  });

  it('passes Backstage errors and unknown errors through', () => {
    const input = new InputError('bad');
    expect(toBackstageError(input)).toBe(input);
    const plain = new Error('plain');
    expect(toBackstageError(plain)).toBe(plain);
    expect(toBackstageError('text').message).toBe('text');
    expect(kubeErrorStatus(plain)).toBeUndefined();
  });
});

describe('KubeHttp.request', () => {
  it('aborts on its signal and leaves no listener behind', async () => {
    const server = await fakeServer((_req, res) => {
      setTimeout(() => res.end('{}'), 2000);
    });
    try {
      const controller = new AbortController();
      const kube = new KubeHttp(server.kc);
      const pending = kube.request({
        method: 'GET',
        path: '/slow',
        signal: controller.signal,
      });
      controller.abort();
      await expect(pending).rejects.toThrow(/aborted/);

      const quick = await fakeServer(() => ({ body: { ok: true } }));
      try {
        const signal = new AbortController().signal;
        const add = jest.spyOn(signal, 'addEventListener');
        const remove = jest.spyOn(signal, 'removeEventListener');
        const client = new KubeHttp(quick.kc);
        for (let i = 0; i < 3; i++) {
          await client.request({ method: 'GET', path: '/q', signal });
        }
        expect(add).toHaveBeenCalledTimes(3);
        expect(remove).toHaveBeenCalledTimes(3);
      } finally {
        await quick.close();
      }
    } finally {
      await server.close();
    }
  });
});

describe('CoreClient.drainInputsOf', () => {
  /** A cluster of `nodes` nodes with two pods each, a claim, a volume and no KubeVirt. */
  async function cluster(nodes: number) {
    const pods = Array.from({ length: nodes * 2 }, (_, i) => ({
      metadata: { name: `p-${i}`, namespace: `ns-${i % 7}` },
      spec: { nodeName: `w-${Math.floor(i / 2)}` },
    }));
    return fakeServer(req => {
      const url = new URL(req.url, 'http://x');
      if (url.pathname === '/api/v1/pods') {
        const only = url.searchParams.get('fieldSelector')?.split('=')[1];
        return {
          body: {
            items: pods.filter(p => !only || p.spec.nodeName === only),
            metadata: {},
          },
        };
      }
      if (url.pathname === '/api/v1/persistentvolumeclaims') {
        return {
          body: {
            items: [
              {
                metadata: { name: 'data', namespace: 'ns-1' },
                spec: { volumeName: 'pv-1', storageClassName: 'local' },
              },
            ],
            metadata: {},
          },
        };
      }
      if (url.pathname === '/api/v1/persistentvolumes') {
        return {
          body: {
            items: [
              {
                metadata: { name: 'pv-1', labels: { x: 'y' } },
                spec: { local: { path: '/d' }, capacity: { storage: '1Gi' } },
              },
            ],
            metadata: {},
          },
        };
      }
      return status(404, 'NotFound', 'no such API');
    });
  }

  it('reads 50 nodes in as many requests as 5 (no request per node), with only the facts the drain needs', async () => {
    const requestsFor = async (count: number) => {
      const server = await cluster(200);
      try {
        const names = Array.from({ length: count }, (_, i) => `w-${i}`);
        const inputs = await new CoreClient(server.kc).drainInputsOf(names);
        expect([...inputs.podsByNode.keys()]).toEqual(names);
        expect(
          inputs.podsByNode.get('w-1')!.map(p => p.metadata?.name),
        ).toEqual(['p-2', 'p-3']);
        expect(inputs.claims).toEqual([
          {
            metadata: { name: 'data', namespace: 'ns-1' },
            spec: { volumeName: 'pv-1' },
          },
        ]);
        expect(inputs.volumes).toEqual([
          {
            metadata: { name: 'pv-1' },
            spec: {
              local: { path: '/d' },
              hostPath: undefined,
              nodeAffinity: undefined,
            },
          },
        ]);
        // No KubeVirt API: no section at all, not an empty one.
        expect(inputs.virtualMachines).toBeUndefined();
        return server.seen.length;
      } finally {
        await server.close();
      }
    };
    const five = await requestsFor(5);
    expect(five).toBe(4);
    expect(await requestsFor(50)).toBe(five);
    // A handful of nodes: a pod list each, which is quicker than every pod.
    expect(await requestsFor(2)).toBe(5);
  });
});
