import { ceremonyAt, ceremonyFor, checkCeremony } from './ceremony';
import {
  criticalHardwareReason,
  failedPartsOf,
  hardwareHealthRaise,
  hardwareReadingState,
  type HardwareHealthFacts,
} from './hardwareHealth';

const NOW = Date.parse('2026-12-07T12:00:00.000Z');
const minutesAgo = (m: number) => new Date(NOW - m * 60_000).toISOString();

const critical: HardwareHealthFacts = {
  rollup: 'Critical',
  readAt: minutesAgo(1),
  sweepIntervalSeconds: 900,
  parts: [
    { name: 'PSU 1', health: 'Critical' },
    { name: 'Fan 3', health: 'Warning' },
  ],
};

describe('hardwareHealthRaise', () => {
  it('raises returning a Critical server to the typed name and names the Critical parts', () => {
    const raise = hardwareHealthRaise('uncordon', critical, NOW);
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
    expect(hardwareHealthRaise('power-on', critical, NOW)?.level).toBe(
      'typed-name',
    );
  });

  it.each(['OK', 'Warning'] as const)(
    'leaves a server with a fresh %s reading at the action’s own rung',
    rollup => {
      const raise = hardwareHealthRaise(
        'uncordon',
        { rollup, parts: [], readAt: minutesAgo(1), sweepIntervalSeconds: 900 },
        NOW,
      );
      expect(raise).toBeUndefined();
      expect(ceremonyFor('uncordon', 'allow', raise).level).toBe('reason');
    },
  );

  it('leaves a server without a reading (no BMC, or not read yet) at its own rung', () => {
    expect(hardwareHealthRaise('uncordon', undefined, NOW)).toBeUndefined();
  });

  it('does not touch actions that take a server out of service', () => {
    for (const action of [
      'cordon',
      'drain',
      'reboot',
      'shutdown',
      'maintenance-abandon',
    ] as const) {
      expect(hardwareHealthRaise(action, critical, NOW)).toBeUndefined();
    }
  });

  it('refuses a submission without the typed name, and one with a wrong name', () => {
    const ceremony = ceremonyFor(
      'uncordon',
      'allow',
      hardwareHealthRaise('uncordon', critical, NOW),
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
    const raise = hardwareHealthRaise('uncordon', critical, NOW);
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

describe('a reading that no longer says anything (its age and its error)', () => {
  const ok = (
    over: Partial<HardwareHealthFacts> = {},
  ): HardwareHealthFacts => ({
    rollup: 'OK',
    parts: [],
    readAt: minutesAgo(1),
    sweepIntervalSeconds: 900,
    ...over,
  });

  it('an OK reading older than two sweep intervals is unknown, asks for the typed name, and says how old', () => {
    // 15-minute sweeps: 30 min is the last moment it counts; 3 h is long past it.
    const old = ok({ readAt: minutesAgo(180) });
    expect(hardwareReadingState(old, NOW)).toEqual({
      state: 'unknown',
      reason:
        'hardware state unknown: last reading 3 h ago (the sweep reads every 15 min)',
    });
    const raise = hardwareHealthRaise('uncordon', old, NOW);
    expect(raise).toEqual({
      level: 'typed-name',
      why: 'hardware state unknown: last reading 3 h ago (the sweep reads every 15 min)',
    });
    expect(ceremonyFor('uncordon', 'allow', raise).requires.typedName).toBe(
      true,
    );
    expect(
      checkCeremony(
        ceremonyFor(
          'power-on',
          'allow',
          hardwareHealthRaise('power-on', old, NOW),
        ),
        {
          reason: 'back',
          nodeName: 'worker-1',
        },
      ),
    ).toEqual(['Type the node name worker-1 to confirm.']);
  });

  it('judges the age by the interval the operator wrote into the reading, at the edge exactly', () => {
    expect(
      hardwareReadingState(ok({ readAt: minutesAgo(30) }), NOW).state,
    ).toBe('ok');
    expect(
      hardwareReadingState(
        ok({ readAt: new Date(NOW - 30 * 60_000 - 1).toISOString() }),
        NOW,
      ).state,
    ).toBe('unknown');
    // An operator sweeping every minute: 3 minutes is already too old.
    expect(
      hardwareReadingState(
        ok({ readAt: minutesAgo(3), sweepIntervalSeconds: 60 }),
        NOW,
      ).state,
    ).toBe('unknown');
    // A reading that does not say its interval is judged by the default (15 min).
    expect(
      hardwareReadingState(
        ok({ readAt: minutesAgo(20), sweepIntervalSeconds: undefined }),
        NOW,
      ).state,
    ).toBe('ok');
    // A nonsense interval does not make an old reading fresh.
    for (const sweepIntervalSeconds of [0, -5, Number.NaN, Infinity]) {
      expect(
        hardwareReadingState(
          ok({ readAt: minutesAgo(180), sweepIntervalSeconds }),
          NOW,
        ).state,
      ).toBe('unknown');
    }
  });

  it('a reading whose last read failed is unknown even when it is fresh and its parts were OK', () => {
    const failed = ok({
      error: 'GET /redfish/v1/Systems/1: answer larger than 16 MiB',
    });
    expect(hardwareReadingState(failed, NOW)).toEqual({
      state: 'unknown',
      reason:
        'hardware state unknown: the last reading failed: GET /redfish/v1/Systems/1: answer larger than 16 MiB',
    });
    expect(hardwareHealthRaise('uncordon', failed, NOW)?.level).toBe(
      'typed-name',
    );
    // An empty error is still an error.
    expect(hardwareReadingState(ok({ error: '' }), NOW).state).toBe('unknown');
  });

  it('a BMC never read successfully (Unknown, no readAt) is unknown; an unparsable readAt too', () => {
    expect(
      hardwareReadingState(
        { rollup: 'Unknown', parts: [], error: 'connect ECONNREFUSED' },
        NOW,
      ),
    ).toMatchObject({
      state: 'unknown',
      reason: expect.stringContaining('ECONNREFUSED'),
    });
    expect(hardwareReadingState({ rollup: 'OK', parts: [] }, NOW).state).toBe(
      'unknown',
    );
    expect(hardwareReadingState(ok({ readAt: 'yesterday' }), NOW).state).toBe(
      'unknown',
    );
    expect(hardwareReadingState(ok({ rollup: 'Unknown' }), NOW).state).toBe(
      'unknown',
    );
  });

  it('a Critical reading stays Critical when it is old or the read after it failed', () => {
    expect(
      hardwareReadingState(
        { ...critical, readAt: minutesAgo(600), error: 'timeout' },
        NOW,
      ),
    ).toEqual({ state: 'critical', reason: 'the BMC reports Critical: PSU 1' });
  });

  it('no reading at all (no ServerBMC) is none: nothing to read, nothing asked', () => {
    expect(hardwareReadingState(undefined, NOW)).toEqual({ state: 'none' });
  });

  it('an unknown reading asks nothing of actions that take a server out of service', () => {
    const old = ok({ readAt: minutesAgo(600) });
    for (const action of ['cordon', 'drain', 'reboot', 'shutdown'] as const) {
      expect(hardwareHealthRaise(action, old, NOW)).toBeUndefined();
    }
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
