// The Helm chart (charts/rackside): lint, render, the values schema, and an install of the
// rendered manifests on a real apiserver (the simulated rack), where the identities it
// creates are checked verb by verb with SubjectAccessReviews and real requests.
//   node --test e2e/rack/test/chart.test.mjs   (needs e2e/rack/build.sh: Kubernetes and helm)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { binaries, kubeClient, startRack } from '../rack.mjs';
import { CHART_DIR, helm, renderChart } from '../lib/chart.mjs';
import { parseYamlDocuments } from '../lib/yaml.mjs';
import { renderRackAccessFiles } from '../../../scripts/gen-rack-access.mjs';

const NET = Number(process.env.RACK_TEST_NET_CHART ?? 153);
const NS = 'rackside-system';
const sleep = ms => new Promise(r => setTimeout(r, ms));

/** Values that switch every optional part on. */
const FULL = {
  powerProvider: {
    type: 'redfish',
    redfish: {
      credentialsSecretName: 'bmc-credentials',
      caBundle: { name: 'bmc-ca' },
      readbackWindowSeconds: 60,
      readbackIntervalSeconds: 2,
    },
  },
  serverBMCs: [
    {
      node: 'worker-1',
      address: 'https://127.0.0.1:8443',
      systemPath: '/redfish/v1/Systems/1',
    },
    {
      node: 'worker-2',
      address: 'https://127.0.0.1:8443',
      credentialsSecretName: 'worker-2-bmc',
    },
  ],
  backstage: { enabled: true, createTokenSecret: true },
};

let rack;
let dir;

before(
  async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rack-chart-test-'));
    rack = await startRack({
      dir,
      net: NET,
      withTalos: false,
      withRedfish: false,
      withWorkloads: false,
      log: () => {},
    });
  },
  { timeout: 240000 },
);

