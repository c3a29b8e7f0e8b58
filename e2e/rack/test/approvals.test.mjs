// Approvals (docs/approvals.md) attacked from outside the happy path, on a rack with the real
// operator and the demo backend (e2e/rack/lib/rackPortal.mjs), over HTTP as the users of
// examples/org.yaml:
//
// - a reboot a rule holds stays AwaitingApproval and the node is untouched (not cordoned, no
//   pod evicted, nothing sent to its machine), while the operator goes on acting on others;
// - the requester approving their own request is 403; so is an approver the rule names who
//   lacks servers:approve on the node (on any node, or on that node only);
// - an approval after the impact grew (a second control-plane member NotReady, so the
//   reboot of a member went from typed-name to hazard) is 409 naming both rungs;
// - a rejection needs a reason and ends the request Refused with the approver's words;
// - an approved reboot whose impact grew before the verb went out is Refused at the send,
//   nothing sent (the operator checks again when it acts);
// - an approval that expires ends the request Refused ("approval expired"), nothing sent,
//   and an approval after it is 409;
// - an operator killed and restarted while a request awaits approval keeps waiting, and
//   acts on the approval given after;
// - a plan over the size threshold waits for approval and no step starts before it (one
//   under the threshold is not held);
// - two approvers at once: exactly one wins, and the object names the winner.
//
// The policy (servers.approvals.rules) and the permission lines are this file's app-config,
// written in before(). The admission policy on spec.approval is checked by
// e2e/rack/test/approval-admission.test.mjs, not here.
//
//   node --test e2e/rack/test/approvals.test.mjs   (needs e2e/rack/build.sh; the rack network is
//   RACK_TEST_NET_APPROVALS or a free one of 160..189; RACKSIDE_E2E_KEEP=1 keeps the logs)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually, startRackPortal } from '../lib/rackPortal.mjs';
import { POWER_ANNOTATION } from '../rack.mjs';

const CLUSTER = 'plant-a';
const GUEST = 'user:default/guest'; // plant-admins: requests everything here
const ENGINEER = 'user:default/engineer'; // servers:approve on workers only
const CONTRACTOR = 'user:default/contractor'; // servers:approve everywhere
const VIEWER = 'user:default/viewer'; // named by a rule, read only
/**
 * Control-plane members added to the fixture's three: with five, a reboot of one spends
 * margin without consuming it (typed-name), and one more NotReady makes it a hazard.
 */
const EXTRA_MEMBERS = ['cp-4', 'cp-5'];
/** Workers without machines or pods (tainted: no workload lands), for the plans. */
const PLAN_WORKERS = ['apw-1', 'apw-2', 'apw-3', 'apw-4', 'apw-5'];
const REASON = 'approvals rack test: firmware window agreed with the plant';

const CONFIG = `
servers:
  approvals:
    rules:
      # Selects every request on worker-4; expires after a minute (the expiry test).
      - name: expires-fast
        select:
          nodeLabels: { kubernetes.io/hostname: worker-4 }
        approvers: [group:default/plant-engineers]
        expiresAfterMinutes: 1
      - name: large-plans
        select:
          actions: [plan]
          planSizeAtLeast: 3
        approvers: [group:default/plant-engineers]
        expiresAfterMinutes: 240
      - name: power-verbs
        select:
          actions: [reboot, shutdown]
        approvers:
          - group:default/plant-admins
          - group:default/plant-engineers
          - user:default/viewer
        expiresAfterMinutes: 240
permission:
  rackside:
    # The engineers read only, whatever the demo's tiers say: servers:approve is the admin
    # tier's, and the lines below give it to engineers on workers, to the contractor anywhere.
    tiers:
      read: [group:default/plant-viewers, group:default/plant-engineers]
      operate-lead: []
      admin: [group:default/plant-admins]
    principals:
      - ref: group:default/plant-engineers
        allow:
          - permission: servers:approve
            conditions:
              not: { rule: IS_CONTROL_PLANE }
      - ref: user:default/contractor
        allow: [servers:approve]
`;

let portal;
let workDir;
const tokens = {};
/** The held reboots by node, shared by the tests that continue them (heldReboot). */
const held = {};

const api = (user, method, route, body) =>
  portal.api(tokens[user], method, route, body);

