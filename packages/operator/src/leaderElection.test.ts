import { microTime } from './leaderElection';

describe('microTime', () => {
  it('gives the six fractional digits a Lease MicroTime needs', () => {
    expect(microTime(new Date('2026-01-02T03:04:05.678Z'))).toBe(
      '2026-01-02T03:04:05.678000Z',
    );
  });
});
