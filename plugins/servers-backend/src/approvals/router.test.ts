/*
 * The approval routes through the whole plugin (docs/approvals.md), on a fake cluster: a
 * request a rule selects is created held, an approver other than the requester decides
 * with a fresh pre-flight of their own, and every refusal has its status (400, 403, 404,
 * 409) with nothing written.
 */
import {
  coreServices,
  createServiceFactory,
} from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { actionsRegistryServiceMock } from '@backstage/backend-test-utils/alpha';
import { ConfigReader } from '@backstage/config';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import request from 'supertest';
import { registerServersActions } from '../actions';
import { readApprovalRules } from '../approval/config';
import { NO_APPROVALS } from '../approval/heldApproval';
import { PreflightTokens } from '../preflight/tokens';
import { createServersService } from '../servers/createServersService';
import {
  staticClusterRegistry,
  staticClusterRegistryFactory,
} from '../cluster/clusterRegistry';
import {
  FakeCluster,
  fakeNode,
  fakePod,
  fakePowerProvider,
} from '../testing/fakeCluster';
import {
  startServersTestBackend,
  type ServersTestBackendOptions,
} from '../testing/testBackend';

// A test backend per test: on a busy machine one start takes seconds.
jest.setTimeout(30_000);

const REQUESTER = 'user:default/requester';
const APPROVER = 'user:default/approver';
const SECOND = 'user:default/second-approver';
const ONCALL_MEMBER = 'user:default/oncall-member';
const STRANGER = 'user:default/stranger';
const REASON = 'replace the failed disk in bay 3';
const BASE = '/api/servers/clusters/plant-a';

const RULES = [
  {
    name: 'drains',
    select: { actions: ['drain', 'reboot'] },
    approvers: [APPROVER, SECOND, 'group:default/platform-oncall'],
  },
  {
    name: 'large-plans',
    select: { actions: ['plan'], planSizeAtLeast: 2 },
    approvers: [APPROVER],
  },
];

/** A talos channel: it offers reboot. */
/** Five members (quorum three): a reboot of one is typed-name while all are ready. */
function rack(): FakeCluster {
  const cluster = new FakeCluster('plant-a', [
    fakeNode('cp-1', { controlPlane: true }),
    fakeNode('cp-2', { controlPlane: true }),
    fakeNode('cp-3', { controlPlane: true }),
    fakeNode('cp-4', { controlPlane: true }),
    fakeNode('cp-5', { controlPlane: true }),
    fakeNode('worker-1'),
    fakeNode('worker-2'),
  ]);
  cluster.provider = fakePowerProvider('talos');
  cluster.pods.set('worker-1', [fakePod('web-1', 'worker-1')]);
  return cluster;
}

async function start(
  cluster: FakeCluster,
  options: Omit<ServersTestBackendOptions, 'features'> = {},
) {
  return startServersTestBackend({
    credentials: mockCredentials.user(REQUESTER),
    ...options,
    config: { approvals: { rules: RULES }, ...options.config },
    features: [
      staticClusterRegistryFactory([cluster]),
      // The catalog's ownership refs: the on-call member belongs to platform-oncall.
      createServiceFactory({
        service: coreServices.userInfo,
        deps: {},
        factory: () => ({
          async getUserInfo(credentials: any) {
            const user = credentials.principal.userEntityRef;
            return {
              userEntityRef: user,
              ownershipEntityRefs:
                user === ONCALL_MEMBER
                  ? [user, 'group:default/platform-oncall']
                  : [user],
            };
          },
        }),
      }),
    ],
  });
}

const as = (user: string) => mockCredentials.user.header(user);

/** The requester's drain of worker-1, acknowledged as the dialog does. */
async function requestDrain(server: any, node = 'worker-1') {
  const pre = await request(server).get(
    `${BASE}/servers/${node}/preflight?action=drain`,
  );
  expect(pre.status).toBe(200);
  return request(server)
    .post(`${BASE}/servers/${node}/actions/drain`)
    .send({ reason: REASON, preflightToken: pre.body.token });
}

