// The Helm chart (charts/rackside): lint, render, the values schema, and an install of the
// rendered manifests on a real apiserver (the simulated rack), where the identities it
// creates are checked verb by verb with SubjectAccessReviews and real requests, and its
// admission policies are attacked with real tokens (a kubectl user, the backend, the
// operator).
//   node --test e2e/rack/test/chart.test.mjs   (needs e2e/rack/build.sh: Kubernetes and helm)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  binaries,
  createServiceAccountToken,
  kubeClient,
  startRack,
} from '../rack.mjs';
import { CHART_DIR, helm, helmBinary, renderChart } from '../lib/chart.mjs';
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
  networkPolicy: {
    enabled: true,
    apiServer: { cidrs: ['127.0.0.1/32'], ports: [6443] },
    bmcNetworks: ['127.0.0.0/8'],
    talosNetworks: ['127.0.0.0/8'],
  },
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

test('the defaults render the operator, its roles, the webhook, the attribution policies and a PowerProvider of type none', () => {
  const docs = parseYamlDocuments(renderChart({}));
  assert.deepEqual(kinds(renderChart({})).sort(), [
    'ClusterRole/rackside-operator',
    'ClusterRoleBinding/rackside-operator',
    'Deployment/rackside-operator',
    'PodDisruptionBudget/rackside-operator',
    'PowerProvider/default',
    'Role/rackside-operator',
    'RoleBinding/rackside-operator',
    'Secret/rackside-webhook-tls',
    'Service/rackside-operator-metrics',
    'Service/rackside-webhook',
    'ServiceAccount/rackside-operator',
    'ValidatingAdmissionPolicy/rackside-approval',
    'ValidatingAdmissionPolicy/rackside-attribution-machinereclaims',
    'ValidatingAdmissionPolicy/rackside-attribution-maintenanceplans',
    'ValidatingAdmissionPolicy/rackside-attribution-nodemaintenances',
    'ValidatingAdmissionPolicy/rackside-attribution-talosmachines',
    'ValidatingAdmissionPolicy/rackside-requester-required',
    'ValidatingAdmissionPolicyBinding/rackside-approval',
    'ValidatingAdmissionPolicyBinding/rackside-attribution-machinereclaims',
    'ValidatingAdmissionPolicyBinding/rackside-attribution-maintenanceplans',
    'ValidatingAdmissionPolicyBinding/rackside-attribution-nodemaintenances',
    'ValidatingAdmissionPolicyBinding/rackside-attribution-talosmachines',
    'ValidatingAdmissionPolicyBinding/rackside-requester-required',
    'ValidatingWebhookConfiguration/rackside-webhook',
  ]);
  // Every writer, the backend and the operator included, names a requester on create.
  const required = docs.find(
    d =>
      d.metadata.name === 'rackside-requester-required' && d.spec.validations,
  );
  assert.equal(required.spec.matchConditions, undefined);
  assert.deepEqual(required.spec.matchConstraints.resourceRules, [
    {
      apiGroups: ['rackside.dev'],
      apiVersions: ['*'],
      operations: ['CREATE'],
      resources: ['nodemaintenances', 'maintenanceplans', 'machinereclaims'],
    },
  ]);
  // Without the backend's identity nobody is exempt from attribution, except the
  // operator writing the steps of a MaintenancePlan.
  for (const policy of docs.filter(
    d =>
      d.kind === 'ValidatingAdmissionPolicy' &&
      d.metadata.name.startsWith('rackside-attribution-'),
  )) {
    assert.deepEqual(
      (policy.spec.matchConditions ?? []).map(c => c.name),
      policy.metadata.name === 'rackside-attribution-nodemaintenances'
        ? ['not-a-plan-step-by-the-operator']
        : [],
      policy.metadata.name,
    );
    assert.deepEqual(
      policy.spec.matchConstraints.resourceRules.flatMap(r => r.resources),
      [policy.metadata.name.replace('rackside-attribution-', '')],
      'the object only, never its status subresource',
    );
  }
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

test("operator.planGateReads grants read, and only read, on the kinds a plan's object gates name", () => {
  const role = values =>
    parseYamlDocuments(renderChart(values)).find(
      d => d.kind === 'ClusterRole' && d.metadata.name === 'rackside-operator',
    );
  const base = role({}).rules;
  const granted = role({
    operator: {
      planGateReads: [
        { apiGroups: ['ceph.rook.io'], resources: ['cephclusters'] },
      ],
    },
  }).rules;
  assert.deepEqual(granted.slice(0, base.length), base);
  assert.deepEqual(granted.slice(base.length), [
    {
      apiGroups: ['ceph.rook.io'],
      resources: ['cephclusters'],
      verbs: ['get', 'list', 'watch'],
    },
  ]);
  // The same list is the operator's allow-list of gated kinds (others are refused).
  const args = values =>
    parseYamlDocuments(renderChart(values)).find(
      d => d.kind === 'Deployment' && d.metadata.name === 'rackside-operator',
    ).spec.template.spec.containers[0].args;
  assert.ok(!args({}).some(a => a.startsWith('--plan-gate-reads')));
  assert.ok(
    args({
      operator: {
        planGateReads: [
          { apiGroups: ['ceph.rook.io'], resources: ['cephclusters'] },
          { apiGroups: [''], resources: ['configmaps', 'pods'] },
        ],
      },
    }).includes('--plan-gate-reads=cephclusters.ceph.rook.io,configmaps,pods'),
  );
});

test('firmware sources: checksum-only sources, the credentials Secret (by name, release namespace) and the CA bundle reach the operator', () => {
  const operator = values =>
    parseYamlDocuments(renderChart(values)).find(
      d => d.kind === 'Deployment' && d.metadata.name === 'rackside-operator',
    ).spec.template.spec;
  const none = operator({});
  assert.ok(
    !none.containers[0].args.some(a => a.startsWith('--firmware-source')),
  );
  const pod = operator({
    operator: {
      firmwareSources: ['https://a.example'],
      firmwareSourcesRequiringChecksum: ['https://b.example'],
      firmwareSourceCredentials: { secretName: 'firmware-sources' },
      firmwareSourcesCaConfigMap: { name: 'fw-ca', key: 'ca.pem' },
    },
  });
  const args = pod.containers[0].args;
  assert.ok(args.includes('--firmware-sources=https://a.example'));
  assert.ok(
    args.includes('--firmware-sources-requiring-checksum=https://b.example'),
  );
  assert.ok(
    args.includes('--firmware-source-credentials-secret=firmware-sources'),
  );
  assert.ok(
    args.includes(
      '--firmware-sources-ca-file=/etc/rackside/firmware-sources-ca/ca.pem',
    ),
  );
  assert.deepEqual(
    pod.volumes.find(v => v.name === 'firmware-sources-ca').configMap,
    { name: 'fw-ca', items: [{ key: 'ca.pem', path: 'ca.pem' }] },
  );
  // A Secret elsewhere cannot be named: a name only, read in the release namespace.
  assert.throws(
    () =>
      renderChart({
        operator: {
          firmwareSourceCredentials: { secretName: 'other-ns/creds' },
        },
      }),
    /firmwareSourceCredentials\/secretName/,
  );
  assert.throws(
    () =>
      renderChart({
        operator: {
          firmwareSourcesRequiringChecksum: ['https://b.example/path'],
        },
      }),
    /firmwareSourcesRequiringChecksum/,
  );
});

test('values.schema.json and the templates reject bad values, naming them', () => {
  const bad = [
    [{ powerProvider: { type: 'ipmi' } }, /powerProvider\/type/],
    [{ operator: { replica: 2 } }, /additional properties 'replica'/],
    [{ operator: { replicas: '2' } }, /operator\/replicas/],
    [
      {
        operator: {
          planGateReads: [
            { apiGroups: [''], resources: ['secrets'], verbs: ['*'] },
          ],
        },
      },
      /additional properties 'verbs'/,
    ],
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
    // The operator's pod values: exactly the fields Kubernetes has, nothing misspelt.
    [
      { operator: { podLabel: { a: 'b' } } },
      /additional properties 'podLabel'/,
    ],
    [
      { operator: { podLabels: { 'app.kubernetes.io/component': 'x' } } },
      /operator.podLabels must not set app.kubernetes.io\/component/,
    ],
    [
      { operator: { tolerations: [{ key: 'a', operater: 'Exists' }] } },
      /additional properties 'operater'/,
    ],
    [
      { operator: { tolerations: [{ key: 'a', effect: 'NoScedule' }] } },
      /tolerations\/0\/effect/,
    ],
    [
      { operator: { resources: { limit: { memory: '1Gi' } } } },
      /additional properties 'limit'/,
    ],
    [
      { operator: { resources: { limits: { memory: 'lots' } } } },
      /resources\/limits\/memory/,
    ],
    [
      { operator: { affinity: { podAntiAfinity: {} } } },
      /additional properties 'podAntiAfinity'/,
    ],
    [{ operator: { extraEnv: [{ value: 'x' }] } }, /name/],
    [
      { operator: { extraEnv: [{ name: 'POD_NAME', value: 'x' }] } },
      /extraEnv\/0\/name/,
    ],
    [
      { operator: { extraEnv: [{ name: 'NODE_NAME', value: 'x' }] } },
      /extraEnv\/0\/name/,
    ],
    [
      { operator: { extraEnv: [{ name: 'A', valu: 'x' }] } },
      /additional properties 'valu'/,
    ],
    [{ operator: { priorityClassName: 'High Priority' } }, /priorityClassName/],
    [
      { operator: { strategy: { rollingUpdate: { maxSurge: 'one' } } } },
      /maxSurge/,
    ],
    [
      { operator: { topologySpread: { whenUnsatisfiable: 'Never' } } },
      /topologySpread\/whenUnsatisfiable/,
    ],
    [
      { operator: { podDisruptionBudget: { maxUnavailable: 1 } } },
      /additional properties 'maxUnavailable'/,
    ],
    [
      {
        webhook: {
          certificate: {
            source: 'cert-manager',
            certManager: { issuerRef: { kind: 'Vault' } },
          },
        },
      },
      /issuerRef\/kind/,
    ],
    [{ metrics: { serviceMonitor: { interval: 'often' } } }, /interval/],
    [
      { metrics: { serviceMonitor: { enable: true } } },
      /additional properties 'enable'/,
    ],
    [
      {
        metrics: {
          service: { enabled: false },
          serviceMonitor: { enabled: true },
        },
      },
      /metrics.serviceMonitor.enabled needs metrics.service.enabled/,
    ],
    [
      { networkPolicy: { enabled: true } },
      /networkPolicy.apiServer.cidrs is required/,
    ],
    [
      { networkPolicy: { bmcNetworks: ['10.0.5.0'] } },
      /networkPolicy\/bmcNetworks\/0/,
    ],
    [{ networkPolicy: { talosPort: 0 } }, /networkPolicy\/talosPort/],
  ];
  for (const [values, message] of bad) {
    assert.throws(() => renderChart(values), message, JSON.stringify(values));
  }
});

// ---------------------------------------------------------------------------------------
// Chart conventions: disruption budget, rollout, spread, metrics, NetworkPolicy,
// cert-manager, NOTES, rendering without a cluster.

const byKind = (docs, kind) => docs.filter(d => d.kind === kind);

test('the operator rolls out one new Ready pod before an old one stops, behind a PDB, spread over nodes', () => {
  const docs = parseYamlDocuments(renderChart({}));
  const [deployment] = byKind(docs, 'Deployment');
  // Both replicas are Ready, so a surge pod becomes Ready and only then an old one goes:
  // the webhook keeps two endpoints through a rollout, and the rollout completes.
  assert.deepEqual(deployment.spec.strategy, {
    type: 'RollingUpdate',
    rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
  });
  const [pdb] = byKind(docs, 'PodDisruptionBudget');
  assert.equal(pdb.apiVersion, 'policy/v1');
  assert.equal(pdb.spec.minAvailable, 1);
  assert.deepEqual(
    pdb.spec.selector.matchLabels,
    deployment.spec.selector.matchLabels,
  );
  const pod = deployment.spec.template.spec;
  assert.deepEqual(pod.topologySpreadConstraints, [
    {
      topologyKey: 'kubernetes.io/hostname',
      maxSkew: 1,
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector: { matchLabels: deployment.spec.selector.matchLabels },
      matchLabelKeys: ['pod-template-hash'],
    },
  ]);
  // No certificate checksum: a renewed certificate is reloaded, not a restart.
  assert.equal(deployment.spec.template.metadata.annotations, undefined);
  // One replica: no PDB that would block every drain of its node.
  assert.deepEqual(
    byKind(
      parseYamlDocuments(renderChart({ operator: { replicas: 1 } })),
      'PodDisruptionBudget',
    ),
    [],
  );
  // Values change them: a hard spread, anti-affinity instead, Recreate.
  const changed = parseYamlDocuments(
    renderChart({
      operator: {
        topologySpread: { enabled: false },
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                topologyKey: 'kubernetes.io/hostname',
                labelSelector: {
                  matchLabels: { 'app.kubernetes.io/component': 'operator' },
                },
              },
            ],
          },
        },
        strategy: { type: 'Recreate' },
        podDisruptionBudget: { minAvailable: '50%' },
      },
    }),
  );
  const [d2] = byKind(changed, 'Deployment');
  assert.deepEqual(d2.spec.strategy, { type: 'Recreate' });
  assert.equal(d2.spec.template.spec.topologySpreadConstraints, undefined);
  assert.ok(d2.spec.template.spec.affinity.podAntiAffinity);
  assert.equal(
    byKind(changed, 'PodDisruptionBudget')[0].spec.minAvailable,
    '50%',
  );
});

