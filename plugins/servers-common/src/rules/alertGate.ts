/*
 * A MaintenancePlan's alert gate (docs/alerts.md, "The alert gate"): before each next step
 * the plan waits while an alert fires that matches the gate. The operator decides with
 * these functions from a fresh read of Alertmanager at the moment it would start a step;
 * the backend's plan pre-flight calls the same ones to show what would hold the gate now.
 *
 * A gate that cannot see holds: Alertmanager unreachable, stalled or not configured is
 * "unknown", and unknown holds the plan (as kured holds a reboot on a query error), unless
 * the plan opts out with `whenUnknown: Proceed`. Whoever breaks the path to Alertmanager
 * must not push a plan past its gate.
 */
import {
  alertMatcherHolds,
  parseAlertMatcherTemplate,
  type AlertMatcher,
} from './alertMatchers';
import { compilePattern, patternError, type CompiledPattern } from './pattern';
import { alertFires, type AlertState } from './racksideSilences';

/**
 * What Rackside knows of Alertmanager's alerts at one moment: every alert (silenced and
 * inhibited ones included) and the ids of Rackside's own silences; or unknown, and why.
 */
export type AlertSnapshot =
  | {
      known: true;
      alerts: readonly AlertState[];
      racksideSilenceIds: ReadonlySet<string>;
    }
  | { known: false; reason: string };

/**
 * An alert gate as written (MaintenancePlan spec.gates.alerts, whose schema calls this
 * file's checks; defined here so the schema and these rules do not import each other).
 */
export interface AlertGateInput {
  matchers?: string[];
  alertnames?: string;
  severities?: string[];
  /** Default true. */
  ignoreSilencedByRackside?: boolean;
  /** An alert a person silenced holds the gate too; default false. */
  includeSilenced?: boolean;
  /** Alertmanager cannot be read: `Hold` (default) or `Proceed` (the plan's opt-in). */
  whenUnknown?: AlertGateWhenUnknown;
}

/** What an alert gate does when the alert state is unknown. */
export const ALERT_GATE_WHEN_UNKNOWN = ['Hold', 'Proceed'] as const;
/** What an alert gate does when the alert state is unknown. */
export type AlertGateWhenUnknown = (typeof ALERT_GATE_WHEN_UNKNOWN)[number];

/**
 * Why a gate matcher is refused, or undefined: not `label op "value"`, a placeholder
 * (`{{node}}` means nothing in a gate, which is about the whole cluster), or a regex
 * value that does not compile.
 */
export function alertGateMatcherError(text: string): string | undefined {
  let parsed: ReturnType<typeof parseAlertMatcherTemplate>;
  try {
    parsed = parseAlertMatcherTemplate(text);
  } catch (error) {
    return (error as Error).message;
  }
  if (/\{\{|\}\}/.test(parsed.value)) {
    return `alert gate matcher ${JSON.stringify(
      text,
    )}: placeholders like {{node}} are not allowed in a gate`;
  }
  if (parsed.op === '=~' || parsed.op === '!~') {
    return patternError(
      parsed.value,
      `alert gate matcher ${JSON.stringify(text)}`,
    );
  }
  return undefined;
}

/**
 * Why an alertnames pattern is refused, or undefined: not RE2, or past the length cap
 * (servers-common's `patternError`). The pattern is compiled alone and matched whole, so
 * `Foo)|(.*` is refused rather than compiled as two alternatives, one of them unanchored.
 */
export function alertnamePatternError(pattern: string): string | undefined {
  return patternError(pattern, `alertnames ${JSON.stringify(pattern)}`);
}

/** A gate ready to match alerts. */
export interface CompiledAlertGate {
  matchers: AlertMatcher[];
  alertname?: CompiledPattern;
  severities?: ReadonlySet<string>;
  throughRacksideSilences: boolean;
  throughPersonSilences: boolean;
}

/**
 * The gate compiled; throws an Error saying what is wrong when a matcher or the alertnames
 * pattern is refused (a plan written with kubectl bypasses the request body's checks).
 */
