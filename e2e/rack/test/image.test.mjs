// The operator image (scripts/image.sh: dist/rackside-operator-<version>.oci.tar) run on the
// simulated rack as a cluster would run it: loaded into podman from the archive, started as
// root by podman with the image's own user, a read-only root filesystem and the host
// network, with a kubeconfig of the operator's ServiceAccount (the chart's rules, under its
// admission policies). It must take the Lease, answer /readyz, cordon a node and return it
// to service, and on SIGTERM release the Lease and exit within the chart's grace period.
//   scripts/image.sh && node --test e2e/rack/test/image.test.mjs
// (needs root, Debian's podman and runc, and e2e/rack/build.sh's binaries)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  binaries,
  createServiceAccountToken,
  startRack,
  writeTokenKubeconfig,
} from '../rack.mjs';
import { REPO_ROOT } from '../lib/chart.mjs';
import { podmanOfItsOwn } from '../lib/podRunner.mjs';

const NET = Number(process.env.RACK_TEST_NET_IMAGE ?? 157);
const NS = 'rackside-system';
const LEASE = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/rackside-operator`;
const NM = '/apis/rackside.dev/v1alpha1/nodemaintenances';
const VERSION = JSON.parse(
  fs.readFileSync(
    path.join(REPO_ROOT, 'packages/operator/package.json'),
    'utf8',
  ),
).version;
const ARCHIVE = path.join(
  REPO_ROOT,
  'dist',
  `rackside-operator-${VERSION}.oci.tar`,
);
const IDENTITY = 'rackside-operator-image-test';
/** The chart's pod leaves the default terminationGracePeriodSeconds. */
const GRACE_SECONDS = 30;
const CONTAINER = `rackside-image-test-${process.pid}`;

let rack;
let dir;
let podmanArgs;
let probePort;
let logs = '';

const sleep = ms => new Promise(r => setTimeout(r, ms));

/** Waits for `fn` to answer something truthy, polling; fails with `what` and the logs. */
async function waitFor(what, fn, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}${
          last ? ` (${last.message})` : ''
        }\noperator log:\n${logs.slice(-4000)}`,
      );
    await sleep(200);
  }
}

