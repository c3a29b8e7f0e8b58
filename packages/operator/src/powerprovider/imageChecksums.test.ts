import { ImageChecksums } from './imageChecksums';

/** A fetch the test ends by hand, counting the fetches started. */
function manualFetch() {
  const pending: Array<{
    uri: string;
    resolve(v: string): void;
    reject(e: Error): void;
  }> = [];
  const fetch = (uri: string) =>
    new Promise<string>((resolve, reject) =>
      pending.push({ uri, resolve, reject }),
    );
  return { fetch, pending };
}

/** Lets the settled fetch's callbacks run. */
const settle = () => new Promise(resolve => setImmediate(resolve));

describe('ImageChecksums', () => {
  it('never waits for a fetch, and starts one per image however often it is asked', async () => {
    const { fetch, pending } = manualFetch();
    const checksums = new ImageChecksums(fetch);
    expect(checksums.read('https://fw/a.bin')).toEqual({ state: 'fetching' });
    expect(checksums.read('https://fw/a.bin')).toEqual({ state: 'fetching' });
    await settle();
    expect(pending.map(p => p.uri)).toEqual(['https://fw/a.bin']);
    pending[0].resolve(`sha256:${'a'.repeat(64)}`);
    await settle();
    expect(checksums.read('https://fw/a.bin')).toEqual({
      state: 'read',
      checksum: `sha256:${'a'.repeat(64)}`,
    });
    expect(pending).toHaveLength(1);
  });

  it('answers a failed fetch with its message', async () => {
    const { fetch, pending } = manualFetch();
    const checksums = new ImageChecksums(fetch);
    checksums.read('https://fw/a.bin');
    await settle();
    pending[0].reject(new Error('answered 404'));
    await settle();
    expect(checksums.read('https://fw/a.bin')).toEqual({
      state: 'failed',
      message: 'answered 404',
    });
  });

  it('fetches the image again once its reading is no longer fresh (the source may have changed)', async () => {
    const { fetch, pending } = manualFetch();
    let now = 0;
    const checksums = new ImageChecksums(fetch, () => now, 1000);
    checksums.read('https://fw/a.bin');
    await settle();
    pending[0].resolve(`sha256:${'a'.repeat(64)}`);
    await settle();
    now = 999;
    expect(checksums.read('https://fw/a.bin').state).toBe('read');
    now = 1000;
    expect(checksums.read('https://fw/a.bin')).toEqual({ state: 'fetching' });
    await settle();
    expect(pending).toHaveLength(2);
  });

  it('remembers a bounded number of images, dropping the oldest finished readings', async () => {
    const { fetch, pending } = manualFetch();
    let now = 0;
    const checksums = new ImageChecksums(fetch, () => now);
    for (let i = 0; i < 64; i++) checksums.read(`https://fw/${i}.bin`);
    await settle();
    for (const [i, p] of pending.entries()) {
      now = i;
      p.resolve(`sha256:${String(i).padStart(64, '0')}`);
      await settle();
    }
    checksums.read('https://fw/new.bin');
    // The first to end was dropped: asking for it fetches it again.
    expect(checksums.read('https://fw/0.bin')).toEqual({ state: 'fetching' });
    expect(checksums.read('https://fw/63.bin').state).toBe('read');
  });
});
