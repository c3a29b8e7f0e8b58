// Prepares the demo rack for Rackside: installs the CRDs, gives the operator
// and the Backstage backend their own ServiceAccounts and the chart's admission
// policies, sets up the power
// channel (Redfish over the rack's BMCs: scripts/demo-power.mjs) and the
// TalosCluster machines are added to (scripts/demo-machines.mjs), writes the
// operator's kubeconfig and the app-config block that points the backend at
// the rack.
// Usage: node scripts/demo-access.mjs RACK_DIR OUTPUT_YAML
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  binaries,
  connectRack,
  createServiceAccountToken,
  writeTokenKubeconfig,
} from '../e2e/rack/rack.mjs';
import { bmcNodeNames, demoPowerManifests } from './demo-power.mjs';
import { demoMachineManifests } from './demo-machines.mjs';

const [rackDir, output] = process.argv.slice(2);
if (!rackDir || !output) {
  console.error('usage: node scripts/demo-access.mjs RACK_DIR OUTPUT_YAML');
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rack = connectRack(rackDir);
const { kubectl } = binaries();
const kubectlApply = file =>
  execFileSync(
    kubectl,
    ['--kubeconfig', rack.kubeconfig, 'apply', '-f', file],
    {
      stdio: 'inherit',
    },
  );

kubectlApply(path.join(root, 'crds'));
execFileSync(
  kubectl,
  [
    '--kubeconfig',
    rack.kubeconfig,
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd',
    '-l',
    'app.kubernetes.io/part-of=rackside',
  ],
  { stdio: 'ignore' },
);
kubectlApply(path.join(root, 'e2e/rack/demo/operator-access.yaml'));
kubectlApply(path.join(root, 'e2e/rack/demo/backstage-access.yaml'));
// Who may write what: the chart's admission policies (attribution, the backend's narrower
// identity).
kubectlApply(path.join(root, 'e2e/rack/demo/policy-access.yaml'));

// The power channel. Server-side apply from stdin: the Secrets' values never
// reach a command line or a last-applied-configuration annotation.
const power = demoPowerManifests(rack);
if (power) {
  execFileSync(
    kubectl,
    [
      '--kubeconfig',
      rack.kubeconfig,
      'apply',
      '--server-side',
      '--field-manager=rackside-demo',
      '-f',
      '-',
    ],
    {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: power }),
      stdio: ['pipe', 'inherit', 'inherit'],
    },
  );
  console.log(
    `demo: PowerProvider default (redfish), ServerBMC for ${bmcNodeNames(
      power,
    ).join(', ')}`,
  );
} else {
  console.log('demo: the rack has no BMCs; no PowerProvider, no power verbs');
}

// The TalosCluster of Add node and Reset and add, applied the same way.
const machines = demoMachineManifests(rack);
if (machines) {
  execFileSync(
    kubectl,
    [
      '--kubeconfig',
      rack.kubeconfig,
      'apply',
      '--server-side',
      '--field-manager=rackside-demo',
      '-f',
      '-',
    ],
    {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: machines,
      }),
      stdio: ['pipe', 'inherit', 'inherit'],
    },
  );
  console.log(
    'demo: TalosCluster plant-a discovering the spare and plant-old machines',
  );
} else {
  console.log('demo: the rack has no Talos machines; no TalosCluster');
}

const day = { expirationSeconds: 24 * 3600 };
const operatorToken = await createServiceAccountToken(
  rack.kube,
  'rackside-system',
  'rackside-operator',
  day,
);
const operatorKubeconfig = writeTokenKubeconfig({
  server: rack.server,
  caFile: rack.caFile,
  token: operatorToken,
  file: path.join(rackDir, 'operator.kubeconfig'),
});

const backstageToken = await createServiceAccountToken(
  rack.kube,
  'rackside-system',
  'rackside-backstage',
  day,
);
const tokenFile = path.join(rackDir, 'backstage.token');
fs.writeFileSync(tokenFile, backstageToken, { mode: 0o600 });
fs.writeFileSync(
  output,
  [
    '# Written by scripts/demo-access.mjs for the demo rack; not committed.',
    'servers:',
    '  clusters:',
    '    - name: plant-a',
    '      title: Plant A (simulated rack)',
    `      url: ${rack.server}`,
    `      caFile: ${rack.caFile}`,
    `      serviceAccountTokenFile: ${tokenFile}`,
    '      operatorNamespace: rackside-system',
    // The rack's Alertmanager (docs/alerts.md): the same URL the operator is given.
    ...(rack.alertmanager?.url
      ? ['      alertmanager:', `        url: ${rack.alertmanager.url}`]
      : []),
    '',
  ].join('\n'),
);
rack.kube.close?.();
console.log(`demo: operator kubeconfig ${operatorKubeconfig}`);
console.log(`demo: backend access to plant-a written to ${output}`);
