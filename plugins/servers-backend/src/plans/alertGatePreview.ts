/*
 * The plan pre-flight's view of an alert gate (docs/alerts.md, "In the portal"): which of
 * the cluster's alerts, as the backend last read them, would hold the gate now.
 */
import { InputError } from '@backstage/errors';
import {
  ALERT_GATE_WHEN_UNKNOWN,
  alertGateMatcherError,
  alertnamePatternError,
  alertsHoldingGate,
  type PlanAlertGateInput,
  type PlanPreflightAlerts,
} from '@rackside/plugin-servers-common';
import type { ClusterAlerts } from '../cluster/nodeAlerts';
import { serverAlertOf } from '../cluster/nodeAlerts';
import {
  hiddenServersText,
  visibleNamesOfEveryServer,
  type VisibleNames,
} from '../access/visibleNames';

/** An alert gate as a pre-flight query carries it (`alertGate`, JSON). */
export type AlertGateQuery = PlanAlertGateInput;

const MAX_GATE_ENTRIES = 8;

function stringList(value: unknown, name: string, max: number): string[] {
  if (
    !Array.isArray(value) ||
    value.length > MAX_GATE_ENTRIES ||
    value.some(v => typeof v !== 'string' || v.length === 0 || v.length > max)
  ) {
    throw new InputError(
      `alertGate.${name} must be a list of at most ${MAX_GATE_ENTRIES} non-empty texts of at most ${max} characters`,
    );
  }
  return value as string[];
}

/**
 * Parses `alertGate` (JSON); undefined when absent. A 400 names what is wrong: the same
 * limits as the request body's `gates.alerts`.
 */
export function parseAlertGateQuery(
  value: unknown,
): AlertGateQuery | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > 4096) {
    throw new InputError('alertGate must be given once, as JSON text');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InputError('alertGate is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InputError('alertGate must be a JSON object');
  }
  const raw = parsed as Record<string, unknown>;
  const known = [
    'matchers',
    'alertnames',
    'severities',
    'ignoreSilencedByRackside',
    'includeSilenced',
    'whenUnknown',
  ];
  const unknown = Object.keys(raw).filter(k => !known.includes(k));
  if (unknown.length) {
    throw new InputError(`alertGate: unknown field ${unknown.join(', ')}`);
  }
  const gate: AlertGateQuery = {};
  if (raw.matchers !== undefined) {
    gate.matchers = stringList(raw.matchers, 'matchers', 1024);
    for (const text of gate.matchers) {
      const error = alertGateMatcherError(text);
      if (error) throw new InputError(`alertGate.matchers: ${error}`);
    }
  }
  if (raw.alertnames !== undefined) {
    if (
      typeof raw.alertnames !== 'string' ||
      raw.alertnames.length === 0 ||
      raw.alertnames.length > 256
    ) {
      throw new InputError(
        'alertGate.alertnames must be a regular expression of 1 to 256 characters',
      );
    }
    const error = alertnamePatternError(raw.alertnames);
    if (error) throw new InputError(`alertGate.${error}`);
    gate.alertnames = raw.alertnames;
  }
  if (raw.severities !== undefined) {
    gate.severities = stringList(raw.severities, 'severities', 63);
  }
  if (raw.ignoreSilencedByRackside !== undefined) {
    if (typeof raw.ignoreSilencedByRackside !== 'boolean') {
      throw new InputError(
        'alertGate.ignoreSilencedByRackside must be true or false',
      );
    }
    gate.ignoreSilencedByRackside = raw.ignoreSilencedByRackside;
  }
  if (raw.includeSilenced !== undefined) {
    if (typeof raw.includeSilenced !== 'boolean') {
      throw new InputError('alertGate.includeSilenced must be true or false');
    }
    gate.includeSilenced = raw.includeSilenced;
  }
  if (raw.whenUnknown !== undefined) {
    const whenUnknown = ALERT_GATE_WHEN_UNKNOWN.find(
      w => w === raw.whenUnknown,
    );
    if (!whenUnknown) {
      throw new InputError(
        `alertGate.whenUnknown must be ${ALERT_GATE_WHEN_UNKNOWN.join(' or ')}`,
      );
    }
    gate.whenUnknown = whenUnknown;
  }
  return gate;
}

/**
 * The alerts that would hold the gate now, from the cluster's last read of Alertmanager.
 * Decided by servers-common's `alertsHoldingGate`, the rule the operator applies before
 * each step, over every alert; shown as the reader may see it (`names`): an alert of
 * servers they cannot read is counted, not listed, and no listed one names them.
 */
export function alertGatePreview(
  gate: AlertGateQuery,
  alerts: ClusterAlerts | undefined,
  names: VisibleNames = visibleNamesOfEveryServer,
): PlanPreflightAlerts {
  if (!alerts) {
    return {
      configured: false,
      known: false,
      reason: 'no Alertmanager is configured for this cluster',
      holding: [],
    };
  }
  if (alerts.stale && !alerts.readAt) {
    return {
      configured: true,
      known: false,
      reason: alerts.stale.error,
      holding: [],
    };
  }
  const racksideIds = alerts.racksideSilenceIds ?? new Set<string>();
  const nodesOf = new Map<string, string[]>();
  for (const [node, list] of alerts.byNode) {
    for (const a of list) {
      const nodes = nodesOf.get(a.fingerprint) ?? [];
      nodes.push(node);
      nodesOf.set(a.fingerprint, nodes);
    }
  }
  const hiddenServers = new Set<string>();
  let hiddenAlerts = 0;
  const holding: PlanPreflightAlerts['holding'] = [];
  for (const alert of alertsHoldingGate(gate, alerts.alerts, racksideIds)) {
    const nodes = (nodesOf.get(alert.fingerprint) ?? []).sort();
    const hiddenNodes = nodes.filter(n => names.hides(n));
    hiddenNodes.forEach(n => hiddenServers.add(n));
    const shown = names.alert(serverAlertOf(alert, alerts.racksideSilenceIds));
    const visible = nodes.filter(n => !names.hides(n));
    // An alert of hidden servers only: counted, never listed (its name is theirs).
    if (nodes.length > 0 && visible.length === 0) {
      hiddenAlerts++;
      continue;
    }
    holding.push({ ...shown, nodes: visible });
  }
  return {
    configured: true,
    // A read that failed after an earlier success: what is shown is that earlier read.
    known: alerts.stale === undefined,
    ...(alerts.stale ? { reason: names.text(alerts.stale.error).text } : {}),
    holding,
    ...(hiddenServers.size > 0
      ? {
          hiddenServers: hiddenServers.size,
          hiddenAlerts,
          hidden: hiddenServersText(hiddenServers.size),
        }
      : {}),
    ...(alerts.readAt ? { readAt: alerts.readAt } : {}),
  };
}