function podman(args, options = {}) {
  return execFileSync('podman', [...podmanArgs, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function readyz() {
  try {
    const res = await fetch(`http://127.0.0.1:${probePort}/readyz`, {
      signal: AbortSignal.timeout(1000),
    });
    return res.status;
  } catch {
    return 0;
  }
}

before(
  async () => {
    assert.ok(
      fs.existsSync(ARCHIVE),
      `${ARCHIVE} missing: run scripts/image.sh first`,
    );
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rack-image-test-'));
    // podman's own storage for this test, as the pod runner makes it.
    const own = podmanOfItsOwn(dir);
    process.env.CONTAINERS_CONF = own.env.CONTAINERS_CONF;
    podmanArgs = own.args;
    rack = await startRack({
      dir: path.join(dir, 'rack'),
      net: NET,
      withTalos: false,
      withRedfish: false,
      withWorkloads: false,
      log: () => {},
    });
    const { kubectl } = binaries();
    const kubectlRun = args =>
      execFileSync(kubectl, ['--kubeconfig', rack.kubeconfig, ...args], {
        encoding: 'utf8',
      });
    kubectlRun(['apply', '--server-side', '-f', path.join(REPO_ROOT, 'crds')]);
    kubectlRun([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd',
      '-l',
      'app.kubernetes.io/part-of=rackside',
    ]);
    for (const file of ['operator-access.yaml', 'policy-access.yaml'])
      kubectlRun([
        'apply',
        '--server-side',
        '-f',
        path.join(REPO_ROOT, 'e2e/rack/demo', file),
      ]);
    const token = await createServiceAccountToken(
      rack.kube,
      NS,
      'rackside-operator',
    );
    // The container sees this kubeconfig (the CA inline) at /rack/kubeconfig.
    const mount = path.join(dir, 'mount');
    fs.mkdirSync(mount);
    writeTokenKubeconfig({
      server: rack.server,
      caFile: rack.caFile,
      token,
      file: path.join(mount, 'kubeconfig'),
    });
    fs.chmodSync(path.join(mount, 'kubeconfig'), 0o644);
    const loaded = podman(['load', '--quiet', '--input', ARCHIVE]);
    assert.match(loaded, new RegExp(`rackside/operator:${VERSION}`));
  },
  { timeout: 300000 },
);

after(async () => {
  if (podmanArgs) {
    try {
      podman(['rm', '--force', '--time', '0', CONTAINER]);
    } catch {
      // not started or already gone
    }
  }
  if (rack) await rack.stop();
  if (dir) {
    // vfs layers are plain directories; podman's own reset would do the same.
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

let run;

test('the image starts as its own non-root user on a read-only root, takes the Lease and answers /readyz', async () => {
  probePort = await freePort();
  const image = podman(['images', '--format', '{{.Repository}}:{{.Tag}}'])
    .split('\n')
    .find(name => name.endsWith(`rackside/operator:${VERSION}`));
  assert.ok(image, 'the loaded image is listed');
  const config = JSON.parse(podman(['image', 'inspect', image]))[0];
  assert.equal(config.User, '65532:65532');
  assert.equal(config.Labels['org.opencontainers.image.version'], VERSION);
  assert.match(
    config.Labels['org.opencontainers.image.revision'],
    /^[0-9a-f]{40}(-dirty)?$/,
  );
  assert.ok(config.Labels['org.opencontainers.image.source']);
  run = spawn(
    'podman',
    [
      ...podmanArgs,
      'run',
      '--name',
      CONTAINER,
      '--network',
      'host',
      '--read-only',
      '--volume',
      `${path.join(dir, 'mount')}:/rack:ro`,
      image,
      '--kubeconfig=/rack/kubeconfig',
      `--namespace=${NS}`,
      `--probe-port=${probePort}`,
      `--identity=${IDENTITY}`,
      '--lease-duration=6s',
      '--renew-deadline=4s',
      '--retry-period=1s',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  run.stdout.on('data', d => (logs += d));
  run.stderr.on('data', d => (logs += d));
  run.exited = new Promise(resolve =>
    run.on('exit', (code, signal) => resolve({ code, signal })),
  );

  const lease = await waitFor('the Lease held by the container', async () => {
    const res = await rack.kube.request('GET', LEASE);
    return (
      res.status === 200 &&
      res.body.spec?.holderIdentity === IDENTITY &&
      res.body
    );
  });
  assert.equal(lease.spec.holderIdentity, IDENTITY);
  assert.equal(
    await waitFor('/readyz 200', async () => (await readyz()) === 200 && 200),
    200,
  );
  const metrics = await (
    await fetch(`http://127.0.0.1:${probePort}/metrics`)
  ).text();
  assert.match(metrics, /^rackside_leader 1$/m);

  // Seen from the host: the operator's process runs as 65532 and its root is read-only.
  const pid = Number(
    podman(['inspect', '--format', '{{.State.Pid}}', CONTAINER]).trim(),
  );
  assert.ok(pid > 0);
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const uids = /^Uid:\s+(.*)$/m.exec(status)[1].split(/\s+/);
  const gids = /^Gid:\s+(.*)$/m.exec(status)[1].split(/\s+/);
  assert.deepEqual(uids, ['65532', '65532', '65532', '65532']);
  assert.deepEqual(gids, ['65532', '65532', '65532', '65532']);
  const rootMount = fs
    .readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
    .split('\n')
    .find(line => line.split(' ')[4] === '/');
  assert.match(rootMount.split(' ')[5], /(^|,)ro(,|$)/, rootMount);
  // And from inside: nothing under / is writable, even for root (the image's files are
  // root's, so its own user is refused first), while /tmp is a scratch tmpfs as the
  // chart's emptyDir is.
  for (const target of [
    '/app/dist/index.cjs.js',
    '/app/new-file',
    '/etc/passwd',
  ]) {
    assert.throws(
      () =>
        podman([
          'exec',
          '--user',
          '0',
          CONTAINER,
          'sh',
          '-c',
          `echo x >> ${target}`,
        ]),
      /Read-only file system/,
      target,
    );
    assert.throws(
      () => podman(['exec', CONTAINER, 'sh', '-c', `echo x >> ${target}`]),
      /Read-only file system|Permission denied/,
      target,
    );
  }
  assert.equal(
    podman([
      'exec',
      CONTAINER,
      'sh',
      '-c',
      'echo x > /tmp/scratch && id -u',
    ]).trim(),
    '65532',
  );
  // The bundled entry point finds its package.json: --version answers the chart's appVersion.
  assert.equal(
    podman(['exec', CONTAINER, 'node', '/app/dist/index.cjs.js', '--version']),
    `rackside-operator ${VERSION}\n`,
  );
  // No workspace links: the packages are copied into node_modules.
  assert.equal(
    podman(['exec', CONTAINER, 'find', '/app', '-type', 'l']).trim(),
    '',
  );
});

test('the container cordons a node for a NodeMaintenance and returns it to service', async () => {
  const res = await rack.kube.request('POST', NM, {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'NodeMaintenance',
    metadata: { name: 'image-cordon' },
    spec: {
      nodeName: 'worker-1',
      intent: 'cordon',
      reason: 'image test',
      requestedBy: 'rackside-admin',
    },
  });
  assert.ok(res.status < 300, JSON.stringify(res.body));
  await waitFor('image-cordon Cordoned', async () => {
    const nm = await rack.kube.get(`${NM}/image-cordon`);
    return nm.status?.phase === 'Cordoned';
  });
  const node = await rack.kube.get('/api/v1/nodes/worker-1');
  assert.equal(node.spec.unschedulable, true);
  const patched = await rack.kube.request(
    'PATCH',
    `${NM}/image-cordon`,
    {
      spec: { returnToService: { by: 'rackside-admin', reason: 'done' } },
    },
    { contentType: 'application/merge-patch+json' },
  );
  assert.ok(patched.status < 300, JSON.stringify(patched.body));
  const complete = await waitFor('image-cordon Complete', async () => {
    const nm = await rack.kube.get(`${NM}/image-cordon`);
    return nm.status?.phase === 'Complete' && nm;
  });
  assert.deepEqual(
    complete.status.history.map(h => h.phase),
    ['Requested', 'Cordoned', 'Returning', 'Complete'],
  );
  const after = await rack.kube.get('/api/v1/nodes/worker-1');
  assert.ok(!after.spec.unschedulable);
  // Each state change is one JSON line at info with the object's fields.
  const lines = logs
    .split('\n')
    .filter(line => line.startsWith('{'))
    .map(line => JSON.parse(line));
  const changes = lines.filter(
    l => l.kind === 'NodeMaintenance' && l.name === 'image-cordon',
  );
  for (const phase of ['Cordoned', 'Complete'])
    assert.ok(
      changes.some(
        l => l.level === 'info' && l.phase === phase && l.reason === phase,
      ),
      `an info line for ${phase} among ${JSON.stringify(changes)}`,
    );
});

test('on SIGTERM it releases the Lease and exits 0 within the grace period', async () => {
  const sent = Date.now();
  podman(['kill', '--signal', 'TERM', CONTAINER]);
  const exit = await Promise.race([
    run.exited,
    sleep(GRACE_SECONDS * 1000).then(() => 'still running'),
  ]);
  assert.deepEqual(exit, { code: 0, signal: null }, logs.slice(-2000));
  const lease = await rack.kube.get(LEASE);
  assert.ok(
    !lease.spec.holderIdentity,
    `Lease still held by ${lease.spec.holderIdentity}`,
  );
  assert.ok(Date.now() - sent < GRACE_SECONDS * 1000);
});