const maintenance = name => portal.getJson('nodemaintenance', name);
const plan = name => portal.getJson('maintenanceplan', name);
const node = name => portal.getJson('node', name);
const schedulable = name => node(name).spec.unschedulable !== true;

/** The pods on a node, as namespace/name@uid. */
const podsOn = name =>
  portal
    .getJson('pods', '-A', '--field-selector', `spec.nodeName=${name}`)
    .items.map(
      p => `${p.metadata.namespace}/${p.metadata.name}@${p.metadata.uid}`,
    )
    .sort();

const phaseOf = name => maintenance(name).status?.phase;

const waitForPhase = (name, phase, timeoutMs = 90_000) =>
  eventually(
    `NodeMaintenance ${name} reaches ${phase}`,
    () => phaseOf(name) === phase && maintenance(name),
    { timeoutMs },
  );

/**
 * The guest's reboot of `nodeName`, held by the rule power-verbs: requested by the first
 * test that needs it, continued by the next ones.
 */
async function heldReboot(nodeName) {
  if (!held[nodeName]) {
    const res = await requestAction(GUEST, nodeName, 'reboot');
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(
      res.body.approval?.rule,
      'power-verbs',
      `the reboot of ${nodeName} is held: ${JSON.stringify(res.body)}`,
    );
    held[nodeName] = res.body.name;
  }
  await waitForPhase(held[nodeName], 'AwaitingApproval');
  return held[nodeName];
}

/** The actions with a pre-flight (the others carry a reason only). */
const PREFLIGHT_ACTIONS = ['drain', 'reboot', 'shutdown'];

/**
 * A server action as the portal sends it: the pre-flight (with the drain options that let
 * it proceed, when the node holds pods without a controller or with emptyDir data), then
 * the request with its token and, on the typed-name rung or above, the node's name.
 */
async function requestAction(user, nodeName, action) {
  const route = `/clusters/${CLUSTER}/servers/${nodeName}`;
  if (!PREFLIGHT_ACTIONS.includes(action))
    return api(user, 'POST', `${route}/actions/${action}`, { reason: REASON });
  let pre = await api(user, 'GET', `${route}/preflight?action=${action}`);
  assert.equal(pre.status, 200, JSON.stringify(pre.body));
  let options = {};
  if (!pre.body.canProceed) {
    options = { deleteEmptyDirData: true, force: true };
    pre = await api(
      user,
      'GET',
      `${route}/preflight?action=${action}&deleteEmptyDirData=true&force=true`,
    );
    assert.equal(pre.status, 200, JSON.stringify(pre.body));
  }
  assert.ok(pre.body.canProceed, `${action} ${nodeName}: ${pre.body.blockers}`);
  return api(user, 'POST', `${route}/actions/${action}`, {
    reason: REASON,
    preflightToken: pre.body.token,
    ...(pre.body.ceremony.requires.typedName ? { typedName: nodeName } : {}),
    ...options,
  });
}

/** The approval view of a request (`maintenances` or `plans`) as `user` sees it. */
async function approvalView(user, kind, name) {
  const view = await api(
    user,
    'GET',
    `/clusters/${CLUSTER}/${kind}/${name}/approval`,
  );
  assert.equal(view.status, 200, JSON.stringify(view.body));
  return view.body;
}

/**
 * An approval as the portal's panel sends it: the user's fresh view of the request, then
 * the decision with that view's pre-flight token (and the typed name at the hazard rung).
 */
async function approve(user, kind, name, { typedName } = {}) {
  const view = await approvalView(user, kind, name);
  return api(user, 'POST', `/clusters/${CLUSTER}/${kind}/${name}/approval`, {
    decision: 'approve',
    reason: REASON,
    preflightToken: view.now?.token,
    ...(typedName ? { typedName } : {}),
  });
}

/**
 * Proof that the operator is running and acting after it has seen the held request: a
 * cordon of worker-3 (no rule selects it) is carried out and returned, so the operator
 * has had every chance to touch the held node had it meant to.
 */
