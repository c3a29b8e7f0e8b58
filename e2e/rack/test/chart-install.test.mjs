// The chart as a platform team installs it: `helm package`, `helm install` of the package
// into the simulated rack by a deployer ServiceAccount (a token kubeconfig, as a CI
// pipeline has; no admin certificate), the Backstage backend's identity as a
// ServiceAccount only (no long-lived token Secret, the default), then `helm upgrade` to
// the working tree's chart with the CRDs taken into the release (crds.enabled, after the
// adoption README.md describes), and `helm uninstall`, which leaves the CRDs and the
// Rackside objects. The real apiserver, with the chart's admission policies in force,
// accepts every object; the Deployment's pods are kwok's (nothing runs the image here:
// e2e/rack/test/image.test.mjs does), except for `helm test`: its two hooks and one
// operator replica behind its Service run for real from the release's image, the test
// playing the kubelet and kube-proxy kwok has not (lib/podRunner.mjs).
//   node --test e2e/rack/test/chart-install.test.mjs   (needs e2e/rack/build.sh: Kubernetes
//   and helm; scripts/image.sh: the operator image; root, Debian's podman and runc)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  binaries,
  createServiceAccountToken,
  startRack,
  writeTokenKubeconfig,
} from '../rack.mjs';
import { CHART_DIR, REPO_ROOT, helm, helmBinary } from '../lib/chart.mjs';
import { createPodRunner, freePort, serviceProxy } from '../lib/podRunner.mjs';
import { parseYamlDocuments } from '../lib/yaml.mjs';

const NET = Number(process.env.RACK_TEST_NET_CHART_INSTALL ?? 158);
const NS = 'rackside-system';
const RELEASE = 'rackside';
const CHART = parseYamlDocuments(
  fs.readFileSync(path.join(CHART_DIR, 'Chart.yaml'), 'utf8'),
)[0];

let rack;
let dir;
let deployer; // a kubeconfig file of the deployer ServiceAccount
let packaged;

const kubectl = (...args) =>
  execFileSync(binaries().kubectl, ['--kubeconfig', deployer, ...args], {
    encoding: 'utf8',
  });
const getJson = (...args) => JSON.parse(kubectl('get', ...args, '-o', 'json'));
const asDeployer = args => helm([...args, '--kubeconfig', deployer]);

function valuesFile(name, values) {
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(values));
  return file;
}

before(
  async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rack-chart-install-'));
    rack = await startRack({
      dir: path.join(dir, 'rack'),
      net: NET,
      withTalos: false,
      withRedfish: false,
      withWorkloads: false,
      log: () => {},
    });
    // The deployer: a ServiceAccount bound to cluster-admin, as a pipeline's would be.
    await createServiceAccountToken(rack.kube, 'kube-system', 'deployer', {
      create: true,
    });
    const binding = await rack.kube.request(
      'POST',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'deployer' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'cluster-admin',
        },
        subjects: [
          {
            kind: 'ServiceAccount',
            name: 'deployer',
            namespace: 'kube-system',
          },
        ],
      },
    );
    assert.ok(binding.status < 300, JSON.stringify(binding.body));
    deployer = writeTokenKubeconfig({
      server: rack.server,
      caFile: rack.caFile,
      token: await createServiceAccountToken(
        rack.kube,
        'kube-system',
        'deployer',
      ),
      file: path.join(dir, 'deployer.kubeconfig'),
    });
  },
  { timeout: 240000 },
);

