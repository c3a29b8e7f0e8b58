import { WorkQueue, type WorkQueueMetrics } from './workqueue';

const tick = (ms = 5) => new Promise(r => setTimeout(r, ms));

describe('WorkQueue', () => {
  it('collapses duplicates and never runs one key twice at once', async () => {
    const calls: string[] = [];
    let active = 0;
    let maxActiveForA = 0;
    const queue = new WorkQueue(
      async key => {
        if (key === 'a') {
          active++;
          maxActiveForA = Math.max(maxActiveForA, active);
        }
        calls.push(key);
        await tick(20);
        if (key === 'a') active--;
      },
      { workers: 1 },
    );
    queue.add('a'); // starts at once on the only worker
    queue.add('b'); // waits
    queue.add('b'); // collapses into the waiting 'b'
    queue.add('a'); // 'a' is running: marked dirty, runs once more after
    queue.add('a');
    await queue.idle();
    await tick(30);
    await queue.idle();
    expect(calls.filter(k => k === 'a')).toHaveLength(2);
    expect(calls.filter(k => k === 'b')).toHaveLength(1);
    expect(maxActiveForA).toBe(1);
  });

  it('runs different keys concurrently up to the worker count', async () => {
    let active = 0;
    let peak = 0;
    const queue = new WorkQueue(
      async () => {
        active++;
        peak = Math.max(peak, active);
        await tick(20);
        active--;
      },
      { workers: 3 },
    );
    for (const key of ['a', 'b', 'c', 'd', 'e']) queue.add(key);
    await queue.idle();
    expect(peak).toBe(3);
  });

  it('retries a failing key with backoff and reports the error', async () => {
    const errors: unknown[] = [];
    let attempts = 0;
    const queue = new WorkQueue(
      async () => {
        attempts++;
        if (attempts < 3) throw new Error(`boom ${attempts}`);
      },
      { workers: 1, baseBackoffMs: 5, onError: (_k, e) => errors.push(e) },
    );
    queue.add('x');
    for (let i = 0; i < 50 && attempts < 3; i++) await tick(5);
    expect(attempts).toBe(3);
    expect(errors.map(e => (e as Error).message)).toEqual(['boom 1', 'boom 2']);
    queue.stop();
  });

  it('stop answers the keys it drops: queued, waiting out a delay, running', async () => {
    let release!: () => void;
    const running = new Promise<void>(r => {
      release = r;
    });
    const ran: string[] = [];
    const queue = new WorkQueue(
      async key => {
        ran.push(key);
        if (key === 'running') await running;
      },
      { workers: 1 },
    );
    queue.add('running');
    queue.add('queued');
    queue.addAfter('delayed', 60_000);
    expect(queue.stop().sort()).toEqual(['delayed', 'queued', 'running']);
    release();
    await queue.idle();
    // Nothing it dropped runs on this queue.
    expect(ran).toEqual(['running']);
  });

  it('requeues after the delay a handler asks for', async () => {
    const seen: number[] = [];
    const queue = new WorkQueue(
      async () => {
        seen.push(Date.now());
        return seen.length < 2 ? { requeueAfterMs: 30 } : undefined;
      },
      { workers: 1 },
    );
    queue.add('k');
    for (let i = 0; i < 40 && seen.length < 2; i++) await tick(5);
    expect(seen).toHaveLength(2);
    expect(seen[1] - seen[0]).toBeGreaterThanOrEqual(25);
    queue.stop();
  });

  describe('metrics', () => {
    const recorder = () => {
      const seen = {
        depths: [] as number[],
        retries: 0,
        durations: [] as number[],
      };
      const metrics: WorkQueueMetrics = {
        depth: n => seen.depths.push(n),
        retry: () => seen.retries++,
        reconciled: s => seen.durations.push(s),
      };
      return {
        seen,
        metrics,
        depth: () => seen.depths[seen.depths.length - 1],
      };
    };
    // A handler that holds each key until the test lets it go.
    const gated = () => {
      const waiting = new Map<string, () => void>();
      const handler = (key: string) =>
        new Promise<void>(resolve => waiting.set(key, resolve));
      const release = async (key: string) => {
        const resolve = waiting.get(key);
        if (!resolve) throw new Error(`${key} is not running`);
        waiting.delete(key);
        resolve();
        await tick(0);
      };
      return { handler, release, running: () => [...waiting.keys()] };
    };

    it('reports the keys waiting for a worker as they are added and taken', async () => {
      const { seen, metrics, depth } = recorder();
      const { handler, release, running } = gated();
      const queue = new WorkQueue(handler, { workers: 1, metrics });
      queue.add('a'); // taken at once by the only worker
      expect(depth()).toBe(0);
      queue.add('b');
      queue.add('c');
      expect(depth()).toBe(2);
      queue.add('b'); // collapses: no change
      expect(depth()).toBe(2);
      queue.add('a'); // running: marked dirty, not waiting yet
      expect(depth()).toBe(2);
      await release('a'); // 'b' starts, the dirty 'a' goes to the back
      expect(running()).toEqual(['b']);
      expect(depth()).toBe(2);
      await release('b');
      await release('c');
      expect(depth()).toBe(0);
      await release('a');
      await queue.idle();
      expect(depth()).toBe(0);
      // Briefly 3 when 'a' finished: its dirty re-add queues before the freed worker takes 'b'.
      expect(Math.max(...seen.depths)).toBe(3);
      expect(seen.retries).toBe(0);
      expect(seen.durations).toHaveLength(4);
    });

    it('drops the depth to zero when stopped with keys still waiting', async () => {
      const { metrics, depth } = recorder();
      const { handler } = gated();
      const queue = new WorkQueue(handler, { workers: 1, metrics });
      for (const key of ['a', 'b', 'c']) queue.add(key);
      expect(depth()).toBe(2);
      queue.stop();
      expect(depth()).toBe(0);
    });

    it('counts a retry for each failed reconcile and times every run, failed or not', async () => {
      const { seen, metrics } = recorder();
      let attempts = 0;
      const queue = new WorkQueue(
        async () => {
          attempts++;
          if (attempts < 3) throw new Error(`boom ${attempts}`);
          return { requeueAfterMs: 60_000 }; // a planned requeue is no retry
        },
        { workers: 1, baseBackoffMs: 5, metrics },
      );
      queue.add('x');
      for (let i = 0; i < 50 && attempts < 3; i++) await tick(5);
      await queue.idle();
      expect(attempts).toBe(3);
      expect(seen.retries).toBe(2);
      expect(seen.durations).toHaveLength(3);
      for (const s of seen.durations) expect(s).toBeGreaterThanOrEqual(0);
      queue.stop();
    });

    it('counts no retry for a failure once stopped (nothing will run again)', async () => {
      const { seen, metrics } = recorder();
      const { handler } = gated();
      let fail: (e: Error) => void = () => {};
      const queue = new WorkQueue(
        key =>
          key === 'x'
            ? new Promise<void>((_r, reject) => {
                fail = reject;
              })
            : handler(key),
        { workers: 1, metrics },
      );
      queue.add('x');
      queue.stop();
      fail(new Error('late'));
      await queue.idle();
      expect(seen.retries).toBe(0);
      expect(seen.durations).toHaveLength(1);
    });
  });
});
