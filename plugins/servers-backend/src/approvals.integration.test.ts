/*
 * Approvals (docs/approvals.md) on the simulated rack's real apiserver, as the Backstage
 * identity of e2e/rack/demo/backstage-access.yaml with the chart's admission policies and
 * the CRDs' CEL rules: a request a rule selects is created with spec.approval and nothing
 * else happens to its node (no operator runs here: it stays as created); the requester's
 * own approval and an approver without servers:approve on the node are 403 with nothing
 * written; an approval is written on the apiserver's object; an approval after the impact
 * grew is 409 with both rungs; a plan over the size threshold is created held.
 */
import {
  coreServices,
  createServiceFactory,
} from '@backstage/backend-plugin-api';
import {
  mockCredentials,
  mockServices,
  startTestBackend,
} from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { signalsServiceRef } from '@backstage/plugin-signals-node';
import { KubeHttp } from '@rackside/plugin-servers-node';
import {
  eventually,
  startTestRack,
  type TestRack,
} from '@rackside/rack-testing';
import request from 'supertest';
import { serversPlugin } from './plugin';
import {
  advertiseTalosChannel,
  installRackside,
  RACK_DRAIN_OPTIONS,
  RACK_DRAIN_QUERY,
} from './testing/rackBackend';

jest.setTimeout(90_000);

type Obj = Record<string, any>;

const REQUESTER = 'user:default/requester';
const APPROVER = 'user:default/approver';
/** Named by the rules, but holds no servers:approve. */
const NO_APPROVE = 'user:default/no-approve';
const REASON = 'integration test: firmware window agreed with the plant';
const BASE = '/api/servers/clusters/plant-a';
const POWER_ANNOTATION = 'rack.rackside.dev/power';
const NM = '/apis/rackside.dev/v1alpha1/nodemaintenances';
const PLANS = '/apis/rackside.dev/v1alpha1/maintenanceplans';

let rack: TestRack | undefined;
let admin: KubeHttp;
let backend: { server: any; stop(): Promise<void> } | undefined;

const permissionOf = (credentials: any, name: string) =>
  name === 'servers:approve' &&
  credentials?.principal?.userEntityRef === NO_APPROVE
    ? AuthorizeResult.DENY
    : AuthorizeResult.ALLOW;

beforeAll(async () => {
  rack = await startTestRack({ withTalos: false, withRedfish: false });
  const rackside = await installRackside(rack);
  admin = rackside.admin;
  await advertiseTalosChannel(admin);
  backend = await startTestBackend({
    features: [
      serversPlugin,
      mockServices.permissions.mock({
        authorize: async (requests, { credentials }) =>
          requests.map(r => ({
            result: permissionOf(credentials, r.permission.name),
          })) as any,
        authorizeConditional: async (requests, { credentials }) =>
          requests.map(r => ({
            result: permissionOf(credentials, r.permission.name),
          })) as any,
      }).factory,
      mockServices.httpAuth.factory({
        defaultCredentials: mockCredentials.user(REQUESTER),
      }),
      createServiceFactory({
        service: signalsServiceRef,
        deps: {},
        factory: () => ({ publish: async () => {} }),
      }),
      createServiceFactory({
        service: coreServices.userInfo,
        deps: {},
        factory: () => ({
          async getUserInfo(credentials: any) {
            const user = credentials.principal.userEntityRef;
            return { userEntityRef: user, ownershipEntityRefs: [user] };
          },
        }),
      }),
      mockServices.rootConfig.factory({
        data: {
          servers: {
            plans: { preflightsPerMinute: 1000 },
            approvals: {
              rules: [
                {
                  name: 'drains',
                  select: { actions: ['drain', 'reboot'] },
                  approvers: [APPROVER, NO_APPROVE],
                },
                {
                  name: 'large-plans',
                  select: { actions: ['plan'], planSizeAtLeast: 3 },
                  approvers: ['group:default/platform-oncall', APPROVER],
                },
              ],
            },
            clusters: [
              {
                name: 'plant-a',
                url: rack.info.server,
                caFile: rack.info.caFile,
                serviceAccountToken: rackside.backstageToken,
              },
            ],
          },
        },
      }),
    ],
  });
}, 180_000);

afterAll(async () => {
  await backend?.stop();
  await rack?.stop();
}, 60_000);

const as = (user: string) => mockCredentials.user.header(user);
const get = (path: string): Promise<Obj> =>
  admin.request({ method: 'GET', path });

