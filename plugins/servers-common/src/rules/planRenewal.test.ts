import { renewalAcknowledgement } from './planRenewal';

describe('renewalAcknowledgement', () => {
  const spec = {
    intent: 'reboot' as const,
    acknowledged: {
      'cp-1': 'hazard' as const,
      'worker-1': 'typed-name' as const,
    },
  };

  it('needs nothing when every remaining step is at or below the rung it was acknowledged at', () => {
    expect(
      renewalAcknowledgement(spec, [{ node: 'worker-1', rung: 'typed-name' }]),
    ).toEqual({ needed: false, reasons: [], hazard: [] });
    // A node the plan does not name: the intent's own rung (reboot: typed-name).
    expect(
      renewalAcknowledgement(spec, [{ node: 'worker-9', rung: 'typed-name' }])
        .needed,
    ).toBe(false);
  });

  it("never carries someone else's hazard acknowledgement: now at hazard, or acknowledged at it", () => {
    expect(
      renewalAcknowledgement(spec, [
        { node: 'cp-1', rung: 'typed-name' },
        { node: 'worker-1', rung: 'hazard' },
      ]),
    ).toEqual({
      needed: true,
      reasons: [
        'cp-1 was acknowledged at the hazard rung by someone else',
        'worker-1 is at the hazard rung now',
      ],
      hazard: ['worker-1'],
    });
  });

  it('needs a fresh acknowledgement when a rung grew, up to a refusal', () => {
    const drain = { intent: 'drain' as const };
    expect(
      renewalAcknowledgement(drain, [{ node: 'worker-2', rung: 'typed-name' }])
        .reasons,
    ).toEqual([
      'worker-2 is at the typed-name rung now, above the preflight rung it was acknowledged at',
    ]);
    expect(
      renewalAcknowledgement(spec, [{ node: 'worker-1', rung: 'refused' }])
        .needed,
    ).toBe(true);
  });
});