async function operatorActsOnOthers() {
  const cordon = await requestAction(GUEST, 'worker-3', 'cordon');
  assert.ok([200, 201].includes(cordon.status), JSON.stringify(cordon.body));
  assert.equal(cordon.body.approval, undefined, 'no rule holds a cordon');
  await eventually(
    'the operator cordons worker-3',
    () => !schedulable('worker-3'),
  );
  const back = await requestAction(GUEST, 'worker-3', 'uncordon');
  assert.ok([200, 201].includes(back.status), JSON.stringify(back.body));
  await eventually(
    'the operator returns worker-3 to service',
    () => schedulable('worker-3') && phaseOf(cordon.body.name) === 'Complete',
    { timeoutMs: 90_000 },
  );
}

/** A node's facts that a held request must leave as they were. */
async function snapshotOf(nodeName) {
  return {
    schedulable: schedulable(nodeName),
    pods: podsOn(nodeName),
    counts: await portal.machineCounts(nodeName),
  };
}

async function assertUntouched(nodeName, before, name) {
  const nm = maintenance(name);
  assert.equal(nm.status?.phase, 'AwaitingApproval', JSON.stringify(nm.status));
  assert.equal(nm.status?.cordonedAt, undefined, 'never cordoned');
  assert.equal(nm.status?.rebootSentAt, undefined, 'no reboot sent');
  assert.equal(nm.status?.poweredOffAt, undefined, 'no power-off sent');
  assert.equal(nm.spec.approval?.approvedBy, undefined, 'nobody approved');
  assert.deepEqual(await snapshotOf(nodeName), before, `${nodeName} untouched`);
}

/** Adds a kwok Node (the rack's shape) and waits until it is Ready. */
function addNode(name, { controlPlane }) {
  const labels = {
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    type: 'kwok',
    ...(controlPlane ? { 'node-role.kubernetes.io/control-plane': '' } : {}),
  };
  const taints = controlPlane
    ? [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }]
    : [{ key: 'rackside.dev/approvals-test', effect: 'NoSchedule' }];
  const manifest = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels,
      annotations: {
        'kwok.x-k8s.io/node': 'fake',
        'node.alpha.kubernetes.io/ttl': '0',
      },
    },
    spec: { taints },
  };
  const file = path.join(workDir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(manifest));
  portal.kubectl('apply', '-f', file);
}

const nodeReady = name =>
  node(name).status?.conditions?.find(c => c.type === 'Ready')?.status ===
  'True';

/** Powers a node off as the Talos emulator marks it: kwok leaves it alone, NotReady. */
function markNotReady(name) {
  portal.kubectl(
    'annotate',
    'node',
    name,
    `${POWER_ANNOTATION}=off`,
    '--overwrite',
  );
  portal.kubectl(
    'patch',
    'node',
    name,
    '--subresource=status',
    '--type=strategic',
    '-p',
    JSON.stringify({
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'ApprovalsTest',
            message: 'powered off by the approvals rack test',
          },
        ],
      },
    }),
  );
}

/** Ends a request this file left open (abandon), best effort: cleanup, not a check. */
async function abandon(nodeName) {
  await requestAction(GUEST, nodeName, 'maintenance-abandon').catch(() => {});
}

/** A test whose failure keeps the rack's and the processes' logs (their place is printed). */
function rackTest(name, options, fn) {
  test(name, options, async t => {
    try {
      await fn(t);
    } catch (error) {
      portal?.keepLogs();
      throw error;
    }
  });
}

before(
  async () => {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-approvals-'));
    const config = path.join(workDir, 'app-config.approvals.yaml');
    fs.writeFileSync(config, CONFIG);
    portal = await startRackPortal({
      configs: [config],
      net: process.env.RACK_TEST_NET_APPROVALS
        ? Number(process.env.RACK_TEST_NET_APPROVALS)
        : undefined,
      log: msg => process.stderr.write(`${msg}\n`),
    });
    for (const user of [GUEST, ENGINEER, CONTRACTOR, VIEWER])
      tokens[user] = await portal.tokenOf(user);
    for (const name of EXTRA_MEMBERS) addNode(name, { controlPlane: true });
    for (const name of PLAN_WORKERS) addNode(name, { controlPlane: false });
    await eventually(
      'the added nodes are Ready',
      () => [...EXTRA_MEMBERS, ...PLAN_WORKERS].every(nodeReady),
      { timeoutMs: 120_000 },
    );
    await eventually(
      'the Redfish PowerProvider advertises reboot',
      () => {
        const pp = portal.getJson('powerproviders', 'default');
        return (
          pp.status?.observedGeneration === pp.metadata.generation &&
          pp.status?.reboot === true
        );
      },
      { timeoutMs: 120_000 },
    );
    await eventually(
      'the backend sees five control-plane members',
      async () => {
        const list = await api(GUEST, 'GET', `/clusters/${CLUSTER}/servers`);
        return list.status === 200 && list.body.quorum?.members === 5;
      },
      { timeoutMs: 60_000 },
    );
  },
  { timeout: 900_000 },
);