/** The pre-flight of `action` on `node`, once the backend's caches have synced. */
async function preflight(node: string, action: string): Promise<Obj> {
  const options = action === 'drain' ? RACK_DRAIN_QUERY : '';
  return eventually(
    `the ${action} pre-flight of ${node}`,
    async () => {
      const res = await request(backend!.server).get(
        `${BASE}/servers/${node}/preflight?action=${action}${options}`,
      );
      return res.status === 200 ? res.body : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
}

/**
 * An action request with a fresh acknowledgement, as the dialog sends it. The rack's
 * workloads may still be settling: a pre-flight that changed before the request (409
 * with the new one) is acknowledged again.
 */
async function requestAcknowledged(
  node: string,
  action: string,
  extra: Obj = {},
): Promise<request.Response> {
  let last: unknown;
  return eventually(
    `the ${action} request of ${node} with a pre-flight that holds`,
    async () => {
      const pre = await preflight(node, action);
      const res = await request(backend!.server)
        .post(`${BASE}/servers/${node}/actions/${action}`)
        .send({
          reason: REASON,
          preflightToken: pre.token,
          ...(action === 'drain' ? RACK_DRAIN_OPTIONS : {}),
          ...extra,
        });
      last = res.body;
      return res.status === 409 && res.body.preflight ? undefined : res;
    },
    {
      timeoutMs: 60_000,
      intervalMs: 500,
      detail: () => `last answer: ${JSON.stringify(last).slice(0, 1500)}`,
    },
  );
}

/** `user`'s view of a maintenance's approval (the backend's cache has it). */
function view(user: string, name: string): Promise<Obj> {
  return eventually(
    `${user}'s view of the approval of ${name}`,
    async () => {
      const res = await request(backend!.server)
        .get(`${BASE}/maintenances/${name}/approval`)
        .set('Authorization', as(user));
      return res.status === 200 ? res.body : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
}

function decide(user: string, name: string, body: Obj) {
  return request(backend!.server)
    .post(`${BASE}/maintenances/${name}/approval`)
    .set('Authorization', as(user))
    .send(body);
}

/** Marks a node NotReady as a powered-off machine (kwok leaves it so while annotated). */
async function markNotReady(name: string) {
  await admin.request({
    method: 'PATCH',
    path: `/api/v1/nodes/${name}`,
    body: { metadata: { annotations: { [POWER_ANNOTATION]: 'off' } } },
    contentType: 'application/merge-patch+json',
  });
  await admin.request({
    method: 'PATCH',
    path: `/api/v1/nodes/${name}/status`,
    body: {
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'ApprovalsTest',
            message: 'powered off by the approvals integration test',
          },
        ],
      },
    },
    contentType: 'application/strategic-merge-patch+json',
  });
}

async function markPoweredOn(name: string) {
  await admin.request({
    method: 'PATCH',
    path: `/api/v1/nodes/${name}`,
    body: { metadata: { annotations: { [POWER_ANNOTATION]: null } } },
    contentType: 'application/merge-patch+json',
  });
}

let heldDrain: string;

describe('approvals on the apiserver', () => {
  it('creates a request a rule selects held: spec.approval written, nothing else happens to the node', async () => {
    const before: Obj = await get('/api/v1/nodes/worker-1');
    const res = await requestAcknowledged('worker-1', 'drain');
    expect({ status: res.status, body: res.body }).toMatchObject({
      status: 201,
    });
    expect(res.body.approval).toEqual({
      rule: 'drains',
      approvers: [APPROVER, NO_APPROVE],
      expiresAt: expect.any(String),
    });
    heldDrain = res.body.name;
    const nm: Obj = await get(`${NM}/${heldDrain}`);
    expect(nm.spec.requestedBy).toBe(REQUESTER);
    expect(nm.spec.approval).toEqual({
      required: true,
      rule: 'drains',
      approvers: [APPROVER, NO_APPROVE],
      expiresAt: res.body.approval.expiresAt,
      requestedRung: 'preflight',
    });
    const after: Obj = await get('/api/v1/nodes/worker-1');
    expect(after.spec.unschedulable).toBeFalsy();
    expect(after.spec.taints ?? []).toEqual(before.spec.taints ?? []);
    const others = ((await get(NM)).items as Obj[]).filter(
      m => m.spec.nodeName === 'worker-1',
    );
    expect(others.map(m => m.metadata.name)).toEqual([heldDrain]);
  });

  it("refuses the requester's own approval and an approver without servers:approve (403), writing nothing", async () => {
    const own = await view(REQUESTER, heldDrain);
    expect(own.mayApprove).toBe(false);
    const self = await decide(REQUESTER, heldDrain, {
      decision: 'approve',
      reason: REASON,
      preflightToken: own.now.token,
    });
    expect(self.status).toBe(403);
    expect(self.body.error.message).toBe(
      'the requester cannot approve their own request',
    );
    const theirs = await view(NO_APPROVE, heldDrain);
    expect(theirs.mayApprove).toBe(false);
    const denied = await decide(NO_APPROVE, heldDrain, {
      decision: 'approve',
      reason: REASON,
      preflightToken: theirs.now.token,
    });
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toMatch(/servers:approve/);
    const nm: Obj = await get(`${NM}/${heldDrain}`);
    expect(nm.spec.approval.approvedBy).toBeUndefined();
    expect(nm.spec.approval.rejectedBy).toBeUndefined();
  });

  it('writes an approval on the object, which the CRD and the admission policy admit', async () => {
    const seen = await view(APPROVER, heldDrain);
    expect(seen).toMatchObject({ state: 'awaiting', mayApprove: true });
    const res = await decide(APPROVER, heldDrain, {
      decision: 'approve',
      reason: REASON,
      preflightToken: seen.now.token,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ state: 'approved' });
    const nm: Obj = await get(`${NM}/${heldDrain}`);
    expect(nm.spec.approval).toMatchObject({
      required: true,
      rule: 'drains',
      requestedRung: 'preflight',
      approvedBy: APPROVER,
      approvedRung: 'preflight',
      approverPreflight: { ceremony: 'preflight' },
    });
    const again = await decide(APPROVER, heldDrain, {
      decision: 'reject',
      reason: REASON,
    });
    expect(again.status).toBe(409);
  });

  it('refuses an approval after the impact grew: 409 with both rungs', async () => {
    const pre = await preflight('cp-1', 'reboot');
    // Three members, all ready: rebooting one spends the last margin.
    expect(pre.ceremony.level).toBe('hazard');
    const res = await requestAcknowledged('cp-1', 'reboot', {
      typedName: 'cp-1',
    });
    expect({ status: res.status, body: res.body }).toMatchObject({
      status: 201,
    });
    const name = res.body.name;
    expect((await get(`${NM}/${name}`)).spec.approval.requestedRung).toBe(
      'hazard',
    );
    await markNotReady('cp-3');
    try {
      const seen = await eventually(
        "the approver's fresh pre-flight of cp-1 is refused now",
        async () => {
          const v = await view(APPROVER, name);
          return v.rungNow === 'refused' ? v : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      expect(seen.mayApprove).toBe(false);
      const refused = await decide(APPROVER, name, {
        decision: 'approve',
        reason: REASON,
        preflightToken: seen.now.token,
        typedName: 'cp-1',
      });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        requestedRung: 'hazard',
        rungNow: 'refused',
      });
      expect((await get(`${NM}/${name}`)).spec.approval.approvedBy).toBe(
        undefined,
      );
    } finally {
      await markPoweredOn('cp-3');
    }
  });

  it('creates a plan over the size threshold held, and one under it not', async () => {
    // As a dialog would: a plan pre-flight that changed before the request is taken again.
    let last: unknown;
    const planOf = (nodes: string[]) =>
      eventually(
        `a plan of ${nodes.join(', ')} with a pre-flight that holds`,
        async () => {
          const pre = await request(backend!.server).get(
            `${BASE}/plans/preflight?intent=drain&nodes=${nodes.join(
              ',',
            )}&force=true&deleteEmptyDirData=true&allowNodeLocalData=true`,
          );
          if (pre.status !== 200) return undefined;
          const res = await request(backend!.server)
            .post(`${BASE}/plans`)
            .send({
              intent: 'drain',
              nodes,
              reason: REASON,
              preflightToken: pre.body.token,
              // Whatever the rack's workloads keep there: the plan does not run here.
              drain: {
                force: true,
                deleteEmptyDirData: true,
                allowNodeLocalData: true,
              },
            });
          last = res.body;
          return res.status === 409 && res.body.preflight ? undefined : res;
        },
        {
          timeoutMs: 60_000,
          intervalMs: 500,
          detail: () => `last answer: ${JSON.stringify(last).slice(0, 2000)}`,
        },
      );
    const large = await planOf(['worker-2', 'worker-3', 'worker-4']);
    expect({ status: large.status, body: large.body }).toMatchObject({
      status: 201,
    });
    expect(large.body.approval).toMatchObject({ rule: 'large-plans' });
    const plan: Obj = await get(`${PLANS}/${large.body.name}`);
    expect(plan.spec.approval).toEqual({
      required: true,
      rule: 'large-plans',
      approvers: ['group:default/platform-oncall', APPROVER],
      expiresAt: large.body.approval.expiresAt,
      requestedRung: 'preflight',
    });
    const small = await planOf(['worker-5', 'worker-6']);
    expect(small.status).toBe(201);
    expect(small.body.approval).toBeUndefined();
    expect((await get(`${PLANS}/${small.body.name}`)).spec.approval).toBe(
      undefined,
    );
  });
});