export function compileAlertGate(gate: AlertGateInput): CompiledAlertGate {
  const matchers = (gate.matchers ?? []).map(text => {
    const error = alertGateMatcherError(text);
    if (error) throw new Error(error);
    const { name, op, value } = parseAlertMatcherTemplate(text);
    return {
      name,
      value,
      isRegex: op === '=~' || op === '!~',
      isEqual: op === '=' || op === '=~',
    };
  });
  let alertname: CompiledPattern | undefined;
  if (gate.alertnames !== undefined) {
    alertname = compilePattern(
      gate.alertnames,
      `alertnames ${JSON.stringify(gate.alertnames)}`,
    );
  }
  return {
    matchers,
    alertname,
    severities:
      gate.severities && gate.severities.length > 0
        ? new Set(gate.severities)
        : undefined,
    throughRacksideSilences: !(gate.ignoreSilencedByRackside ?? true),
    throughPersonSilences: gate.includeSilenced ?? false,
  };
}

/** Whether an alert's labels match the gate (every matcher, the name, a severity). */
export function alertMatchesGate(
  gate: CompiledAlertGate,
  labels: Record<string, string>,
): boolean {
  if (!gate.matchers.every(m => alertMatcherHolds(m, labels))) return false;
  if (gate.alertname && !gate.alertname.matchesWhole(labels.alertname ?? '')) {
    return false;
  }
  if (gate.severities && !gate.severities.has(labels.severity ?? '')) {
    return false;
  }
  return true;
}

/** The alerts that hold the gate now: they match it and fire as the gate sees them. */
export function alertsHoldingGate<A extends AlertState>(
  gate: AlertGateInput,
  alerts: readonly A[],
  racksideSilenceIds: ReadonlySet<string>,
): A[] {
  const compiled = compileAlertGate(gate);
  return alerts.filter(
    alert =>
      alertMatchesGate(compiled, alert.labels) &&
      alertFires(alert, racksideSilenceIds, compiled),
  );
}

/** An alert in a message: its name, and the node or instance and severity when it has them. */
export function alertText(alert: AlertState): string {
  const { alertname, node, instance, severity } = alert.labels;
  const where = node ?? instance;
  const details = [where, severity].filter(Boolean).join(', ');
  return `${alertname ?? '(no alertname)'}${details ? ` (${details})` : ''}`;
}

/** Alert names for a message, sorted, each once: "A (worker-1, critical), B". */
export function alertListText(alerts: readonly AlertState[]): string {
  return [...new Set(alerts.map(alertText))].sort().join(', ');
}

/** The gate's verdict now. */
export type AlertGateVerdict =
  | { holds: true; known: true; alerts: AlertState[]; message: string }
  /** Unknown holds ("alert state unknown: why"), the default. */
  | { holds: true; known: false; message: string }
  | { holds: false; known: true; message: string }
  /** Unknown, and the plan said `whenUnknown: Proceed`: the caller records why. */
  | { holds: false; known: false; message: string }
  /** The gate cannot be checked as written: the plan stops. */
  | { holds: false; known: true; refused: true; message: string };

/** Whether the gate holds the plan now, from a snapshot of Alertmanager. */
export function alertGateVerdict(
  gate: AlertGateInput,
  snapshot: AlertSnapshot,
): AlertGateVerdict {
  let compiled: CompiledAlertGate;
  try {
    compiled = compileAlertGate(gate);
  } catch (error) {
    return {
      holds: false,
      known: true,
      refused: true,
      message: (error as Error).message,
    };
  }
  if (!snapshot.known) {
    if (gate.whenUnknown === 'Proceed') {
      return {
        holds: false,
        known: false,
        message: `alert state unknown: ${snapshot.reason}; the gate proceeds (whenUnknown: Proceed)`,
      };
    }
    return {
      holds: true,
      known: false,
      message: `alert state unknown: ${snapshot.reason}`,
    };
  }
  const holding = snapshot.alerts.filter(
    alert =>
      alertMatchesGate(compiled, alert.labels) &&
      alertFires(alert, snapshot.racksideSilenceIds, compiled),
  );
  if (holding.length === 0) {
    return {
      holds: false,
      known: true,
      message: 'no matching alert fires',
    };
  }
  return {
    holds: true,
    known: true,
    alerts: holding,
    message: `alerts firing: ${alertListText(holding)}`,
  };
}