after(async () => {
  if (rack) await rack.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function kinds(text) {
  return parseYamlDocuments(text).map(d => `${d.kind}/${d.metadata.name}`);
}

test('helm lint passes with the defaults and with every part switched on', () => {
  helm(['lint', CHART_DIR, '--strict']);
  const file = path.join(dir, 'full.json');
  fs.writeFileSync(file, JSON.stringify(FULL));
  helm(['lint', CHART_DIR, '--strict', '--values', file]);
});

test("the rack's and the demo's identities are the chart's (e2e/rack/demo/*-access.yaml up to date)", () => {
  const root = path.resolve(CHART_DIR, '..', '..');
  for (const [rel, text] of Object.entries(renderRackAccessFiles())) {
    assert.equal(
      fs.readFileSync(path.join(root, rel), 'utf8'),
      text,
      `${rel} differs from the chart: run node scripts/gen-rack-access.mjs`,
    );
  }
});

test('the defaults render the operator, its roles, the webhook and a PowerProvider of type none', () => {
  const docs = parseYamlDocuments(renderChart({}));
  assert.deepEqual(kinds(renderChart({})).sort(), [
    'ClusterRole/rackside-operator',
    'ClusterRoleBinding/rackside-operator',
    'Deployment/rackside-operator',
    'PowerProvider/default',
    'Role/rackside-operator',
    'RoleBinding/rackside-operator',
    'Secret/rackside-webhook-tls',
    'Service/rackside-webhook',
    'ServiceAccount/rackside-operator',
    'ValidatingWebhookConfiguration/rackside-webhook',
  ]);
  const power = docs.find(d => d.kind === 'PowerProvider');
  assert.equal(power.spec.type, 'none');
  const deployment = docs.find(d => d.kind === 'Deployment');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.equal(container.securityContext.readOnlyRootFilesystem, true);
  assert.equal(container.securityContext.allowPrivilegeEscalation, false);
  assert.deepEqual(container.securityContext.capabilities.drop, ['ALL']);
  assert.equal(container.readinessProbe.httpGet.path, '/readyz');
  assert.equal(container.livenessProbe.httpGet.path, '/healthz');
  assert.ok(container.resources.limits.memory);
  assert.ok(container.args.includes(`--namespace=${NS}`));
  // The webhook trusts the CA of the certificate the operator serves.
  const secret = docs.find(d => d.kind === 'Secret');
  const webhook = docs.find(d => d.kind === 'ValidatingWebhookConfiguration');
  assert.equal(
    webhook.webhooks[0].clientConfig.caBundle,
    secret.data['ca.crt'],
  );
  assert.deepEqual(webhook.webhooks[0].rules[0].resources, ['machinereclaims']);
  // The path packages/operator/src/webhook/server.ts serves.
  assert.equal(
    webhook.webhooks[0].clientConfig.service.path,
    '/validate-machinereclaims',
  );
  assert.equal(webhook.webhooks[0].failurePolicy, 'Fail');
});

test('values.schema.json and the templates reject bad values, naming them', () => {
  const bad = [
    [{ powerProvider: { type: 'ipmi' } }, /powerProvider\/type/],
    [{ operator: { replica: 2 } }, /additional properties 'replica'/],
    [{ operator: { replicas: '2' } }, /operator\/replicas/],
    [{ webhook: { failurePolicy: 'Maybe' } }, /webhook\/failurePolicy/],
    [{ serverBMCs: [{ node: 'worker-1' }] }, /address/],
    [
      { serverBMCs: [{ node: 'w', address: 'ftp://bmc' }] },
      /serverBMCs\/0\/address/,
    ],
    [
      {
        powerProvider: {
          type: 'redfish',
          redfish: { credentialsSecretName: 'x' },
        },
      },
      /caBundle.name, or insecureSkipVerify/,
    ],
    [
      { powerProvider: { type: 'talos' } },
      /powerProvider.talos.secretName is required/,
    ],
    [
      { webhook: { certificate: { source: 'secret' } } },
      /webhook.certificate.secretName is required/,
    ],
  ];
  for (const [values, message] of bad) {
    assert.throws(() => renderChart(values), message, JSON.stringify(values));
  }
});

test('the rendered chart installs on the rack: server-side dry-run, then for real', async () => {
  const { kubectl } = binaries();
  const rendered = helm([
    'template',
    'rackside',
    CHART_DIR,
    '--namespace',
    NS,
    '--include-crds',
    '--kube-version',
    '1.36.3',
    '--values',
    (() => {
      const file = path.join(dir, 'install.json');
      fs.writeFileSync(file, JSON.stringify(FULL));
      return file;
    })(),
  ]);
  const docs = parseYamlDocuments(rendered);
  const crds = docs.filter(d => d.kind === 'CustomResourceDefinition');
  assert.equal(crds.length, 6);
  const crdFile = path.join(dir, 'crds.json');
  const restFile = path.join(dir, 'rest.json');
  fs.writeFileSync(
    crdFile,
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: crds }),
  );
  fs.writeFileSync(
    restFile,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: docs.filter(d => d.kind !== 'CustomResourceDefinition'),
    }),
  );
  const kubectlRun = args =>
    execFileSync(kubectl, ['--kubeconfig', rack.kubeconfig, ...args], {
      encoding: 'utf8',
    });
  kubectlRun(['create', 'namespace', NS]);
  kubectlRun(['apply', '--server-side', '-f', crdFile]);
  kubectlRun([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd',
    '-l',
    'app.kubernetes.io/part-of=rackside',
  ]);
  const dry = kubectlRun([
    'apply',
    '--server-side',
    '--dry-run=server',
    '-f',
    restFile,
  ]);
  assert.match(
    dry,
    /deployment.apps\/rackside-operator serverside-applied \(server dry run\)/,
  );
  // Nothing was created by the dry run.
  const none = await rack.kube.request(
    'GET',
    `/apis/apps/v1/namespaces/${NS}/deployments/rackside-operator`,
  );
  assert.equal(none.status, 404);
  kubectlRun(['apply', '--server-side', '-f', restFile]);
  const power = await rack.kube.get(
    '/apis/rackside.dev/v1alpha1/powerproviders/default',
  );
  assert.equal(power.spec.type, 'redfish');
  assert.equal(power.spec.redfish.caBundleRef.name, 'bmc-ca');
  const bmc = await rack.kube.get(
    '/apis/rackside.dev/v1alpha1/serverbmcs/worker-2',
  );
  assert.equal(bmc.spec.credentialsSecretRef.name, 'worker-2-bmc');
});

