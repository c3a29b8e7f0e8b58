import { ceremonyAt, ceremonyFor, checkCeremony } from './ceremony';
import {
  criticalHardwareReason,
  failedPartsOf,
  hardwareHealthRaise,
  type HardwareHealthFacts,
} from './hardwareHealth';

const critical: HardwareHealthFacts = {
  rollup: 'Critical',
  parts: [
    { name: 'PSU 1', health: 'Critical' },
    { name: 'Fan 3', health: 'Warning' },
  ],
};

describe('hardwareHealthRaise', () => {
  it('raises returning a Critical server to the typed name and names the Critical parts', () => {
    const raise = hardwareHealthRaise('uncordon', critical);
    expect(raise).toEqual({
      level: 'typed-name',
      why: 'the BMC reports Critical: PSU 1',
    });
    const ceremony = ceremonyFor('uncordon', 'allow', raise);
    expect(ceremony.level).toBe('typed-name');
    expect(ceremony.requires.typedName).toBe(true);
    expect(ceremony.requires.preflightAck).toBe(false);
    expect(ceremony.why).toBe('the BMC reports Critical: PSU 1');
  });

  it('raises power-on (it returns a shut-down server) as well', () => {
    expect(hardwareHealthRaise('power-on', critical)?.level).toBe('typed-name');
  });

  it.each(['OK', 'Warning', 'Unknown'] as const)(
    'leaves a %s server at the action’s own rung',
    rollup => {
      const raise = hardwareHealthRaise('uncordon', { rollup, parts: [] });
      expect(raise).toBeUndefined();
      expect(ceremonyFor('uncordon', 'allow', raise).level).toBe('reason');
    },
  );

  it('leaves a server without a reading at its own rung', () => {
    expect(hardwareHealthRaise('uncordon', undefined)).toBeUndefined();
  });

  it('does not touch actions that take a server out of service', () => {
    for (const action of [
      'cordon',
      'drain',
      'reboot',
      'shutdown',
      'maintenance-abandon',
    ] as const) {
      expect(hardwareHealthRaise(action, critical)).toBeUndefined();
    }
  });

  it('refuses a submission without the typed name, and one with a wrong name', () => {
    const ceremony = ceremonyFor(
      'uncordon',
      'allow',
      hardwareHealthRaise('uncordon', critical),
    );
    expect(
      checkCeremony(ceremony, { reason: 'fixed', nodeName: 'worker-1' }),
    ).toEqual(['Type the node name worker-1 to confirm.']);
    expect(
      checkCeremony(ceremony, {
        reason: 'fixed',
        nodeName: 'worker-1',
        typedName: 'worker-2',
      }),
    ).toHaveLength(1);
    expect(
      checkCeremony(ceremony, {
        reason: 'fixed',
        nodeName: 'worker-1',
        typedName: 'worker-1',
      }),
    ).toEqual([]);
  });

  it('never lowers a hazard and never turns a refusal into a ceremony', () => {
    const raise = hardwareHealthRaise('uncordon', critical);
    const hazard = ceremonyFor('uncordon', 'hazard', raise);
    expect(hazard.level).toBe('hazard');
    expect(hazard.requires.typedReason).toBe(true);
    expect(hazard.why).toBe(raise?.why);
    expect(ceremonyFor('uncordon', 'refuse', raise).level).toBe('refused');
  });

  it('is rebuilt from the level the list sends', () => {
    const rebuilt = ceremonyAt('uncordon', 'typed-name', 'why');
    expect(rebuilt.level).toBe('typed-name');
    expect(rebuilt.requires.typedName).toBe(true);
    expect(rebuilt.why).toBe('why');
    // An action whose own rung is the typed name is no raise.
    expect(ceremonyAt('reboot', 'typed-name')).toEqual(
      ceremonyFor('reboot', 'allow'),
    );
  });
});

describe('criticalHardwareReason and failedPartsOf', () => {
  it('names the parts not OK when none is Critical, and none when the BMC names none', () => {
    expect(
      criticalHardwareReason({
        rollup: 'Critical',
        parts: [{ name: 'Drive 0', health: 'Warning' }],
      }),
    ).toBe('the BMC reports Critical: Drive 0');
    expect(criticalHardwareReason({ rollup: 'Critical' })).toBe(
      'the BMC reports Critical',
    );
  });

  it('counts the parts not OK', () => {
    expect(failedPartsOf(critical)).toBe(2);
    expect(failedPartsOf(undefined)).toBe(0);
  });
});