after(async () => {
  await portal?.stop();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

rackTest(
  'a reboot a rule holds stays AwaitingApproval: not cordoned, no pod evicted, nothing sent to its machine',
  { timeout: 300_000 },
  async () => {
    const before = await snapshotOf('worker-1');
    assert.equal(before.schedulable, true);
    const res = await requestAction(GUEST, 'worker-1', 'reboot');
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(
      res.body.approval?.rule,
      'power-verbs',
      JSON.stringify(res.body),
    );
    assert.ok(
      res.body.approval.approvers.includes('group:default/plant-engineers'),
    );
    assert.ok(Date.parse(res.body.approval.expiresAt) > Date.now());
    held['worker-1'] = res.body.name;

    const nm = maintenance(held['worker-1']);
    assert.equal(nm.spec.approval?.required, true);
    assert.equal(nm.spec.approval.rule, 'power-verbs');
    assert.equal(nm.spec.approval.requestedRung, 'typed-name');
    assert.equal(nm.spec.requestedBy, GUEST);
    await waitForPhase(held['worker-1'], 'AwaitingApproval');

    await operatorActsOnOthers();
    await assertUntouched('worker-1', before, held['worker-1']);
  },
);

rackTest(
  "the requester's own approval is 403, and so is an approver without servers:approve on the node; nothing is recorded",
  { timeout: 300_000 },
  async () => {
    const name = await heldReboot('worker-1');
    const before = await snapshotOf('worker-1');

    const own = await approvalView(GUEST, 'maintenances', name);
    assert.equal(own.state, 'awaiting');
    assert.equal(own.mayApprove, false, 'the requester may not approve');
    const selfApproval = await approve(GUEST, 'maintenances', name, {
      typedName: 'worker-1',
    });
    assert.equal(selfApproval.status, 403, JSON.stringify(selfApproval.body));

    // The viewer is named by the rule but holds no servers:approve at all.
    const viewer = await approve(VIEWER, 'maintenances', name, {
      typedName: 'worker-1',
    });
    assert.equal(viewer.status, 403, JSON.stringify(viewer.body));
    await assertUntouched('worker-1', before, name);

    // The engineer may approve on workers only: a control-plane member's reboot is 403.
    const cp1 = await heldReboot('cp-1');
    const engineerView = await approvalView(ENGINEER, 'maintenances', cp1);
    assert.equal(engineerView.mayApprove, false);
    const engineer = await approve(ENGINEER, 'maintenances', cp1, {
      typedName: 'cp-1',
    });
    assert.equal(engineer.status, 403, JSON.stringify(engineer.body));
    const nm = maintenance(cp1);
    assert.equal(nm.spec.approval.approvedBy, undefined);
    assert.equal(nm.status?.phase, 'AwaitingApproval');
  },
);

rackTest(
  'an approval after the impact grew is 409 with both rungs: a second member NotReady raised the reboot of cp-1 to hazard',
  { timeout: 300_000 },
  async () => {
    const cp1 = await heldReboot('cp-1');
    const nm = maintenance(cp1);
    // Five members, quorum three, all ready: rebooting one leaves a margin of one.
    assert.equal(nm.spec.approval.requestedRung, 'typed-name');
    const before = await snapshotOf('cp-1');

    markNotReady('cp-4');
    try {
      const view = await eventually(
        "the approver's fresh pre-flight of cp-1 is at the hazard rung",
        async () => {
          const v = await approvalView(CONTRACTOR, 'maintenances', cp1);
          return v.rungNow === 'hazard' && v;
        },
        { timeoutMs: 60_000 },
      );
      assert.equal(view.requestedRung, 'typed-name');
      const res = await api(
        CONTRACTOR,
        'POST',
        `/clusters/${CLUSTER}/maintenances/${cp1}/approval`,
        {
          decision: 'approve',
          reason: REASON,
          preflightToken: view.now.token,
          typedName: 'cp-1',
        },
      );
      assert.equal(res.status, 409, JSON.stringify(res.body));
      assert.equal(res.body.requestedRung, 'typed-name');
      assert.equal(res.body.rungNow, 'hazard');
      await assertUntouched('cp-1', before, cp1);
    } finally {
      portal.kubectl('annotate', 'node', 'cp-4', `${POWER_ANNOTATION}-`);
      await eventually('cp-4 is Ready again', () => nodeReady('cp-4'), {
        timeoutMs: 60_000,
      });
    }
  },
);

rackTest(
  "a rejection needs a reason and ends the request Refused with the approver's words, nothing sent",
  { timeout: 300_000 },
  async () => {
    const cp1 = await heldReboot('cp-1');
    const before = await snapshotOf('cp-1');
    const route = `/clusters/${CLUSTER}/maintenances/${cp1}/approval`;
    const silent = await api(CONTRACTOR, 'POST', route, {
      decision: 'reject',
      reason: '  ',
    });
    assert.equal(silent.status, 400, JSON.stringify(silent.body));
    assert.equal(maintenance(cp1).spec.approval.rejectedBy, undefined);

    const words = 'not during the audit week, ask again on Monday';
    const res = await api(CONTRACTOR, 'POST', route, {
      decision: 'reject',
      reason: words,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.state, 'rejected');
    const nm = await waitForPhase(cp1, 'Refused');
    assert.equal(nm.spec.approval.rejectedBy, CONTRACTOR);
    assert.equal(nm.spec.approval.approvedBy, undefined);
    assert.ok(nm.status.message.includes(`rejected by ${CONTRACTOR}`));
    assert.ok(nm.status.message.includes(words));
    assert.equal(nm.status.cordonedAt, undefined);
    assert.equal(nm.status.rebootSentAt, undefined);
    assert.deepEqual(await snapshotOf('cp-1'), before, 'cp-1 untouched');
  },
);

rackTest(
  'an approved reboot whose impact grew before the verb went out is Refused at the send, nothing sent',
  { timeout: 300_000 },
  async () => {
    // A Job pod on cp-1 that the drain waits for (rackside.dev/drain: wait-completed, held
    // Running by the rack until its phase is written), so the approved reboot stands in
    // Draining while the impact grows.
    portal.kubectl('create', 'namespace', 'approvals-test');
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'cp-1-report', namespace: 'approvals-test' },
      spec: {
        backoffLimit: 0,
        template: {
          metadata: {
            labels: { 'rackside.dev/drain': 'wait-completed' },
            annotations: { 'rack.rackside.dev/hold-running': 'true' },
          },
          spec: {
            restartPolicy: 'Never',
            nodeSelector: { 'kubernetes.io/hostname': 'cp-1' },
            tolerations: [
              {
                key: 'node-role.kubernetes.io/control-plane',
                operator: 'Exists',
                effect: 'NoSchedule',
              },
            ],
            containers: [
              { name: 'report', image: 'registry.example/report:1' },
            ],
          },
        },
      },
    };
    const jobFile = path.join(workDir, 'cp-1-report.json');
    fs.writeFileSync(jobFile, JSON.stringify(job));
    portal.kubectl('apply', '-f', jobFile);
    const reportPod = await eventually(
      'the report pod runs on cp-1',
      () =>
        portal
          .getJson('pods', '-n', 'approvals-test')
          .items.find(
            p => p.spec.nodeName === 'cp-1' && p.status?.phase === 'Running',
          )?.metadata.name,
      { timeoutMs: 60_000 },
    );
    const countsBefore = await portal.machineCounts('cp-1');

    held['cp-1'] = undefined; // the rejected one is over: a new request
    const name = await heldReboot('cp-1');
    assert.equal(maintenance(name).spec.approval.requestedRung, 'typed-name');
    const approval = await approve(CONTRACTOR, 'maintenances', name);
    assert.equal(approval.status, 200, JSON.stringify(approval.body));
    assert.equal(maintenance(name).spec.approval.approvedRung, 'typed-name');
    await eventually(
      'the approved reboot of cp-1 drains, waiting for the report',
      () =>
        (maintenance(name).status?.drain?.waitingFor ?? []).includes(
          `approvals-test/${reportPod}`,
        ),
      { timeoutMs: 90_000 },
    );

    markNotReady('cp-4');
    try {
      // The impact grew: rebooting cp-1 now consumes the last margin (hazard). The report
      // finishes, the drain ends, and the operator checks again before the verb.
      portal.kubectl(
        'patch',
        'pod',
        reportPod,
        '-n',
        'approvals-test',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { phase: 'Succeeded' } }),
      );
      const nm = await waitForPhase(name, 'Refused', 90_000);
      assert.match(nm.status.message, /was not sent/);
      assert.equal(nm.status.rebootSentAt, undefined);
      assert.deepEqual(
        await portal.machineCounts('cp-1'),
        countsBefore,
        'nothing sent to cp-1',
      );
    } finally {
      portal.kubectl('annotate', 'node', 'cp-4', `${POWER_ANNOTATION}-`);
      await eventually('cp-4 is Ready again', () => nodeReady('cp-4'), {
        timeoutMs: 60_000,
      });
      await requestAction(GUEST, 'cp-1', 'uncordon').catch(() => {});
      portal.kubectl('delete', 'namespace', 'approvals-test', '--wait=false');
    }
  },
);