/** The requester's reboot of a node, acknowledged with its typed name. */
async function requestReboot(server: any, node: string) {
  const pre = await request(server).get(
    `${BASE}/servers/${node}/preflight?action=reboot`,
  );
  expect(pre.status).toBe(200);
  return request(server)
    .post(`${BASE}/servers/${node}/actions/reboot`)
    .send({ reason: REASON, preflightToken: pre.body.token, typedName: node });
}

/** `user`'s view of a maintenance's approval. */
function view(server: any, user: string, name: string) {
  return request(server)
    .get(`${BASE}/maintenances/${name}/approval`)
    .set('Authorization', as(user));
}

/** An approval as the panel sends it: the user's fresh view, then its token. */
async function approve(
  server: any,
  user: string,
  name: string,
  extra: Record<string, unknown> = {},
) {
  const seen = await view(server, user, name);
  return request(server)
    .post(`${BASE}/maintenances/${name}/approval`)
    .set('Authorization', as(user))
    .send({
      decision: 'approve',
      reason: 'checked the impact, go ahead',
      preflightToken: seen.body.now?.token,
      ...extra,
    });
}

describe('a request a rule selects', () => {
  it('is created held: spec.approval in the same create, the answer says so, approvers and requester are told', async () => {
    const cluster = rack();
    const { server, notifications, events } = await start(cluster);
    const res = await requestDrain(server);
    expect(res.status).toBe(201);
    expect(res.body.approval).toEqual({
      rule: 'drains',
      approvers: [APPROVER, SECOND, 'group:default/platform-oncall'],
      expiresAt: expect.any(String),
    });
    const expiresIn = Date.parse(res.body.approval.expiresAt) - Date.now();
    expect(expiresIn).toBeGreaterThan(239 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(240 * 60_000);
    expect(cluster.created).toHaveLength(1);
    expect(cluster.created[0].spec.approval).toEqual({
      required: true,
      rule: 'drains',
      approvers: [APPROVER, SECOND, 'group:default/platform-oncall'],
      expiresAt: res.body.approval.expiresAt,
      requestedRung: 'preflight',
    });
    // Nothing else was written: the operator holds it, nothing touches the node.
    expect(cluster.writes).toBe(1);
    const created = events.find(e => e.options.eventId === 'server-action');
    expect(created?.meta).toMatchObject({
      outcome: 'created',
      maintenance: res.body.name,
      approval: { rule: 'drains', expiresAt: res.body.approval.expiresAt },
    });
    const sent = notifications.map(n => ({
      to: n.recipients,
      title: n.payload.title,
      link: n.payload.link,
    }));
    expect(sent).toEqual([
      {
        to: {
          type: 'entity',
          entityRef: [APPROVER, SECOND, 'group:default/platform-oncall'],
        },
        title: 'Approval asked: the drain of worker-1 (plant-a)',
        link: `/servers/maintenances/plant-a/${res.body.name}`,
      },
      {
        to: { type: 'entity', entityRef: [REQUESTER] },
        title: `The drain of worker-1 (plant-a) awaits approval from approver, second-approver, platform-oncall`,
        link: `/servers/maintenances/plant-a/${res.body.name}`,
      },
    ]);
  });

  it('is not held when no rule selects it (a cordon)', async () => {
    const cluster = rack();
    const { server, notifications } = await start(cluster);
    const res = await request(server)
      .post(`${BASE}/servers/worker-1/actions/cordon`)
      .send({ reason: REASON });
    expect(res.status).toBe(201);
    expect(res.body.approval).toBeUndefined();
    expect(cluster.created[0].spec.approval).toBeUndefined();
    expect(notifications).toEqual([]);
  });

  it('is not held without rules', async () => {
    const cluster = rack();
    const { server } = await start(cluster, {
      config: { approvals: { rules: [] } },
    });
    const res = await requestDrain(server);
    expect(res.status).toBe(201);
    expect(res.body.approval).toBeUndefined();
    expect(cluster.created[0].spec.approval).toBeUndefined();
  });
});

describe('GET /approvals?for=me', () => {
  it('lists what the caller may approve: not the requester, not a stranger; 400 for another list', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const held = await requestDrain(server);
    const mine = await request(server)
      .get('/api/servers/approvals?for=me')
      .set('Authorization', as(APPROVER));
    expect(mine.status).toBe(200);
    expect(mine.body.items).toEqual([
      expect.objectContaining({
        cluster: 'plant-a',
        kind: 'maintenance',
        name: held.body.name,
        intent: 'drain',
        nodes: ['worker-1'],
        requestedBy: REQUESTER,
        reason: REASON,
        rule: 'drains',
        requestedRung: 'preflight',
      }),
    ]);
    // A member of an approving group sees it too (their catalog ownership refs).
    const member = await request(server)
      .get('/api/servers/approvals?for=me')
      .set('Authorization', as(ONCALL_MEMBER));
    expect(member.body.items).toHaveLength(1);
    for (const user of [REQUESTER, STRANGER]) {
      const none = await request(server)
        .get('/api/servers/approvals?for=me')
        .set('Authorization', as(user));
      expect(none.body.items).toEqual([]);
    }
    const other = await request(server)
      .get('/api/servers/approvals?for=you')
      .set('Authorization', as(APPROVER));
    expect(other.status).toBe(400);
  });
});

