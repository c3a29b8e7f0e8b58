import { mockServices } from '@backstage/backend-test-utils';
import { announceChanges, type ClusterChangeSource } from './changeSignals';

/** A source whose changes the test fires. */
function source(cluster: string) {
  const listeners = new Set<() => void>();
  const s: ClusterChangeSource & { fire(): void; listening(): number } = {
    cluster,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    fire: () => listeners.forEach(l => l()),
    listening: () => listeners.size,
  };
  return s;
}

describe('announceChanges', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends one signal per cluster for a burst over its servers and its machines, and one per cluster', async () => {
    const servers = source('plant-a');
    const machines = source('plant-a');
    const other = source('plant-b');
    const published: unknown[] = [];
    const stop = announceChanges({
      sources: [servers, machines, other],
      signals: { publish: async (m: unknown) => void published.push(m) } as any,
      logger: mockServices.logger.mock(),
      channel: 'rackside:servers',
      debounceMs: 1000,
    });
    servers.fire();
    machines.fire();
    servers.fire();
    other.fire();
    await jest.advanceTimersByTimeAsync(999);
    expect(published).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(published).toEqual([
      expect.objectContaining({ message: { cluster: 'plant-a' } }),
      expect.objectContaining({ message: { cluster: 'plant-b' } }),
    ]);
    // The next burst is its own signal.
    machines.fire();
    await jest.advanceTimersByTimeAsync(1000);
    expect(published).toHaveLength(3);
    stop();
    expect(servers.listening() + machines.listening()).toBe(0);
  });

  it('logs a failed publish and keeps announcing; stopping drops a pending signal', async () => {
    const servers = source('plant-a');
    const logger = mockServices.logger.mock();
    let fail = true;
    const published: unknown[] = [];
    const stop = announceChanges({
      sources: [servers],
      signals: {
        publish: async (m: unknown) => {
          if (fail) throw new Error('events bus down');
          published.push(m);
        },
      } as any,
      logger,
      channel: 'rackside:servers',
      debounceMs: 1000,
    });
    servers.fire();
    await jest.advanceTimersByTimeAsync(1000);
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringContaining('events bus down'),
    );
    fail = false;
    servers.fire();
    await jest.advanceTimersByTimeAsync(1000);
    expect(published).toHaveLength(1);
    servers.fire();
    stop();
    await jest.advanceTimersByTimeAsync(1000);
    expect(published).toHaveLength(1);
  });
});
