// spec.approval (docs/approvals.md) against a real apiserver: the chart's admission policy
// (charts/rackside/templates/admission-policies.yaml, "rackside-approval") lets only the
// Backstage backend write it, and the CRDs' CEL rules (servers-common
// resources/approval.ts) keep what was asked fixed and a decision final, whoever writes.
// The identities and policies are the chart's, as the rack and the demo install them
// (e2e/rack/demo/*-access.yaml, which chart.test.mjs checks against the chart); the CRDs are
// crds/. No operator and no backend run here: the writes are theirs, with their tokens.
//   node --test e2e/rack/test/approval-admission.test.mjs   (needs e2e/rack/build.sh)
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
import { REPO_ROOT } from '../lib/chart.mjs';

const NET = Number(process.env.RACK_TEST_NET_APPROVAL_ADMISSION ?? 159);
const NS = 'rackside-system';
const RACKSIDE = '/apis/rackside.dev/v1alpha1';
const NM = `${RACKSIDE}/nodemaintenances`;
const MP = `${RACKSIDE}/maintenanceplans`;
const OPS = 'system:serviceaccount:default:ops';
const OPERATOR = `system:serviceaccount:${NS}:rackside-operator`;
const POLICY_DENIAL = (kind, name, user) =>
  `${kind}.rackside.dev "${name}" is forbidden: ValidatingAdmissionPolicy 'rackside-approval' with binding 'rackside-approval' denied request: spec.approval is written only by the Rackside backend: ${user} may not set, change or remove it`;

const sleep = ms => new Promise(r => setTimeout(r, ms));

let rack;
let dir;
const clients = {};

/** Waits until `probe` answers true: a policy takes effect once the apiserver has read it. */
async function until(what, probe, timeoutMs = 30000) {
  const end = performance.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (performance.now() > end) throw new Error(`timed out waiting: ${what}`);
    await sleep(100);
  }
}

const HELD = {
  required: true,
  rule: 'power-verbs',
  approvers: ['group:default/plant-engineers'],
  expiresAt: '2099-01-01T00:00:00Z',
  requestedRung: 'typed-name',
};
const DECISION = {
  approvedBy: 'user:default/engineer',
  approvedAt: '2026-08-04T10:05:00Z',
  approvedRung: 'typed-name',
};

function nodeMaintenance(name, spec = {}) {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'NodeMaintenance',
    metadata: { name },
    spec: {
      nodeName: 'worker-3',
      intent: 'reboot',
      reason: 'approval admission test',
      ...spec,
    },
  };
}

function plan(name, spec = {}) {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'MaintenancePlan',
    metadata: { name },
    spec: {
      intent: 'reboot',
      nodes: ['worker-1', 'worker-2'],
      reason: 'approval admission test',
      ...spec,
    },
  };
}

/**
 * A write as the backend makes it: GET, then PUT on that resourceVersion (its role grants
 * update, not patch). `change` gets the stored spec and returns the new one.
 */
async function backendUpdate(p, change) {
  const current = await clients.backend.get(p);
  return clients.backend.request('PUT', p, {
    ...current,
    spec: change(current.spec),
  });
}

/** A backend write that must succeed: the stored object. */
async function backendUpdated(p, change) {
  const r = await backendUpdate(p, change);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

const withApproval = approval => spec => ({ ...spec, approval });

const authorization = (at, until) => ({
  by: 'user:default/guest',
  at,
  until,
});

before(
  async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rack-approval-admission-'));
    rack = await startRack({
      dir,
      net: NET,
      withTalos: false,
      withRedfish: false,
      withAlertmanager: false,
      withWorkloads: false,
      log: () => {},
    });
    const { kubectl } = binaries();
    const run = args =>
      execFileSync(kubectl, ['--kubeconfig', rack.kubeconfig, ...args], {
        encoding: 'utf8',
      });
    const crds = path.join(REPO_ROOT, 'crds');
    run(['apply', '--server-side', '-f', crds]);
    run(['wait', '--for=condition=Established', '--timeout=60s', '-f', crds]);
    for (const file of [
      'operator-access.yaml',
      'backstage-access.yaml',
      'policy-access.yaml',
    ]) {
      run([
        'apply',
        '--server-side',
        '-f',
        path.join(REPO_ROOT, 'e2e/rack/demo', file),
      ]);
    }
    // A kubectl user who may write maintenances and plans (as an on-call engineer would).
    await rack.kube.post('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'approval-test-ops' },
      rules: [
        {
          apiGroups: ['rackside.dev'],
          resources: ['nodemaintenances', 'maintenanceplans'],
          verbs: ['create', 'get', 'update', 'patch'],
        },
      ],
    });
    const opsToken = await createServiceAccountToken(
      rack.kube,
      'default',
      'ops',
      { create: true },
    );
    await rack.kube.post(
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'approval-test-ops' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'approval-test-ops',
        },
        subjects: [
          { kind: 'ServiceAccount', name: 'ops', namespace: 'default' },
        ],
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
    // The policy type-checks against the CRDs' schemas without a warning...
    const policy = `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/rackside-approval`;
    await until('the approval policy type-checked', async () => {
      const p = await rack.kube.get(policy);
      return p.status?.observedGeneration === p.metadata.generation;
    });
    const checked = await rack.kube.get(policy);
    assert.deepEqual(checked.status.typeChecking?.expressionWarnings ?? [], []);
    // ... and is enforced once a dry-run create that sets spec.approval is refused.
    await until('the approval policy enforced', async () => {
      const r = await clients.ops.request(
        'POST',
        `${NM}?dryRun=All`,
        nodeMaintenance('probe', { requestedBy: OPS, approval: HELD }),
      );
      return r.status === 403;
    });
  },
  { timeout: 240000 },
);