test('the pod values users set land on the pod: labels, annotations, priority, placement, env, resources', () => {
  const [deployment] = byKind(
    parseYamlDocuments(
      renderChart({
        operator: {
          podLabels: { team: 'metal' },
          podAnnotations: { 'example.com/owner': 'ops' },
          priorityClassName: 'system-cluster-critical',
          nodeSelector: { 'node-role.kubernetes.io/control-plane': '' },
          tolerations: [
            {
              key: 'node-role.kubernetes.io/control-plane',
              operator: 'Exists',
              effect: 'NoSchedule',
            },
          ],
          extraEnv: [
            { name: 'HTTPS_PROXY', value: 'http://proxy:3128' },
            {
              name: 'FROM_SECRET',
              valueFrom: { secretKeyRef: { name: 's', key: 'k' } },
            },
          ],
          resources: {
            requests: { cpu: '100m', memory: '256Mi' },
            limits: { memory: '512Mi' },
          },
        },
      }),
    ),
    'Deployment',
  );
  const template = deployment.spec.template;
  assert.equal(template.metadata.labels.team, 'metal');
  assert.equal(
    template.metadata.labels['app.kubernetes.io/component'],
    'operator',
  );
  assert.deepEqual(template.metadata.annotations, {
    'example.com/owner': 'ops',
  });
  assert.equal(template.spec.priorityClassName, 'system-cluster-critical');
  assert.deepEqual(template.spec.nodeSelector, {
    'node-role.kubernetes.io/control-plane': '',
  });
  assert.equal(template.spec.tolerations[0].effect, 'NoSchedule');
  const [container] = template.spec.containers;
  assert.deepEqual(
    container.env.map(e => e.name),
    ['POD_NAME', 'POD_NAMESPACE', 'NODE_NAME', 'HTTPS_PROXY', 'FROM_SECRET'],
  );
  // The node the replica runs on, from the downward API: it hands the Lease over before a
  // verb for that node (docs/upgrades.md, "The operator's own node").
  assert.deepEqual(container.env.find(e => e.name === 'NODE_NAME').valueFrom, {
    fieldRef: { fieldPath: 'spec.nodeName' },
  });
  assert.deepEqual(container.resources, {
    requests: { cpu: '100m', memory: '256Mi' },
    limits: { memory: '512Mi' },
  });
});

test('metrics: a Service in front of every replica; the ServiceMonitor only when enabled', () => {
  const defaults = parseYamlDocuments(renderChart({}));
  const [service] = byKind(defaults, 'Service').filter(
    s => s.metadata.name === 'rackside-operator-metrics',
  );
  const [deployment] = byKind(defaults, 'Deployment');
  assert.deepEqual(service.spec.selector, deployment.spec.selector.matchLabels);
  assert.deepEqual(service.spec.ports, [
    { name: 'metrics', port: 8081, targetPort: 'probes' },
  ]);
  assert.deepEqual(byKind(defaults, 'ServiceMonitor'), []);
  const enabled = parseYamlDocuments(
    renderChart({
      metrics: {
        serviceMonitor: { enabled: true, labels: { release: 'prometheus' } },
      },
    }),
  );
  const [monitor] = byKind(enabled, 'ServiceMonitor');
  assert.equal(monitor.apiVersion, 'monitoring.coreos.com/v1');
  assert.equal(monitor.metadata.labels.release, 'prometheus');
  assert.deepEqual(monitor.spec.endpoints, [
    {
      port: 'metrics',
      path: '/metrics',
      interval: '30s',
      scrapeTimeout: '10s',
    },
  ]);
  // It selects the metrics Service, not the webhook's.
  const selected = byKind(enabled, 'Service').filter(s =>
    Object.entries(monitor.spec.selector.matchLabels).every(
      ([k, v]) => s.metadata.labels[k] === v,
    ),
  );
  assert.deepEqual(
    selected.map(s => s.metadata.name),
    ['rackside-operator-metrics'],
  );
  assert.deepEqual(
    byKind(
      parseYamlDocuments(
        renderChart({ metrics: { service: { enabled: false } } }),
      ),
      'Service',
    ).map(s => s.metadata.name),
    ['rackside-webhook'],
  );
});