describe('GET .../maintenances/:name/approval', () => {
  it('shows what was acknowledged beside a fresh pre-flight issued to the caller', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const held = await requestDrain(server);
    const res = await view(server, APPROVER, held.body.name);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      kind: 'maintenance',
      name: held.body.name,
      state: 'awaiting',
      rule: 'drains',
      requestedBy: REQUESTER,
      requestedRung: 'preflight',
      rungNow: 'preflight',
      mayApprove: true,
      acknowledged: { ceremony: 'preflight', pods: [{ name: 'web-1' }] },
      now: { node: 'worker-1', action: 'drain', token: expect.any(String) },
    });
    // The requester sees why not.
    const own = await view(server, REQUESTER, held.body.name);
    expect(own.body).toMatchObject({
      mayApprove: false,
      whyNot: 'the requester cannot approve their own request',
    });
  });

  it("shows the node's firing alerts and node-local data then and now: an alert that fires after the request is in the impact now only", async () => {
    const cluster = rack();
    const alert = (alertname: string, severity: string) => ({
      fingerprint: `fp-${alertname}`,
      alertname,
      severity,
      state: 'firing' as const,
      silencedBy: [],
      startsAt: '2026-01-01T00:00:00Z',
      labels: { alertname, severity },
    });
    cluster.alertsState = {
      byNode: new Map([['worker-1', [alert('NodeNoisy', 'warning')]]]),
      alerts: [],
      readAt: '2026-01-01T00:00:00Z',
    };
    const { server } = await start(cluster);
    const held = await requestDrain(server);
    expect(held.status).toBe(201);
    cluster.alertsState = {
      byNode: new Map([
        [
          'worker-1',
          [alert('NodeNoisy', 'warning'), alert('DiskFailing', 'critical')],
        ],
      ]),
      alerts: [],
      readAt: '2026-01-01T00:01:00Z',
    };
    const res = await view(server, APPROVER, held.body.name);
    expect(res.status).toBe(200);
    expect(res.body.acknowledged).toMatchObject({
      alerts: [{ alertname: 'NodeNoisy', severity: 'warning' }],
      nodeLocalData: [],
    });
    expect(res.body.now).toMatchObject({
      alerts: [
        { alertname: 'NodeNoisy', severity: 'warning' },
        { alertname: 'DiskFailing', severity: 'critical' },
      ],
      nodeLocal: [],
    });
    // An alert is shown, not acknowledged: the request is still approvable as it was.
    expect(res.body).toMatchObject({ rungNow: 'preflight', mayApprove: true });
  });

  it('is 404 for an unknown request, a request not held, and an unknown cluster', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    expect((await view(server, APPROVER, 'nope')).status).toBe(404);
    const cordon = await request(server)
      .post(`${BASE}/servers/worker-2/actions/cordon`)
      .send({ reason: REASON });
    expect((await view(server, APPROVER, cordon.body.name)).status).toBe(404);
    const unknown = await request(server)
      .get('/api/servers/clusters/nowhere/maintenances/x/approval')
      .set('Authorization', as(APPROVER));
    expect(unknown.status).toBe(404);
  });
});

