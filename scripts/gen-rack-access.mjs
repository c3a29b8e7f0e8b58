// Writes e2e/rack/demo/operator-access.yaml and backstage-access.yaml from the Helm chart
// (charts/rackside): the rack's tests and the demo run the operator and the Backstage
// backend with exactly the identities the chart installs. e2e/rack/test/chart.test.mjs
// fails when the files are out of date. Usage: node scripts/gen-rack-access.mjs [--check]
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, rackAccessDocuments } from '../e2e/rack/lib/chart.mjs';
import { parseYamlDocuments } from '../e2e/rack/lib/yaml.mjs';

const NAMESPACE = 'rackside-system';

/** The files' text, from the chart as it is now. */
export function renderRackAccessFiles() {
  const { operator, backstage } = rackAccessDocuments(
    parseYamlDocuments,
    NAMESPACE,
  );
  const namespace = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NAMESPACE },
  };
  const file = (what, docs) =>
    [
      `# ${what}`,
      '# Generated from charts/rackside by scripts/gen-rack-access.mjs: edit the chart',
      '# (charts/rackside/rbac/*.yaml), then run `node scripts/gen-rack-access.mjs`.',
      ...[namespace, ...docs].map(d => `---\n${JSON.stringify(d, null, 2)}`),
      '',
    ].join('\n');
  return {
    'e2e/rack/demo/operator-access.yaml': file(
      "The operator's identity on the rack and in the demo, as the chart installs it.",
      operator,
    ),
    'e2e/rack/demo/backstage-access.yaml': file(
      "The Backstage backend's identity on the rack and in the demo, as the chart installs it: it reads nodes, pods and PDBs, writes only Rackside's own objects, never a Node.",
      backstage,
    ),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const [rel, text] of Object.entries(renderRackAccessFiles())) {
    const file = path.join(REPO_ROOT, rel);
    const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (before === text) continue;
    stale++;
    if (check)
      console.error(
        `${rel} is out of date: run node scripts/gen-rack-access.mjs`,
      );
    else {
      fs.writeFileSync(file, text);
      console.log(`wrote ${rel}`);
    }
  }
  process.exit(check && stale ? 1 : 0);
}