test('NetworkPolicy: off by default; on, ingress to the webhook and metrics ports, egress to apiserver, DNS, BMCs and Talos only', () => {
  assert.deepEqual(
    byKind(parseYamlDocuments(renderChart({})), 'NetworkPolicy'),
    [],
  );
  const [policy] = byKind(
    parseYamlDocuments(
      renderChart({
        networkPolicy: {
          enabled: true,
          metricsFrom: [
            { namespaceSelector: { matchLabels: { name: 'monitoring' } } },
          ],
          apiServer: { cidrs: ['10.0.0.10/32', '10.0.0.11/32'] },
          bmcNetworks: ['10.0.5.0/24'],
          bmcPorts: [443, 8443],
          talosNetworks: ['10.0.6.0/24'],
          talosPort: 50001,
        },
      }),
    ),
    'NetworkPolicy',
  );
  assert.deepEqual(policy.spec.policyTypes, ['Ingress', 'Egress']);
  assert.deepEqual(
    policy.spec.podSelector.matchLabels['app.kubernetes.io/component'],
    'operator',
  );
  assert.deepEqual(policy.spec.ingress, [
    { ports: [{ protocol: 'TCP', port: 9443 }] },
    {
      ports: [{ protocol: 'TCP', port: 8081 }],
      from: [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }],
    },
  ]);
  const egress = policy.spec.egress.map(rule => ({
    to: rule.to.map(peer => peer.ipBlock?.cidr ?? 'dns'),
    ports: rule.ports.map(p => `${p.protocol}/${p.port}`),
  }));
  assert.deepEqual(egress, [
    { to: ['10.0.0.10/32', '10.0.0.11/32'], ports: ['TCP/6443'] },
    { to: ['dns'], ports: ['UDP/53', 'TCP/53'] },
    { to: ['10.0.5.0/24'], ports: ['TCP/443', 'TCP/8443'] },
    { to: ['10.0.6.0/24'], ports: ['TCP/50001'] },
  ]);
  assert.deepEqual(policy.spec.egress[1].to[0], {
    namespaceSelector: {
      matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' },
    },
    podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
  });
});

test('cert-manager: a Certificate (self-signed Issuer or the one named) and inject-ca-from instead of the chart CA', () => {
  const docs = parseYamlDocuments(
    renderChart({ webhook: { certificate: { source: 'cert-manager' } } }),
  );
  assert.deepEqual(
    byKind(docs, 'Secret'),
    [],
    'the chart makes no certificate of its own',
  );
  const [certificate] = byKind(docs, 'Certificate');
  const [issuer] = byKind(docs, 'Issuer');
  assert.equal(certificate.apiVersion, 'cert-manager.io/v1');
  assert.equal(certificate.spec.secretName, 'rackside-webhook-tls');
  assert.deepEqual(certificate.spec.dnsNames, [
    'rackside-webhook.rackside-system.svc',
    'rackside-webhook.rackside-system',
    'rackside-webhook',
  ]);
  assert.deepEqual(certificate.spec.issuerRef, {
    name: issuer.metadata.name,
    kind: 'Issuer',
    group: 'cert-manager.io',
  });
  assert.deepEqual(issuer.spec, { selfSigned: {} });
  const [webhook] = byKind(docs, 'ValidatingWebhookConfiguration');
  assert.equal(
    webhook.metadata.annotations['cert-manager.io/inject-ca-from'],
    'rackside-system/rackside-webhook',
  );
  assert.equal(webhook.webhooks[0].clientConfig.caBundle, undefined);
  // The pods mount the Secret cert-manager writes.
  const [deployment] = byKind(docs, 'Deployment');
  assert.equal(
    deployment.spec.template.spec.volumes.find(v => v.name === 'webhook-tls')
      .secret.secretName,
    certificate.spec.secretName,
  );
  const named = parseYamlDocuments(
    renderChart({
      webhook: {
        certificate: {
          source: 'cert-manager',
          certManager: {
            issuerRef: { name: 'corp-ca', kind: 'ClusterIssuer' },
          },
        },
      },
    }),
  );
  assert.deepEqual(byKind(named, 'Issuer'), []);
  assert.deepEqual(byKind(named, 'Certificate')[0].spec.issuerRef, {
    name: 'corp-ca',
    kind: 'ClusterIssuer',
    group: 'cert-manager.io',
  });
  // The chart's own CA stays the default, with no cert-manager annotation.
  const [own] = byKind(
    parseYamlDocuments(renderChart({})),
    'ValidatingWebhookConfiguration',
  );
  assert.equal(own.metadata.annotations, undefined);
  assert.ok(own.webhooks[0].clientConfig.caBundle);
});

test('helm template works without cluster access (every certificate source)', () => {
  // A kubeconfig whose apiserver refuses connections: lookup must not make the render fail.
  const kubeconfig = path.join(dir, 'nowhere.kubeconfig');
  fs.writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'x', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'x', user: { token: 't' } }],
      contexts: [{ name: 'x', context: { cluster: 'x', user: 'x' } }],
      'current-context': 'x',
    }),
  );
  for (const certificate of [
    { source: 'helm' },
    { source: 'secret', secretName: 'mine' },
    { source: 'cert-manager' },
  ]) {
    const values = path.join(dir, `nowhere-${certificate.source}.json`);
    fs.writeFileSync(
      values,
      JSON.stringify({ ...FULL, webhook: { certificate } }),
    );
    const out = execFileSync(
      helmBinary(),
      [
        'template',
        'rackside',
        CHART_DIR,
        '--namespace',
        NS,
        '--kube-version',
        '1.36.3',
        '--values',
        values,
      ],
      {
        encoding: 'utf8',
        env: { ...process.env, KUBECONFIG: kubeconfig },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    assert.ok(
      kinds(out).includes('ValidatingWebhookConfiguration/rackside-webhook'),
      certificate.source,
    );
  }
});

/**
 * NOTES.txt rendered by `helm template`, without a cluster: `helm install --dry-run` needs
 * the CRDs (and a ServiceMonitor's) installed, and `helm template` leaves NOTES out. So a
 * copy of the chart holds the same text as a named template, and one manifest prints it.
 */