describe('POST .../maintenances/:name/approval', () => {
  it('approves with the approver’s fresh pre-flight, records it, tells the requester, audits it', async () => {
    const cluster = rack();
    const { server, notifications, events } = await start(cluster);
    const held = await requestDrain(server);
    const res = await approve(server, APPROVER, held.body.name);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ state: 'approved' });
    expect(cluster.approvalWrites).toHaveLength(1);
    expect(cluster.approvalWrites[0].approval).toMatchObject({
      required: true,
      rule: 'drains',
      requestedRung: 'preflight',
      approvedBy: APPROVER,
      approvedAt: expect.any(String),
      approvedRung: 'preflight',
      approverPreflight: {
        ceremony: 'preflight',
        token: expect.any(String),
        pods: [{ namespace: 'shop', name: 'web-1' }],
      },
    });
    expect(notifications.at(-1)).toMatchObject({
      recipients: { type: 'entity', entityRef: [REQUESTER] },
      payload: {
        title: `The drain of worker-1 (plant-a) was approved by ${APPROVER}`,
      },
    });
    const audit = events.filter(e => e.options.eventId === 'server-approval');
    expect(audit).toEqual([
      expect.objectContaining({
        outcome: 'success',
        meta: expect.objectContaining({
          actor: APPROVER,
          name: held.body.name,
          decision: 'approve',
          outcome: 'approved',
          state: 'approved',
        }),
      }),
    ]);
    // Decided: a second decision is a 409, the view shows the decision.
    const again = await approve(server, SECOND, held.body.name);
    expect(again.status).toBe(409);
    const shown = await view(server, SECOND, held.body.name);
    expect(shown.body).toMatchObject({
      state: 'approved',
      mayApprove: false,
      decision: { decision: 'approve', by: APPROVER },
    });
    expect(shown.body.now).toBeUndefined();
  });

  it('lets a member of an approving group approve', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const held = await requestDrain(server);
    const res = await approve(server, ONCALL_MEMBER, held.body.name);
    expect(res.status).toBe(200);
    expect(cluster.approvalWrites[0].approval.approvedBy).toBe(ONCALL_MEMBER);
  });

  it('rejects with a reason, and tells the requester', async () => {
    const cluster = rack();
    const { server, notifications } = await start(cluster);
    const held = await requestDrain(server);
    const res = await request(server)
      .post(`${BASE}/maintenances/${held.body.name}/approval`)
      .set('Authorization', as(APPROVER))
      .send({ decision: 'reject', reason: 'not during the audit week' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ state: 'rejected' });
    expect(cluster.approvalWrites[0].approval).toMatchObject({
      rejectedBy: APPROVER,
      rejectedAt: expect.any(String),
      rejectReason: 'not during the audit week',
    });
    expect(cluster.approvalWrites[0].approval.approvedBy).toBeUndefined();
    expect(notifications.at(-1)?.payload).toMatchObject({
      title: `The drain of worker-1 (plant-a) was rejected by ${APPROVER}`,
      severity: 'high',
    });
  });

  it.each([
    [{ decision: 'maybe', reason: 'x' }, /decision must be approve or reject/],
    [{ decision: 'approve' }, /reason is required/],
    [{ decision: 'approve', reason: 'ok', extra: 1 }, /unknown field/],
  ])(
    'is 400 for the body %j, audited, nothing written',
    async (body, message) => {
      const cluster = rack();
      const { server, events } = await start(cluster);
      const held = await requestDrain(server);
      const res = await request(server)
        .post(`${BASE}/maintenances/${held.body.name}/approval`)
        .set('Authorization', as(APPROVER))
        .send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(message);
      expect(cluster.approvalWrites).toEqual([]);
      expect(
        events.filter(e => e.options.eventId === 'server-approval'),
      ).toEqual([
        expect.objectContaining({
          outcome: 'fail',
          meta: expect.objectContaining({
            actor: APPROVER,
            outcome: 'invalid',
          }),
        }),
      ]);
    },
  );

  it('is 400 to approve without the fresh pre-flight token, or with the requester’s token', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const pre = await request(server).get(
      `${BASE}/servers/worker-1/preflight?action=drain`,
    );
    const held = await request(server)
      .post(`${BASE}/servers/worker-1/actions/drain`)
      .send({ reason: REASON, preflightToken: pre.body.token });
    const without = await request(server)
      .post(`${BASE}/maintenances/${held.body.name}/approval`)
      .set('Authorization', as(APPROVER))
      .send({ decision: 'approve', reason: 'ok' });
    expect(without.status).toBe(400);
    expect(without.body.error.message).toMatch(/preflightToken/);
    // A token issued to someone else (the requester's own) binds nothing for the approver.
    const borrowed = await request(server)
      .post(`${BASE}/maintenances/${held.body.name}/approval`)
      .set('Authorization', as(APPROVER))
      .send({
        decision: 'approve',
        reason: 'ok',
        preflightToken: pre.body.token,
      });
    expect(borrowed.status).toBe(400);
    expect(borrowed.body.error.message).toMatch(/issued to another user/);
    expect(cluster.approvalWrites).toEqual([]);
  });

  it('is 403 for the requester, for a user the rule does not name, and without servers:approve', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster);
    const held = await requestDrain(server);
    const own = await approve(server, REQUESTER, held.body.name);
    expect(own.status).toBe(403);
    expect(own.body.error.message).toBe(
      'the requester cannot approve their own request',
    );
    const stranger = await approve(server, STRANGER, held.body.name);
    expect(stranger.status).toBe(403);
    expect(stranger.body.error.message).toMatch(
      /user:default\/stranger is not among the approvers of rule drains/,
    );
    expect(cluster.approvalWrites).toEqual([]);
    expect(
      events
        .filter(e => e.options.eventId === 'server-approval')
        .map(e => [e.meta.actor, e.meta.outcome]),
    ).toEqual([
      [REQUESTER, 'denied'],
      [STRANGER, 'denied'],
    ]);

    const denied = rack();
    const other = await start(denied, {
      decisions: { 'servers:approve': AuthorizeResult.DENY },
    });
    const heldThere = await requestDrain(other.server);
    const res = await approve(other.server, APPROVER, heldThere.body.name);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe(
      'you are not allowed to approve requests on worker-1 (servers:approve)',
    );
    const seen = await view(other.server, APPROVER, heldThere.body.name);
    expect(seen.body.mayApprove).toBe(false);
    expect(denied.approvalWrites).toEqual([]);
  });

  it('is 403 for a service principal (an agent with a service token), audited without a user', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster);
    const held = await requestDrain(server);
    const res = await request(server)
      .post(`${BASE}/maintenances/${held.body.name}/approval`)
      .set('Authorization', mockCredentials.service.header())
      .send({ decision: 'approve', reason: 'an agent thinks it is fine' });
    expect(res.status).toBe(403);
    const read = await request(server)
      .get(`${BASE}/maintenances/${held.body.name}/approval`)
      .set('Authorization', mockCredentials.service.header());
    expect(read.status).toBe(403);
    expect(cluster.approvalWrites).toEqual([]);
    expect(events.filter(e => e.options.eventId === 'server-approval')).toEqual(
      [
        expect.objectContaining({
          outcome: 'fail',
          meta: expect.objectContaining({
            actor: null,
            outcome: 'unauthenticated',
          }),
        }),
      ],
    );
  });

  it('is 404 for an unknown request or cluster', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const res = await request(server)
      .post(`${BASE}/maintenances/nope/approval`)
      .set('Authorization', as(APPROVER))
      .send({ decision: 'reject', reason: 'no' });
    expect(res.status).toBe(404);
    const cl = await request(server)
      .post('/api/servers/clusters/nowhere/maintenances/x/approval')
      .set('Authorization', as(APPROVER))
      .send({ decision: 'reject', reason: 'no' });
    expect(cl.status).toBe(404);
  });

  it('is 409 with both rungs when the impact grew past the rung acknowledged', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const held = await requestReboot(server, 'cp-1');
    expect(held.status).toBe(201);
    expect(cluster.created[0].spec.approval?.requestedRung).toBe('typed-name');
    // A second member goes NotReady: rebooting cp-1 now spends the last margin.
    cluster.nodeList = cluster.nodeList.map(n =>
      n.metadata?.name === 'cp-4'
        ? fakeNode('cp-4', { controlPlane: true, ready: false })
        : n,
    );
    const seen = await view(server, APPROVER, held.body.name);
    expect(seen.body).toMatchObject({
      rungNow: 'hazard',
      requestedRung: 'typed-name',
      mayApprove: false,
    });
    const res = await approve(server, APPROVER, held.body.name, {
      typedName: 'cp-1',
    });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      requestedRung: 'typed-name',
      rungNow: 'hazard',
      error: { message: expect.stringMatching(/must ask again/) },
    });
    expect(cluster.approvalWrites).toEqual([]);
  });

  it('is 409 for an approval that expired, audited as expired', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster);
    const held = await requestDrain(server);
    const stored = cluster.maintenanceList[0];
    stored.spec = {
      ...stored.spec,
      approval: {
        ...stored.spec.approval!,
        expiresAt: new Date(Date.now() - 1000).toISOString(),
      },
    };
    const seen = await view(server, APPROVER, held.body.name);
    expect(seen.body).toMatchObject({ state: 'expired', mayApprove: false });
    const res = await approve(server, APPROVER, held.body.name);
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/expired/);
    expect(cluster.approvalWrites).toEqual([]);
    expect(
      events
        .filter(e => e.options.eventId === 'server-approval')
        .map(e => e.meta.outcome),
    ).toEqual(['expired']);
  });

  it('lets exactly one of two approvers at once win: the other is 409, one decision written', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const held = await requestDrain(server);
    const [a, b] = await Promise.all(
      [APPROVER, SECOND].map(user => view(server, user, held.body.name)),
    );
    const send = (user: string, token: string) =>
      request(server)
        .post(`${BASE}/maintenances/${held.body.name}/approval`)
        .set('Authorization', as(user))
        .send({
          decision: 'approve',
          reason: 'go ahead',
          preflightToken: token,
        });
    const answers = await Promise.all([
      send(APPROVER, a.body.now.token),
      send(SECOND, b.body.now.token),
    ]);
    expect(answers.map(r => r.status).sort()).toEqual([200, 409]);
    expect(cluster.approvalWrites).toHaveLength(1);
    const winner = answers[0].status === 200 ? APPROVER : SECOND;
    expect(cluster.approvalWrites[0].approval.approvedBy).toBe(winner);
  });
});