after(async () => {
  Object.values(clients).forEach(c => c.close());
  if (rack) await rack.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('a kubectl user cannot create a NodeMaintenance carrying approval.required and a forged approvedBy, nor a held one', async () => {
  const { ops } = clients;
  const forged = await ops.request(
    'POST',
    NM,
    nodeMaintenance('forged-approval', {
      requestedBy: OPS,
      approval: { ...HELD, ...DECISION },
    }),
  );
  assert.equal(forged.status, 403, JSON.stringify(forged.body));
  assert.equal(
    forged.body.message,
    POLICY_DENIAL('nodemaintenances', 'forged-approval', OPS),
  );
  assert.equal(
    (await rack.kube.request('GET', `${NM}/forged-approval`)).status,
    404,
  );
  // Holding one's own request (to look approved later) is the backend's too.
  const held = await ops.request(
    'POST',
    NM,
    nodeMaintenance('held-by-kubectl', { requestedBy: OPS, approval: HELD }),
  );
  assert.equal(held.status, 403);
  // Not even a cluster admin (system:masters) writes it.
  const admin = await rack.kube.request(
    'POST',
    NM,
    nodeMaintenance('forged-by-admin', {
      requestedBy: 'rackside-admin',
      approval: { ...HELD, ...DECISION },
    }),
  );
  assert.equal(admin.status, 403);
  assert.equal(
    admin.body.message,
    POLICY_DENIAL('nodemaintenances', 'forged-by-admin', 'rackside-admin'),
  );
  // Without spec.approval the same user's request is admitted.
  const plain = await ops.request(
    'POST',
    NM,
    nodeMaintenance('plain', { requestedBy: OPS }),
  );
  assert.equal(plain.status, 201, JSON.stringify(plain.body));
});

test('on a held NodeMaintenance, setting approvedBy is refused to a kubectl user and to the operator; other writes pass', async () => {
  const { ops, backend, operator } = clients;
  const created = await backend.request(
    'POST',
    NM,
    nodeMaintenance('held', {
      requestedBy: 'user:default/guest',
      approval: HELD,
    }),
  );
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.deepEqual(created.body.spec.approval, HELD);

  // A merge patch of the decision alone (what `kubectl patch --type merge` sends).
  const patched = await ops
    .patch(`${NM}/held`, { spec: { approval: DECISION } })
    .then(
      () => ({ status: 200 }),
      e => e,
    );
  assert.equal(patched.status, 403, JSON.stringify(patched.body));
  assert.equal(
    patched.body.message,
    POLICY_DENIAL('nodemaintenances', 'held', OPS),
  );
  // A whole update (`kubectl replace`, `kubectl edit`) is refused the same way.
  const current = await rack.kube.get(`${NM}/held`);
  const put = await ops.request('PUT', `${NM}/held`, {
    ...current,
    spec: { ...current.spec, approval: { ...HELD, ...DECISION } },
  });
  assert.equal(put.status, 403);
  // The operator holds the request; it never approves it.
  const byOperator = await operator.request('PUT', `${NM}/held`, {
    ...current,
    spec: { ...current.spec, approval: { ...HELD, ...DECISION } },
  });
  assert.equal(byOperator.status, 403);
  assert.equal(
    byOperator.body.message,
    POLICY_DENIAL('nodemaintenances', 'held', OPERATOR),
  );
  // A rejection is a decision too.
  const rejected = await ops
    .patch(`${NM}/held`, {
      spec: {
        approval: {
          rejectedBy: 'user:default/engineer',
          rejectedAt: '2026-08-04T10:05:00Z',
          rejectReason: 'forged',
        },
      },
    })
    .then(
      () => ({ status: 200 }),
      e => e,
    );
  assert.equal(rejected.status, 403);
  const stored = await rack.kube.get(`${NM}/held`);
  assert.deepEqual(stored.spec.approval, HELD);

  // Writes that leave spec.approval as it is are not this policy's business: a label, or
  // the kubectl user abandoning the held request in its own name.
  const labelled = await ops.patch(`${NM}/held`, {
    metadata: { labels: { team: 'ops' } },
  });
  assert.deepEqual(labelled.spec.approval, HELD);
  const abandoned = await ops.patch(`${NM}/held`, {
    spec: { abandon: { by: OPS, reason: 'not needed after all' } },
  });
  assert.equal(abandoned.spec.abandon.by, OPS);
  assert.deepEqual(abandoned.spec.approval, HELD);
});

test("the backend's user writes the decision once; what was asked stays fixed, and the schema refuses what no decision can be", async () => {
  const { backend } = clients;
  await backend.post(
    NM,
    nodeMaintenance('decided', {
      requestedBy: 'user:default/guest',
      approval: HELD,
    }),
  );
  const approved = await backendUpdated(
    `${NM}/decided`,
    withApproval({ ...HELD, ...DECISION }),
  );
  assert.deepEqual(approved.spec.approval, { ...HELD, ...DECISION });

  const refusedBy = async (approval, pattern) => {
    const r = await backendUpdate(`${NM}/decided`, spec => ({
      ...spec,
      approval: approval && { ...spec.approval, ...approval },
    }));
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.match(r.body.message, pattern);
  };
  // Set once: another approver does not replace the first.
  await refusedBy(
    { approvedBy: 'user:default/contractor' },
    /approval\.approvedBy can be set once/,
  );
  // Never both approved and rejected.
  await refusedBy(
    {
      rejectedBy: 'user:default/contractor',
      rejectedAt: '2026-08-04T10:06:00Z',
      rejectReason: 'too late',
    },
    /an approval is approved or rejected, never both/,
  );
  // What was asked is fixed: no longer expiry, no other approvers.
  await refusedBy(
    { expiresAt: '2100-01-01T00:00:00Z' },
    /approval\.expiresAt is fixed at creation/,
  );
  await refusedBy(
    { approvers: ['user:default/guest'] },
    /approval\.approvers is fixed at creation/,
  );
  // Removed, the held request would run unapproved.
  await refusedBy(
    undefined,
    /approval is fixed at creation: it cannot be added or removed/,
  );
  // Not even the backend writes the requester's own decision, in any case of the ref.
  await backend.post(
    NM,
    nodeMaintenance('own-decision', {
      requestedBy: 'user:default/Guest',
      approval: HELD,
    }),
  );
  for (const approval of [
    { ...HELD, ...DECISION, approvedBy: 'user:default/guest' },
    {
      ...HELD,
      rejectedBy: 'user:default/guest',
      rejectedAt: '2026-08-04T10:06:00Z',
      rejectReason: 'never mind',
    },
  ]) {
    const own = await backendUpdate(
      `${NM}/own-decision`,
      withApproval(approval),
    );
    assert.equal(own.status, 422, JSON.stringify(own.body));
    assert.match(
      own.body.message,
      /the requester cannot approve or reject their own request/,
    );
  }
  // Added after creation, a running request would be held behind the operator's back.
  await backend.post(
    NM,
    nodeMaintenance('added-later', { requestedBy: 'user:default/guest' }),
  );
  const added = await backendUpdate(`${NM}/added-later`, withApproval(HELD));
  assert.equal(added.status, 422, JSON.stringify(added.body));
  assert.match(
    added.body.message,
    /approval is fixed at creation: it cannot be added or removed/,
  );
});

// zod reaches the same verdicts (servers-common resources/approval.test.ts, same cases).
test('the CRD refuses what no decision can be: approvedRung above requestedRung, a decision without its time, a partial rejection', async () => {
  const cases = [
    [
      'rung-above',
      { ...HELD, ...DECISION, approvedRung: 'hazard' },
      /approvedRung is never above requestedRung/,
    ],
    [
      'no-time',
      { ...HELD, approvedBy: 'user:default/engineer', approvedRung: 'reason' },
      /approvedBy, approvedAt and approvedRung are set together/,
    ],
    [
      'partial-rejection',
      { ...HELD, rejectedBy: 'user:default/engineer' },
      /rejectedBy, rejectedAt and rejectReason are set together/,
    ],
    [
      'decided-unrequired',
      { ...HELD, required: false, ...DECISION },
      /only a required approval is decided/,
    ],
    [
      'group-decides',
      { ...HELD, ...DECISION, approvedBy: 'group:default/plant-engineers' },
      /approvedBy/,
    ],
  ];
  for (const [name, approval, pattern] of cases) {
    const body = nodeMaintenance(name, {
      requestedBy: 'user:default/guest',
      approval,
    });
    const r = await clients.backend.request('POST', NM, body);
    assert.equal(r.status, 422, `${name}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.message, pattern, name);
  }
  // The lowest rung under the highest: admitted by both.
  const lower = nodeMaintenance('rung-below', {
    requestedBy: 'user:default/guest',
    approval: { ...HELD, requestedRung: 'hazard', ...DECISION },
  });
  const ok = await clients.backend.request('POST', NM, lower);
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
});

test('MaintenancePlan: only the backend writes spec.approval; only a renewal replaces it, with an undecided one, and never a rejection', async () => {
  const { ops, backend } = clients;
  const forged = await ops.request(
    'POST',
    MP,
    plan('forged-plan', {
      requestedBy: OPS,
      approval: { ...HELD, ...DECISION },
    }),
  );
  assert.equal(forged.status, 403, JSON.stringify(forged.body));
  assert.equal(
    forged.body.message,
    POLICY_DENIAL('maintenanceplans', 'forged-plan', OPS),
  );

  const first = authorization('2026-08-04T10:00:00Z', '2026-08-04T18:00:00Z');
  const created = await backend.post(
    MP,
    plan('held-plan', {
      requestedBy: 'user:default/guest',
      authorization: first,
      approval: HELD,
    }),
  );
  assert.deepEqual(created.spec.approval, HELD);
  const approveByOps = await ops
    .patch(`${MP}/held-plan`, { spec: { approval: DECISION } })
    .then(
      () => ({ status: 200 }),
      e => e,
    );
  assert.equal(approveByOps.status, 403);

  // Without a renewal, the backend cannot swap the approval for a fresh one.
  const fresh = { ...HELD, expiresAt: '2099-06-01T00:00:00Z' };
  const swapped = await backend.request('PUT', `${MP}/held-plan`, {
    ...created,
    spec: { ...created.spec, approval: fresh },
  });
  assert.equal(swapped.status, 422, JSON.stringify(swapped.body));
  assert.match(swapped.body.message, /only a renewal replaces/);

  const approved = await backendUpdated(
    `${MP}/held-plan`,
    withApproval({ ...HELD, ...DECISION }),
  );
  assert.deepEqual(approved.spec.approval, { ...HELD, ...DECISION });

  // A renewal that raised a rung: a new authorization and a new, undecided approval.
  const renewed = await backendUpdated(`${MP}/held-plan`, spec => ({
    ...spec,
    authorization: authorization(
      '2026-08-04T12:00:00Z',
      '2026-08-04T20:00:00Z',
    ),
    approval: { ...fresh, requestedRung: 'hazard' },
  }));
  assert.deepEqual(renewed.spec.approval, {
    ...fresh,
    requestedRung: 'hazard',
  });
  // A renewal that replaces the approval may not bring its own decision along.
  const selfApproved = await backend.request('PUT', `${MP}/held-plan`, {
    ...renewed,
    spec: {
      ...renewed.spec,
      authorization: authorization(
        '2026-08-04T13:00:00Z',
        '2026-08-04T21:00:00Z',
      ),
      approval: {
        ...fresh,
        expiresAt: '2099-07-01T00:00:00Z',
        requestedRung: 'hazard',
        ...DECISION,
      },
    },
  });
  assert.equal(selfApproved.status, 422, JSON.stringify(selfApproved.body));
  // Never removed.
  const removed = await backendUpdate(
    `${MP}/held-plan`,
    withApproval(undefined),
  );
  assert.equal(removed.status, 422, JSON.stringify(removed.body));
  assert.match(removed.body.message, /approval cannot be removed/);

  // A rejected plan's approval stays rejected, renewal or not.
  await backend.post(
    MP,
    plan('rejected-plan', {
      requestedBy: 'user:default/guest',
      authorization: first,
      approval: HELD,
    }),
  );
  const rejected = await backendUpdated(
    `${MP}/rejected-plan`,
    withApproval({
      ...HELD,
      rejectedBy: 'user:default/engineer',
      rejectedAt: '2026-08-04T10:05:00Z',
      rejectReason: 'not during the freeze',
    }),
  );
  const replaced = await backend.request('PUT', `${MP}/rejected-plan`, {
    ...rejected,
    spec: {
      ...rejected.spec,
      authorization: authorization(
        '2026-08-04T12:00:00Z',
        '2026-08-04T20:00:00Z',
      ),
      approval: fresh,
    },
  });
  assert.equal(replaced.status, 422, JSON.stringify(replaced.body));
});