function notes(values) {
  const copy = fs.mkdtempSync(path.join(dir, 'notes-chart-'));
  fs.cpSync(CHART_DIR, copy, { recursive: true });
  const text = fs.readFileSync(
    path.join(copy, 'templates', 'NOTES.txt'),
    'utf8',
  );
  fs.rmSync(path.join(copy, 'templates', 'NOTES.txt'));
  fs.writeFileSync(
    path.join(copy, 'templates', '_notes.tpl'),
    `{{- define "rackside.test.notes" -}}\n${text}{{- end -}}\n`,
  );
  fs.writeFileSync(
    path.join(copy, 'templates', 'notes.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: notes }\n' +
      'data:\n  notes: {{ include "rackside.test.notes" . | toJson }}\n',
  );
  const file = path.join(copy, 'values.test.json');
  fs.writeFileSync(file, JSON.stringify(values));
  const out = helm([
    'template',
    'rackside',
    copy,
    '--namespace',
    NS,
    '--kube-version',
    '1.36.3',
    '--show-only',
    'templates/notes.yaml',
    '--values',
    file,
  ]);
  return parseYamlDocuments(out)[0].data.notes;
}

test('NOTES.txt says what was installed, how to upgrade CRDs and how to connect a portal', () => {
  const text = notes({
    backstage: { enabled: true },
    metrics: { serviceMonitor: { enabled: true } },
  });
  assert.match(text, /Deployment rackside-operator, 2 replica\(s\)/);
  assert.match(text, /PodDisruptionBudget: minAvailable 1/);
  assert.match(text, /PowerProvider "default" of type none/);
  assert.match(
    text,
    /Service rackside-operator-metrics, port 8081, path \/metrics \(ServiceMonitor rackside-operator\)/,
  );
  // The CRDs of the version upgraded to, from the published chart (no repository checkout).
  assert.match(
    text,
    /helm pull oci:\/\/REGISTRY\/charts\/rackside --version <new version> --untar\n {2}kubectl apply --server-side -f rackside\/crds\//,
  );
  assert.doesNotMatch(text, /helm pull rackside/);
  assert.match(text, /helm test rackside -n rackside-system --logs/);
  // The default for a portal outside the cluster: a bound token, renewed by rewriting the
  // file the backend reads again; no long-lived Secret.
  assert.match(
    text,
    /kubectl -n rackside-system create token rackside-backstage --duration=24h > rackside-token.new && mv rackside-token.new rackside-token/,
  );
  assert.match(text, /renew it well before\nit expires/);
  assert.doesNotMatch(text, /get secret rackside-backstage-token/);
  assert.match(text, /servers:\n {4}clusters:\n {6}- name: <cluster name>/);
  assert.match(text, /serviceAccountTokenFile: /);
  assert.match(text, /operatorNamespace: rackside-system/);
  assert.match(text, /charts\/rackside\/README\.md/);
  assert.doesNotMatch(text, /NetworkPolicy/);
  const longLived = notes({
    backstage: { enabled: true, createTokenSecret: true },
  });
  assert.match(
    longLived,
    /kubectl -n rackside-system get secret rackside-backstage-token -o jsonpath='\{\.data\.token\}' \| base64 -d/,
  );
  assert.match(
    longLived,
    /it never expires; delete the Secret\nrackside-backstage-token to revoke it/,
  );
  assert.doesNotMatch(longLived, /create token/);
  assert.match(
    notes({ crds: { enabled: true } }),
    /CRDs: rendered by this release \(crds.enabled\), so `helm upgrade` upgrades them; `helm uninstall` leaves them \(crds.keep\)/,
  );
  assert.match(
    notes({ crds: { enabled: true, keep: false } }),
    /`helm uninstall` DELETES them and every Rackside object/,
  );
  // A published chart names its registry in image.repository; NOTES gives that registry.
  assert.match(
    notes({
      image: { repository: 'registry.example.com:5000/rackside/operator' },
    }),
    /helm pull oci:\/\/registry\.example\.com:5000\/charts\/rackside --version/,
  );
  const without = notes({});
  assert.match(without, /install with backstage.enabled=true/);
  assert.doesNotMatch(without, /serviceAccountTokenFile/);
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
    '--skip-tests',
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
  assert.equal(crds.length, 7);
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
  // The apiserver admits the chart's conventions as rendered: the PDB, the metrics
  // Service and the NetworkPolicy (FULL switches it on).
  for (const object of [
    'poddisruptionbudget.policy/rackside-operator',
    'service/rackside-operator-metrics',
    'networkpolicy.networking.k8s.io/rackside-operator',
  ]) {
    assert.ok(
      dry.includes(`${object} serverside-applied (server dry run)`),
      `${object} in:\n${dry}`,
    );
  }
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

test("the backend's identity never reaches a BMC: no BMC credential, no ServerBMC status, no ServerBMC made or removed", async () => {
  // The Secrets the ServerBMCs and the PowerProvider name (FULL: bmc-credentials,
  // worker-2-bmc in the release namespace) and any other, anywhere.
  for (const verb of ['get', 'list', 'watch']) {
    for (const namespace of [NS, 'default', undefined]) {
      assert.equal(
        await can('rackside-backstage', verb, 'secrets', { namespace }),
        false,
        `${verb} secrets in ${namespace ?? 'every namespace'}`,
      );
    }
  }
  // The reading is the operator's: the backend never writes status.health.
  for (const verb of ['patch', 'update']) {
    assert.equal(
      await can('rackside-backstage', verb, 'serverbmcs', {
        group: 'rackside.dev',
        subresource: 'status',
      }),
      false,
      `${verb} serverbmcs/status`,
    );
  }
  for (const verb of ['create', 'update', 'delete', 'deletecollection']) {
    assert.equal(
      await can('rackside-backstage', verb, 'serverbmcs', {
        group: 'rackside.dev',
      }),
      false,
      `${verb} serverbmcs`,
    );
  }
  // Nor the PowerProvider (its redfish credentials ref and CA are the deployer's).
  for (const verb of ['create', 'update', 'patch', 'delete']) {
    assert.equal(
      await can('rackside-backstage', verb, 'powerproviders', {
        group: 'rackside.dev',
      }),
      false,
      `${verb} powerproviders`,
    );
  }
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
    // A health reading on request: spec.healthRefresh (docs/hardware-health.md).
    ['patch', 'serverbmcs', { group: 'rackside.dev' }],
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
      [v, 'maintenanceplans', { group: 'rackside.dev' }],
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
    // Plans: each step is a NodeMaintenance the operator creates.
    ['create', 'nodemaintenances', { group: 'rackside.dev' }],
    [
      'patch',
      'maintenanceplans',
      { group: 'rackside.dev', subresource: 'status' },
    ],
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
    // Discovery never writes a TalosCluster's spec (decision 0002, item 8).
    ['update', 'talosclusters', { group: 'rackside.dev', namespace: NS }],
    ['patch', 'talosclusters', { group: 'rackside.dev', namespace: NS }],
    ['delete', 'secrets', { namespace: 'default' }],
    // A plan's spec is the requester's: the operator writes its status only.
    ['update', 'maintenanceplans', { group: 'rackside.dev' }],
    ['create', 'maintenanceplans', { group: 'rackside.dev' }],
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

test("with the backend's identity the policies exempt exactly its ServiceAccount and narrow it", () => {
  const docs = parseYamlDocuments(
    renderChart(
      { backstage: { enabled: true, serviceAccountName: 'portal' } },
      { namespace: 'ops' },
    ),
  ).filter(
    d =>
      d.kind === 'ValidatingAdmissionPolicy' &&
      d.metadata.name !== 'rackside-requester-required',
  );
  assert.deepEqual(docs.map(d => d.metadata.name).sort(), [
    'rackside-approval',
    'rackside-attribution-machinereclaims',
    'rackside-attribution-maintenanceplans',
    'rackside-attribution-nodemaintenances',
    'rackside-attribution-talosmachines',
    'rackside-backstage-secrets',
    'rackside-backstage-serverbmcs',
    'rackside-backstage-talosclusters',
  ]);
  for (const policy of docs) {
    const [condition, ...more] = policy.spec.matchConditions;
    // Plan steps: the operator's own identity, nobody else's.
    assert.deepEqual(
      more.map(c => c.name),
      policy.metadata.name === 'rackside-attribution-nodemaintenances'
        ? ['not-a-plan-step-by-the-operator']
        : [],
    );
    for (const c of more) {
      assert.match(
        c.expression,
        /request\.userInfo\.username == "system:serviceaccount:ops:rackside-operator"/,
      );
    }
    assert.match(
      condition.expression,
      policy.metadata.name.includes('attribution') ||
        policy.metadata.name === 'rackside-approval'
        ? /^request\.userInfo\.username != "system:serviceaccount:ops:portal"$/
        : /^request\.userInfo\.username == "system:serviceaccount:ops:portal"$/,
    );
  }
});

// ---------------------------------------------------------------------------------------
// The admission policies against the real apiserver (installed above with FULL values).

const RACKSIDE = '/apis/rackside.dev/v1alpha1';
const NM = `${RACKSIDE}/nodemaintenances`;
const OPS = 'system:serviceaccount:default:ops';
const BACKEND = `system:serviceaccount:${NS}:rackside-backstage`;
const clients = {};

/** Waits until `probe` answers true: policies take effect once the apiserver has read them. */
async function until(what, probe, timeoutMs = 30000) {
  const end = performance.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (performance.now() > end) throw new Error(`timed out waiting: ${what}`);
    await sleep(100);
  }
}

function nodeMaintenance(name, spec = {}) {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'NodeMaintenance',
    metadata: { name },
    spec: {
      nodeName: 'worker-3',
      intent: 'cordon',
      reason: 'policy test',
      ...spec,
    },
  };
}

const forged = { by: 'user:default/guest', reason: 'not me' };

test('admission policies: set-up of a kubectl user (ServiceAccount default/ops) that may write maintenances', async () => {
  await rack.kube.post('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'policy-test-ops' },
    rules: [
      {
        apiGroups: ['rackside.dev'],
        resources: [
          'nodemaintenances',
          'machinereclaims',
          'talosmachines',
          'maintenanceplans',
        ],
        verbs: ['create', 'get', 'update', 'patch'],
      },
      {
        apiGroups: ['rackside.dev'],
        resources: ['machinereclaims'],
        verbs: ['reclaim'],
      },
    ],
  });
  const opsToken = await createServiceAccountToken(
    rack.kube,
    'default',
    'ops',
    {
      create: true,
    },
  );
  await rack.kube.post(
    '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'policy-test-ops' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'policy-test-ops',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'ops', namespace: 'default' }],
    },
  );
  const client = token =>
    kubeClient({ server: rack.server, caFile: rack.caFile, token });
  clients.ops = client(opsToken);
  clients.backend = client(
    await createServiceAccountToken(rack.kube, NS, 'rackside-backstage'),
  );
  clients.operator = client(
    await createServiceAccountToken(rack.kube, NS, 'rackside-operator'),
  );
  // No operator runs here to answer the MachineReclaim webhook (it has its own rack tests):
  // without it, reclaims reach the policies alone.
  await rack.kube.del(
    '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/rackside-webhook',
  );
  // The apiserver type-checks each policy against the CRDs' schemas: no warnings.
  const policies = `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies`;
  await until('every policy type-checked', async () => {
    const { items } = await rack.kube.get(
      `${policies}?labelSelector=app.kubernetes.io/component%3Dadmission-policy`,
    );
    return (
      items.length === 9 &&
      items.every(p => p.status?.observedGeneration === p.metadata.generation)
    );
  });
  const { items } = await rack.kube.get(
    `${policies}?labelSelector=app.kubernetes.io/component%3Dadmission-policy`,
  );
  for (const policy of items) {
    assert.deepEqual(
      policy.status.typeChecking?.expressionWarnings ?? [],
      [],
      policy.metadata.name,
    );
  }
  // Ready when a forged dry-run create is refused (nothing is written either way).
  await until('the attribution policy enforced', async () => {
    const r = await clients.ops.request(
      'POST',
      `${NM}?dryRun=All`,
      nodeMaintenance('probe', { requestedBy: forged.by }),
    );
    return r.status === 403;
  });
});

test.after(() => Object.values(clients).forEach(c => c.close()));

test("attribution: a kubectl user cannot write someone else's name into a NodeMaintenance, only its own", async () => {
  const { ops } = clients;
  const refused = await ops.request(
    'POST',
    NM,
    nodeMaintenance('forged', { requestedBy: 'user:default/guest' }),
  );
  assert.equal(refused.status, 403, JSON.stringify(refused.body));
  assert.equal(
    refused.body.message,
    `nodemaintenances.rackside.dev "forged" is forbidden: ValidatingAdmissionPolicy 'rackside-attribution-nodemaintenances' with binding 'rackside-attribution-nodemaintenances' denied request: spec.requestedBy must be your Kubernetes username, ${OPS}, not user:default/guest: only the Backstage backend (${BACKEND}) writes another name`,
  );
  assert.equal((await rack.kube.request('GET', `${NM}/forged`)).status, 404);
  // Not even a cluster admin (system:masters) writes another's name.
  const admin = await rack.kube.request(
    'POST',
    NM,
    nodeMaintenance('forged', { requestedBy: 'user:default/guest' }),
  );
  assert.equal(admin.status, 403);
  assert.match(
    admin.body.message,
    /must be your Kubernetes username, rackside-admin,/,
  );

  // A shutdown: the one intent that takes all three flags.
  const own = await ops.request(
    'POST',
    NM,
    nodeMaintenance('own', { intent: 'shutdown', requestedBy: OPS }),
  );
  assert.equal(own.status, 201, JSON.stringify(own.body));
  // Without a name it is refused: every act has an author, and the hint is the writer's.
  const unnamed = await ops.request('POST', NM, nodeMaintenance('unnamed'));
  assert.equal(unnamed.status, 422, JSON.stringify(unnamed.body));
  assert.match(
    unnamed.body.message,
    new RegExp(
      `rackside-requester-required.*spec\\.requestedBy is required: every NodeMaintenance names who asked for it\\. Set it to your Kubernetes username, ${OPS}`,
    ),
  );

  for (const flag of ['abandon', 'returnToService', 'powerOn']) {
    const r = await ops.patch(`${NM}/own`, { spec: { [flag]: forged } }).then(
      () => ({ status: 200 }),
      e => e,
    );
    assert.equal(r.status, 403, flag);
    assert.match(
      r.body.message,
      new RegExp(
        `spec\\.${flag}\\.by must be your Kubernetes username, ${OPS}, not user:default/guest`,
      ),
    );
  }
  const stored = await rack.kube.get(`${NM}/own`);
  assert.equal(stored.spec.abandon, undefined);
  assert.equal(stored.spec.returnToService, undefined);
  assert.equal(stored.spec.powerOn, undefined);
  // An update (PUT, as the backend writes) is checked the same way.
  const put = await ops.request('PUT', `${NM}/own`, {
    ...stored,
    spec: { ...stored.spec, abandon: forged },
  });
  assert.equal(put.status, 403);

  const abandoned = await ops.patch(`${NM}/own`, {
    spec: { abandon: { by: OPS, reason: 'mine' } },
  });
  assert.equal(abandoned.spec.abandon.by, OPS);
});

test("attribution: the backend writes entity refs; names written earlier are not checked again; the operator's writes pass", async () => {
  const { ops, backend, operator } = clients;
  const created = await backend.request(
    'POST',
    NM,
    nodeMaintenance('by-portal', { requestedBy: 'user:default/guest' }),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const flagged = await backend.put(`${NM}/by-portal`, {
    ...created.body,
    spec: {
      ...created.body.spec,
      returnToService: { by: 'user:default/guest', reason: 'done' },
    },
  });
  assert.equal(flagged.spec.returnToService.by, 'user:default/guest');

  // Another writer leaves the names as they are: admitted.
  const labelled = await ops.patch(`${NM}/by-portal`, {
    metadata: { labels: { team: 'ops' } },
  });
  assert.equal(labelled.spec.requestedBy, 'user:default/guest');
  // The operator's status writes (the status subresource) and its own updates of the
  // object are not the policy's business.
  const status = await operator.patch(`${NM}/by-portal/status`, {
    status: { phase: 'Cordoned' },
  });
  assert.equal(status.status.phase, 'Cordoned');
  const current = await operator.get(`${NM}/by-portal`);
  const updated = await operator.put(`${NM}/by-portal`, {
    ...current,
    metadata: {
      ...current.metadata,
      annotations: { 'rackside.dev/test': 'operator' },
    },
  });
  assert.equal(updated.metadata.annotations['rackside.dev/test'], 'operator');
  // But a name the operator sets is its own, too.
  const forgedByOperator = await operator.request('PUT', `${NM}/by-portal`, {
    ...updated,
    spec: { ...updated.spec, abandon: forged },
  });
  assert.equal(forgedByOperator.status, 403);
});

test("attribution: the operator writes a plan's steps with the plan's requester, and only those", async () => {
  const { ops, operator } = clients;
  const MP = `${RACKSIDE}/maintenanceplans`;
  const plan = await ops.request('POST', MP, {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'MaintenancePlan',
    metadata: { name: 'policy-plan' },
    spec: {
      intent: 'reboot',
      nodes: ['worker-3'],
      reason: 'policy test',
      requestedBy: OPS,
    },
  });
  assert.equal(plan.status, 201, JSON.stringify(plan.body));
  const owner = {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'MaintenancePlan',
    name: 'policy-plan',
    uid: plan.body.metadata.uid,
    controller: true,
  };
  const step = (name, extra = {}) => ({
    ...nodeMaintenance(name, { requestedBy: 'user:default/guest' }),
    ...extra,
  });
  const owned = { metadata: { name: 'plan-step', ownerReferences: [owner] } };
  const created = await operator.request('POST', NM, step('plan-step', owned));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // On cancel with onCancel abandon, the canceller's name goes on the step.
  const abandoned = await operator.patch(`${NM}/plan-step`, {
    spec: { abandon: { by: 'user:default/guest', reason: 'cancelled' } },
  });
  assert.equal(abandoned.spec.abandon.by, 'user:default/guest');
  // Not owned by a plan, or owned without being its controller: the rule applies.
  for (const [name, refs] of [
    ['not-a-step', undefined],
    ['not-controller', [{ ...owner, controller: false }]],
    ['other-kind', [{ ...owner, kind: 'Deployment', apiVersion: 'apps/v1' }]],
  ]) {
    const r = await operator.request(
      'POST',
      NM,
      step(name, refs ? { metadata: { name, ownerReferences: refs } } : {}),
    );
    assert.equal(r.status, 403, name);
    assert.match(
      r.body.message,
      /spec\.requestedBy must be your Kubernetes username/,
    );
  }
  // Anyone else writing a step-shaped object is held to the rule too.
  const byOps = await ops.request(
    'POST',
    NM,
    step('ops-step', {
      metadata: { name: 'ops-step', ownerReferences: [owner] },
    }),
  );
  assert.equal(byOps.status, 403);
  // A plan's pause, resume and cancel carry their writer's name; a later pause by someone
  // else who copies the earlier name is refused.
  const pause = at => ({ by: OPS, reason: 'line busy', at });
  await ops.patch(`${MP}/policy-plan`, {
    spec: { pause: pause('2026-08-04T10:00:00Z') },
  });
  for (const flag of ['pause', 'resume']) {
    const r = await ops
      .patch(`${MP}/policy-plan`, {
        spec: { [flag]: { ...forged, at: '2026-08-04T11:00:00Z' } },
      })
      .then(
        () => ({ status: 200 }),
        e => e,
      );
    assert.equal(r.status, 403, flag);
    assert.match(
      r.body.message,
      new RegExp(`spec\\.${flag}\\.by must be your Kubernetes username`),
    );
  }
  const later = await rack.kube
    .patch(`${MP}/policy-plan`, {
      spec: { pause: pause('2026-08-04T12:00:00Z') },
    })
    .then(
      () => ({ status: 200 }),
      e => e,
    );
  assert.equal(later.status, 403, 'a new pause in the old name');
  const cancel = await ops.patch(`${MP}/policy-plan`, {
    spec: { cancel: { by: OPS, reason: 'done' } },
  });
  assert.equal(cancel.spec.cancel.by, OPS);
});

test("attribution: a MachineReclaim's requestedBy and a TalosMachine's join.by", async () => {
  const { ops, backend } = clients;
  const reclaims = `${RACKSIDE}/namespaces/${NS}/machinereclaims`;
  const reclaim = (name, requestedBy) => ({
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'MachineReclaim',
    metadata: { name, namespace: NS },
    spec: {
      address: '10.0.5.40',
      targetCluster: 'plant-a',
      credentialSecretRef: { name: `${name}-talosconfig` },
      requestedBy,
      reason: 'policy test',
    },
  });
  const refused = await ops.request(
    'POST',
    reclaims,
    reclaim('forged', 'user:default/guest'),
  );
  assert.equal(refused.status, 403, JSON.stringify(refused.body));
  assert.match(
    refused.body.message,
    /rackside-attribution-machinereclaims.*spec\.requestedBy must be your Kubernetes username/,
  );
  assert.equal(
    (await rack.kube.request('GET', `${reclaims}/forged`)).status,
    404,
  );
  const own = await ops.request('POST', reclaims, reclaim('by-ops', OPS));
  assert.equal(own.status, 201, JSON.stringify(own.body));
  const portal = await backend.request(
    'POST',
    reclaims,
    reclaim('by-portal', 'user:default/guest'),
  );
  assert.equal(portal.status, 201, JSON.stringify(portal.body));

  const machines = `${RACKSIDE}/namespaces/${NS}/talosmachines`;
  const uuids = [
    '4c4c4544-0000-4000-8000-000000000001',
    '4c4c4544-0000-4000-8000-000000000002',
  ];
  for (const name of uuids) {
    await rack.kube.post(machines, {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'TalosMachine',
      metadata: { name, namespace: NS },
      spec: { cluster: 'plant-a' },
    });
  }
  const join = await ops.request(
    'PATCH',
    `${machines}/${uuids[0]}`,
    { spec: { join: forged } },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(join.status, 403, JSON.stringify(join.body));
  assert.match(
    join.body.message,
    /spec\.join\.by must be your Kubernetes username/,
  );
  const joinOwn = await ops.patch(`${machines}/${uuids[0]}`, {
    spec: { join: { by: OPS, reason: 'add it' } },
  });
  assert.equal(joinOwn.spec.join.by, OPS);
  const machine = await backend.get(`${machines}/${uuids[1]}`);
  const joinPortal = await backend.put(`${machines}/${uuids[1]}`, {
    ...machine,
    spec: { ...machine.spec, join: forged },
  });
  assert.equal(joinPortal.spec.join.by, 'user:default/guest');
});

test('narrower identities: the backend changes a TalosCluster only in its discovery addresses and the reclaim annotation', async () => {
  const { backend } = clients;
  const clusters = `${RACKSIDE}/namespaces/${NS}/talosclusters`;
  const crd = await rack.kube.get(
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/talosclusters.rackside.dev',
  );
  const discoverySchema =
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties
      .discovery.properties;
  const hasAllowedNetworks = 'allowedNetworks' in discoverySchema;
  await rack.kube.post(clusters, {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'TalosCluster',
    metadata: { name: 'plant-a', namespace: NS },
    spec: {
      discovery: {
        addresses: ['10.0.5.10'],
        ...(hasAllowedNetworks ? { allowedNetworks: ['10.0.5.0/24'] } : {}),
      },
      joinConfigSecretRef: { name: 'plant-a-join' },
      talosconfigSecretRef: { name: 'plant-a-talosconfig' },
    },
  });
  const before = await rack.kube.get(`${clusters}/plant-a`);
  /** The backend's update (it holds update, not patch) of a changed copy. */
  const write = async change => {
    const current = await backend.get(`${clusters}/plant-a`);
    const next = structuredClone(current);
    change(next);
    return backend.request('PUT', `${clusters}/plant-a`, next);
  };
  const refusals = [
    [
      'the talosconfig Secret ref',
      c => (c.spec.talosconfigSecretRef.name = 'plant-b-talosconfig'),
      /not spec\.talosconfigSecretRef$/,
    ],
    [
      'the join config Secret ref',
      c => (c.spec.joinConfigSecretRef = { name: 'other', key: 'x.yaml' }),
      /not spec\.joinConfigSecretRef$/,
    ],
    [
      'the discovery interval',
      c => (c.spec.discovery.intervalSeconds = 10),
      /not spec\.discovery\.intervalSeconds$/,
    ],
    [
      'a label',
      c => (c.metadata.labels = { owner: 'portal' }),
      /only the rackside.dev\/reclaim-added-addresses annotation of a TalosCluster, not metadata\.labels$/,
    ],
    [
      'another annotation',
      c => (c.metadata.annotations = { 'rackside.dev/other': 'x' }),
      /not metadata\.annotations\[rackside\.dev\/other\]$/,
    ],
  ];
  for (const [what, change, message] of refusals) {
    const r = await write(change);
    assert.equal(r.status, 403, `${what}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.message, message, what);
  }
  // The allowed networks (issue 16) are the deployer's: the backend's write is refused
  // where the schema has them (and pruned, so unchanged, where it does not yet).
  const networks = await write(c => {
    c.spec.discovery.allowedNetworks = ['0.0.0.0/0'];
  });
  if (hasAllowedNetworks) {
    assert.equal(networks.status, 403, JSON.stringify(networks.body));
    assert.match(
      networks.body.message,
      /not spec\.discovery\.allowedNetworks$/,
    );
  }
  const after = await rack.kube.get(`${clusters}/plant-a`);
  assert.deepEqual(
    after.spec,
    before.spec,
    'nothing the backend may not change',
  );
  assert.deepEqual(after.metadata.labels, before.metadata.labels);
  assert.deepEqual(after.metadata.annotations, before.metadata.annotations);

  // Its own two things: admitted.
  const added = await write(c => {
    c.spec.discovery.addresses.push('10.0.5.11');
    c.metadata.annotations = {
      ...c.metadata.annotations,
      'rackside.dev/reclaim-added-addresses': '10.0.5.11',
    };
  });
  assert.equal(added.status, 200, JSON.stringify(added.body));
  assert.deepEqual(added.body.spec.discovery.addresses, [
    '10.0.5.10',
    '10.0.5.11',
  ]);
  const removed = await write(c => {
    c.spec.discovery.addresses = ['10.0.5.10'];
    delete c.metadata.annotations['rackside.dev/reclaim-added-addresses'];
  });
  assert.equal(removed.status, 200, JSON.stringify(removed.body));
  // And a patch is not the backend's at all (RBAC).
  const patch = await backend.request(
    'PATCH',
    `${clusters}/plant-a`,
    { spec: { talosconfigSecretRef: { name: 'x' } } },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(patch.status, 403);
});

test('narrower identities: the backend changes a ServerBMC only in spec.healthRefresh, on its resourceVersion', async () => {
  const { backend } = clients;
  const bmcs = `${RACKSIDE}/serverbmcs`;
  // FULL installs worker-1's ServerBMC with the chart.
  const before = await rack.kube.get(`${bmcs}/worker-1`);
  const mergePatch = body =>
    backend.request('PATCH', `${bmcs}/worker-1`, body, {
      contentType: 'application/merge-patch+json',
    });
  const refusals = [
    [
      'the address (the operator would send the credentials there)',
      { spec: { address: 'https://203.0.113.9' } },
      /only spec\.healthRefresh of a ServerBMC, not spec\.address$/,
    ],
    [
      'the credentials ref',
      { spec: { credentialsSecretRef: { name: 'other' } } },
      /not spec\.credentialsSecretRef$/,
    ],
    [
      'the system path',
      { spec: { systemPath: '/redfish/v1/Systems/2' } },
      /not spec\.systemPath$/,
    ],
    [
      'a label',
      { metadata: { labels: { owner: 'portal' } } },
      /not metadata\.labels$/,
    ],
  ];
  for (const [what, body, message] of refusals) {
    const r = await mergePatch(body);
    assert.equal(r.status, 403, `${what}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.message, message, what);
  }
  // The status is the operator's (RBAC: no patch of the subresource).
  const status = await backend.request(
    'PATCH',
    `${bmcs}/worker-1/status`,
    {
      status: {
        health: {
          rollup: 'OK',
          parts: [],
          logEntries: [],
          firmware: [],
          missing: [],
        },
      },
    },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(status.status, 403);
  const unchanged = await rack.kube.get(`${bmcs}/worker-1`);
  assert.deepEqual(unchanged.spec, before.spec);
  assert.deepEqual(unchanged.status, before.status);

  // Its own request, as the route writes it: admitted on the current resourceVersion...
  const refresh = {
    requestedAt: '2026-12-06T10:00:00Z',
    requestedBy: 'user:default/guest',
  };
  const asked = await mergePatch({
    metadata: { resourceVersion: unchanged.metadata.resourceVersion },
    spec: { healthRefresh: refresh },
  });
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  assert.deepEqual(asked.body.spec.healthRefresh, refresh);
  // ...and refused on the version it was read at once another request won (409).
  const late = await mergePatch({
    metadata: { resourceVersion: unchanged.metadata.resourceVersion },
    spec: {
      healthRefresh: { ...refresh, requestedAt: '2026-12-06T10:00:01Z' },
    },
  });
  assert.equal(late.status, 409, JSON.stringify(late.body));
});

test('narrower identities: the backend creates only credential-shaped Secrets (immutable, Opaque, labelled, owned by the MachineReclaim)', async () => {
  const { backend } = clients;
  const secrets = `/api/v1/namespaces/${NS}/secrets`;
  // The reclaim a credential belongs to (made by the admin, who names themself: an
  // object without requestedBy is refused at admission).
  const owner = await rack.kube.post(
    `${RACKSIDE}/namespaces/${NS}/machinereclaims`,
    {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'MachineReclaim',
      metadata: { name: 'cred-owner', namespace: NS },
      spec: {
        address: '10.0.5.41',
        targetCluster: 'plant-a',
        credentialSecretRef: { name: 'cred-owner-talosconfig' },
        reason: 'policy test',
        requestedBy: 'rackside-admin',
      },
    },
  );
  const credential = (name, change = () => {}) => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      immutable: true,
      metadata: {
        name,
        namespace: NS,
        labels: { 'rackside.dev/credential-of': 'cred-owner' },
        ownerReferences: [
          {
            apiVersion: 'rackside.dev/v1alpha1',
            kind: 'MachineReclaim',
            name: 'cred-owner',
            uid: owner.metadata.uid,
          },
        ],
      },
      data: { talosconfig: Buffer.from('context: x').toString('base64') },
    };
    change(secret);
    return secret;
  };
  const refusals = [
    [
      'a plain Secret',
      s => {
        delete s.immutable;
        delete s.metadata.labels;
        delete s.metadata.ownerReferences;
      },
      /it must be immutable: true/,
    ],
    ['a mutable one', s => delete s.immutable, /it must be immutable: true/],
    [
      'one without the label',
      s => delete s.metadata.labels,
      /it must carry the label rackside.dev\/credential-of/,
    ],
    [
      'one without an owner',
      s => delete s.metadata.ownerReferences,
      /it must be owned by the MachineReclaim its rackside.dev\/credential-of label names .*name cred-owner\)/,
    ],
    [
      'one owned by something else',
      s => {
        s.metadata.ownerReferences[0].kind = 'TalosCluster';
        s.metadata.ownerReferences[0].name = 'cred-owner';
      },
      /it must be owned by the MachineReclaim/,
    ],
    [
      'one whose label names another reclaim',
      s => (s.metadata.labels['rackside.dev/credential-of'] = 'someone-else'),
      /it must be owned by the MachineReclaim .*name someone-else\)/,
    ],
    [
      'a ServiceAccount token Secret in credential clothing',
      s => {
        s.type = 'kubernetes.io/service-account-token';
        s.metadata.annotations = {
          'kubernetes.io/service-account.name': 'rackside-operator',
        };
        delete s.data;
      },
      /its type must be Opaque/,
    ],
  ];
  for (const [what, change, message] of refusals) {
    const r = await backend.request('POST', secrets, credential('x', change));
    assert.equal(r.status, 403, `${what}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.message, message, what);
    assert.equal(
      (await rack.kube.request('GET', `${secrets}/x`)).status,
      404,
      `${what}: nothing written`,
    );
  }
  const created = await backend.request(
    'POST',
    secrets,
    credential('cred-owner-talosconfig'),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // Others (the deployer, here the admin) still create what they like.
  const plain = await rack.kube.request('POST', secrets, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'deployer-secret', namespace: NS },
    stringData: { a: 'b' },
  });
  assert.equal(plain.status, 201);
});

test('narrower identities: the reclaim grant holds in the release namespace only', async () => {
  const reclaim = namespace =>
    can('rackside-backstage', 'reclaim', 'machinereclaims', {
      group: 'rackside.dev',
      namespace,
    });
  assert.equal(await reclaim(NS), true);
  assert.equal(await reclaim('default'), false);
  assert.equal(await reclaim(undefined), false, 'not cluster-wide');
  const role = await rack.kube.get(
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/rackside-backstage`,
  );
  assert.ok(
    role.rules.some(
      r =>
        r.resources.includes('machinereclaims') && r.verbs.includes('reclaim'),
    ),
  );
});

test('the operator takes retention and leader election from values; the schema refuses a duration without a unit', () => {
  const argsOf = values => {
    const [deployment] = parseYamlDocuments(renderChart(values)).filter(
      d => d.kind === 'Deployment' && d.metadata.name.endsWith('-operator'),
    );
    return deployment.spec.template.spec.containers[0].args;
  };
  const defaults = argsOf({});
  for (const arg of [
    '--retention=7d',
    '--lease-duration=15s',
    '--renew-deadline=10s',
    '--retry-period=2s',
  ]) {
    assert.ok(defaults.includes(arg), `${arg} in ${defaults.join(' ')}`);
  }
  const set = argsOf({
    operator: {
      retention: '12h',
      leaderElection: {
        leaseDuration: '30s',
        renewDeadline: '20s',
        retryPeriod: '4s',
      },
    },
  });
  for (const arg of [
    '--retention=12h',
    '--lease-duration=30s',
    '--renew-deadline=20s',
    '--retry-period=4s',
  ]) {
    assert.ok(set.includes(arg), `${arg} in ${set.join(' ')}`);
  }
  assert.throws(
    () => renderChart({ operator: { retention: '7' } }),
    /retention.*does not match pattern/s,
  );
  assert.throws(
    () => renderChart({ operator: { leaderElection: { renewDeadline: 10 } } }),
    /renewDeadline/,
  );
});

test('operator.alertmanager: off by default; set, its flags, the CA and token mounted read-only, bad values refused by name', () => {
  const podOf = values => {
    const [deployment] = parseYamlDocuments(renderChart(values)).filter(
      d => d.kind === 'Deployment' && d.metadata.name.endsWith('-operator'),
    );
    return deployment.spec.template.spec;
  };
  const off = podOf({});
  assert.ok(
    !off.containers[0].args.some(a => /alert|silence|return-grace/.test(a)),
    off.containers[0].args.join(' '),
  );
  assert.ok(!off.volumes.some(v => v.name.startsWith('alertmanager')));

  const on = podOf({
    operator: {
      alertmanager: {
        url: 'https://alertmanager.monitoring:9093',
        caSecret: { name: 'am-ca', key: 'ca.pem' },
        tokenSecret: { name: 'am-token', key: 'token' },
        matchers: ['node="{{node}}"', 'rack=~"{{labels.rack}}"'],
        silenceLease: '20m',
        silenceRenew: '5m',
        silenceMax: '12h',
        returnGrace: '2m',
        maintenanceUrl:
          'https://backstage.example.com/servers/maintenances/prod-a/{{name}}',
      },
    },
  });
  const args = on.containers[0].args;
  for (const arg of [
    '--alertmanager-url=https://alertmanager.monitoring:9093',
    '--alertmanager-ca-file=/etc/rackside/alertmanager-ca/ca.pem',
    '--alertmanager-token-file=/etc/rackside/alertmanager-token/token',
    '--alert-matchers=node="{{node}}";rack=~"{{labels.rack}}"',
    '--silence-lease=20m',
    '--silence-renew=5m',
    '--silence-max=12h',
    '--return-grace=2m',
    '--maintenance-url=https://backstage.example.com/servers/maintenances/prod-a/{{name}}',
  ]) {
    assert.ok(args.includes(arg), `${arg} in ${args.join(' ')}`);
  }
  const mounts = Object.fromEntries(
    on.containers[0].volumeMounts.map(m => [m.name, m]),
  );
  assert.deepEqual(
    [mounts['alertmanager-ca'].readOnly, mounts['alertmanager-token'].readOnly],
    [true, true],
  );
  const volumes = Object.fromEntries(on.volumes.map(v => [v.name, v]));
  assert.equal(volumes['alertmanager-token'].secret.secretName, 'am-token');
  assert.deepEqual(volumes['alertmanager-token'].secret.items, [
    { key: 'token', path: 'token' },
  ]);
  assert.equal(volumes['alertmanager-ca'].secret.secretName, 'am-ca');
  // The defaults of the flags when only the URL is set.
  const plain = podOf({
    operator: { alertmanager: { url: 'http://127.0.0.1:9093' } },
  }).containers[0].args;
  for (const arg of [
    '--silence-lease=30m',
    '--silence-renew=10m',
    '--silence-max=24h',
    '--return-grace=5m',
  ]) {
    assert.ok(plain.includes(arg), `${arg} in ${plain.join(' ')}`);
  }
  assert.ok(!plain.some(a => a.startsWith('--alert-matchers')));
  assert.ok(!plain.some(a => a.startsWith('--maintenance-url')));
  // A page URL without {{name}} would link every silence to one page: refused.
  assert.throws(
    () =>
      renderChart({
        operator: {
          alertmanager: {
            url: 'http://am:9093',
            maintenanceUrl: 'https://backstage.example.com/servers',
          },
        },
      }),
    /maintenanceUrl/,
  );

  assert.throws(
    () =>
      renderChart({
        operator: { alertmanager: { url: 'x', silenceLease: '30' } },
      }),
    /alertmanager/,
  );
  assert.throws(
    () =>
      renderChart({
        operator: {
          alertmanager: { url: 'http://am:9093', tokenSecret: { name: 'a' } },
        },
      }),
    /tokenSecret.*key/s,
  );
  assert.throws(
    () =>
      renderChart({
        operator: {
          alertmanager: {
            url: 'http://am:9093',
            caSecret: { name: 'a', key: 'b' },
            caConfigMap: { name: 'c', key: 'd' },
          },
        },
      }),
    /caConfigMap or caSecret, not both/,
  );
});

test('the operator takes the health sweep from values; the schema refuses a duration without a unit and a concurrency of 0', () => {
  const argsOf = values => {
    const [deployment] = parseYamlDocuments(renderChart(values)).filter(
      d => d.kind === 'Deployment' && d.metadata.name.endsWith('-operator'),
    );
    return deployment.spec.template.spec.containers[0].args;
  };
  const defaults = argsOf({});
  for (const arg of [
    '--health-interval=15m',
    '--health-concurrency=4',
    '--health-full-interval=12h',
  ]) {
    assert.ok(defaults.includes(arg), `${arg} in ${defaults.join(' ')}`);
  }
  const set = argsOf({
    operator: {
      healthInterval: '5m',
      healthConcurrency: 2,
      healthFullInterval: '6h',
    },
  });
  for (const arg of [
    '--health-interval=5m',
    '--health-concurrency=2',
    '--health-full-interval=6h',
  ]) {
    assert.ok(set.includes(arg), `${arg} in ${set.join(' ')}`);
  }
  assert.throws(
    () => renderChart({ operator: { healthInterval: '15' } }),
    /healthInterval.*does not match pattern/s,
  );
  assert.throws(
    () => renderChart({ operator: { healthConcurrency: 0 } }),
    /healthConcurrency/,
  );
});

test('the operator takes its health reading deadline from values (60s by default); the schema refuses one without a unit', () => {
  const argsOf = values => {
    const [deployment] = parseYamlDocuments(renderChart(values)).filter(
      d => d.kind === 'Deployment' && d.metadata.name.endsWith('-operator'),
    );
    return deployment.spec.template.spec.containers[0].args;
  };
  assert.ok(argsOf({}).includes('--health-reading-deadline=60s'));
  assert.ok(
    argsOf({ operator: { healthReadingDeadline: '2m' } }).includes(
      '--health-reading-deadline=2m',
    ),
  );
  assert.throws(
    () => renderChart({ operator: { healthReadingDeadline: '60' } }),
    /healthReadingDeadline.*does not match pattern/s,
  );
});

const SEVEN_CRDS = [
  'machinereclaims.rackside.dev',
  'maintenanceplans.rackside.dev',
  'nodemaintenances.rackside.dev',
  'powerproviders.rackside.dev',
  'serverbmcs.rackside.dev',
  'talosclusters.rackside.dev',
  'talosmachines.rackside.dev',
];

/** The CRDs of the chart's crds/ directory, by name. */
function crdFiles() {
  const byName = {};
  const crdDir = path.join(CHART_DIR, 'crds');
  for (const file of fs.readdirSync(crdDir).filter(f => f.endsWith('.yaml'))) {
    for (const doc of parseYamlDocuments(
      fs.readFileSync(path.join(crdDir, file), 'utf8'),
    ))
      byName[doc.metadata.name] = doc;
  }
  return byName;
}

test('CRDs: crds/ for a plain install; crds.enabled renders the same seven as templates, kept on uninstall unless crds.keep is false', () => {
  const files = crdFiles();
  assert.deepEqual(Object.keys(files).sort(), SEVEN_CRDS);
  // The repository's crds/ and the chart's are the same files.
  for (const file of fs.readdirSync(path.join(CHART_DIR, 'crds')))
    assert.equal(
      fs.readFileSync(path.join(CHART_DIR, 'crds', file), 'utf8'),
      fs.readFileSync(path.join(CHART_DIR, '..', '..', 'crds', file), 'utf8'),
      file,
    );
  const crdsOf = text =>
    parseYamlDocuments(text).filter(d => d.kind === 'CustomResourceDefinition');

  // Default: no CRD among the templates (Helm installs crds/ itself, once).
  assert.deepEqual(crdsOf(renderChart({})), []);

  for (const [values, keep] of [
    [{ crds: { enabled: true } }, true],
    [{ crds: { enabled: true, keep: true } }, true],
    [{ crds: { enabled: true, keep: false } }, false],
  ]) {
    const rendered = crdsOf(renderChart(values));
    assert.deepEqual(
      rendered.map(d => d.metadata.name).sort(),
      SEVEN_CRDS,
      JSON.stringify(values),
    );
    for (const crd of rendered) {
      const file = files[crd.metadata.name];
      // Exactly the file's definition, with the release's labels and the keep policy.
      assert.deepEqual(crd.spec, file.spec, crd.metadata.name);
      assert.equal(
        crd.metadata.labels['app.kubernetes.io/part-of'],
        'rackside',
      );
      assert.equal(crd.metadata.labels['app.kubernetes.io/managed-by'], 'Helm');
      assert.equal(
        crd.metadata.annotations?.['helm.sh/resource-policy'],
        keep ? 'keep' : undefined,
        `${crd.metadata.name} with ${JSON.stringify(values)}`,
      );
    }
  }
  // crds.* is checked like every other value.
  assert.throws(
    () => renderChart({ crds: { enabled: 'yes' } }),
    /crds\/enabled|crds.enabled/,
  );
  assert.throws(() => renderChart({ crds: { upgrade: true } }), /upgrade/);
});

test('image.digest: the operator and the helm test pods run repository@digest, preferred over the tag; a malformed digest is refused', () => {
  const digest = `sha256:${'ab'.repeat(32)}`;
  const image = values =>
    parseYamlDocuments(renderChart(values)).find(d => d.kind === 'Deployment')
      .spec.template.spec.containers[0].image;
  const { appVersion } = parseYamlDocuments(
    fs.readFileSync(path.join(CHART_DIR, 'Chart.yaml'), 'utf8'),
  )[0];
  assert.equal(image({}), `rackside/operator:${appVersion}`);
  assert.equal(image({ image: { tag: '9.9.9' } }), 'rackside/operator:9.9.9');
  assert.equal(
    image({
      image: {
        repository: 'registry.example.com/rackside/operator',
        tag: '9.9.9',
        digest,
      },
    }),
    `registry.example.com/rackside/operator@${digest}`,
  );
  assert.throws(
    () => renderChart({ image: { digest: 'sha256:abc' } }),
    /image\/digest/,
  );
  assert.throws(
    () => renderChart({ image: { digest: `${'ab'.repeat(32)}` } }),
    /image\/digest/,
  );
});

/** The `helm test` pods (templates/tests/) rendered with `values`. */
function testPods(values) {
  const file = path.join(dir, 'test-pods.json');
  fs.writeFileSync(file, JSON.stringify(values));
  const out = helm([
    'template',
    'rackside',
    CHART_DIR,
    '--namespace',
    NS,
    '--kube-version',
    '1.36.3',
    '--values',
    file,
  ]);
  return parseYamlDocuments(out).filter(
    d => d.metadata?.annotations?.['helm.sh/hook'] === 'test',
  );
}

test('helm test hooks: the operator’s /readyz through its Service; with backstage.enabled, the portal’s ServiceAccount against the apiserver', () => {
  const digest = `sha256:${'cd'.repeat(32)}`;
  const pods = testPods({
    backstage: { enabled: true },
    image: { repository: 'registry.example.com/rackside/operator', digest },
  });
  assert.deepEqual(pods.map(p => p.metadata.name).sort(), [
    'rackside-test-backstage',
    'rackside-test-ready',
  ]);
  for (const pod of pods) {
    assert.equal(pod.kind, 'Pod');
    assert.equal(pod.spec.restartPolicy, 'Never');
    assert.equal(
      pod.metadata.annotations['helm.sh/hook-delete-policy'],
      'before-hook-creation',
    );
    const [container] = pod.spec.containers;
    // The operator image by default (it has node), by digest as the operator runs it.
    assert.equal(
      container.image,
      `registry.example.com/rackside/operator@${digest}`,
    );
    assert.deepEqual(container.command.slice(0, 2), ['node', '-e']);
    assert.equal(container.securityContext.readOnlyRootFilesystem, true);
    assert.equal(pod.spec.securityContext.runAsNonRoot, true);
    // The script parses (node --check on the rendered text).
    const script = path.join(dir, `${pod.metadata.name}.js`);
    fs.writeFileSync(script, container.command[2]);
    execFileSync(process.execPath, ['--check', script]);
  }
  const ready = pods.find(p => p.metadata.name === 'rackside-test-ready');
  assert.equal(ready.spec.automountServiceAccountToken, false);
  assert.deepEqual(
    ready.spec.containers[0].env.find(e => e.name === 'READYZ_URL'),
    {
      name: 'READYZ_URL',
      value: 'http://rackside-operator-metrics.rackside-system.svc:8081/readyz',
    },
  );
  const reach = pods.find(p => p.metadata.name === 'rackside-test-backstage');
  assert.equal(reach.spec.serviceAccountName, 'rackside-backstage');
  assert.equal(reach.spec.automountServiceAccountToken, true);
  // tests.image overrides the image; without backstage or the metrics Service, no pod
  // that could not work is rendered.
  assert.equal(
    testPods({ tests: { image: 'node:24' } })[0].spec.containers[0].image,
    'node:24',
  );
  assert.deepEqual(
    testPods({ metrics: { service: { enabled: false } } }).map(
      p => p.metadata.name,
    ),
    [],
  );
});

/** The rows of the README's values table: {value: default cell}. */
function readmeValueRows() {
  const rows = {};
  const readme = fs.readFileSync(path.join(CHART_DIR, 'README.md'), 'utf8');
  // The "## Values" section, up to the next section.
  const section = readme.split(/^## /m).find(s => s.startsWith('Values\n'));
  assert.ok(section, 'README.md has a "## Values" section');
  for (const line of section.split('\n')) {
    const cells = /^\| `([^`]+)`\s*\|(.*?)\|/.exec(line);
    if (cells) rows[cells[1]] = cells[2].trim();
  }
  return rows;
}

/** Every value path of values.schema.json: leaves and the objects above them. */
function schemaPaths() {
  const schema = JSON.parse(
    fs.readFileSync(path.join(CHART_DIR, 'values.schema.json'), 'utf8'),
  );
  const all = new Map();
  const walk = (prefix, node) => {
    const props = node.type === 'object' ? node.properties : undefined;
    if (prefix) all.set(prefix, !props);
    for (const [key, child] of Object.entries(props ?? {}))
      walk(prefix ? `${prefix}.${key}` : key, child);
  };
  walk('', schema);
  return all;
}

test('the README documents every value of values.schema.json, with the default of values.yaml', () => {
  const rows = readmeValueRows();
  const paths = schemaPaths();
  // Helm's own `global` (values shared with subcharts) is allowed by the schema, not ours.
  paths.delete('global');
  const documented = p => {
    const parts = p.split('.');
    return parts.some((_, i) => parts.slice(0, i + 1).join('.') in rows);
  };
  const missing = [...paths]
    .filter(([p, leaf]) => leaf && !documented(p))
    .map(([p]) => p);
  assert.deepEqual(missing, [], 'values without a row in README.md');
  const unknown = Object.keys(rows).filter(p => !paths.has(p));
  assert.deepEqual(unknown, [], 'README rows that are not values');

  // Where the default cell is one literal, it is values.yaml's.
  const values = parseYamlDocuments(
    fs.readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8'),
  )[0];
  const literal = v =>
    typeof v === 'string'
      ? v === ''
        ? "''"
        : v
      : Array.isArray(v) && v.length === 0
      ? '[]'
      : v && typeof v === 'object' && Object.keys(v).length === 0
      ? '{}'
      : typeof v === 'object'
      ? undefined
      : String(v);
  let compared = 0;
  for (const [p, cell] of Object.entries(rows)) {
    const single = /^`([^`]*)`$/.exec(cell);
    if (!single) continue;
    const value = p.split('.').reduce((o, k) => o?.[k], values);
    const expected = literal(value);
    if (expected === undefined) continue;
    compared++;
    assert.equal(single[1], expected, `default of ${p} in README.md`);
  }
  assert.ok(compared > 60, `${compared} defaults compared`);
});