describe('a plan a rule selects', () => {
  it('is created held over the size threshold, and approved with the approver’s plan pre-flight', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const pre = await request(server).get(
      `${BASE}/plans/preflight?intent=drain&nodes=worker-1,worker-2`,
    );
    expect(pre.status).toBe(200);
    const created = await request(server)
      .post(`${BASE}/plans`)
      .send({
        intent: 'drain',
        nodes: ['worker-1', 'worker-2'],
        reason: REASON,
        preflightToken: pre.body.token,
      });
    expect(created.status).toBe(201);
    expect(created.body.approval).toMatchObject({
      rule: 'large-plans',
      approvers: [APPROVER],
    });
    expect(cluster.createdPlans[0].spec.approval).toMatchObject({
      required: true,
      rule: 'large-plans',
      requestedRung: 'preflight',
    });
    const name = created.body.name;
    const seen = await request(server)
      .get(`${BASE}/plans/${name}/approval`)
      .set('Authorization', as(APPROVER));
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({
      kind: 'plan',
      state: 'awaiting',
      mayApprove: true,
      rungNow: 'preflight',
      now: { intent: 'drain', token: expect.any(String) },
    });
    const res = await request(server)
      .post(`${BASE}/plans/${name}/approval`)
      .set('Authorization', as(APPROVER))
      .send({
        decision: 'approve',
        reason: 'window agreed',
        preflightToken: seen.body.now.token,
      });
    expect(res.status).toBe(200);
    expect(cluster.approvalWrites[0]).toMatchObject({
      kind: 'plan',
      name,
      approval: { approvedBy: APPROVER, approvedRung: 'preflight' },
    });
  });

  it("takes the approver's plan views from the per-user plan pre-flight limit: 429 with Retry-After past it", async () => {
    const cluster = rack();
    const { server } = await start(cluster, {
      config: { plans: { preflightsPerMinute: 2 } },
    });
    const pre = await request(server).get(
      `${BASE}/plans/preflight?intent=drain&nodes=worker-1,worker-2`,
    );
    const created = await request(server)
      .post(`${BASE}/plans`)
      .send({
        intent: 'drain',
        nodes: ['worker-1', 'worker-2'],
        reason: REASON,
        preflightToken: pre.body.token,
      });
    expect(created.status).toBe(201);
    const views = [];
    for (let i = 0; i < 3; i++) {
      views.push(
        await request(server)
          .get(`${BASE}/plans/${created.body.name}/approval`)
          .set('Authorization', as(APPROVER)),
      );
    }
    expect(views.map(v => v.status)).toEqual([200, 200, 429]);
    expect(Number(views[2].headers['retry-after'])).toBeGreaterThan(0);
    expect(views[2].body.error.message).toMatch(
      /servers\.plans\.preflightsPerMinute/,
    );
  });

  it('is not held under the size threshold', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const pre = await request(server).get(
      `${BASE}/plans/preflight?intent=drain&nodes=worker-1`,
    );
    const created = await request(server)
      .post(`${BASE}/plans`)
      .send({
        intent: 'drain',
        nodes: ['worker-1'],
        reason: REASON,
        preflightToken: pre.body.token,
      });
    expect(created.status).toBe(201);
    expect(created.body.approval).toBeUndefined();
    expect(cluster.createdPlans[0].spec.approval).toBeUndefined();
  });
});

