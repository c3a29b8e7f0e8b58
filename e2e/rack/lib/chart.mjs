// The Helm chart (charts/rackside) as the rack uses it: `helm` from build.sh's cache,
// rendering with values, and the identities of the operator and the Backstage backend,
// which the rack and the demo take from the chart so RBAC is exercised as installed.
//
//   import { helmBinary, renderChart, rackAccessDocuments } from './lib/chart.mjs';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir, readVersions } from '../rack.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(HERE, '..', '..', '..');
export const CHART_DIR = path.join(REPO_ROOT, 'charts', 'rackside');

/** Where build.sh puts helm. */
export function helmBinary(versions = readVersions()) {
  return path.join(cacheDir(), 'bin', `helm-${versions.HELM_VERSION}`, 'helm');
}

/** Runs helm; throws with its output when it fails. */
export function helm(args, { input } = {}) {
  const bin = helmBinary();
  if (!fs.existsSync(bin)) {
    throw new Error(`helm missing at ${bin}: run e2e/rack/build.sh first`);
  }
  try {
    return execFileSync(bin, args, {
      encoding: 'utf8',
      input,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        HELM_CACHE_HOME: path.join(os.tmpdir(), 'rackside-helm-cache'),
      },
    });
  } catch (error) {
    throw new Error(
      `helm ${args.join(' ')} failed:\n${error.stdout ?? ''}${
        error.stderr ?? ''
      }`,
    );
  }
}

/**
 * `helm template` of the chart with `values` (an object, passed as a values file); answers
 * the rendered YAML text: what `helm install` creates, so not the `helm test` pods
 * (templates/tests/, rendered only by `helm test`).
 */
export function renderChart(
  values = {},
  { release = 'rackside', namespace = 'rackside-system' } = {},
) {
  const versions = readVersions();
  const file = path.join(
    fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-values-')),
    'values.json',
  );
  fs.writeFileSync(file, JSON.stringify(values));
  try {
    return helm([
      'template',
      release,
      CHART_DIR,
      '--namespace',
      namespace,
      '--kube-version',
      versions.KUBERNETES_VERSION,
      '--values',
      file,
      '--skip-tests',
    ]);
  } finally {
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

/** The values the rack and the demo install the chart's identities with. */
export const RACK_VALUES = {
  fullnameOverride: 'rackside',
  backstage: { enabled: true, createTokenSecret: false },
};

const ACCESS_KINDS = new Set([
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

/**
 * The chart's ServiceAccounts, RBAC and ValidatingAdmissionPolicies for the rack (parsed
 * with `parse`, a YAML multi-document parser the caller supplies), split by component:
 * what e2e/rack/demo/operator-access.yaml, backstage-access.yaml and policy-access.yaml
 * hold.
 */
export function rackAccessDocuments(parseAll, namespace = 'rackside-system') {
  const docs = parseAll(renderChart(RACK_VALUES, { namespace })).filter(
    d => d && ACCESS_KINDS.has(d.kind),
  );
  const of = component =>
    docs.filter(
      d => d.metadata?.labels?.['app.kubernetes.io/component'] === component,
    );
  return {
    operator: of('operator'),
    backstage: of('backstage'),
    policies: of('admission-policy'),
  };
}
