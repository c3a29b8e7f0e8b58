// Registers the operator's MachineReclaim admission webhook with a rack's apiserver, for an
// operator running outside the cluster (the demo, the browser tests): the chart's
// ValidatingWebhookConfiguration, pointed at https://127.0.0.1:PORT with the operator's
// self-signed CA (written by --webhook-ca-out) instead of a Service.
// Usage: node scripts/register-webhook.mjs RACK_DIR CA_FILE PORT
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { binaries, connectRack } from '../e2e/rack/rack.mjs';
import { RACK_VALUES, renderChart } from '../e2e/rack/lib/chart.mjs';
import { parseYamlDocuments } from '../e2e/rack/lib/yaml.mjs';

const [rackDir, caFile, port] = process.argv.slice(2);
if (!rackDir || !caFile || !/^\d+$/.test(port ?? '')) {
  console.error(
    'usage: node scripts/register-webhook.mjs RACK_DIR CA_FILE PORT',
  );
  process.exit(2);
}
const rack = connectRack(rackDir);
const config = parseYamlDocuments(renderChart(RACK_VALUES)).find(
  d => d.kind === 'ValidatingWebhookConfiguration',
);
if (!config)
  throw new Error('the chart renders no ValidatingWebhookConfiguration');
const caBundle = Buffer.from(fs.readFileSync(caFile, 'utf8')).toString(
  'base64',
);
for (const webhook of config.webhooks) {
  const path = webhook.clientConfig.service.path;
  webhook.clientConfig = { url: `https://127.0.0.1:${port}${path}`, caBundle };
}
execFileSync(
  binaries().kubectl,
  [
    '--kubeconfig',
    rack.kubeconfig,
    'apply',
    '--server-side',
    '--force-conflicts',
    '-f',
    '-',
  ],
  { input: JSON.stringify(config), stdio: ['pipe', 'inherit', 'inherit'] },
);
rack.kube.close?.();
console.log(`webhook: ${config.metadata.name} -> https://127.0.0.1:${port}`);