describe('a renewal of a held plan', () => {
  it('that raises a rung replaces the approval with an undecided one at the new rung', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const pre = await request(server).get(
      `${BASE}/plans/preflight?intent=reboot&nodes=cp-1,worker-1`,
    );
    expect(pre.status).toBe(200);
    const created = await request(server)
      .post(`${BASE}/plans`)
      .send({
        intent: 'reboot',
        nodes: ['cp-1', 'worker-1'],
        reason: REASON,
        preflightToken: pre.body.token,
        typedCount: 2,
      });
    expect(created.status).toBe(201);
    const name = created.body.name;
    expect(cluster.createdPlans[0].spec.approval?.requestedRung).toBe(
      'typed-name',
    );
    const seen = await request(server)
      .get(`${BASE}/plans/${name}/approval`)
      .set('Authorization', as(APPROVER));
    const approved = await request(server)
      .post(`${BASE}/plans/${name}/approval`)
      .set('Authorization', as(APPROVER))
      .send({
        decision: 'approve',
        reason: 'window agreed',
        preflightToken: seen.body.now.token,
      });
    expect(approved.status).toBe(200);

    // A second member goes NotReady: cp-1's step now spends the last margin.
    cluster.nodeList = cluster.nodeList.map(n =>
      n.metadata?.name === 'cp-4'
        ? fakeNode('cp-4', { controlPlane: true, ready: false })
        : n,
    );
    const nodes = cluster.planList[0].spec.nodes!.join(',');
    const again = await request(server).get(
      `${BASE}/plans/preflight?intent=reboot&nodes=${nodes}`,
    );
    expect(again.status).toBe(200);
    const renewed = await request(server)
      .post(`${BASE}/plans/${name}/renew`)
      .send({
        reason: REASON,
        preflightToken: again.body.token,
        typedNames: ['cp-1'],
      });
    expect(renewed.status).toBe(200);
    expect(renewed.body.approval).toMatchObject({
      rule: 'large-plans',
      approvers: [APPROVER],
    });
    const approval = cluster.planList[0].spec.approval!;
    expect(approval).toMatchObject({
      required: true,
      rule: 'large-plans',
      requestedRung: 'hazard',
    });
    expect(approval.approvedBy).toBeUndefined();
    const view2 = await request(server)
      .get(`${BASE}/plans/${name}/approval`)
      .set('Authorization', as(APPROVER));
    expect(view2.body).toMatchObject({ state: 'awaiting', mayApprove: true });
  });
});

