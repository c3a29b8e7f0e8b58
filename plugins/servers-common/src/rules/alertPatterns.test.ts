/*
 * The patterns of alert gates and node matchers, tried from the side of a person who
 * writes a pathological or backtracking-only pattern (docs/limits.md, "Patterns"): the
 * plan pre-flight runs the gate on the backend's event loop and the operator's leader runs
 * it before each step, so a pattern that takes V8 minutes must answer at once, and one
 * that Alertmanager's RE2 would refuse is refused here too.
 */
import { maintenancePlanSpecSchema } from '../resources/maintenancePlan';
import {
  alertGateMatcherError,
  alertnamePatternError,
  alertsHoldingGate,
} from './alertGate';
import {
  compileNodeAlertMatchers,
  renderAlertMatchers,
  validateAlertMatcherTemplates,
} from './alertMatchers';
import type { AlertState } from './racksideSilences';

const firing = (labels: Record<string, string>): AlertState => ({
  labels,
  status: { state: 'active', silencedBy: [], inhibitedBy: [] },
});

// 30 characters: V8's backtracking engine does not finish `(.|.|.|.)*!` on it.
const LONG_NAME = 'NodeFilesystemAlmostOutOfSpace';

// CPU milliseconds `run` took. CPU time, not wall-clock: the bounds below are against a
// pathological path (seconds to minutes), and a busy machine (the test command runs other
// suites beside this one) stretches the wall clock but not the work done.
function cpuMs(run: () => void): number {
  const started = process.cpuUsage();
  run();
  const { user, system } = process.cpuUsage(started);
  return (user + system) / 1000;
}

describe('alert patterns are linear and RE2', () => {
  it('a pathological alertnames pattern answers at once over many alerts', () => {
    const alerts = Array.from({ length: 200 }, (_, i) =>
      firing({ alertname: `${LONG_NAME}${i % 10}`, node: `worker-${i}` }),
    );
    let holding: AlertState[] = [];
    const ms = cpuMs(() => {
      holding = alertsHoldingGate(
        { alertnames: '(.|.|.|.)*!' },
        alerts,
        new Set(),
      );
    });
    expect(holding).toEqual([]);
    expect(ms).toBeLessThan(1000);
  });

  it('a pathological =~ gate matcher answers at once', () => {
    const ms = cpuMs(() => {
      expect(
        alertsHoldingGate(
          { matchers: ['instance=~"(a|aa)+b"'] },
          [firing({ alertname: 'Up', instance: 'a'.repeat(60) })],
          new Set(),
        ),
      ).toEqual([]);
    });
    expect(ms).toBeLessThan(1000);
  });

  it.each(['(?=Disk)Disk.*', 'Disk(?!Full)', '(Disk)\\1'])(
    'refuses %s in alertnames and in a gate matcher, as Alertmanager would',
    pattern => {
      expect(alertnamePatternError(pattern)).toMatch(
        /not a valid RE2 regular expression/,
      );
      expect(
        alertGateMatcherError(`alertname=~${JSON.stringify(pattern)}`),
      ).toMatch(/not a valid RE2 regular expression/);
    },
  );

  it('the plan spec refuses a backtracking-only pattern before anything is written', () => {
    const parsed = maintenancePlanSpecSchema.safeParse({
      intent: 'drain',
      nodes: ['worker-1'],
      reason: 'kernel update',
      gates: { alerts: { alertnames: '(?=A)A' } },
    });
    expect(parsed.success).toBe(false);
  });

  it('a node matcher template with a pathological regex answers at once', () => {
    const matchers = renderAlertMatchers(['instance=~"(x+x+)+y{{node}}"'], {
      name: 'worker-1',
    });
    const matches = compileNodeAlertMatchers(matchers);
    const ms = cpuMs(() => {
      expect(matches({ instance: 'x'.repeat(40) })).toBe(false);
    });
    expect(ms).toBeLessThan(1000);
  });

  it('a configuration whose matcher template is not RE2 is refused at start, naming it', () => {
    expect(() =>
      validateAlertMatcherTemplates(['instance=~"(?=x){{node}}"']),
    ).toThrow(/instance=~.*not a valid RE2 regular expression/);
  });
});