rackTest(
  'an approval that expires ends the request Refused ("approval expired") with nothing sent; approving it then is 409',
  { timeout: 300_000 },
  async () => {
    const before = await snapshotOf('worker-4');
    const res = await requestAction(GUEST, 'worker-4', 'reboot');
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.approval?.rule, 'expires-fast');
    const expiresAt = Date.parse(res.body.approval.expiresAt);
    assert.ok(expiresAt - Date.now() <= 60_000 + 5_000, 'a minute to approve');
    await waitForPhase(res.body.name, 'AwaitingApproval');

    // The operator acts when the approval expires; nothing else happens before.
    const nm = await waitForPhase(res.body.name, 'Refused', 150_000);
    assert.match(nm.status.message ?? '', /approval expired/);
    assert.ok(Date.now() >= expiresAt, 'not refused before it expired');
    assert.equal(nm.status.cordonedAt, undefined);
    assert.equal(nm.status.rebootSentAt, undefined);
    assert.deepEqual(
      await snapshotOf('worker-4'),
      before,
      'worker-4 untouched',
    );

    const late = await approve(ENGINEER, 'maintenances', res.body.name, {
      typedName: 'worker-4',
    });
    assert.equal(late.status, 409, JSON.stringify(late.body));
  },
);

rackTest(
  'an operator killed and restarted while a request awaits approval keeps waiting, and acts on the approval given after',
  { timeout: 600_000 },
  async () => {
    const before = await snapshotOf('worker-2');
    const res = await requestAction(GUEST, 'worker-2', 'reboot');
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.approval?.rule, 'power-verbs');
    const name = res.body.name;
    await waitForPhase(name, 'AwaitingApproval');

    // Killed, as a crash would: no goodbye, its Lease lapses before the next one leads.
    await portal.stopOperator({ signal: 'SIGKILL' });
    await portal.startOperator();
    await operatorActsOnOthers();
    await assertUntouched('worker-2', before, name);

    const approval = await approve(ENGINEER, 'maintenances', name, {
      typedName: 'worker-2',
    });
    assert.equal(approval.status, 200, JSON.stringify(approval.body));
    assert.equal(approval.body.state, 'approved');
    const approved = maintenance(name);
    assert.equal(approved.spec.approval.approvedBy, ENGINEER);
    await eventually(
      'the operator cordons worker-2 once approved',
      () => !schedulable('worker-2') && maintenance(name).status?.cordonedAt,
      { timeoutMs: 90_000 },
    );
    await abandon('worker-2');
  },
);

