import { createMetrics } from '../metrics';
import {
  buildController,
  type ControllerDeclaration,
  type ControllerPorts,
} from './buildController';

/** A promise settled from outside: a test waits for an event, never for a clock. */
function deferred<T = void>() {
  let resolve!: (value: T | PromiseLike<T>) => void;
  const promise = new Promise<T>(r => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A stand-in for a watch cache: objects by key, and listeners of their changes. */
function fakeCache(keys: string[]) {
  const objects = new Set(keys);
  const listeners = new Set<(key: string) => void>();
  return {
    keys: () => [...objects],
    change(key: string) {
      objects.add(key);
      for (const listener of listeners) listener(key);
    },
    on(listener: (key: string) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    listeners: () => listeners.size,
  };
}

/** A reconcile that records each run and, for the keys in `hold`, waits to be let go. */
function recordingReconcile() {
  const runs: string[] = [];
  const holds = new Map<string, ReturnType<typeof deferred>>();
  const started = new Map<string, ReturnType<typeof deferred>>();
  const startedOf = (key: string) => {
    if (!started.has(key)) started.set(key, deferred());
    return started.get(key)!;
  };
  return {
    runs,
    hold(key: string) {
      holds.set(key, deferred());
    },
    release(key: string) {
      holds.get(key)?.resolve(undefined);
      holds.delete(key);
    },
    /** Resolves when `key` has begun a run. */
    started: (key: string) => startedOf(key).promise,
    async reconcile(key: string) {
      runs.push(key);
      startedOf(key).resolve(undefined);
      await holds.get(key)?.promise;
    },
  };
}

function declare(
  cache: ReturnType<typeof fakeCache>,
  reconcile: (key: string) => Promise<void>,
  more: Partial<ControllerDeclaration> = {},
): ControllerDeclaration {
  return {
    kind: 'Widget',
    reconcile,
    watches: wake => [cache.on(key => wake.enqueue(key))],
    keys: () => cache.keys(),
    ...more,
  };
}

const leader = (more: Partial<ControllerPorts> = {}): ControllerPorts => ({
  workers: 1,
  leading: () => true,
  ...more,
});

describe('buildController', () => {
  it('start runs every key, a watch wakes its key, and stop unsubscribes', async () => {
    const cache = fakeCache(['a', 'b']);
    const work = recordingReconcile();
    const controller = buildController(
      declare(cache, k => work.reconcile(k), { awaitFirstPass: true }),
      leader({ workers: 2 }),
    );
    expect(cache.listeners()).toBe(1);
    expect(controller.running()).toBe(false);

    await controller.start();
    expect(controller.running()).toBe(true);
    expect(work.runs.sort()).toEqual(['a', 'b']);

    cache.change('c');
    await work.started('c');
    expect(work.runs).toContain('c');

    await controller.stop();
    expect(controller.running()).toBe(false);
    expect(cache.listeners()).toBe(0);
    // Stopped for good: a start does nothing, an enqueue is not held.
    controller.enqueue('d');
    await controller.start();
    expect(controller.running()).toBe(false);
    expect(work.runs).not.toContain('d');
  });

  it('waits for the caches before the queue runs', async () => {
    const cache = fakeCache(['a']);
    const work = recordingReconcile();
    const synced = deferred();
    const controller = buildController(
      declare(cache, k => work.reconcile(k), {
        synced: () => synced.promise,
        awaitFirstPass: true,
      }),
      leader(),
    );
    const starting = controller.start();
    expect(controller.running()).toBe(false);
    expect(work.runs).toEqual([]);
    synced.resolve();
    await starting;
    expect(work.runs).toEqual(['a']);
    await controller.stop();
  });

  it('a start whose caches synced after a pause gives up', async () => {
    const cache = fakeCache(['a']);
    const work = recordingReconcile();
    const synced = deferred();
    const controller = buildController(
      declare(cache, k => work.reconcile(k), { synced: () => synced.promise }),
      leader(),
    );
    const starting = controller.start();
    controller.pause();
    synced.resolve();
    await starting;
    expect(controller.running()).toBe(false);
    expect(work.runs).toEqual([]);
    await controller.stop();
  });

  it('a follower runs no reconcile, and its keys run once it leads', async () => {
    const cache = fakeCache(['a', 'b']);
    const work = recordingReconcile();
    let leading = false;
    const controller = buildController(
      declare(cache, k => work.reconcile(k), { awaitFirstPass: true }),
      leader({ leading: () => leading }),
    );
    // Started (the elector has not paused it yet) but not leading: nothing runs.
    await controller.start();
    cache.change('c');
    controller.enqueue('a');
    expect(work.runs).toEqual([]);

    controller.pause();
    leading = true;
    await controller.start();
    expect(work.runs.sort()).toEqual(['a', 'b', 'c']);
    await controller.stop();
  });

  it('a key queued twice while it waits runs once', async () => {
    const cache = fakeCache(['busy']);
    const work = recordingReconcile();
    work.hold('busy');
    const controller = buildController(
      declare(cache, k => work.reconcile(k)),
      leader({ workers: 1 }),
    );
    await controller.start();
    await work.started('busy');
    // The one worker is busy: 'a' waits in the queue, and the second wake collapses.
    cache.change('a');
    controller.enqueue('a');
    work.release('busy');
    await work.started('a');
    await controller.stop();
    expect(work.runs.filter(k => k === 'a')).toHaveLength(1);
    expect(work.runs.filter(k => k === 'busy')).toHaveLength(1);
  });

  it('pause drops nothing: queued keys and keys woken while paused run at the next start', async () => {
    const cache = fakeCache(['busy']);
    const work = recordingReconcile();
    work.hold('busy');
    const paused: string[] = [];
    const controller = buildController(
      // keys() lists nothing after the first start: what runs after the pause must come
      // from the held keys.
      declare(cache, k => work.reconcile(k), {
        keys: () => (work.runs.length === 0 ? ['busy'] : []),
        onPaused: () => paused.push('paused'),
      }),
      leader({ workers: 1 }),
    );
    await controller.start();
    await work.started('busy');
    cache.change('queued-1');
    cache.change('queued-2');
    controller.pause();
    expect(paused).toEqual(['paused']);
    expect(controller.running()).toBe(false);
    cache.change('woken-while-paused');
    work.release('busy');
    expect(work.runs).toEqual(['busy']);

    await controller.start();
    await Promise.all(
      ['queued-1', 'queued-2', 'woken-while-paused'].map(k => work.started(k)),
    );
    await controller.stop();
    // 'busy' was running when it paused: it is looked at again too.
    expect(work.runs.slice(1).sort()).toEqual([
      'busy',
      'queued-1',
      'queued-2',
      'woken-while-paused',
    ]);
  });

  it('counts and logs a failed reconcile under its kind, and reports the queue by controller', async () => {
    const metrics = createMetrics();
    const cache = fakeCache(['bad']);
    const logged: Array<{ message: string; phase?: unknown }> = [];
    const failed = deferred<string>();
    const controller = buildController(
      declare(
        cache,
        async key => {
          throw new Error(`cannot reconcile ${key}`);
        },
        { phaseOf: () => 'Draining' },
      ),
      leader({
        metrics,
        log: (message, fields) =>
          logged.push({ message, phase: fields?.phase }),
        onError: (kind, key) => failed.resolve(`${kind} ${key}`),
      }),
    );
    await controller.start();
    expect(await failed.promise).toBe('Widget bad');
    await controller.stop();

    const errors = await metrics.reconcileErrors.get();
    expect(errors.values).toEqual([
      expect.objectContaining({ labels: { kind: 'Widget' }, value: 1 }),
    ]);
    const durations = await metrics.reconcileDuration.get();
    expect(
      durations.values.find(
        v =>
          v.labels.controller === 'Widget' &&
          (v as { metricName?: string }).metricName ===
            'rackside_reconcile_duration_seconds_count',
      )?.value,
    ).toBe(1);
    const depth = await metrics.workqueueDepth.get();
    expect(depth.values).toEqual([
      expect.objectContaining({ labels: { controller: 'Widget' }, value: 0 }),
    ]);
    expect(logged[0]).toEqual({
      message: 'reconcile Widget bad: cannot reconcile bad',
      phase: 'Draining',
    });
  });

  it('stop waits for a reconcile under way, up to its grace', async () => {
    const cache = fakeCache(['a']);
    const work = recordingReconcile();
    work.hold('a');
    let finished = false;
    const controller = buildController(
      declare(
        cache,
        async k => {
          await work.reconcile(k);
          finished = true;
        },
        { stopGraceMs: 60_000 },
      ),
      leader(),
    );
    await controller.start();
    await work.started('a');
    const stopping = controller.stop();
    expect(controller.running()).toBe(false);
    work.release('a');
    await stopping;
    expect(finished).toBe(true);
  });

  it('runs beforeFirstPass before the keys, onStarted after the first pass and onStopped last', async () => {
    const cache = fakeCache(['a']);
    const order: string[] = [];
    const controller = buildController(
      declare(
        cache,
        async k => {
          order.push(`reconcile ${k}`);
        },
        {
          awaitFirstPass: true,
          beforeFirstPass: () => order.push('before'),
          onStarted: () => order.push('started'),
          onPaused: () => order.push('paused'),
          onStopped: () => {
            order.push('stopped');
          },
        },
      ),
      leader(),
    );
    await controller.start();
    await controller.stop();
    expect(order).toEqual([
      'before',
      'reconcile a',
      'started',
      'paused',
      'stopped',
    ]);
  });
});
