/*
 * The chart's alerts and dashboard (charts/rackside/monitoring) name only metrics this
 * operator exports: a renamed or removed metric fails here, not silently in a cluster
 * whose alerts never fire. promtool checks and unit-tests the rules themselves
 * (e2e/rack/test/monitoring.test.mjs).
 */
import type {
  MaintenancePlan,
  NodeMaintenance,
} from '@rackside/plugin-servers-common';
import type {
  KubeObject,
  RawKubeObject,
  WatchCache,
} from '@rackside/plugin-servers-node';
import { REPO_ROOT } from '@rackside/rack-testing';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { createMetrics } from './metrics';
import { registerStateMetrics } from './stateMetrics';

const MONITORING = path.join(REPO_ROOT, 'charts/rackside/monitoring');

/** A cache with these objects and no events (all the state metrics read). */
function cacheOf<T extends KubeObject>(items: T[]): WatchCache<T> {
  const fake: Pick<WatchCache<T>, 'list' | 'on'> = {
    list: () => items,
    on: () => () => {},
  };
  return fake as unknown as WatchCache<T>;
}

/** Every series name the operator's registry exposes (histograms with their suffixes). */
async function exportedNames(): Promise<Set<string>> {
  const metrics = createMetrics();
  registerStateMetrics({
    registry: metrics.registry,
    maintenances: cacheOf<NodeMaintenance>([]),
    plans: cacheOf<MaintenancePlan & RawKubeObject>([]),
    isLeader: () => true,
  });
  const names = new Set<string>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count'])
        names.add(metric.name + suffix);
  }
  return names;
}

/** The metric names a PromQL expression uses (identifiers followed by a selector or not). */
function metricNames(expr: string): string[] {
  const withoutStrings = expr.replace(/"[^"]*"/g, '""');
  return [
    ...withoutStrings.matchAll(
      /\b(rackside_[a-z_]+|process_[a-z_]+|nodejs_[a-z_]+)\b/g,
    ),
  ].map(m => m[1]);
}

function ruleExpressions(): string[] {
  const rules = parse(
    fs.readFileSync(path.join(MONITORING, 'rules.yaml'), 'utf8'),
  );
  return rules.groups.flatMap((g: { rules: { expr: string }[] }) =>
    g.rules.map(r => r.expr),
  );
}

function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(
    fs.readFileSync(path.join(MONITORING, 'dashboard.json'), 'utf8'),
  );
  return dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) =>
    (p.targets ?? []).map(t => t.expr),
  );
}

describe('the chart monitoring names exported metrics only', () => {
  it.each([
    ['the alerting rules', ruleExpressions],
    ['the Grafana dashboard', dashboardExpressions],
  ])('%s', async (_what, expressions) => {
    const exported = await exportedNames();
    const used = expressions().flatMap(metricNames);
    expect(used.length).toBeGreaterThan(5);
    expect(used.filter(name => !exported.has(name))).toEqual([]);
  });

  it('would notice a metric the operator does not export', async () => {
    const exported = await exportedNames();
    expect(
      metricNames('rate(rackside_reconcile_failures_total[5m])').filter(
        name => !exported.has(name),
      ),
    ).toEqual(['rackside_reconcile_failures_total']);
  });
});

describe('state metrics', () => {
  it('give the drain deadline of a Draining maintenance and the gate deadline of a waiting plan', async () => {
    const metrics = createMetrics();
    const nm = {
      metadata: { name: 'm1' },
      spec: {
        nodeName: 'worker-1',
        intent: 'drain',
        reason: 'r',
        drain: { timeoutSeconds: 600 },
      },
      status: {
        phase: 'Draining',
        drain: { startedAt: '2026-12-05T10:00:00Z' },
      },
    } as unknown as NodeMaintenance;
    const plan = {
      metadata: { name: 'workers' },
      status: {
        phase: 'Waiting',
        waiting: {
          on: 'gate',
          gate: 'ceph',
          message: 'm',
          since: '2026-12-05T10:00:00Z',
          until: '2026-12-05T10:30:00Z',
        },
      },
    } as unknown as MaintenancePlan & RawKubeObject;
    registerStateMetrics({
      registry: metrics.registry,
      maintenances: cacheOf([nm]),
      plans: cacheOf([plan]),
      isLeader: () => true,
    });
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      `rackside_maintenance_drain_deadline_timestamp_seconds{name="m1",node="worker-1"} ${
        Date.parse('2026-12-05T10:10:00Z') / 1000
      }`,
    );
    expect(text).toContain(
      `rackside_plan_gate_deadline_timestamp_seconds{plan="workers",gate="ceph"} ${
        Date.parse('2026-12-05T10:30:00Z') / 1000
      }`,
    );
    expect(text).toContain('rackside_plans{phase="Waiting"} 1');
    expect(text).toContain(
      'rackside_power_verb_failures_total{verb="reboot",channel="redfish"} 0',
    );
  });
});
