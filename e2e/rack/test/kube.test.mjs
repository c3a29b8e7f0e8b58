// Kubernetes half of the simulated rack, against real binaries (run e2e/rack/build.sh first).
//   node --test e2e/rack/test/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  startRack,
  kubeClient,
  readVersions,
  POWER_ANNOTATION,
} from '../rack.mjs';

// Each test file uses its own rack network so files can run in parallel.
const NET = Number(process.env.RACK_TEST_NET ?? 150);
const sleep = ms => new Promise(r => setTimeout(r, ms));

let rack;
let dir;

before(
  async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rack-kube-test-'));
    rack = await startRack({
      dir,
      net: NET,
      withTalos: false,
      withRedfish: false,
      log: () => {},
    });
  },
  { timeout: 240000 },
);

after(async () => {
  if (rack) await rack.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function waitFor(what, fn, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

function evict(pod) {
  return rack.kube.request(
    'POST',
    `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/eviction`,
    {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace },
    },
  );
}

test('fixture: nodes carry machine identity and roles', async () => {
  const nodes = (await rack.kube.get('/api/v1/nodes')).items;
  const byName = Object.fromEntries(nodes.map(n => [n.metadata.name, n]));
  for (const n of rack.fixture.nodes) {
    const node = byName[n.name];
    assert.ok(node, `node ${n.name}`);
    assert.equal(node.metadata.labels['kubernetes.io/hostname'], n.name);
    assert.ok(
      node.status.conditions.some(
        c => c.type === 'Ready' && c.status === 'True',
      ),
      `${n.name} Ready`,
    );
    assert.ok(node.status.nodeInfo.bootID, `${n.name} bootID`);
    if (n.machine)
      assert.equal(node.status.nodeInfo.systemUUID, n.machine.uuid);
    if (n.controlPlane)
      assert.equal(
        node.metadata.labels['node-role.kubernetes.io/control-plane'],
        '',
      );
    if (n.virtual)
      assert.equal(node.metadata.labels['rackside.dev/virtual-node'], 'true');
  }
  const pdb = await rack.kube.get(
    '/apis/policy/v1/namespaces/shop/poddisruptionbudgets/payments',
  );
  assert.equal(pdb.status.disruptionsAllowed, 0);
  assert.equal(pdb.status.currentHealthy, 2);
});

test('fixture: worker-5 carries what a drain tells apart (docs/drain.md)', async () => {
  const pods = (
    await rack.kube.get(
      '/api/v1/namespaces/lab/pods?fieldSelector=spec.nodeName%3Dworker-5',
    )
  ).items;
  const byApp = Object.fromEntries(pods.map(p => [p.metadata.labels.app, p]));
  assert.deepEqual(Object.keys(byApp).sort(), [
    'archiver',
    'db',
    'frontend',
    'local-agent',
    'nightly-report',
  ]);
  for (const pod of pods)
    assert.equal(pod.status.phase, 'Running', pod.metadata.name);
  assert.equal(byApp.db.metadata.name, 'db-0');
  // Placed by kube-scheduler from the claim's local volume; the shop keeps off worker-5.
  assert.equal(byApp.db.spec.nodeName, 'worker-5');
  const all = (
    await rack.kube.get('/api/v1/pods?fieldSelector=spec.nodeName%3Dworker-5')
  ).items;
  assert.deepEqual([...new Set(all.map(p => p.metadata.namespace))].sort(), [
    'lab',
    'monitoring',
  ]);
  assert.equal(byApp.db.metadata.labels['rackside.dev/drain-order'], '10');
  assert.deepEqual(
    byApp.db.spec.volumes.find(v => v.name === 'data').persistentVolumeClaim,
    { claimName: 'data-db-0' },
  );
  assert.equal(byApp.frontend.metadata.labels['rackside.dev/drain-order'], '1');
  assert.equal(byApp.archiver.spec.terminationGracePeriodSeconds, 1800);
  assert.equal(
    byApp['local-agent'].metadata.labels['rackside.dev/drain'],
    'skip',
  );
  assert.equal(
    byApp['nightly-report'].metadata.labels['rackside.dev/drain'],
    'wait-completed',
  );
  assert.equal(byApp['nightly-report'].metadata.ownerReferences[0].kind, 'Job');

  // The claim is bound to the local volume pinned to worker-5.
  const claim = await rack.kube.get(
    '/api/v1/namespaces/lab/persistentvolumeclaims/data-db-0',
  );
  assert.equal(claim.spec.volumeName, 'lab-db-worker-5');
  assert.equal(claim.status.phase, 'Bound');
  const pv = await rack.kube.get('/api/v1/persistentvolumes/lab-db-worker-5');
  assert.ok(pv.spec.local);
  assert.deepEqual(
    pv.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0]
      .values,
    ['worker-5'],
  );

  // VirtualMachineInstances: the API object only.
  const vmis = (
    await rack.kube.get(
      '/apis/kubevirt.io/v1/namespaces/lab/virtualmachineinstances',
    )
  ).items;
  assert.deepEqual(
    vmis
      .map(v => [
        v.metadata.name,
        v.status.nodeName,
        v.spec.evictionStrategy ?? null,
        v.status.conditions.find(c => c.type === 'LiveMigratable').status,
      ])
      .sort(),
    [
      ['vm-build', 'worker-5', 'LiveMigrateIfPossible', 'False'],
      ['vm-gpu', 'worker-5', 'LiveMigrate', 'False'],
      ['vm-scratch', 'worker-5', null, 'True'],
      ['vm-web', 'worker-5', 'LiveMigrate', 'True'],
    ],
  );

  // kwok holds the wait-completed Job pod Running until its phase is written.
  const report = byApp['nightly-report'];
  const reportPath = `/api/v1/namespaces/lab/pods/${report.metadata.name}`;
  assert.equal((await rack.kube.get(reportPath)).status.phase, 'Running');
  await rack.kube.patch(`${reportPath}/status`, {
    status: { phase: 'Succeeded' },
  });
  await waitFor('the nightly-report Job complete', async () => {
    const job = await rack.kube.get(
      '/apis/batch/v1/namespaces/lab/jobs/nightly-report',
    );
    return job.status?.succeeded === 1;
  });
});

test('eviction: blocked by a PDB answers 429, an allowed one removes the pod', async () => {
  const payments = (
    await rack.kube.get(
      '/api/v1/namespaces/shop/pods?labelSelector=app%3Dpayments',
    )
  ).items;
  assert.equal(payments.length, 2);
  const blocked = await evict(payments[0]);
  assert.equal(blocked.status, 429, JSON.stringify(blocked.body));

  const web = (
    await rack.kube.get('/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb')
  ).items;
  assert.ok(web.length >= 1);
  const victim = web[0];
  const ok = await evict(victim);
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
  await waitFor('evicted pod to disappear', async () => {
    const r = await rack.kube.request(
      'GET',
      `/api/v1/namespaces/shop/pods/${victim.metadata.name}`,
    );
    return r.status === 404 || r.body?.metadata?.uid !== victim.metadata.uid;
  });
});

test('RBAC: a ServiceAccount without a role gets 403 on a node patch', async () => {
  const token = await rack.saToken('rbac-test', 'nobody', {
    expirationSeconds: 600,
  });
  const sa = kubeClient({ server: rack.server, caFile: rack.caFile, token });
  try {
    const who = await sa.request(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'SelfSubjectReview',
      },
    );
    assert.equal(who.status, 201, JSON.stringify(who.body));
    assert.equal(
      who.body.status.userInfo.username,
      'system:serviceaccount:rbac-test:nobody',
    );
    const r = await sa.request(
      'PATCH',
      '/api/v1/nodes/worker-1',
      { metadata: { labels: { x: 'y' } } },
      {
        contentType: 'application/merge-patch+json',
      },
    );
    assert.equal(r.status, 403, JSON.stringify(r.body));
  } finally {
    sa.close();
  }
});

