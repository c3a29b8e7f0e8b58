// Grants the demo Backstage backend its ServiceAccount on the simulated rack
// and writes the app-config block that points the backend at it.
// Usage: node scripts/demo-access.mjs RACK_DIR OUTPUT_YAML
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  binaries,
  connectRack,
  createServiceAccountToken,
} from '../e2e/rack/rack.mjs';

const [rackDir, output] = process.argv.slice(2);
if (!rackDir || !output) {
  console.error('usage: node scripts/demo-access.mjs RACK_DIR OUTPUT_YAML');
  process.exit(2);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const rack = connectRack(rackDir);
const { kubectl } = binaries();

execFileSync(
  kubectl,
  [
    '--kubeconfig',
    rack.kubeconfig,
    'apply',
    '-f',
    path.join(root, 'e2e/rack/demo/backstage-access.yaml'),
  ],
  { stdio: 'inherit' },
);
const token = await createServiceAccountToken(
  rack.kube,
  'rackside-system',
  'rackside-backstage',
  {
    expirationSeconds: 24 * 3600,
  },
);
const tokenFile = path.join(rackDir, 'backstage.token');
fs.writeFileSync(tokenFile, token, { mode: 0o600 });
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
    '',
  ].join('\n'),
);
rack.kube.close?.();
console.log(`demo: backend access to plant-a written to ${output}`);
