import { renewalAcknowledgement, stepAcknowledgement } from './planRenewal';

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

describe('stepAcknowledgement', () => {
  it("is the latest acknowledgement naming the step: a renewal's for the steps it covered", () => {
    const created = {
      by: 'user:default/creator',
      at: '2026-12-01T00:00:00Z',
      on: 'create' as const,
      preflightTakenAt: '2026-11-30T23:59:00Z',
      rungs: { 'worker-1': 'typed-name' as const, 'cp-1': 'hazard' as const },
    };
    const renewed = {
      ...created,
      by: 'user:default/renewer',
      on: 'renew' as const,
      preflightTakenAt: '2026-12-02T00:00:00Z',
      rungs: { 'cp-1': 'hazard' as const },
    };
    const spec = { acknowledgements: [created, renewed] };
    expect(stepAcknowledgement(spec, 'cp-1')).toBe(renewed);
    expect(stepAcknowledgement(spec, 'worker-1')).toBe(created);
    expect(stepAcknowledgement(spec, 'worker-9')).toBeUndefined();
    expect(stepAcknowledgement({}, 'cp-1')).toBeUndefined();
  });
});
