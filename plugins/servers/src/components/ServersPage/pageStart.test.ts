import { PAGE_START_FRESH_MS, startServersPage } from './pageStart';
import { FIRST_WINDOW_REQUEST } from '../hooks/windowRequests';
import type { ServersApi } from '../../api';

function fakeApi(clusters: () => Promise<unknown>) {
  const listClusters = jest.fn(clusters);
  const listServerWindow = jest.fn(async (cluster: string) => ({
    items: [cluster],
  }));
  return {
    api: { listClusters, listServerWindow } as unknown as ServersApi,
    listClusters,
    listServerWindow,
  };
}

const CLUSTERS = [
  { name: 'rack', available: true },
  { name: 'far', available: false, error: 'unreachable' },
];

describe('startServersPage', () => {
  it("asks the clusters at once, then each available cluster's first window as they answer", async () => {
    let answer: (value: unknown) => void = () => {};
    const { api, listClusters, listServerWindow } = fakeApi(
      () => new Promise(resolve => (answer = resolve)),
    );
    const start = startServersPage(api);
    expect(listClusters).toHaveBeenCalledTimes(1);
    // No window before the clusters are known.
    expect(listServerWindow).not.toHaveBeenCalled();
    answer(CLUSTERS);
    const taken = start.take()!;
    await expect(taken.clusters).resolves.toEqual(CLUSTERS);
    expect(listServerWindow.mock.calls).toEqual([
      ['rack', FIRST_WINDOW_REQUEST],
    ]);
    await expect(
      taken.firstWindows.take('rack', FIRST_WINDOW_REQUEST),
    ).resolves.toEqual({ items: ['rack'] });
  });

  it('hands its answers to one page only: a later visit asks afresh', async () => {
    const { api } = fakeApi(async () => CLUSTERS);
    const start = startServersPage(api);
    expect(start.take()).toBeDefined();
    expect(start.take()).toBeUndefined();
    expect(start.take()).toBeUndefined();
  });

  it('is not taken once older than PAGE_START_FRESH_MS, even the first time', () => {
    const { api } = fakeApi(async () => CLUSTERS);
    let now = 1_000;
    const start = startServersPage(api, () => now);
    now += PAGE_START_FRESH_MS + 1;
    expect(start.take()).toBeUndefined();
    // Nor later: an old answer never comes back.
    now = 1_000;
    expect(start.take()).toBeUndefined();
  });

  it('keeps a failed clusters request for the page, unreported until then', async () => {
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const { api, listServerWindow } = fakeApi(async () => {
        throw new Error('403 servers:read denied');
      });
      const start = startServersPage(api);
      await new Promise(resolve => setTimeout(resolve, 0));
      expect(unhandled).not.toHaveBeenCalled();
      expect(listServerWindow).not.toHaveBeenCalled();
      await expect(start.take()!.clusters).rejects.toThrow(
        '403 servers:read denied',
      );
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});
