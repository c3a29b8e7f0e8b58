import { createFirstWindows } from './firstWindows';
import type { ServersApi } from '../../api';

const REQUEST = {
  limit: 100,
  sort: 'name' as const,
  direction: 'asc' as const,
};

function api(answer: (cluster: string) => Promise<unknown>) {
  const listServerWindow = jest.fn(answer);
  return {
    api: { listServerWindow } as unknown as ServersApi,
    listServerWindow,
  };
}

describe('createFirstWindows', () => {
  it('hands a started window to the one request that asks exactly it, once', async () => {
    const { api: a, listServerWindow } = api(async c => ({ items: [c] }));
    const first = createFirstWindows(a);
    first.start(['rack', 'far'], REQUEST);
    expect(listServerWindow).toHaveBeenCalledTimes(2);
    // Another sort, another limit, a filter or a continue is not the first window.
    expect(first.take('rack', { ...REQUEST, sort: 'ready' })).toBeUndefined();
    expect(first.take('rack', { ...REQUEST, limit: 200 })).toBeUndefined();
    expect(first.take('rack', { ...REQUEST, filter: 'w' })).toBeUndefined();
    expect(first.take('rack', { ...REQUEST, continue: 't' })).toBeUndefined();
    await expect(first.take('rack', { ...REQUEST })).resolves.toEqual({
      items: ['rack'],
    });
    // Taken: a later walk with the same request (a reload) asks the API afresh.
    expect(first.take('rack', REQUEST)).toBeUndefined();
    await expect(first.take('far', REQUEST)).resolves.toEqual({
      items: ['far'],
    });
  });

  it('asks a cluster at most once per page, even when started again', () => {
    const { api: a, listServerWindow } = api(async () => ({}));
    const first = createFirstWindows(a);
    first.start(['rack'], REQUEST);
    expect(first.take('rack', REQUEST)).toBeDefined();
    first.start(['rack'], REQUEST);
    expect(listServerWindow).toHaveBeenCalledTimes(1);
    // No stale answer waits for a later request of the same window.
    expect(first.take('rack', REQUEST)).toBeUndefined();
  });

  it('keeps a failure for the request that takes it, unreported until then', async () => {
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const { api: a } = api(async () => {
        throw new Error('503 from the backend');
      });
      const first = createFirstWindows(a);
      first.start(['rack'], REQUEST);
      // A turn of the event loop: when an unhandled rejection would be reported.
      await new Promise(resolve => setTimeout(resolve, 0));
      expect(unhandled).not.toHaveBeenCalled();
      await expect(first.take('rack', REQUEST)).rejects.toThrow(
        '503 from the backend',
      );
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});
