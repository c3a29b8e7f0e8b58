// Writes e2e/rack/demo/operator-access.yaml, backstage-access.yaml and policy-access.yaml
// from the Helm chart (charts/rackside): the rack's tests and the demo run the operator and
// the Backstage backend with exactly the identities, and under exactly the admission
// policies, the chart installs. e2e/rack/test/chart.test.mjs
// fails when the files are out of date. Usage: node scripts/gen-rack-access.mjs [--check]
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, rackAccessDocuments } from '../e2e/rack/lib/chart.mjs';
import { parseYamlDocuments } from '../e2e/rack/lib/yaml.mjs';

const NAMESPACE = 'rackside-system';

/** The files' text, from the chart as it is now. */
export function renderRackAccessFiles() {
  const { operator, backstage, policies } = rackAccessDocuments(
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
      '# (charts/rackside/rbac/*.yaml, templates/admission-policies.yaml), then run',
      '# `node scripts/gen-rack-access.mjs`.',
      ...docs.map(d => `---\n${JSON.stringify(d, null, 2)}`),
      '',
    ].join('\n');
  return {
    'e2e/rack/demo/operator-access.yaml': file(
      "The operator's identity on the rack and in the demo, as the chart installs it.",
      [namespace, ...operator],
    ),
    'e2e/rack/demo/backstage-access.yaml': file(
      "The Backstage backend's identity on the rack and in the demo, as the chart installs it: it reads nodes, pods and PDBs, writes only Rackside's own objects, never a Node.",
      [namespace, ...backstage],
    ),
    'e2e/rack/demo/policy-access.yaml': file(
      "Who may write what, as the chart's ValidatingAdmissionPolicies say: requestedBy and every `by` is the writer's own Kubernetes username unless the writer is the Backstage backend; the backend changes only a TalosCluster's discovery addresses and a ServerBMC's spec.healthRefresh, and creates only reclaim credential Secrets.",
      policies,
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
