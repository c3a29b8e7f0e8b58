// The chart's Talos upgrade values (docs/upgrades.md): operator.talosImagePrefixes and
// operator.upgradeDeadlineSeconds reach the operator's flags, and the schema refuses a
// prefix the flag could not carry. Renders only (helm template); no rack.
//
// Run: node --test e2e/rack/test/chart-upgrades.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderChart } from '../lib/chart.mjs';
import { parseYamlDocuments } from '../lib/yaml.mjs';

/** The operator container's args for these values. */
function operatorArgs(values) {
  const [deployment] = parseYamlDocuments(renderChart(values)).filter(
    d => d.kind === 'Deployment' && d.metadata.name.endsWith('-operator'),
  );
  return deployment.spec.template.spec.containers[0].args;
}

test('no image prefix by default: the flag is left out, so the operator refuses every upgrade', () => {
  const args = operatorArgs({});
  assert.ok(args.includes('--upgrade-deadline-seconds=1800'));
  assert.equal(
    args.filter(a => a.startsWith('--talos-image-prefixes')).length,
    0,
  );
});

test('the prefixes and the deadline given reach the operator as its flags', () => {
  const args = operatorArgs({
    operator: {
      talosImagePrefixes: [
        'factory.talos.dev/installer/',
        'ghcr.io/siderolabs/installer',
      ],
      upgradeDeadlineSeconds: 600,
    },
  });
  assert.ok(args.includes('--upgrade-deadline-seconds=600'));
  assert.ok(
    args.includes(
      '--talos-image-prefixes=factory.talos.dev/installer/,ghcr.io/siderolabs/installer',
    ),
  );
});

test('the schema refuses a prefix with a comma or a space, and a deadline of 0, naming the value', () => {
  for (const prefix of ['a.example/,b.example/', 'a.example/ x', '']) {
    assert.throws(
      () => renderChart({ operator: { talosImagePrefixes: [prefix] } }),
      /talosImagePrefixes/,
      JSON.stringify(prefix),
    );
  }
  assert.throws(
    () => renderChart({ operator: { upgradeDeadlineSeconds: 0 } }),
    /upgradeDeadlineSeconds/,
  );
});