/** A SubjectAccessReview as a ServiceAccount of the release namespace. */
async function can(
  sa,
  verb,
  resource,
  { group = '', namespace, subresource } = {},
) {
  const review = await rack.kube.post(
    '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: `system:serviceaccount:${NS}:${sa}`,
        groups: [
          'system:serviceaccounts',
          `system:serviceaccounts:${NS}`,
          'system:authenticated',
        ],
        resourceAttributes: { verb, resource, group, namespace, subresource },
      },
    },
  );
  return review.status.allowed === true;
}

test("the backend's identity never writes a Node, never evicts, never reads a Secret", async () => {
  for (const verb of [
    'create',
    'update',
    'patch',
    'delete',
    'deletecollection',
  ]) {
    assert.equal(
      await can('rackside-backstage', verb, 'nodes'),
      false,
      `${verb} nodes`,
    );
    assert.equal(
      await can('rackside-backstage', verb, 'nodes', { subresource: 'status' }),
      false,
      `${verb} nodes/status`,
    );
  }
  assert.equal(
    await can('rackside-backstage', 'create', 'pods', {
      namespace: 'default',
      subresource: 'eviction',
    }),
    false,
  );
  assert.equal(
    await can('rackside-backstage', 'delete', 'pods', { namespace: 'default' }),
    false,
  );
  for (const verb of ['get', 'list', 'watch']) {
    assert.equal(
      await can('rackside-backstage', verb, 'secrets', { namespace: NS }),
      false,
      verb,
    );
    assert.equal(
      await can('rackside-backstage', verb, 'secrets'),
      false,
      `${verb} everywhere`,
    );
  }
  assert.equal(
    await can('rackside-backstage', 'create', 'secrets', {
      namespace: 'default',
    }),
    false,
  );
});

test("the backend's identity can do everything its routes need", async () => {
  const needs = [
    ...['get', 'list', 'watch'].flatMap(v => [
      [v, 'nodes', {}],
      [v, 'pods', {}],
      [v, 'poddisruptionbudgets', { group: 'policy' }],
      [v, 'powerproviders', { group: 'rackside.dev' }],
      [v, 'serverbmcs', { group: 'rackside.dev' }],
      [v, 'talosclusters', { group: 'rackside.dev', namespace: NS }],
      [v, 'talosmachines', { group: 'rackside.dev', namespace: NS }],
      [v, 'machinereclaims', { group: 'rackside.dev', namespace: NS }],
      [v, 'nodemaintenances', { group: 'rackside.dev' }],
    ]),
    ['create', 'nodemaintenances', { group: 'rackside.dev' }],
    ['update', 'nodemaintenances', { group: 'rackside.dev' }],
    ['create', 'machinereclaims', { group: 'rackside.dev', namespace: NS }],
    ['update', 'machinereclaims', { group: 'rackside.dev', namespace: NS }],
    ['reclaim', 'machinereclaims', { group: 'rackside.dev', namespace: NS }],
    ['update', 'talosclusters', { group: 'rackside.dev', namespace: NS }],
    ['update', 'talosmachines', { group: 'rackside.dev', namespace: NS }],
    ['create', 'secrets', { namespace: NS }],
  ];
  for (const [verb, resource, opts] of needs) {
    assert.equal(
      await can('rackside-backstage', verb, resource, opts),
      true,
      `${verb} ${resource}`,
    );
  }
});

