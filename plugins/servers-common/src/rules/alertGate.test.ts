import { maintenancePlanSpecSchema } from '../resources/maintenancePlan';
import {
  alertGateMatcherError,
  alertGateVerdict,
  alertnamePatternError,
  alertsHoldingGate,
  type AlertSnapshot,
} from './alertGate';
import type { AlertState } from './racksideSilences';

function alert(
  labels: Record<string, string>,
  status: Partial<AlertState['status']> = {},
): AlertState {
  return {
    labels,
    status: {
      state:
        status.silencedBy?.length || status.inhibitedBy?.length
          ? 'suppressed'
          : 'active',
      silencedBy: [],
      inhibitedBy: [],
      ...status,
    },
  };
}

const disk = alert({
  alertname: 'DiskFull',
  node: 'worker-1',
  severity: 'critical',
  team: 'db-core',
});
const cpu = alert({
  alertname: 'CPUHigh',
  node: 'worker-2',
  severity: 'warning',
});
const known = (
  alerts: AlertState[],
  rackside: string[] = [],
): AlertSnapshot => ({
  known: true,
  alerts,
  racksideSilenceIds: new Set(rackside),
});

describe('alert gate', () => {
  it('holds while a matching alert fires, naming it, and not while none matches', () => {
    const verdict = alertGateVerdict(
      { severities: ['critical'] },
      known([disk, cpu]),
    );
    expect(verdict).toMatchObject({
      holds: true,
      message: 'alerts firing: DiskFull (worker-1, critical)',
    });
    expect(
      alertGateVerdict({ severities: ['page'] }, known([disk, cpu])),
    ).toMatchObject({ holds: false, known: true });
    // No criteria at all: every firing alert holds it.
    expect(alertsHoldingGate({}, [disk, cpu], new Set())).toHaveLength(2);
  });

  it('ANDs the matchers, the alertname pattern and the severities', () => {
    const gate = {
      matchers: ['team=~"db.*"', 'severity!="info"'],
      alertnames: 'Disk.*|Memory.*',
      severities: ['critical', 'warning'],
    };
    expect(alertsHoldingGate(gate, [disk, cpu], new Set())).toEqual([disk]);
    expect(
      alertsHoldingGate(
        { ...gate, matchers: ['team=~"db.*"', 'severity="warning"'] },
        [disk, cpu],
        new Set(),
      ),
    ).toEqual([]);
  });

  it('anchors the alertname pattern: a prefix or a substring does not match', () => {
    expect(
      alertsHoldingGate({ alertnames: 'Disk' }, [disk], new Set()),
    ).toEqual([]);
    expect(
      alertsHoldingGate({ alertnames: 'isk.*' }, [disk], new Set()),
    ).toEqual([]);
    expect(
      alertsHoldingGate({ alertnames: 'DiskFull' }, [disk], new Set()),
    ).toEqual([disk]);
    // `.*` anchored is still everything, which is what it says.
    expect(
      alertsHoldingGate({ alertnames: '.*' }, [disk, cpu], new Set()),
    ).toHaveLength(2);
  });

  it('refuses a pattern that would escape its anchors', () => {
    // Inside ^(?:...)$ this would compile as an unanchored alternative matching everything.
    expect(alertnamePatternError('Nope)|(.*')).toMatch(
      /not a valid (RE2 )?regular expression/,
    );
    expect(alertnamePatternError('[')).toMatch(
      /not a valid (RE2 )?regular expression/,
    );
    expect(alertnamePatternError('Disk(Full|Slow)')).toBeUndefined();
    const verdict = alertGateVerdict(
      { alertnames: 'Nope)|(.*' },
      known([disk]),
    );
    expect(verdict).toMatchObject({ holds: false, refused: true });
  });

  it('refuses matchers with placeholders, bad syntax or a bad regex', () => {
    expect(alertGateMatcherError('severity="critical"')).toBeUndefined();
    expect(alertGateMatcherError('node="{{node}}"')).toMatch(/placeholders/);
    expect(alertGateMatcherError('severity = critical')).toMatch(/must be/);
    expect(alertGateMatcherError('team=~"(db"')).toMatch(/regular expression/);
  });

  it("does not hold on an alert a person silenced, even when Rackside's silence is looked through, unless includeSilenced", () => {
    const personSilenced = alert(disk.labels, { silencedBy: ['person-1'] });
    const both = alert(disk.labels, { silencedBy: ['person-1', 'rackside-1'] });
    for (const ignoreSilencedByRackside of [true, false]) {
      expect(
        alertGateVerdict(
          { ignoreSilencedByRackside },
          known([personSilenced, both], ['rackside-1']),
        ).holds,
      ).toBe(false);
    }
    // includeSilenced: a person's silence does not hide it from the gate.
    expect(
      alertGateVerdict(
        { includeSilenced: true },
        known([personSilenced], ['rackside-1']),
      ),
    ).toMatchObject({ holds: true, known: true });
    // Silenced by a person and by Rackside: both must be looked through.
    expect(
      alertGateVerdict({ includeSilenced: true }, known([both], ['rackside-1']))
        .holds,
    ).toBe(false);
    expect(
      alertGateVerdict(
        { includeSilenced: true, ignoreSilencedByRackside: false },
        known([both], ['rackside-1']),
      ).holds,
    ).toBe(true);
  });

  it('an alert silenced only by Rackside holds when ignoreSilencedByRackside is false, not when true', () => {
    const racksideSilenced = alert(disk.labels, { silencedBy: ['rackside-1'] });
    const snapshot = known([racksideSilenced], ['rackside-1']);
    expect(
      alertGateVerdict({ ignoreSilencedByRackside: false }, snapshot).holds,
    ).toBe(true);
    expect(
      alertGateVerdict({ ignoreSilencedByRackside: true }, snapshot).holds,
    ).toBe(false);
    // The default is true.
    expect(alertGateVerdict({}, snapshot).holds).toBe(false);
  });

  it('an inhibited alert that matches holds, even when the alert that inhibits it is outside the gate', () => {
    // A warning gate; the node's critical alert inhibits its warning and is not in scope.
    const warning = alert(
      { alertname: 'DiskSlow', node: 'worker-1', severity: 'warning' },
      { inhibitedBy: ['fp-critical'] },
    );
    const critical = alert({
      alertname: 'NodeOnFire',
      node: 'worker-1',
      severity: 'critical',
    });
    expect(
      alertGateVerdict({ severities: ['warning'] }, known([warning, critical])),
    ).toEqual({
      holds: true,
      known: true,
      alerts: [warning],
      message: 'alerts firing: DiskSlow (worker-1, warning)',
    });
  });

  it('unknown (Alertmanager unreachable, stalled or not configured) holds, and says why', () => {
    const verdict = alertGateVerdict(
      { severities: ['critical'] },
      { known: false, reason: 'connect ECONNREFUSED 127.0.0.1:1' },
    );
    expect(verdict).toEqual({
      holds: true,
      known: false,
      message: 'alert state unknown: connect ECONNREFUSED 127.0.0.1:1',
    });
    expect(
      alertGateVerdict(
        { severities: ['critical'], whenUnknown: 'Hold' },
        { known: false, reason: 'stalled' },
      ).holds,
    ).toBe(true);
  });

  it('unknown with whenUnknown: Proceed does not hold, and says it proceeded on the opt-in', () => {
    expect(
      alertGateVerdict(
        { whenUnknown: 'Proceed' },
        { known: false, reason: 'no Alertmanager is configured' },
      ),
    ).toEqual({
      holds: false,
      known: false,
      message:
        'alert state unknown: no Alertmanager is configured; the gate proceeds (whenUnknown: Proceed)',
    });
  });

  it('the plan spec refuses bad gates before anything is written', () => {
    const spec = (alerts: unknown) =>
      maintenancePlanSpecSchema.safeParse({
        intent: 'drain',
        nodes: ['worker-1'],
        reason: 'kernel update',
        gates: { alerts },
      });
    expect(spec({ severities: ['critical'] }).success).toBe(true);
    expect(spec({ alertnames: 'Nope)|(.*' }).success).toBe(false);
    expect(spec({ matchers: ['node="{{node}}"'] }).success).toBe(false);
    expect(
      spec({ matchers: Array.from({ length: 9 }, () => 'a="b"') }).success,
    ).toBe(false);
    expect(spec({ alertnames: 'x'.repeat(257) }).success).toBe(false);
    expect(
      spec({ whenUnknown: 'Proceed', includeSilenced: true }).success,
    ).toBe(true);
    expect(spec({ whenUnknown: 'Ignore' }).success).toBe(false);
    const parsed = spec({});
    expect(parsed.success && parsed.data.gates?.alerts).toMatchObject({
      ignoreSilencedByRackside: true,
      includeSilenced: false,
      whenUnknown: 'Hold',
    });
  });
});
