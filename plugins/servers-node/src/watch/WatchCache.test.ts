import { KubeApiError } from '../clients/errors';
import { objectKey, RawKubeObject } from '../clients/types';
import { createWatchCache, WatchCache, WatchCacheOptions } from './WatchCache';
import type {
  ListPage,
  ListRequest,
  RawWatchEvent,
  WatchHandle,
  WatchHandlers,
  WatchRequest,
  WatchTransport,
} from './transport';

/**
 * An in-memory apiserver for one collection: a store with resourceVersions,
 * an event history that can be compacted (then old watches get 410), and
 * switches to break watches and lists.
 */
class FakeApi implements WatchTransport {
  private rv = 100;
  private readonly store = new Map<string, RawKubeObject>();
  private history: Array<{ rv: number; event: RawWatchEvent }> = [];
  private compactedRv = 0;
  private readonly watchers = new Set<{
    rv: number;
    handlers: WatchHandlers;
    end(error?: unknown): void;
  }>();
  readonly listRequests: ListRequest[] = [];
  readonly watchRequests: WatchRequest[] = [];
  /** While set, lists and new watches fail with this error. */
  down: Error | undefined;
  /** While set, a watch answers with this Status as an ERROR event. */
  watchErrorEvent: object | undefined;

  get resourceVersion() {
    return String(this.rv);
  }

  get openWatches() {
    return this.watchers.size;
  }

  private record(type: string, obj: RawKubeObject) {
    const event = { type, object: structuredClone(obj) };
    this.history.push({ rv: this.rv, event });
    for (const w of this.watchers) {
      w.handlers.onEvent(structuredClone(event));
    }
  }

  put(name: string, data: Record<string, unknown> = {}, namespace?: string) {
    this.rv++;
    const obj: RawKubeObject = {
      apiVersion: 'v1',
      kind: 'Thing',
      metadata: {
        name,
        namespace,
        resourceVersion: String(this.rv),
        managedFields: [{ manager: 'test' }],
      } as RawKubeObject['metadata'],
      ...data,
    };
    const key = objectKey(obj);
    const existed = this.store.has(key);
    this.store.set(key, obj);
    this.record(existed ? 'MODIFIED' : 'ADDED', obj);
  }

  /** Changes an object without telling any watcher (a lost event). */
  putSilently(name: string, data: Record<string, unknown>) {
    this.rv++;
    const old = this.store.get(name)!;
    this.store.set(name, {
      ...old,
      ...data,
      metadata: { ...old.metadata, resourceVersion: String(this.rv) },
    });
  }

  remove(name: string) {
    this.rv++;
    const obj = this.store.get(name)!;
    this.store.delete(name);
    this.record('DELETED', {
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: String(this.rv) },
    });
  }

  /** Forgets the event history, as an apiserver restart or compaction does. */
  compact() {
    this.compactedRv = this.rv;
    this.history = [];
  }

  bookmark() {
    this.rv++;
    for (const w of this.watchers) {
      w.handlers.onEvent({
        type: 'BOOKMARK',
        object: { metadata: { resourceVersion: String(this.rv) } },
      });
    }
  }

  /** Ends every open watch normally (the server's timeout). */
  endWatches() {
    for (const w of [...this.watchers]) w.end();
  }

  /** Breaks every open watch (connection reset). */
  breakWatches() {
    for (const w of [...this.watchers]) {
      w.end(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    }
  }

  async list(request: ListRequest): Promise<ListPage> {
    this.listRequests.push(request);
    await Promise.resolve();
    if (this.down) throw this.down;
    const all = [...this.store.values()].sort((a, b) =>
      objectKey(a).localeCompare(objectKey(b)),
    );
    const start = Number(request.continue ?? 0);
    const limit = request.limit ?? all.length;
    const page = all.slice(start, start + limit).map(o => {
      const copy = structuredClone(o);
      // Like the apiserver: list items carry no kind / apiVersion.
      delete copy.kind;
      delete copy.apiVersion;
      return copy;
    });
    const next = start + limit;
    return {
      items: page,
      resourceVersion: String(this.rv),
      continue: next < all.length ? String(next) : undefined,
      kind: 'ThingList',
      apiVersion: 'v1',
    };
  }

  watch(request: WatchRequest, handlers: WatchHandlers): WatchHandle {
    this.watchRequests.push(request);
    let settle!: { resolve(): void; reject(e: unknown): void };
    const done = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    const from = Number(request.resourceVersion);
    let pending = true;
    const watcher = {
      rv: from,
      handlers,
      end: (error?: unknown) => {
        if (!this.watchers.delete(watcher) && !pending) return;
        pending = false;
        if (error) settle.reject(error);
        else settle.resolve();
      },
    };
    setImmediate(() => {
      if (!pending) return;
      if (this.down) {
        pending = false;
        settle.reject(this.down);
        return;
      }
      handlers.onOpen?.();
      if (this.watchErrorEvent) {
        handlers.onEvent({
          type: 'ERROR',
          object: this.watchErrorEvent as RawKubeObject,
        });
        pending = false;
        settle.resolve();
        return;
      }
      if (from < this.compactedRv) {
        handlers.onEvent({
          type: 'ERROR',
          object: {
            kind: 'Status',
            code: 410,
            reason: 'Expired',
            message: `too old resource version: ${from} (${this.compactedRv})`,
          } as RawKubeObject,
        });
        pending = false;
        settle.resolve();
        return;
      }
      pending = false;
      for (const h of this.history) {
        if (h.rv > from) handlers.onEvent(structuredClone(h.event));
      }
      this.watchers.add(watcher);
    });
    return {
      done,
      abort: () => watcher.end(),
    };
  }
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 3000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 5));
  }
}

