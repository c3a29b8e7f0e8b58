import { eventually } from './eventually';

describe('eventually', () => {
  it('returns the first truthy value, treating throws as not yet', async () => {
    let calls = 0;
    const value = await eventually(
      'the third call',
      () => {
        calls++;
        if (calls === 1) throw new Error('not ready');
        return calls === 3 ? 'done' : undefined;
      },
      { intervalMs: 1 },
    );
    expect(value).toBe('done');
    expect(calls).toBe(3);
  });

  it('names what it waited for, the last error and the detail on timeout', async () => {
    await expect(
      eventually(
        'a node to be Ready',
        () => {
          throw new Error('connection refused');
        },
        { timeoutMs: 20, intervalMs: 5, detail: () => 'operator log: idle' },
      ),
    ).rejects.toThrow(
      /a node to be Ready\nlast error: connection refused\noperator log: idle/,
    );
  });
});
