// The chart's alerting rules (charts/rackside/monitoring/rules.yaml) with promtool, built
// from the Go module proxy by scripts/promtool.sh: `promtool check rules` on the file and
// on the PrometheusRule the chart renders from it, and `promtool test rules` with a unit
// test per alert (rules.test.yaml) that fires it and one that keeps it quiet. That the
// metrics they name are the operator's is packages/operator/src/runtime/monitoring.test.ts.
//   node --test e2e/rack/test/monitoring.test.mjs   (needs scripts/promtool.sh and helm)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHART_DIR, REPO_ROOT, renderChart } from '../lib/chart.mjs';
import { parseYamlDocuments } from '../lib/yaml.mjs';

const MONITORING = path.join(CHART_DIR, 'monitoring');

function promtool(args) {
  const bin = execFileSync(path.join(REPO_ROOT, 'scripts/promtool.sh'), {
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .pop();
  try {
    return execFileSync(bin, args, {
      encoding: 'utf8',
      cwd: MONITORING,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    throw new Error(
      `promtool ${args.join(' ')}:\n${error.stdout}${error.stderr}`,
    );
  }
}

const rules = parseYamlDocuments(
  fs.readFileSync(path.join(MONITORING, 'rules.yaml'), 'utf8'),
)[0];
const alerts = rules.groups.flatMap(g => g.rules.map(r => r.alert));

test('promtool check rules: the rules file and the PrometheusRule the chart renders', () => {
  assert.deepEqual(alerts, [
    'RacksideOperatorNotLeading',
    'RacksideReconcileErrors',
    'RacksideMaintenanceStuckDraining',
    'RacksidePowerVerbFailed',
    'RacksidePlanFailed',
    'RacksidePlanWaitingPastGateTimeout',
    'RacksideWebhookCertificateExpiresSoon',
  ]);
  assert.match(
    promtool(['check', 'rules', 'rules.yaml']),
    /SUCCESS: 7 rules found/,
  );

  const rendered = parseYamlDocuments(
    renderChart({ monitoring: { prometheusRule: { enabled: true } } }),
  ).find(d => d.kind === 'PrometheusRule');
  assert.ok(
    rendered,
    'a PrometheusRule with monitoring.prometheusRule.enabled',
  );
  assert.deepEqual(rendered.spec.groups, rules.groups);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-rules-'));
  try {
    const file = path.join(dir, 'rendered.yaml');
    fs.writeFileSync(file, JSON.stringify({ groups: rendered.spec.groups }));
    assert.match(promtool(['check', 'rules', file]), /SUCCESS: 7 rules found/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  // Off by default: a cluster without the Prometheus Operator installs the chart.
  const defaults = parseYamlDocuments(renderChart({}));
  assert.equal(
    defaults.find(d => d.kind === 'PrometheusRule'),
    undefined,
  );
  assert.equal(
    defaults.find(d => d.metadata?.name?.endsWith('-dashboard')),
    undefined,
  );
});

test('promtool test rules: each alert fires in one unit test and stays quiet in another', () => {
  const tests = parseYamlDocuments(
    fs.readFileSync(path.join(MONITORING, 'rules.test.yaml'), 'utf8'),
  )[0].tests.flatMap(t => t.alert_rule_test);
  for (const alert of alerts) {
    const cases = tests.filter(t => t.alertname === alert);
    assert.ok(
      cases.some(t => t.exp_alerts.length > 0),
      `${alert} fires in a test`,
    );
    assert.ok(
      cases.some(t => t.exp_alerts.length === 0),
      `${alert} stays quiet in a test`,
    );
  }
  assert.match(promtool(['test', 'rules', 'rules.test.yaml']), /SUCCESS/);
});

test('the dashboard ConfigMap carries the sidecar label and the dashboard JSON', () => {
  const map = parseYamlDocuments(
    renderChart({
      monitoring: {
        dashboard: {
          enabled: true,
          namespace: 'monitoring',
          annotations: { grafana_folder: 'Rackside' },
        },
      },
    }),
  ).find(d => d.kind === 'ConfigMap' && d.metadata.name.endsWith('-dashboard'));
  assert.ok(map);
  assert.equal(map.metadata.namespace, 'monitoring');
  assert.equal(map.metadata.labels.grafana_dashboard, '1');
  assert.equal(map.metadata.annotations.grafana_folder, 'Rackside');
  const dashboard = JSON.parse(map.data['rackside-operator.json']);
  assert.equal(dashboard.uid, 'rackside-operator');
  assert.deepEqual(
    dashboard,
    JSON.parse(
      fs.readFileSync(path.join(MONITORING, 'dashboard.json'), 'utf8'),
    ),
  );
});
