import { WorkQueue } from './workqueue';

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
});
