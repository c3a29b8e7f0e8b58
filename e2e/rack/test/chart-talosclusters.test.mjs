// The chart's TalosClusters (values.talosClusters): the deployer writes the allowed
// networks and the Talos port; a TalosCluster without networks is refused at render time
// (values.schema.json), so a release cannot create one that discovers nothing by mistake.
// Rendering only: `helm template` from build.sh's cache, no rack.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderChart } from '../lib/chart.mjs';
import { parseYamlDocuments } from '../lib/yaml.mjs';

const plantA = {
  name: 'plant-a',
  allowedNetworks: ['10.0.5.0/24', 'fd00:5::/64'],
  joinConfigSecretName: 'plant-a-join',
  talosconfigSecretName: 'plant-a-talosconfig',
};

test('a TalosCluster per entry, with its allowed networks and the Talos port (default 50000)', () => {
  const docs = parseYamlDocuments(
    renderChart({
      talosClusters: [
        plantA,
        {
          ...plantA,
          name: 'spares',
          talosPort: 50001,
          addresses: ['10.0.5.31'],
          intervalSeconds: 60,
        },
      ],
    }),
  ).filter(d => d.kind === 'TalosCluster');
  assert.deepEqual(
    docs.map(d => [d.metadata.name, d.metadata.namespace]),
    [
      ['plant-a', 'rackside-system'],
      ['spares', 'rackside-system'],
    ],
  );
  assert.deepEqual(docs[0].spec, {
    discovery: {
      allowedNetworks: ['10.0.5.0/24', 'fd00:5::/64'],
      talosPort: 50000,
      intervalSeconds: 300,
    },
    joinConfigSecretRef: { name: 'plant-a-join', key: 'config.yaml' },
    talosconfigSecretRef: { name: 'plant-a-talosconfig', key: 'talosconfig' },
  });
  // No addresses key unless listed: an upgrade then leaves the ones the backend added.
  assert.equal('addresses' in docs[0].spec.discovery, false);
  assert.deepEqual(docs[1].spec.discovery, {
    allowedNetworks: ['10.0.5.0/24', 'fd00:5::/64'],
    talosPort: 50001,
    addresses: ['10.0.5.31'],
    intervalSeconds: 60,
  });
});

test('values without allowed networks, or with a bad network or port, are refused', () => {
  const { allowedNetworks: _omitted, ...noNetworks } = plantA;
  const bad = [
    [{ talosClusters: [noNetworks] }, /allowedNetworks/],
    [
      { talosClusters: [{ ...plantA, allowedNetworks: [] }] },
      /allowedNetworks/,
    ],
    [
      { talosClusters: [{ ...plantA, allowedNetworks: ['10.0.5.1'] }] },
      /allowedNetworks\/0/,
    ],
    [{ talosClusters: [{ ...plantA, talosPort: 99999 }] }, /talosPort/],
  ];
  for (const [values, message] of bad) {
    assert.throws(() => renderChart(values), message, JSON.stringify(values));
  }
});