test('/version reports the pinned Kubernetes version', async () => {
  const v = await rack.kube.get('/version');
  assert.equal(v.gitVersion, `v${readVersions().KUBERNETES_VERSION}`);
});

test('power link: kwok leaves a powered-off node alone', async () => {
  const name = 'worker-6';
  const before = await rack.kube.get(`/api/v1/nodes/${name}`);
  await rack.kube.patch(`/api/v1/nodes/${name}`, {
    metadata: { annotations: { [POWER_ANNOTATION]: 'off' } },
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await rack.kube.patch(
    `/api/v1/nodes/${name}/status`,
    {
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'PoweredOff',
            message: 'machine is off',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    },
    'application/strategic-merge-patch+json',
  );
  const ready = n => n.status.conditions.find(c => c.type === 'Ready')?.status;
  for (let i = 0; i < 15; i++) {
    await sleep(400);
    assert.equal(ready(await rack.kube.get(`/api/v1/nodes/${name}`)), 'False');
  }
  // Power on: the emulator removes the annotation and sets a new boot ID; kwok makes it Ready.
  const bootID = crypto.randomUUID();
  await rack.kube.patch(`/api/v1/nodes/${name}`, {
    metadata: { annotations: { [POWER_ANNOTATION]: null } },
  });
  await rack.kube.patch(
    `/api/v1/nodes/${name}/status`,
    { status: { nodeInfo: { bootID } } },
    'application/strategic-merge-patch+json',
  );
  const after = await waitFor(
    'node Ready again',
    async () => {
      const n = await rack.kube.get(`/api/v1/nodes/${name}`);
      return ready(n) === 'True' ? n : null;
    },
    15000,
  );
  assert.equal(after.status.nodeInfo.bootID, bootID);
  assert.equal(
    after.status.nodeInfo.systemUUID,
    before.status.nodeInfo.systemUUID,
  );
});

test('stop: every rack process is gone', async () => {
  const procs = rack.processes();
  assert.ok(procs.length >= 5, JSON.stringify(procs));
  await rack.stop();
  rack = null;
  for (const p of procs) {
    // Gone, or a zombie not yet reaped by this process.
    let alive = false;
    try {
      alive = !/^\d+ \(.*\) Z /.test(
        fs.readFileSync(`/proc/${p.pid}/stat`, 'utf8'),
      );
    } catch {
      alive = false;
    }
    assert.equal(alive, false, `${p.name} (pid ${p.pid}) still running`);
  }
});
