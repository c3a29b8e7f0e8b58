import { parseServerResourceRef, serverResourceRefOf } from './serverResource';

describe('server resource refs', () => {
  it('round-trips cluster and node', () => {
    const ref = serverResourceRefOf('plant-a', 'worker-1');
    expect(ref).toBe('plant-a/worker-1');
    expect(parseServerResourceRef(ref)).toEqual({
      cluster: 'plant-a',
      node: 'worker-1',
    });
  });

  it('rejects malformed refs', () => {
    expect(parseServerResourceRef('plant-a')).toBeUndefined();
    expect(parseServerResourceRef('/worker-1')).toBeUndefined();
    expect(parseServerResourceRef('plant-a/')).toBeUndefined();
  });
});