test("the operator's identity can do everything the maintenance lifecycle needs, and no more on Nodes", async () => {
  const needs = [
    ...['get', 'list', 'watch'].flatMap(v => [
      [v, 'nodes', {}],
      [v, 'pods', {}],
      [v, 'poddisruptionbudgets', { group: 'policy' }],
      [v, 'nodemaintenances', { group: 'rackside.dev' }],
      [v, 'powerproviders', { group: 'rackside.dev' }],
      [v, 'serverbmcs', { group: 'rackside.dev' }],
    ]),
    ['patch', 'nodes', {}],
    ['create', 'pods', { namespace: 'default', subresource: 'eviction' }],
    [
      'patch',
      'nodemaintenances',
      { group: 'rackside.dev', subresource: 'status' },
    ],
    ['update', 'nodemaintenances', { group: 'rackside.dev' }],
    [
      'patch',
      'powerproviders',
      { group: 'rackside.dev', subresource: 'status' },
    ],
    ['patch', 'serverbmcs', { group: 'rackside.dev', subresource: 'status' }],
    ['create', 'events', { namespace: 'default' }],
    ['get', 'leases', { group: 'coordination.k8s.io', namespace: NS }],
    ['create', 'leases', { group: 'coordination.k8s.io', namespace: NS }],
    ['update', 'leases', { group: 'coordination.k8s.io', namespace: NS }],
    ['get', 'secrets', { namespace: NS }],
    ['get', 'configmaps', { namespace: NS }],
    // Add node and Reset and add.
    ...['get', 'list', 'watch'].flatMap(v => [
      [v, 'talosclusters', { group: 'rackside.dev', namespace: NS }],
      [v, 'talosmachines', { group: 'rackside.dev', namespace: NS }],
      [v, 'machinereclaims', { group: 'rackside.dev', namespace: NS }],
    ]),
    ['create', 'talosmachines', { group: 'rackside.dev', namespace: NS }],
    ...['talosclusters', 'talosmachines', 'machinereclaims'].map(r => [
      'patch',
      r,
      { group: 'rackside.dev', namespace: NS, subresource: 'status' },
    ]),
    ['delete', 'secrets', { namespace: NS }],
    ['create', 'subjectaccessreviews', { group: 'authorization.k8s.io' }],
  ];
  for (const [verb, resource, opts] of needs) {
    assert.equal(
      await can('rackside-operator', verb, resource, opts),
      true,
      `${verb} ${resource}`,
    );
  }
  for (const [verb, resource, opts] of [
    ['create', 'nodes', {}],
    ['delete', 'nodes', {}],
    ['delete', 'pods', { namespace: 'default' }],
    ['list', 'secrets', { namespace: NS }],
    ['get', 'secrets', { namespace: 'default' }],
    ['get', 'leases', { group: 'coordination.k8s.io', namespace: 'default' }],
    // Discovery never writes a TalosCluster's spec (ADR 0107 amendment).
    ['update', 'talosclusters', { group: 'rackside.dev', namespace: NS }],
    ['patch', 'talosclusters', { group: 'rackside.dev', namespace: NS }],
    ['delete', 'secrets', { namespace: 'default' }],
  ]) {
    assert.equal(
      await can('rackside-operator', verb, resource, opts),
      false,
      `not ${verb} ${resource}`,
    );
  }
});

test("the backend's token Secret works: it lists Nodes and is refused a cordon", async () => {
  let token;
  for (let i = 0; i < 100 && !token; i++) {
    const secret = await rack.kube.get(
      `/api/v1/namespaces/${NS}/secrets/rackside-backstage-token`,
    );
    token =
      secret.data?.token &&
      Buffer.from(secret.data.token, 'base64').toString('utf8');
    if (!token) await sleep(100);
  }
  assert.ok(token, 'the token controller filled the Secret');
  const asBackstage = kubeClient({
    server: rack.server,
    caFile: rack.caFile,
    token,
  });
  try {
    const nodes = await asBackstage.get('/api/v1/nodes');
    assert.ok(nodes.items.length >= 10);
    const cordon = await asBackstage.request(
      'PATCH',
      '/api/v1/nodes/worker-1',
      { spec: { unschedulable: true } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.equal(cordon.status, 403);
    const node = await rack.kube.get('/api/v1/nodes/worker-1');
    assert.notEqual(node.spec.unschedulable, true);
    const secrets = await asBackstage.request(
      'GET',
      `/api/v1/namespaces/${NS}/secrets`,
    );
    assert.equal(secrets.status, 403);
  } finally {
    asBackstage.close();
  }
});