after(async () => {
  if (rack) await rack.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('helm package makes rackside-<version>.tgz with the seven CRDs, the schema and the README', () => {
  const out = path.join(dir, 'dist');
  const said = helm(['package', CHART_DIR, '--destination', out]);
  packaged = path.join(out, `rackside-${CHART.version}.tgz`);
  assert.match(said, /Successfully packaged chart/);
  const files = execFileSync('tar', ['tzf', packaged], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  for (const f of [
    'rackside/Chart.yaml',
    'rackside/values.yaml',
    'rackside/values.schema.json',
    'rackside/README.md',
    'rackside/templates/NOTES.txt',
    'rackside/templates/crds.yaml',
  ])
    assert.ok(files.includes(f), `${f} in ${files.join(', ')}`);
  assert.equal(
    files.filter(f => /^rackside\/crds\/.*\.yaml$/.test(f)).length,
    7,
  );
  helm(['lint', packaged, '--strict']);
});

test('helm install of the package as a deployer ServiceAccount: every object accepted, the operator rolls out', () => {
  const said = asDeployer([
    'install',
    RELEASE,
    packaged,
    '--namespace',
    NS,
    '--create-namespace',
    '--values',
    valuesFile('install', { backstage: { enabled: true } }),
    '--wait',
    '--timeout',
    '180s',
  ]);
  assert.match(said, /STATUS: deployed/);
  // NOTES: the default for an out-of-cluster portal is a bound token, renewed.
  assert.match(said, /create token rackside-backstage --duration=24h/);
  assert.match(said, /CRDs: Helm installs crds\/ once/);

  const deployment = getJson('deployment', '-n', NS, 'rackside-operator');
  assert.equal(deployment.status.availableReplicas, 2);
  const crds = getJson('crd', '-l', 'app.kubernetes.io/part-of=rackside');
  assert.equal(crds.items.length, 7);
  // Installed from crds/: outside the release, no keep policy needed.
  for (const crd of crds.items)
    assert.equal(
      crd.metadata.labels['app.kubernetes.io/managed-by'],
      undefined,
    );
  // The backend's identity: a ServiceAccount, no token Secret.
  getJson('serviceaccount', '-n', NS, 'rackside-backstage');
  assert.throws(
    () => kubectl('get', 'secret', '-n', NS, 'rackside-backstage-token'),
    /NotFound/,
  );
  // A kubectl user's maintenance, attributed to itself, passes the chart's policies.
  kubectl(
    'create',
    '-f',
    valuesFile('nm', {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'NodeMaintenance',
      metadata: { name: 'survives-uninstall' },
      spec: {
        nodeName: 'worker-1',
        intent: 'cordon',
        reason: 'chart install test',
        requestedBy: 'system:serviceaccount:kube-system:deployer',
      },
    }),
  );
});

test('helm test: the operator answers /readyz through its Service and the portal’s ServiceAccount reaches the apiserver', async () => {
  const archive = path.join(
    REPO_ROOT,
    'dist',
    `rackside-operator-${CHART.appVersion}.oci.tar`,
  );
  assert.ok(fs.existsSync(archive), `${archive} missing: run scripts/image.sh`);
  const runner = await createPodRunner({
    dir: path.join(dir, 'pods'),
    rack,
    archive,
  });
  // One operator replica runs for real: a pod of the Deployment, its listening ports moved
  // to free ones (the host network is shared), behind its metrics Service's port on an
  // address of this rack's own, which the hook resolves the Service's name to.
  const probePort = await freePort();
  const webhookPort = await freePort();
  const [operatorPod] = getJson(
    'pods',
    '-n',
    NS,
    '-l',
    'app.kubernetes.io/component=operator',
  ).items;
  const operator = await runner.start(operatorPod, {
    args: args =>
      args.map(a =>
        a.startsWith('--probe-port=')
          ? `--probe-port=${probePort}`
          : a.startsWith('--webhook-port=')
          ? `--webhook-port=${webhookPort}`
          : a,
      ),
  });
  const service = getJson('service', '-n', NS, 'rackside-operator-metrics');
  const serviceAddress = `127.${NET}.254.81`;
  const proxy = await serviceProxy({
    address: serviceAddress,
    port: service.spec.ports[0].port,
    target: probePort,
  });
  const ran = new Map(); // pod name -> {code, output}
  try {
    const said = [];
    const helmTest = new Promise((resolve, reject) => {
      const child = spawn(
        helmBinary(),
        [
          'test',
          RELEASE,
          '--namespace',
          NS,
          '--timeout',
          '180s',
          '--kubeconfig',
          deployer,
        ],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: {
            ...process.env,
            HELM_CACHE_HOME: path.join(dir, 'helm-cache'),
          },
        },
      );
      child.stdout.on('data', d => said.push(d));
      child.stderr.on('data', d => said.push(d));
      child.on('error', reject);
      child.on('exit', code => resolve(code));
    });
    let helmDone = false;
    helmTest.then(() => (helmDone = true));
    // The kubelet's part: each hook pod kwok has started runs once, its status written
    // from its container's exit code; helm test waits on that status.
    while (!helmDone) {
      for (const pod of getJson(
        'pods',
        '-n',
        NS,
        '-l',
        'app.kubernetes.io/component=test',
      ).items) {
        if (ran.has(pod.metadata.name) || pod.status.phase !== 'Running')
          continue;
        ran.set(
          pod.metadata.name,
          await runner.runToCompletion(pod, {
            hosts: {
              [`rackside-operator-metrics.${NS}.svc`]: serviceAddress,
            },
          }),
        );
      }
      await Promise.race([helmTest, new Promise(r => setTimeout(r, 250))]);
    }
    const output = Buffer.concat(said).toString();
    const details = `helm test:\n${output}\nhooks:\n${[...ran]
      .map(([n, r]) => `${n} (exit ${r.code}):\n${r.output}`)
      .join('\n')}\noperator:\n${operator.logs().slice(-3000)}`;
    assert.equal(await helmTest, 0, details);
    assert.deepEqual([...ran.keys()].sort(), [
      'rackside-test-backstage',
      'rackside-test-ready',
    ]);
    for (const name of ran.keys())
      assert.match(
        output,
        new RegExp(`TEST SUITE:\\s+${name}[\\s\\S]*?Phase:\\s+Succeeded`),
        details,
      );
    assert.match(
      ran.get('rackside-test-ready').output,
      /operator ready: GET http:\/\/rackside-operator-metrics\.rackside-system\.svc:8081\/readyz answered 200/,
    );
    const reach = ran.get('rackside-test-backstage').output;
    assert.match(reach, /listed nodes: 1 on the first page/);
    assert.match(reach, /list pods: allowed/);
    assert.match(reach, /create nodemaintenances: allowed/);
    assert.match(reach, /patch nodes: denied/);
  } finally {
    await proxy.close();
    await operator.stop();
    await runner.stop();
  }
});

test('helm upgrade to the working tree: CRDs adopted into the release and kept, a rolling update, the webhook certificate kept', () => {
  const caBefore = getJson('validatingwebhookconfiguration', 'rackside-webhook')
    .webhooks[0].clientConfig.caBundle;
  // Without adoption, Helm refuses CRDs it did not create: the documented steps.
  assert.throws(
    () =>
      asDeployer([
        'upgrade',
        RELEASE,
        CHART_DIR,
        '--namespace',
        NS,
        '--reuse-values',
        '--set',
        'crds.enabled=true',
      ]),
    /invalid ownership metadata|cannot be imported/,
  );
  const crdNames = getJson(
    'crd',
    '-l',
    'app.kubernetes.io/part-of=rackside',
  ).items.map(c => c.metadata.name);
  kubectl(
    'label',
    'crd',
    ...crdNames,
    'app.kubernetes.io/managed-by=Helm',
    '--overwrite',
  );
  kubectl(
    'annotate',
    'crd',
    ...crdNames,
    `meta.helm.sh/release-name=${RELEASE}`,
    `meta.helm.sh/release-namespace=${NS}`,
    '--overwrite',
  );
  const said = asDeployer([
    'upgrade',
    RELEASE,
    CHART_DIR,
    '--namespace',
    NS,
    '--reuse-values',
    '--set',
    'crds.enabled=true',
    '--set',
    'operator.workers=6',
    '--wait',
    '--timeout',
    '180s',
  ]);
  assert.match(said, /STATUS: deployed/);
  assert.match(said, /CRDs: rendered by this release/);
  for (const crd of getJson('crd', '-l', 'app.kubernetes.io/part-of=rackside')
    .items) {
    assert.equal(
      crd.metadata.annotations['helm.sh/resource-policy'],
      'keep',
      crd.metadata.name,
    );
    assert.equal(
      crd.metadata.labels['helm.sh/chart'],
      `rackside-${CHART.version}`,
    );
  }
  const deployment = getJson('deployment', '-n', NS, 'rackside-operator');
  assert.ok(
    deployment.spec.template.spec.containers[0].args.includes('--workers=6'),
  );
  assert.equal(deployment.status.updatedReplicas, 2);
  assert.equal(deployment.status.availableReplicas, 2);
  assert.equal(
    getJson('validatingwebhookconfiguration', 'rackside-webhook').webhooks[0]
      .clientConfig.caBundle,
    caBefore,
    'the chart-generated webhook certificate is kept on upgrade',
  );
});

test('helm uninstall removes the release and leaves the CRDs and the Rackside objects', () => {
  asDeployer(['uninstall', RELEASE, '--namespace', NS, '--wait']);
  assert.throws(
    () => kubectl('get', 'deployment', '-n', NS, 'rackside-operator'),
    /NotFound/,
  );
  assert.throws(
    () => kubectl('get', 'clusterrole', 'rackside-operator'),
    /NotFound/,
  );
  assert.equal(
    getJson('crd', '-l', 'app.kubernetes.io/part-of=rackside').items.length,
    7,
  );
  const nm = getJson('nodemaintenance', 'survives-uninstall');
  assert.equal(nm.spec.nodeName, 'worker-1');
});