rackTest(
  'a plan over the size threshold waits for approval and no step starts before it; one under it is not held',
  { timeout: 600_000 },
  async () => {
    const createPlan = async nodes => {
      const pre = await api(
        GUEST,
        'GET',
        `/clusters/${CLUSTER}/plans/preflight?intent=drain&nodes=${nodes.join(
          ',',
        )}`,
      );
      assert.equal(pre.status, 200, JSON.stringify(pre.body));
      assert.ok(pre.body.canProceed, JSON.stringify(pre.body.blockers));
      return api(GUEST, 'POST', `/clusters/${CLUSTER}/plans`, {
        intent: 'drain',
        nodes,
        maxParallel: 1,
        reason: REASON,
        preflightToken: pre.body.token,
      });
    };

    // Two nodes: under the threshold, not held; it starts at once.
    const small = await createPlan(PLAN_WORKERS.slice(3));
    assert.equal(small.status, 201, JSON.stringify(small.body));
    assert.equal(small.body.approval, undefined);
    assert.equal(plan(small.body.name).spec.approval, undefined);
    await eventually(
      'the small plan starts a step',
      () =>
        (plan(small.body.name).status?.nodes ?? []).some(n => n.maintenance),
      { timeoutMs: 90_000 },
    );

    // Three nodes: held.
    const nodes = PLAN_WORKERS.slice(0, 3);
    const large = await createPlan(nodes);
    assert.equal(large.status, 201, JSON.stringify(large.body));
    assert.equal(large.body.approval?.rule, 'large-plans');
    const name = large.body.name;
    assert.equal(plan(name).spec.approval?.required, true);
    await eventually(
      'the large plan is AwaitingApproval',
      () => plan(name).status?.phase === 'AwaitingApproval',
      { timeoutMs: 90_000 },
    );
    await operatorActsOnOthers();
    const waiting = plan(name);
    assert.equal(waiting.status.phase, 'AwaitingApproval');
    assert.ok(
      (waiting.status.nodes ?? []).every(n => !n.maintenance),
      `no step started: ${JSON.stringify(waiting.status.nodes)}`,
    );
    const onPlanNodes = portal
      .getJson('nodemaintenances')
      .items.filter(m => nodes.includes(m.spec.nodeName));
    assert.deepEqual(onPlanNodes, [], 'no NodeMaintenance on the plan nodes');
    assert.ok(nodes.every(schedulable), 'no plan node cordoned');

    // The requester may not approve their plan; an engineer may.
    const own = await approve(GUEST, 'plans', name);
    assert.equal(own.status, 403, JSON.stringify(own.body));
    const approval = await approve(ENGINEER, 'plans', name);
    assert.equal(approval.status, 200, JSON.stringify(approval.body));
    assert.equal(plan(name).spec.approval.approvedBy, ENGINEER);
    await eventually(
      'a step of the approved plan starts',
      () => (plan(name).status?.nodes ?? []).some(n => n.maintenance),
      { timeoutMs: 90_000 },
    );
    for (const p of [small.body.name, name])
      await api(GUEST, 'POST', `/clusters/${CLUSTER}/plans/${p}/cancel`, {
        reason: REASON,
      });
  },
);

