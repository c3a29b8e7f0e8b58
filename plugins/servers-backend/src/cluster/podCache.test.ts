import { PlanPodCache } from './podCache';

/** A stand-in watch cache: synced at once, pods indexed as the real one does. */
function fakeCache(pods: Array<{ name: string; node: string }>) {
  const made: Array<{ stopped: boolean }> = [];
  const factory = (
    indexes: Record<string, (pod: any) => string | undefined>,
  ) => {
    const state = { stopped: false };
    made.push(state);
    const objects = pods.map(p => ({
      metadata: { name: p.name, namespace: 'shop' },
      spec: { nodeName: p.node },
    }));
    return {
      synced: Promise.resolve(),
      hasSynced: () => true,
      byIndex: (index: string, value: string) =>
        objects.filter(o => indexes[index](o) === value),
      stop: async () => {
        state.stopped = true;
      },
    } as any;
  };
  return { factory, made };
}

describe('PlanPodCache', () => {
  it('opens one watch for every pre-flight, answers each node its pods, and lets it go when idle', async () => {
    const { factory, made } = fakeCache([
      { name: 'web-1', node: 'worker-1' },
      { name: 'web-2', node: 'worker-2' },
      { name: 'db-1', node: 'worker-2' },
    ]);
    const pods = new PlanPodCache('plant-a', factory, 20);
    const first = await pods.podsOn(['worker-1', 'worker-2', 'worker-9']);
    expect(
      [...first].map(([node, list]) => [node, list.map(p => p.metadata?.name)]),
    ).toEqual([
      ['worker-1', ['web-1']],
      ['worker-2', ['web-2', 'db-1']],
      ['worker-9', []],
    ]);
    await pods.podsOn(['worker-1']);
    expect(made).toHaveLength(1);
    expect(pods.running).toBe(true);
    // Nobody plans for idleMs: the pods leave memory, and the next pre-flight starts again.
    await new Promise<void>(resolve => {
      const check = () => (pods.running ? setTimeout(check, 5) : resolve());
      check();
    });
    expect(made[0].stopped).toBe(true);
    await pods.podsOn(['worker-1']);
    expect(made).toHaveLength(2);
    await pods.stop();
    expect(made[1].stopped).toBe(true);
  });
});
