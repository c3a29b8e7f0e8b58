import { ServiceUnavailableError } from '@backstage/errors';
import { waitForFirstSync } from './cacheSync';

function pendingCache() {
  let resolve!: () => void;
  const synced = new Promise<void>(r => {
    resolve = r;
  });
  let done = false;
  return {
    synced: synced.then(() => {
      done = true;
    }),
    hasSynced: () => done,
    finish: () => resolve(),
  };
}

describe('waitForFirstSync', () => {
  afterEach(() => jest.useRealTimers());

  it('waits for the first list', async () => {
    const cache = pendingCache();
    const waited = waitForFirstSync(cache, {
      cluster: 'plant-a',
      items: 'nodes',
    });
    cache.finish();
    await expect(waited).resolves.toBeUndefined();
  });

  it('answers 503 naming the cluster, the items and the hint when the list never comes', async () => {
    jest.useFakeTimers();
    const waited = waitForFirstSync(pendingCache(), {
      cluster: 'plant-a',
      items: 'TalosMachines',
      hint: 'are the Rackside CRDs installed?',
    });
    jest.advanceTimersByTime(15_000);
    const error = await waited.catch(e => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error.message).toBe(
      'cluster plant-a: the TalosMachines are not loaded yet (the apiserver did not answer in time; are the Rackside CRDs installed?)',
    );
  });

  it('says only the timeout without a hint', async () => {
    jest.useFakeTimers();
    const waited = waitForFirstSync(pendingCache(), {
      cluster: 'plant-a',
      items: 'nodes',
    });
    jest.advanceTimersByTime(15_000);
    await expect(waited).rejects.toThrow(
      'cluster plant-a: the nodes are not loaded yet (the apiserver did not answer in time)',
    );
  });
});