describe('MCP actions', () => {
  it('create a held request as the portal does, and say so: the agent learns a person must approve', async () => {
    const cluster = rack();
    const service = createServersService({
      clusters: staticClusterRegistry([cluster]),
      permissions: mockServices.permissions.mock({
        authorize: async requests =>
          requests.map(() => ({ result: AuthorizeResult.ALLOW })) as any,
        authorizeConditional: async requests =>
          requests.map(() => ({ result: AuthorizeResult.ALLOW })) as any,
      }),
      auditor: mockServices.auditor.mock({
        createEvent: async () => ({
          success: async () => {},
          fail: async () => {},
        }),
      }),
      logger: mockServices.logger.mock(),
      reasonPolicy: { minLength: 10, maxLength: 500 },
      preflightTokens: new PreflightTokens('test'),
      applyConditions: () => true,
      approvals: {
        ...NO_APPROVALS,
        rules: readApprovalRules(
          new ConfigReader({ servers: { approvals: { rules: RULES } } }),
        ),
      },
    });
    const registry = actionsRegistryServiceMock();
    registerServersActions(registry, service);
    const credentials = mockCredentials.user(REQUESTER);
    const pre = await registry.invoke({
      id: 'test:preflight-server-action',
      input: { cluster: 'plant-a', node: 'worker-1', action: 'drain' },
      credentials,
    });
    const drained = await registry.invoke({
      id: 'test:drain-server',
      input: {
        cluster: 'plant-a',
        node: 'worker-1',
        reason: REASON,
        preflightToken: (pre.output as any).preflight.token,
      },
      credentials,
    });
    expect(drained.output).toEqual({
      maintenance: cluster.created[0].metadata.name,
      created: true,
      approval: {
        rule: 'drains',
        approvers: [APPROVER, SECOND, 'group:default/platform-oncall'],
        expiresAt: expect.any(String),
      },
    });
    expect(cluster.created[0].spec.approval?.required).toBe(true);
  });

  it('offer no way to approve: no registered action approves or decides', async () => {
    const registry = actionsRegistryServiceMock();
    registerServersActions(registry, {} as any);
    const { actions } = await registry.list();
    const names = actions.map(a => a.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter(n => /approv|decid|reject/i.test(n))).toEqual([]);
  });
});