rackTest(
  'two approvers at once: exactly one wins, the other is 409, and the object names the winner',
  { timeout: 300_000 },
  async () => {
    const name = await heldReboot('worker-1');
    const views = await Promise.all(
      [ENGINEER, CONTRACTOR].map(u => approvalView(u, 'maintenances', name)),
    );
    assert.ok(views.every(v => v.mayApprove === true));
    const decide = (user, view) =>
      api(user, 'POST', `/clusters/${CLUSTER}/maintenances/${name}/approval`, {
        decision: 'approve',
        reason: REASON,
        preflightToken: view.now.token,
        typedName: 'worker-1',
      });
    const [engineer, contractor] = await Promise.all([
      decide(ENGINEER, views[0]),
      decide(CONTRACTOR, views[1]),
    ]);
    const statuses = [engineer.status, contractor.status].sort();
    assert.deepEqual(
      statuses,
      [200, 409],
      `${JSON.stringify(engineer.body)} ${JSON.stringify(contractor.body)}`,
    );
    const winner = engineer.status === 200 ? ENGINEER : CONTRACTOR;
    const nm = maintenance(name);
    assert.equal(nm.spec.approval.approvedBy, winner);
    assert.ok(nm.spec.approval.approvedAt);
    await eventually(
      'the operator acts on the approved reboot (cordons worker-1)',
      () => maintenance(name).status?.cordonedAt,
      { timeoutMs: 90_000 },
    );
    await abandon('worker-1');
  },
);