type Recorded = Array<[string, string, string?]>;

function record<T extends RawKubeObject>(cache: WatchCache<T>): Recorded {
  const events: Recorded = [];
  cache.on('add', o => events.push(['add', objectKey(o)]));
  cache.on('update', (o, old) =>
    events.push([
      'update',
      objectKey(o),
      `${old.metadata?.resourceVersion}->${o.metadata?.resourceVersion}`,
    ]),
  );
  cache.on('delete', o => events.push(['delete', objectKey(o)]));
  return events;
}

describe('createWatchCache', () => {
  const caches: Array<WatchCache<any>> = [];
  afterEach(async () => {
    await Promise.all(caches.splice(0).map(c => c.stop()));
  });

  function start<T extends RawKubeObject = RawKubeObject>(
    api: FakeApi,
    options: Partial<WatchCacheOptions<T>> = {},
  ) {
    const cache = createWatchCache<T>({
      path: '/api/v1/things',
      transport: api,
      backoff: { initialMs: 20, maxMs: 80, resetAfterMs: 50 },
      changedDelayMs: 10,
      ...options,
    });
    caches.push(cache);
    return cache;
  }

  it('lists page by page, emits add for each object and syncs', async () => {
    const api = new FakeApi();
    for (const n of ['a', 'b', 'c', 'd', 'e']) api.put(n);
    const cache = start(api, {
      pageSize: 2,
      labelSelector: 'x=y',
      fieldSelector: 'spec.nodeName=n1',
    });
    const events = record(cache);
    expect(cache.hasSynced()).toBe(false);
    await cache.synced;
    expect(cache.hasSynced()).toBe(true);
    expect(api.listRequests.map(r => r.continue)).toEqual([
      undefined,
      '2',
      '4',
    ]);
    expect(api.listRequests[0]).toMatchObject({
      path: '/api/v1/things',
      limit: 2,
      labelSelector: 'x=y',
      fieldSelector: 'spec.nodeName=n1',
    });
    expect(events).toEqual(['a', 'b', 'c', 'd', 'e'].map(k => ['add', k]));
    expect(cache.size).toBe(5);
    expect(cache.get('c')).toMatchObject({
      kind: 'Thing',
      apiVersion: 'v1',
      metadata: { name: 'c' },
    });
    // managedFields never reach the cache.
    expect(cache.get('c')!.metadata).not.toHaveProperty('managedFields');
    await waitFor('watch', () => api.openWatches === 1);
    expect(api.watchRequests[0]).toMatchObject({
      resourceVersion: api.resourceVersion,
      allowWatchBookmarks: true,
      labelSelector: 'x=y',
      fieldSelector: 'spec.nodeName=n1',
    });
    expect(api.watchRequests[0].timeoutSeconds).toBeGreaterThanOrEqual(300);
    expect(api.watchRequests[0].timeoutSeconds).toBeLessThan(600);
  });

  it('applies watch events and coalesces them into one changed signal', async () => {
    const api = new FakeApi();
    api.put('a');
    const cache = start(api);
    await cache.synced;
    await waitFor('watch', () => api.openWatches === 1);
    const events = record(cache);
    const changed: string[][] = [];
    cache.on('changed', keys => changed.push([...keys].sort()));

    api.put('b');
    api.put('a', { spec: { x: 1 } });
    api.remove('b');
    api.put('c', {}, 'ns1');
    await waitFor('events', () => events.length === 4);
    expect(events).toEqual([
      ['add', 'b'],
      ['update', 'a', '101->103'],
      ['delete', 'b'],
      ['add', 'ns1/c'],
    ]);
    expect(cache.list().map(objectKey).sort()).toEqual(['a', 'ns1/c']);
    expect(cache.get('a')).toMatchObject({ spec: { x: 1 } });
    await waitFor('changed', () => changed.length === 1);
    expect(changed).toEqual([['a', 'b', 'ns1/c']]);
    expect(cache.status()).toMatchObject({
      synced: true,
      watching: true,
      resourceVersion: api.resourceVersion,
      failures: 0,
      lists: 1,
    });
  });

  it('follows bookmarks and resumes from the last resourceVersion when the server ends the watch', async () => {
    const api = new FakeApi();
    api.put('a');
    const cache = start(api, { watchTimeoutSeconds: 1 });
    await cache.synced;
    await waitFor('watch', () => api.openWatches === 1);
    const events = record(cache);
    api.put('b');
    api.bookmark();
    await waitFor('bookmark', () => cache.status().resourceVersion === '103');
    api.endWatches();
    api.put('c'); // while no watch is open
    await waitFor('re-watch', () => api.watchRequests.length === 2);
    expect(api.watchRequests[1].resourceVersion).toBe('103');
    expect(api.watchRequests[1].timeoutSeconds).toBe(1);
    await waitFor('c', () => cache.get('c') !== undefined);
    expect(events).toEqual([
      ['add', 'b'],
      ['add', 'c'],
    ]);
    // No relist: the history was still there.
    expect(api.listRequests).toHaveLength(1);
  });

  it('relists after 410 Expired and emits exactly the differences', async () => {
    const api = new FakeApi();
    for (const n of ['keep', 'change', 'gone']) api.put(n);
    const cache = start(api);
    const changed: string[][] = [];
    cache.on('changed', keys => changed.push([...keys].sort()));
    await cache.synced;
    await waitFor('watch', () => api.openWatches === 1);
    await waitFor('first changed', () => changed.length === 1);
    expect(changed.shift()).toEqual(['change', 'gone', 'keep']);
    const events = record(cache);

    // The watch breaks; meanwhile the world changes and history is lost.
    api.down = new Error('connect ECONNREFUSED');
    api.breakWatches();
    api.putSilently('change', { spec: { v: 2 } });
    api.remove('gone');
    api.put('new');
    api.compact();
    api.down = undefined;

    await waitFor('relist', () => api.listRequests.length === 2);
    await waitFor('diff', () => events.length === 3);
    expect(events.sort()).toEqual([
      ['add', 'new'],
      ['delete', 'gone'],
      ['update', 'change', '102->104'],
    ]);
    expect(cache.get('change')).toMatchObject({ spec: { v: 2 } });
    await waitFor('changed', () => changed.length === 1);
    expect(changed[0]).toEqual(['change', 'gone', 'new']);
    await waitFor('watch again', () => api.openWatches === 1);
    expect(cache.status()).toMatchObject({ lists: 2, failures: 0 });
  });

  it('relists after an HTTP 410 answer too', async () => {
    const api = new FakeApi();
    api.put('a');
    let watchCalls = 0;
    const transport: WatchTransport = {
      list: r => api.list(r),
      watch: (r, h) => {
        watchCalls++;
        if (watchCalls === 1) {
          return {
            done: Promise.reject(
              new KubeApiError(410, { reason: 'Gone', message: 'gone' }),
            ),
            abort() {},
          };
        }
        return api.watch(r, h);
      },
    };
    const cache = start(api, { transport });
    await cache.synced;
    await waitFor('second list', () => api.listRequests.length === 2);
    await waitFor('watch', () => api.openWatches === 1);
    expect(cache.status()).toMatchObject({ lists: 2, watches: 2 });
  });

  it('backs off exponentially while the apiserver is down and recovers', async () => {
    const api = new FakeApi();
    api.put('a');
    const cache = start(api, {
      backoff: { initialMs: 40, maxMs: 160, resetAfterMs: 50 },
    });
    await cache.synced;
    await waitFor('watch', () => api.openWatches === 1);
    api.down = Object.assign(new Error('connect ECONNREFUSED'), {
      code: 'ECONNREFUSED',
    });
    api.breakWatches();
    const t0 = Date.now();
    const before = api.watchRequests.length;
    await new Promise(r => setTimeout(r, 700));
    const attempts = api.watchRequests.length - before;
    // Delays 20-40, 40-80, 80-160, then 80-160 each: at most ~8 in 700 ms,
    // where a tight loop would make thousands.
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(attempts).toBeLessThanOrEqual(9);
    expect(cache.status()).toMatchObject({ watching: false });
    expect(cache.status().failures).toBeGreaterThanOrEqual(3);
    expect(cache.status().lastError).toMatch(/ECONNREFUSED/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(700);

    api.put('b');
    api.down = undefined;
    await waitFor('b', () => cache.get('b') !== undefined, 2000);
    // Still resumed by watch: history was not lost.
    expect(api.listRequests).toHaveLength(1);
    await waitFor('healthy', () => cache.status().failures === 0);
    expect(cache.status().lastError).toBeUndefined();
  });

  it('keeps retrying a failing first list and syncs once it works', async () => {
    const api = new FakeApi();
    api.put('a');
    api.down = Object.assign(new Error('forbidden'), { statusCode: 403 });
    const warn = jest.fn();
    const cache = start(api, {
      logger: { debug() {}, info() {}, warn, error() {} },
    });
    await waitFor('retries', () => api.listRequests.length >= 3);
    expect(cache.hasSynced()).toBe(false);
    // Warned once, not once per attempt.
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(/list failed.*forbidden/);
    api.down = undefined;
    await cache.synced;
    expect(cache.get('a')).toBeDefined();
  });

  it('does not loop when every watch after a fresh list is expired', async () => {
    const api = new FakeApi();
    api.put('a');
    api.watchErrorEvent = {
      kind: 'Status',
      code: 410,
      reason: 'Expired',
      message: 'too old',
    };
    const cache = start(api, {
      backoff: { initialMs: 40, maxMs: 160, resetAfterMs: 50 },
    });
    await cache.synced;
    await new Promise(r => setTimeout(r, 500));
    expect(api.listRequests.length).toBeLessThanOrEqual(8);
    expect(api.listRequests.length).toBeGreaterThanOrEqual(3);
    expect(cache.status().lists).toBe(api.listRequests.length);
  });

  it('treats other ERROR events as failures and re-watches from the same resourceVersion', async () => {
    const api = new FakeApi();
    api.put('a');
    api.watchErrorEvent = {
      kind: 'Status',
      code: 500,
      reason: 'InternalError',
      message: 'etcd hiccup',
    };
    const cache = start(api);
    await cache.synced;
    await waitFor('second watch', () => api.watchRequests.length >= 2);
    expect(cache.status().lastError).toBe('etcd hiccup');
    api.watchErrorEvent = undefined;
    await waitFor('watch', () => api.openWatches === 1);
    expect(api.watchRequests.map(r => r.resourceVersion)).toEqual(
      api.watchRequests.map(() => '101'),
    );
    expect(api.listRequests).toHaveLength(1);
  });

  it('resyncs by relisting, emitting only what changed', async () => {
    const api = new FakeApi();
    api.put('a');
    api.put('b');
    const cache = start(api, { resyncMs: 60 });
    await cache.synced;
    const events = record(cache);
    await waitFor('two resyncs', () => api.listRequests.length >= 3);
    expect(events).toEqual([]);
    // An event the watch never delivered is caught by the next resync.
    api.putSilently('b', { spec: { late: true } });
    await waitFor('update', () => events.length === 1);
    expect(events[0]).toEqual(['update', 'b', '102->103']);
  });

  it('makes no request while idle when resync is off', async () => {
    const api = new FakeApi();
    api.put('a');
    const cache = start(api);
    await cache.synced;
    await waitFor('watch', () => api.openWatches === 1);
    await new Promise(r => setTimeout(r, 200));
    expect(api.listRequests).toHaveLength(1);
    expect(api.watchRequests).toHaveLength(1);
    expect(cache.status().watches).toBe(1);
  });

  it('stores what transform returns and leaves out objects it throws on', async () => {
    const api = new FakeApi();
    api.put('a', { spec: { big: 'x'.repeat(1000), small: 1 } });
    api.put('bad');
    const error = jest.fn();
    const cache = start<{ metadata?: any; small: number }>(api, {
      transform: obj => {
        if (obj.metadata?.name === 'bad') throw new Error('no');
        return { metadata: obj.metadata, small: obj.spec.small };
      },
      logger: { debug() {}, info() {}, warn() {}, error },
    });
    await cache.synced;
    expect(cache.list()).toEqual([
      {
        metadata: { name: 'a', namespace: undefined, resourceVersion: '101' },
        small: 1,
      },
    ]);
    expect(error.mock.calls[0][0]).toMatch(/transform failed for bad/);
  });

  it('maintains secondary indexes', async () => {
    const api = new FakeApi();
    api.put('p1', { spec: { nodeName: 'n1' } }, 'ns');
    api.put('p2', { spec: { nodeName: 'n1' } }, 'ns');
    api.put('p3', { spec: { nodeName: 'n2' } }, 'ns');
    const cache = start(api, {
      indexes: { node: (p: RawKubeObject) => p.spec?.nodeName },
    });
    await cache.synced;
    const names = (node: string) =>
      cache
        .byIndex('node', node)
        .map(o => o.metadata!.name)
        .sort();
    expect(names('n1')).toEqual(['p1', 'p2']);
    await waitFor('watch', () => api.openWatches === 1);
    api.put('p2', { spec: { nodeName: 'n2' } }, 'ns');
    api.remove('ns/p1');
    await waitFor('moved', () => names('n2').length === 2);
    expect(names('n1')).toEqual([]);
    expect(names('n2')).toEqual(['p2', 'p3']);
    expect(() => cache.byIndex('nope', 'x')).toThrow(/no index/);
  });

  it('survives a throwing listener', async () => {
    const api = new FakeApi();
    api.put('a');
    const error = jest.fn();
    const cache = start(api, {
      logger: { debug() {}, info() {}, warn() {}, error },
    });
    cache.on('add', () => {
      throw new Error('boom');
    });
    const seen: string[] = [];
    cache.on('add', o => seen.push(o.metadata!.name!));
    await cache.synced;
    await waitFor('watch', () => api.openWatches === 1);
    api.put('b');
    await waitFor('b', () => seen.length === 2);
    expect(error).toHaveBeenCalledTimes(2);
  });

  it('unsubscribes and stops cleanly', async () => {
    const api = new FakeApi();
    api.down = new Error('down');
    const cache = start(api);
    const off = cache.on('add', () => {
      throw new Error('should not be called');
    });
    off();
    await waitFor('a try', () => api.listRequests.length >= 1);
    await cache.stop();
    await expect(cache.synced).rejects.toThrow(/stopped before it synced/);
    const lists = api.listRequests.length;
    await new Promise(r => setTimeout(r, 100));
    expect(api.listRequests).toHaveLength(lists);
    await cache.stop(); // idempotent
  });

  it('closes its watch on stop', async () => {
    const api = new FakeApi();
    api.put('a');
    const cache = start(api);
    await cache.synced;
    await waitFor('watch', () => api.openWatches === 1);
    await cache.stop();
    expect(api.openWatches).toBe(0);
    expect(cache.status().watching).toBe(false);
  });

  it('uses listFn when given', async () => {
    const api = new FakeApi();
    api.put('a');
    const listFn = jest.fn((r: ListRequest) => api.list(r));
    const cache = start(api, { listFn });
    await cache.synced;
    expect(listFn).toHaveBeenCalledTimes(1);
  });

  it('requires a kubeConfig or a transport', () => {
    expect(() => createWatchCache({ path: '/api/v1/nodes' })).toThrow(
      /kubeConfig or a transport/,
    );
  });
});
