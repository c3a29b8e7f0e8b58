import { nodeMaintenanceSpecSchema } from '../resources/nodeMaintenance';
import { DEFAULT_NODE_ALERT_MATCHERS } from './alertMatchers';
import { healthyReturnVerdict, nodeAlertsFiring } from './healthyReturn';
import type { AlertState } from './racksideSilences';

const back = Date.parse('2026-12-06T10:00:00Z');
const s = 1000;
const base = {
  returnedAt: back,
  readySince: back,
  healthyForSeconds: 60,
  timeoutSeconds: 300,
  graceMs: 30 * s,
};
const firing = (alertname: string, node = 'worker-1'): AlertState => ({
  labels: { alertname, node, severity: 'critical' },
  status: { state: 'active', silencedBy: [], inhibitedBy: [] },
});

describe('healthy return', () => {
  it('without Alertmanager: healthy once Ready for healthyForSeconds since the return', () => {
    expect(healthyReturnVerdict({ ...base, now: back + 59 * s })).toMatchObject(
      {
        kind: 'waiting',
        message:
          'healthy return: Ready since 2026-12-06T10:00:00.000Z, 60 s needed',
        recheckAt: back + 60 * s,
      },
    );
    expect(healthyReturnVerdict({ ...base, now: back + 60 * s }).kind).toBe(
      'healthy',
    );
  });

  it('counts Ready from the return, not from a Ready condition that never flipped', () => {
    const verdict = healthyReturnVerdict({
      ...base,
      readySince: back - 3600 * s,
      now: back + 10 * s,
    });
    expect(verdict).toMatchObject({ kind: 'waiting' });
  });

  it('not Ready: waits, and fails past the timeout', () => {
    expect(
      healthyReturnVerdict({
        ...base,
        readySince: undefined,
        now: back + 10 * s,
      }).kind,
    ).toBe('waiting');
    expect(
      healthyReturnVerdict({
        ...base,
        readySince: undefined,
        now: back + 300 * s,
      }),
    ).toEqual({
      kind: 'failed',
      message: 'not healthy 300 s after it came back: not Ready',
    });
  });

  it('the return grace is tolerance, not a floor: no alert, done; an alert, waited on', () => {
    // A node without alerts is done after its Ready period, within the grace.
    expect(
      healthyReturnVerdict({
        ...base,
        healthyForSeconds: 0,
        alerts: { known: true, firing: [] },
        now: back + 10 * s,
      }),
    ).toMatchObject({ kind: 'healthy' });
    // An alert firing within the grace holds the return but does not fail it, even
    // when the timeout is shorter than the grace.
    const alerts = { known: true as const, firing: [firing('NodeDown')] };
    expect(
      healthyReturnVerdict({
        ...base,
        healthyForSeconds: 0,
        timeoutSeconds: 5,
        alerts,
        now: back + 10 * s,
      }),
    ).toMatchObject({
      kind: 'waiting',
      message: 'healthy return: alerts firing: NodeDown (worker-1, critical)',
      deadline: back + 30 * s,
    });
    expect(
      healthyReturnVerdict({ ...base, alerts, now: back + 60 * s }),
    ).toMatchObject({
      kind: 'waiting',
      message: 'healthy return: alerts firing: NodeDown (worker-1, critical)',
    });
    expect(
      healthyReturnVerdict({
        ...base,
        alerts: { known: true, firing: [] },
        now: back + 60 * s,
      }),
    ).toMatchObject({ kind: 'healthy' });
  });

  it('an alert still firing past the timeout fails the return, naming it', () => {
    expect(
      healthyReturnVerdict({
        ...base,
        alerts: {
          known: true,
          firing: [firing('NodeDown'), firing('DiskFull')],
        },
        now: back + 300 * s,
      }),
    ).toEqual({
      kind: 'failed',
      message:
        'not healthy 300 s after it came back: alerts firing: DiskFull (worker-1, critical), NodeDown (worker-1, critical)',
    });
  });

  it('unknown alerts hold the return, and fail it at the timeout saying so', () => {
    const unknown = {
      known: false as const,
      reason: 'Alertmanager unreachable',
    };
    const held = healthyReturnVerdict({
      ...base,
      alerts: unknown,
      now: back + 60 * s,
    });
    expect(held).toMatchObject({
      kind: 'waiting',
      message: 'healthy return: alert state unknown: Alertmanager unreachable',
    });
    expect(
      healthyReturnVerdict({ ...base, alerts: unknown, now: back + 300 * s }),
    ).toEqual({
      kind: 'failed',
      message:
        'not healthy 300 s after it came back: alert state unknown: Alertmanager unreachable',
    });
  });

  it("sees the node's alerts through Rackside's silence and inhibitions, not through a person's silence", () => {
    const mine = {
      ...firing('A'),
      status: {
        state: 'suppressed' as const,
        silencedBy: ['rs'],
        inhibitedBy: [],
      },
    };
    const person = {
      ...firing('B'),
      status: {
        state: 'suppressed' as const,
        silencedBy: ['p'],
        inhibitedBy: [],
      },
    };
    const inhibited = {
      ...firing('C'),
      status: {
        state: 'suppressed' as const,
        silencedBy: [],
        inhibitedBy: ['x'],
      },
    };
    const other = firing('D', 'worker-10');
    const byInstance = {
      ...firing('E'),
      labels: { alertname: 'E', instance: 'worker-1:9100' },
    };
    const names = nodeAlertsFiring(
      DEFAULT_NODE_ALERT_MATCHERS,
      { name: 'worker-1' },
      {
        known: true,
        alerts: [mine, person, inhibited, other, byInstance],
        racksideSilenceIds: new Set(['rs']),
      },
    ).map(a => a.labels.alertname);
    expect(names).toEqual(['A', 'C', 'E']);
  });

  it('the NodeMaintenance spec takes healthyReturn within its bounds', () => {
    const spec = (healthyReturn: unknown) =>
      nodeMaintenanceSpecSchema.safeParse({
        nodeName: 'worker-1',
        intent: 'reboot',
        reason: 'kernel update',
        healthyReturn,
      });
    const parsed = spec({});
    expect(parsed.success && parsed.data.healthyReturn).toEqual({
      healthyForSeconds: 60,
      timeoutSeconds: 900,
    });
    expect(spec({ healthyForSeconds: 3601 }).success).toBe(false);
    expect(spec({ timeoutSeconds: 59 }).success).toBe(false);
    expect(spec({ healthyForSeconds: 1.5 }).success).toBe(false);
  });

  it('a BMC reporting Critical keeps the return waiting, then fails it naming the part; Warning does not', () => {
    const critical = {
      rollup: 'Critical' as const,
      parts: [{ name: 'PSU 2', health: 'Critical' as const }],
    };
    expect(
      healthyReturnVerdict({
        ...base,
        hardware: critical,
        now: back + 120 * s,
      }),
    ).toMatchObject({
      kind: 'waiting',
      message: 'healthy return: the BMC reports Critical: PSU 2',
    });
    expect(
      healthyReturnVerdict({
        ...base,
        hardware: critical,
        now: back + 300 * s,
      }),
    ).toEqual({
      kind: 'failed',
      message:
        'not healthy 300 s after it came back: the BMC reports Critical: PSU 2',
    });
    expect(
      healthyReturnVerdict({
        ...base,
        hardware: {
          rollup: 'Warning',
          parts: [{ name: 'Fan 1', health: 'Warning' }],
          readAt: new Date(back + 100 * s).toISOString(),
          sweepIntervalSeconds: 900,
        },
        now: back + 120 * s,
      }),
    ).toMatchObject({ kind: 'healthy' });
  });

  it('an OK reading older than two sweep intervals holds the return, then fails it at the timeout saying the hardware state is unknown and how old', () => {
    // Read OK three hours before the node came back; the sweep (15 min) has not written since.
    const old = {
      rollup: 'OK' as const,
      parts: [],
      readAt: new Date(back - 3 * 3600 * s).toISOString(),
      sweepIntervalSeconds: 900,
    };
    expect(
      healthyReturnVerdict({ ...base, hardware: old, now: back + 120 * s }),
    ).toMatchObject({
      kind: 'waiting',
      message:
        'healthy return: hardware state unknown: last reading 3 h ago (the sweep reads every 15 min)',
    });
    expect(
      healthyReturnVerdict({ ...base, hardware: old, now: back + 300 * s }),
    ).toEqual({
      kind: 'failed',
      message:
        'not healthy 300 s after it came back: hardware state unknown: last reading 3 h ago (the sweep reads every 15 min)',
    });
  });

  it('a fresh reading whose last read failed holds the return and fails it naming the error; a good reading after it lets it through', () => {
    const failed = {
      rollup: 'OK' as const,
      parts: [],
      readAt: new Date(back + 60 * s).toISOString(),
      error: 'GET /redfish/v1/Systems/1: timeout after 60 s',
      sweepIntervalSeconds: 900,
    };
    expect(
      healthyReturnVerdict({ ...base, hardware: failed, now: back + 120 * s }),
    ).toMatchObject({
      kind: 'waiting',
      message:
        'healthy return: hardware state unknown: the last reading failed: GET /redfish/v1/Systems/1: timeout after 60 s',
    });
    expect(
      healthyReturnVerdict({ ...base, hardware: failed, now: back + 300 * s }),
    ).toMatchObject({
      kind: 'failed',
      message: expect.stringContaining(
        'hardware state unknown: the last reading failed: GET /redfish/v1/Systems/1: timeout after 60 s',
      ),
    });
    const { error: _error, ...readAgain } = failed;
    expect(
      healthyReturnVerdict({
        ...base,
        hardware: readAgain,
        now: back + 120 * s,
      }).kind,
    ).toBe('healthy');
  });

  it('a node without a BMC reading is not held for its hardware', () => {
    expect(
      healthyReturnVerdict({
        ...base,
        hardware: undefined,
        now: back + 120 * s,
      }).kind,
    ).toBe('healthy');
  });
});
