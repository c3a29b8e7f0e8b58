import type { GuardResult } from './guard';
import {
  abandonWouldStrand,
  acknowledgedRung,
  holdsNodeCordoned,
  sendAllowed,
  whyNotAbandon,
  whyNotPowerOn,
} from './maintenanceRules';

const result = (verdict: GuardResult['verdict']): GuardResult => ({
  verdict,
  members: 3,
  quorum: 2,
  margin: 1,
  marginAfter: 0,
  reason: 'numbers',
});

describe('abandon and power-on offers', () => {
  it('never offers abandon while the machine is off; power-on stays the way back', () => {
    const off = { intent: 'shutdown' as const, phase: 'PoweredOff' as const };
    expect(abandonWouldStrand(off)).toBe(true);
    expect(whyNotAbandon('m', off)).toMatch(/no way back/);
    expect(whyNotPowerOn('m', 'worker-1', off)).toBeUndefined();
    // Held abandon written with kubectl: power-on still offered.
    expect(
      whyNotPowerOn('m', 'worker-1', { ...off, abandon: { by: 'x' } }),
    ).toBeUndefined();
    expect(
      whyNotPowerOn('m', 'worker-1', { ...off, powerOn: { by: 'x' } }),
    ).toMatch(/already requested/);
    expect(
      whyNotPowerOn('m', 'worker-1', { ...off, returnToService: { by: 'x' } }),
    ).toMatch(/already ending/);
  });

  it('offers abandon in every other open phase, unless already ending', () => {
    for (const phase of [
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
      'Rebooting',
    ] as const) {
      expect(whyNotAbandon('m', { intent: 'reboot', phase })).toBeUndefined();
    }
    expect(
      whyNotAbandon('m', {
        intent: 'drain',
        phase: 'Drained',
        returnToService: {},
      }),
    ).toMatch(/already ending/);
    expect(
      whyNotPowerOn('m', 'worker-1', { intent: 'drain', phase: 'Drained' }),
    ).toMatch(/not powered off/);
  });

  it('a Refused maintenance holds the node only if it had cordoned it and the node is still cordoned', () => {
    const refused = {
      intent: 'reboot' as const,
      phase: 'Refused' as const,
      cordonedAt: '2026-01-01T00:00:00Z',
    };
    expect(holdsNodeCordoned(refused, true)).toBe(true);
    expect(holdsNodeCordoned(refused, false)).toBe(false);
    expect(holdsNodeCordoned({ ...refused, cordonedAt: undefined }, true)).toBe(
      false,
    );
    expect(holdsNodeCordoned({ ...refused, phase: 'Complete' }, true)).toBe(
      false,
    );
  });
});

describe('send at the moment of acting', () => {
  it('never sends a refusal; sends a hazard only when acknowledged at the hazard tier', () => {
    expect(sendAllowed(result('refuse'), 'hazard')).toBe(false);
    expect(sendAllowed(result('hazard'), 'typed-name')).toBe(false);
    expect(sendAllowed(result('hazard'), 'hazard')).toBe(true);
    expect(sendAllowed(result('allow'), 'typed-name')).toBe(true);
  });

  it('reads the rung from the pre-flight, else from the admission verdict', () => {
    expect(acknowledgedRung('typed-name', 'hazard')).toBe('typed-name');
    expect(acknowledgedRung(undefined, 'hazard')).toBe('hazard');
    expect(acknowledgedRung(undefined, 'allow')).toBe('typed-name');
    expect(acknowledgedRung(undefined, undefined)).toBe('typed-name');
  });
});
