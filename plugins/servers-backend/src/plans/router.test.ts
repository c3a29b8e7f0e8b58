import { mockCredentials } from '@backstage/backend-test-utils';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import { serverConditions } from '@rackside/plugin-servers-node';
import request from 'supertest';
import { staticClusterRegistryFactory } from '../cluster/clusterRegistry';
import { planNameFor } from './planPreflight';
import {
  FakeCluster,
  fakeBudget,
  fakeNode,
  fakePod,
  fakePowerProvider,
} from '../testing/fakeCluster';
import {
  startServersTestBackend,
  type ServersTestBackendOptions,
} from '../testing/testBackend';

const BASE = '/api/servers/clusters/plant-a/plans';
const REASON = 'kernel update of plant A tonight';

function rack(): FakeCluster {
  const cluster = new FakeCluster('plant-a', [
    fakeNode('cp-1', { controlPlane: true }),
    fakeNode('cp-2', { controlPlane: true }),
    fakeNode('cp-3', { controlPlane: true }),
    fakeNode('worker-1', { labels: { zone: 'a' } }),
    fakeNode('worker-2', { labels: { zone: 'a' } }),
    fakeNode('worker-3', { labels: { zone: 'b' } }),
  ]);
  cluster.pods.set('worker-1', [fakePod('web-1', 'worker-1', { app: 'web' })]);
  cluster.pods.set('worker-2', [fakePod('web-2', 'worker-2', { app: 'web' })]);
  cluster.budgets = [fakeBudget('web', 'web', 1)];
  cluster.provider = fakePowerProvider('talos');
  return cluster;
}

/** A talos channel: it advertises reboot (the capability rule lets reboot plans through). */
async function start(
  cluster: FakeCluster,
  options: Omit<ServersTestBackendOptions, 'features'> = {},
) {
  return startServersTestBackend({
    ...options,
    features: [staticClusterRegistryFactory([cluster])],
  });
}

/** Only servers labelled zone=a (a conditional decision). */
const zoneA = {
  result: AuthorizeResult.CONDITIONAL,
  pluginId: 'servers',
  resourceType: 'server',
  conditions: serverConditions.hasLabel({ label: 'zone', value: 'a' }),
} as PolicyDecision;

async function preflight(server: any, query: string) {
  const res = await request(server).get(`${BASE}/preflight?${query}`);
  return res;
}

describe('plan pre-flight', () => {
  it('answers per node, per step, budgets, quorum per step, estimate and a token', async () => {
    const { server, events } = await start(rack());
    const res = await preflight(
      server,
      'intent=reboot&nodes=cp-1,worker-2,worker-1,worker-3&maxParallel=2',
    );
    expect(res.status).toBe(200);
    expect(res.body.nodes.map((n: any) => [n.node, n.step])).toEqual([
      ['worker-1', 0],
      ['worker-2', 0],
      ['worker-3', 1],
      ['cp-1', 2],
    ]);
    expect(res.body.steps).toEqual([
      expect.objectContaining({ index: 0, nodes: ['worker-1', 'worker-2'] }),
      expect.objectContaining({ index: 1, nodes: ['worker-3'] }),
      expect.objectContaining({
        index: 2,
        nodes: ['cp-1'],
        controlPlane: true,
        quorum: expect.objectContaining({
          verdict: 'hazard',
          members: 3,
          quorum: 2,
          margin: 1,
        }),
      }),
    ]);
    expect(res.body.nodes[0].evict).toEqual([
      expect.objectContaining({ name: 'web-1' }),
    ]);
    expect(res.body.budgets).toEqual([
      expect.objectContaining({ name: 'web', namespace: 'shop' }),
    ]);
    expect(res.body.estimate.seconds).toBe(
      res.body.steps.reduce((s: number, x: any) => s + x.estimateSeconds, 0),
    );
    expect(res.body.estimate.seconds).toBeGreaterThan(0);
    expect(res.body).toMatchObject({
      intent: 'reboot',
      maxParallel: 2,
      typedCount: 4,
      canProceed: true,
      token: expect.any(String),
    });
    expect(events.at(-1)).toMatchObject({
      options: { eventId: 'server-read', severityLevel: 'low' },
      outcome: 'success',
    });
  });

  it('403 naming the nodes the per-node decision refuses; 403 without servers:plan', async () => {
    const { server } = await start(rack(), {
      conditional: { 'servers:reboot': zoneA },
    });
    const refused = await preflight(
      server,
      'intent=reboot&nodes=worker-1,worker-2,worker-3,cp-1',
    );
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('worker-3, cp-1');
    expect(refused.body.error.message).not.toContain('worker-1');
    const allowed = await preflight(
      server,
      'intent=reboot&nodes=worker-1,worker-2',
    );
    expect(allowed.status).toBe(200);

    const noPlan = await start(rack(), {
      decisions: { 'servers:plan': AuthorizeResult.DENY },
    });
    const denied = await preflight(
      noPlan.server,
      'intent=drain&nodes=worker-1',
    );
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain('servers:plan');
  });

  it('400 for an unknown intent, no nodes, or a server that is not there', async () => {
    const { server } = await start(rack());
    expect(
      (await preflight(server, 'intent=shutdown&nodes=worker-1')).status,
    ).toBe(400);
    expect((await preflight(server, 'intent=drain')).status).toBe(400);
    const missing = await preflight(server, 'intent=drain&nodes=worker-1,nope');
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('nope');
  });
});

describe('POST plans', () => {
  async function tokenFor(server: any, query: string) {
    const res = await preflight(server, query);
    expect(res.status).toBe(200);
    return res.body.token as string;
  }

  it('creates the plan (201) with the nodes in order, its requester and reason; high-severity event', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster);
    const token = await tokenFor(
      server,
      'intent=reboot&nodes=worker-2,worker-1&maxParallel=2',
    );
    const res = await request(server)
      .post(BASE)
      .send({
        intent: 'reboot',
        nodes: ['worker-2', 'worker-1'],
        maxParallel: 2,
        reason: REASON,
        preflightToken: token,
        typedCount: 2,
      });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ name: planNameFor('reboot', token) });
    expect(cluster.createdPlans).toHaveLength(1);
    expect(cluster.createdPlans[0].spec.gates).toBeUndefined();
    expect(cluster.createdPlans[0].spec.healthyReturn).toBeUndefined();
    expect(cluster.createdPlans[0]).toMatchObject({
      kind: 'MaintenancePlan',
      metadata: { name: res.body.name },
      spec: {
        intent: 'reboot',
        nodes: ['worker-1', 'worker-2'],
        maxParallel: 2,
        reason: REASON,
        requestedBy: 'user:default/mock',
      },
    });
    expect(events.at(-1)).toMatchObject({
      options: {
        eventId: 'server-plan',
        severityLevel: 'high',
        meta: { action: 'create', intent: 'reboot', reason: REASON },
      },
      outcome: 'success',
      meta: { plan: res.body.name },
    });
    // The token is single-use: the same body again is a 409, nothing more written.
    const again = await request(server)
      .post(BASE)
      .send({
        intent: 'reboot',
        nodes: ['worker-1', 'worker-2'],
        maxParallel: 2,
        reason: REASON,
        preflightToken: token,
        typedCount: 2,
      });
    expect(again.status).toBe(409);
    expect(again.body.preflight.token).toEqual(expect.any(String));
    expect(cluster.createdPlans).toHaveLength(1);
  });

  it('writes the alert gate and the healthy return into the spec as asked', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const token = await tokenFor(server, 'intent=drain&nodes=worker-1');
    const res = await request(server)
      .post(BASE)
      .send({
        intent: 'drain',
        nodes: ['worker-1'],
        reason: REASON,
        preflightToken: token,
        gates: {
          alerts: {
            matchers: ['team=~"db.*"'],
            alertnames: 'Disk.*',
            severities: ['critical'],
          },
        },
        healthyReturn: { healthyForSeconds: 120, timeoutSeconds: 1800 },
      });
    expect(res.status).toBe(201);
    expect(cluster.createdPlans[0].spec).toMatchObject({
      gates: {
        alerts: {
          matchers: ['team=~"db.*"'],
          alertnames: 'Disk.*',
          severities: ['critical'],
          ignoreSilencedByRackside: true,
        },
      },
      healthyReturn: { healthyForSeconds: 120, timeoutSeconds: 1800 },
    });
  });

  it('a selector is resolved into the nodes the permission and the pre-flight cover', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const token = await tokenFor(
      server,
      'intent=drain&nodes=worker-1,worker-2',
    );
    const res = await request(server)
      .post(BASE)
      .send({
        intent: 'drain',
        selector: { matchLabels: { zone: 'a' } },
        reason: REASON,
        preflightToken: token,
      });
    expect(res.status).toBe(201);
    expect(cluster.createdPlans[0].spec.nodes).toEqual([
      'worker-1',
      'worker-2',
    ]);
  });

  it('403 names the refused nodes, one conditional decision applied per node; nothing written', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster, {
      conditional: { 'servers:drain': zoneA },
    });
    const res = await request(server)
      .post(BASE)
      .send({
        intent: 'drain',
        nodes: ['worker-1', 'worker-3', 'cp-2'],
        reason: REASON,
        preflightToken: 'x.y',
      });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe(
      'you are not allowed to drain worker-3, cp-2 (servers:drain)',
    );
    expect(cluster.writes).toBe(0);
    expect(events.at(-1)).toMatchObject({
      outcome: 'fail',
      meta: { outcome: 'denied' },
    });
  });

  it('a caller refused the intent gets the 403 before the reason policy is read; a node it cannot see is a 400, never named in a 403', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster, {
      conditional: { 'servers:drain': zoneA },
    });
    const shortReason = await request(server)
      .post(BASE)
      .send({
        intent: 'drain',
        nodes: ['worker-3'],
        reason: 'x',
        preflightToken: 'x.y',
      });
    expect(shortReason.status).toBe(403);
    expect(shortReason.body.error.message).toBe(
      'you are not allowed to drain worker-3 (servers:drain)',
    );
    const absent = await request(server)
      .post(BASE)
      .send({
        intent: 'drain',
        nodes: ['worker-3', 'no-such-node'],
        reason: REASON,
        preflightToken: 'x.y',
      });
    expect(absent.status).toBe(400);
    expect(absent.body.error.message).toContain('no server named no-such-node');
    expect(cluster.writes).toBe(0);
    expect(events.at(-1)).toMatchObject({ outcome: 'fail' });
  });

  it('400 with what is wrong, nothing written', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const token = await tokenFor(
      server,
      'intent=reboot&nodes=worker-1,worker-2',
    );
    const good = {
      intent: 'reboot',
      nodes: ['worker-1', 'worker-2'],
      reason: REASON,
      preflightToken: token,
      typedCount: 2,
    };
    const cases: Array<[object, string]> = [
      [{ ...good, reason: 'short' }, 'reason must be at least'],
      [{ ...good, typedCount: 3 }, 'type the number of servers to reboot (2)'],
      [
        { ...good, preflightToken: undefined },
        'acknowledge the plan pre-flight',
      ],
      [
        { ...good, preflightToken: 'forged.token' },
        'pre-flight token is not valid',
      ],
      [{ ...good, maxParallel: 0 }, 'maxParallel'],
      [
        {
          ...good,
          window: {
            notBefore: '2026-12-03T00:00:00Z',
            notAfter: '2026-12-02T00:00:00Z',
          },
        },
        'notBefore must be before notAfter',
      ],
      [
        { ...good, selector: { matchLabels: { zone: 'a' } } },
        'exactly one of nodes and selector',
      ],
      [{ ...good, intent: 'shutdown' }, 'intent'],
      [{ ...good, nodes: ['worker-1', 'ghost'] }, 'no server named ghost'],
      // The alert gate and the healthy return (docs/alerts.md).
      [
        { ...good, gates: { alerts: { alertnames: 'Disk)|(.*' } } },
        'gates.alerts.alertnames',
      ],
      [
        { ...good, gates: { alerts: { matchers: ['node="{{node}}"'] } } },
        'gates.alerts.matchers',
      ],
      // RE2 only (docs/limits.md): the 400 names the pattern and why it is refused.
      [
        { ...good, gates: { alerts: { alertnames: '(Disk.*)\\1' } } },
        'alertnames "(Disk.*)\\\\1": not a valid RE2 regular expression',
      ],
      [
        {
          ...good,
          gates: { alerts: { matchers: ['alertname=~"(?=Disk)Disk.*"'] } },
        },
        'not a valid RE2 regular expression (error parsing regexp: invalid or unsupported Perl syntax: `(?=`)',
      ],
      [
        { ...good, healthyReturn: { healthyForSeconds: 3601 } },
        'healthyReturn.healthyForSeconds must be 0 to 3600',
      ],
      [
        { ...good, healthyReturn: { timeoutSeconds: 30 } },
        'healthyReturn.timeoutSeconds must be 60 to 86400',
      ],
      [
        { ...good, healthyReturn: { healthyFor: 10 } },
        'healthyReturn takes only healthyForSeconds and timeoutSeconds',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await request(server).post(BASE).send(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.error.message).toContain(message);
    }
    expect(cluster.writes).toBe(0);
  });

  it('409 with the new pre-flight when the impact changed or the plan differs from the one shown; nothing written', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const token = await tokenFor(
      server,
      'intent=drain&nodes=worker-1,worker-2',
    );
    // Another maxParallel than the one the pre-flight showed.
    const other = await request(server)
      .post(BASE)
      .send({
        intent: 'drain',
        nodes: ['worker-1', 'worker-2'],
        maxParallel: 2,
        reason: REASON,
        preflightToken: token,
      });
    expect(other.status).toBe(409);
    // A new pod lands on worker-2.
    cluster.pods.set('worker-2', [
      fakePod('web-2', 'worker-2', { app: 'web' }),
      fakePod('api-1', 'worker-2', { app: 'api' }),
    ]);
    const changed = await request(server)
      .post(BASE)
      .send({
        intent: 'drain',
        nodes: ['worker-1', 'worker-2'],
        reason: REASON,
        preflightToken: token,
      });
    expect(changed.status).toBe(409);
    expect(changed.body.error.message).toContain('impact changed');
    expect(
      changed.body.preflight.nodes[1].evict.map((p: any) => p.name),
    ).toEqual(['api-1', 'web-2']);
    expect(cluster.writes).toBe(0);
  });

  it('409 with the numbers when a control-plane step would drop below quorum; nothing written', async () => {
    const cluster = rack();
    cluster.nodeList[1] = fakeNode('cp-2', {
      controlPlane: true,
      ready: false,
    });
    const { server } = await start(cluster);
    const pre = await preflight(server, 'intent=reboot&nodes=cp-1');
    expect(pre.status).toBe(200);
    expect(pre.body.canProceed).toBe(false);
    expect(pre.body.steps[0].quorum).toMatchObject({
      verdict: 'refuse',
      members: 3,
      quorum: 2,
    });
    const res = await request(server)
      .post(BASE)
      .send({
        intent: 'reboot',
        nodes: ['cp-1'],
        reason: REASON,
        preflightToken: pre.body.token,
        typedCount: 1,
      });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/cp-1: .*quorum/);
    expect(res.body.preflight.blockers).toHaveLength(1);
    expect(cluster.writes).toBe(0);
  });

  it('429 with Retry-After beyond the per-user limit of plan pre-flights; a plan request takes one too', async () => {
    const cluster = rack();
    const { server } = await start(cluster, {
      config: { plans: { preflightsPerMinute: 2 } },
    });
    const token = await tokenFor(server, 'intent=drain&nodes=worker-1');
    expect(
      (await preflight(server, 'intent=drain&nodes=worker-1')).status,
    ).toBe(200);
    const third = await preflight(server, 'intent=drain&nodes=worker-1');
    expect(third.status).toBe(429);
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(third.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(third.body.error.message).toContain(
      'at most 2 plan pre-flights a minute',
    );
    const create = await request(server)
      .post(BASE)
      .send({
        intent: 'drain',
        nodes: ['worker-1'],
        reason: REASON,
        preflightToken: token,
      });
    expect(create.status).toBe(429);
    expect(cluster.writes).toBe(0);
  });

  it('a token issued to another user is a 400', async () => {
    const cluster = rack();
    // Two replicas sharing the secret: the token is theirs, but not this user's.
    const config = { preflight: { secret: 'shared by the replicas' } };
    const { server } = await start(cluster, { config });
    const token = await tokenFor(server, 'intent=drain&nodes=worker-1');
    const other = await start(cluster, {
      config,
      credentials: mockCredentials.user('user:default/someone-else'),
    });
    const res = await request(other.server)
      .post(BASE)
      .send({
        intent: 'drain',
        nodes: ['worker-1'],
        reason: REASON,
        preflightToken: token,
      });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('another user');
    expect(cluster.writes).toBe(0);
  });
});

describe('a plan is never lighter than a single maintenance', () => {
  async function tokenFor(server: any, query: string) {
    const res = await preflight(server, query);
    expect(res.status).toBe(200);
    return res.body as { token: string; nodes: any[] };
  }

  it('a control-plane reboot at the last margin needs each hazard node typed; the rungs and the lease are recorded', async () => {
    const cluster = rack();
    const { server } = await start(cluster, {
      config: { plans: { authorizationHours: 2 } },
    });
    const pre = await tokenFor(
      server,
      'intent=reboot&nodes=cp-1,cp-2,worker-1',
    );
    expect(pre.nodes.map((n: any) => [n.node, n.ceremony.level])).toEqual([
      ['worker-1', 'typed-name'],
      ['cp-1', 'hazard'],
      ['cp-2', 'hazard'],
    ]);
    const body = {
      intent: 'reboot',
      nodes: ['cp-1', 'cp-2', 'worker-1'],
      reason: REASON,
      preflightToken: pre.token,
      typedCount: 3,
    };
    // What was seen: typedCount alone was enough.
    const untyped = await request(server).post(BASE).send(body);
    expect(untyped.status).toBe(400);
    expect(untyped.body.error.message).toContain(
      'ceremony not met: cp-1, cp-2 each consume the last of the quorum margin',
    );
    const one = await request(server)
      .post(BASE)
      .send({ ...body, typedNames: ['cp-1', 'worker-1'] });
    expect(one.status).toBe(400);
    expect(one.body.error.message).toContain('cp-2 consumes');
    expect(cluster.writes).toBe(0);

    const before = Date.now();
    const ok = await request(server)
      .post(BASE)
      .send({ ...body, typedNames: ['cp-1', 'cp-2'] });
    expect(ok.status).toBe(201);
    const spec = cluster.createdPlans[0].spec;
    expect(spec.acknowledged).toEqual({
      'worker-1': 'typed-name',
      'cp-1': 'hazard',
      'cp-2': 'hazard',
    });
    expect(spec.authorization?.by).toBe('user:default/mock');
    const lease =
      Date.parse(spec.authorization!.until) -
      Date.parse(spec.authorization!.at);
    expect(lease).toBe(2 * 3_600_000);
    expect(Date.parse(spec.authorization!.at)).toBeGreaterThanOrEqual(
      before - 1000,
    );
  });

  it('a reboot plan on a channel without reboot is a 400 at creation, not Refused step by step', async () => {
    const cluster = rack();
    cluster.provider = undefined;
    const { server } = await start(cluster);
    const pre = await tokenFor(server, 'intent=reboot&nodes=worker-1');
    // The pre-flight says it first, so the dialog shows it before the ceremony.
    expect(pre).toMatchObject({
      canProceed: false,
      blockers: [expect.stringMatching(/^worker-1: reboot is not offered \(/)],
    });
    const res = await request(server)
      .post(BASE)
      .send({
        intent: 'reboot',
        nodes: ['worker-1'],
        reason: REASON,
        preflightToken: pre.token,
        typedCount: 1,
      });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(
      /^reboot is not offered on worker-1: /,
    );
    expect(cluster.writes).toBe(0);
  });

  it('a selector that is not one is a 400, never every readable node; nothing written', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    for (const selector of ['x', {}, { matchExpressions: [null] }, []]) {
      const res = await request(server).post(BASE).send({
        intent: 'drain',
        selector,
        reason: REASON,
        preflightToken: 'x.y',
      });
      expect({ selector, status: res.status }).toEqual({
        selector,
        status: 400,
      });
      expect(res.body.error.message).toContain('selector');
    }
    expect(cluster.writes).toBe(0);
  });

  it('data-loss drain options need servers:drain-data on every node (403 naming them); nothing written', async () => {
    const cluster = rack();
    const { server } = await start(cluster, {
      decisions: { 'servers:drain-data': AuthorizeResult.DENY },
    });
    const res = await request(server)
      .post(BASE)
      .send({
        intent: 'drain',
        nodes: ['worker-1', 'worker-2'],
        drain: { allowNodeLocalData: true, force: true },
        reason: REASON,
        preflightToken: 'x.y',
      });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe(
      'you are not allowed to drain worker-1, worker-2 with force, allowNodeLocalData: those options lose data (servers:drain-data)',
    );
    expect(cluster.writes).toBe(0);
  });
});

describe('plans list, get, pause, resume, cancel', () => {
  function withPlan(): FakeCluster {
    const cluster = rack();
    cluster.planList.push({
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'MaintenancePlan',
      metadata: {
        name: 'reboot-plan-1',
        creationTimestamp: '2026-12-01T00:00:00Z',
      },
      spec: {
        intent: 'reboot',
        nodes: ['worker-1', 'worker-3'],
        maxParallel: 1,
        failurePolicy: { tolerate: 0 },
        onCancel: 'finish',
        reason: REASON,
        requestedBy: 'user:default/mock',
      } as any,
      status: {
        phase: 'Waiting',
        nodes: [
          {
            name: 'worker-1',
            controlPlane: false,
            phase: 'Done',
            maintenance: 'reboot-plan-1-worker-1',
          },
          { name: 'worker-3', controlPlane: false, phase: 'Pending' },
        ],
        waiting: {
          on: 'gate',
          gate: 'podDisruptionBudgetsHealthy',
          message: 'budget shop/web has 0 of 1 healthy',
          since: '2026-12-01T00:10:00Z',
        },
      },
    });
    return cluster;
  }

  it('lists and gets plans with per-node progress and what is waited on', async () => {
    const { server } = await start(withPlan());
    const list = await request(server).get(BASE);
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    const one = await request(server).get(`${BASE}/reboot-plan-1`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      name: 'reboot-plan-1',
      phase: 'Waiting',
      paused: false,
      counts: { total: 2, done: 1, pending: 1 },
      waiting: { gate: 'podDisruptionBudgetsHealthy' },
      nodes: [
        {
          name: 'worker-1',
          phase: 'Done',
          maintenance: 'reboot-plan-1-worker-1',
        },
        { name: 'worker-3', phase: 'Pending' },
      ],
    });
    expect((await request(server).get(`${BASE}/nope`)).status).toBe(404);
  });

  it('pages the list newest first with limit and continue; state filters open and finished; 400 for a bad page', async () => {
    const cluster = withPlan();
    const base = cluster.planList[0];
    const at = (i: number) => `2026-12-02T00:${String(i).padStart(2, '0')}:00Z`;
    for (let i = 0; i < 7; i++) {
      cluster.planList.push({
        ...base,
        metadata: { name: `drain-plan-${i}`, creationTimestamp: at(i) },
        status: { ...base.status!, phase: i % 2 ? 'Complete' : 'Running' },
      });
    }
    const { server } = await start(cluster);
    const seen: string[] = [];
    let next: string | undefined;
    let pages = 0;
    do {
      const res = await request(server)
        .get(BASE)
        .query({ limit: 3, ...(next ? { continue: next } : {}) });
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(3);
      seen.push(...res.body.items.map((p: any) => p.name));
      next = res.body.continue;
      pages++;
      // A plan created between two pages neither shifts nor repeats the walk.
      if (pages === 1) {
        cluster.planList.push({
          ...base,
          metadata: {
            name: 'newest',
            creationTimestamp: '2026-12-03T00:00:00Z',
          },
        });
      }
    } while (next);
    expect(pages).toBe(3);
    expect(seen).toEqual([
      'drain-plan-6',
      'drain-plan-5',
      'drain-plan-4',
      'drain-plan-3',
      'drain-plan-2',
      'drain-plan-1',
      'drain-plan-0',
      'reboot-plan-1',
    ]);
    const finished = await request(server)
      .get(BASE)
      .query({ state: 'finished', limit: 2 });
    expect(finished.body.items.map((p: any) => p.name)).toEqual([
      'drain-plan-5',
      'drain-plan-3',
    ]);
    const open = await request(server).get(BASE).query({ state: 'open' });
    expect(open.body.items.map((p: any) => p.name)).toEqual([
      'newest',
      'drain-plan-6',
      'drain-plan-4',
      'drain-plan-2',
      'drain-plan-0',
      'reboot-plan-1',
    ]);
    expect(open.body.continue).toBeUndefined();
    for (const query of [
      { limit: 0 },
      { limit: 501 },
      { limit: 'x' },
      { continue: 'not-a-token' },
      { state: 'some' },
    ]) {
      const res = await request(server).get(BASE).query(query);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.body.error.message).toMatch(/limit|continue|state/);
    }
  });

  it('hides a plan with a node the user may not read', async () => {
    const { server } = await start(withPlan(), { read: zoneA });
    expect((await request(server).get(BASE)).body.items).toEqual([]);
    expect((await request(server).get(`${BASE}/reboot-plan-1`)).status).toBe(
      404,
    );
  });

  it('pause, then resume (later at), then cancel; 409 where it does not apply', async () => {
    const cluster = withPlan();
    const { server, events } = await start(cluster);
    const post = (control: string, reason = REASON) =>
      request(server).post(`${BASE}/reboot-plan-1/${control}`).send({ reason });
    expect((await post('resume')).status).toBe(409);
    expect((await post('pause')).status).toBe(200);
    expect(cluster.planList[0].spec.pause).toMatchObject({
      by: 'user:default/mock',
      reason: REASON,
    });
    expect((await post('pause')).status).toBe(409);
    expect((await post('resume')).status).toBe(200);
    const { pause, resume } = cluster.planList[0].spec;
    expect(Date.parse(resume!.at)).toBeGreaterThan(Date.parse(pause!.at));
    expect((await post('cancel', 'short')).status).toBe(400);
    expect((await post('cancel')).status).toBe(200);
    expect(cluster.planList[0].spec.cancel?.by).toBe('user:default/mock');
    expect((await post('cancel')).status).toBe(409);
    expect((await post('stop')).status).toBe(404);
    expect(cluster.planUpdates).toHaveLength(3);
    expect(
      events
        .filter(e => e.options.eventId === 'server-plan')
        .map(e => [e.options.meta.action, e.options.severityLevel, e.outcome]),
    ).toEqual([
      ['resume', 'high', 'fail'],
      ['pause', 'high', 'success'],
      ['pause', 'high', 'fail'],
      ['resume', 'high', 'success'],
      ['cancel', 'high', 'fail'],
      ['cancel', 'high', 'success'],
      ['cancel', 'high', 'fail'],
      ['stop', 'high', 'fail'],
    ]);
  });

  it('renew re-checks the intent on every node not started: 403 naming them and nothing written, or renewed without them on skipRefused', async () => {
    const cluster = withPlan();
    const { server } = await start(cluster, {
      conditional: { 'servers:reboot': zoneA },
    });
    const url = `${BASE}/reboot-plan-1/renew`;
    const refused = await request(server)
      .post(url)
      .send({ reason: 'the window opens tonight' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain(
      'you may not reboot worker-3 (servers:reboot)',
    );
    expect(cluster.planList[0].spec.authorization).toBeUndefined();
    const renewed = await request(server)
      .post(url)
      .send({ reason: 'the window opens tonight', skipRefused: true });
    expect(renewed.status).toBe(200);
    const lease = cluster.planList[0].spec.authorization!;
    expect(lease).toMatchObject({
      by: 'user:default/mock',
      excluded: ['worker-3'],
    });
    expect(renewed.body).toEqual({ name: 'reboot-plan-1', until: lease.until });
    expect(Date.parse(lease.until) - Date.parse(lease.at)).toBe(8 * 3_600_000);
  });

  /** A reboot plan whose worker step is done and whose control-plane step remains. */
  function withHazardStep(): FakeCluster {
    const cluster = rack();
    cluster.planList.push({
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'MaintenancePlan',
      metadata: {
        name: 'reboot-plan-cp',
        creationTimestamp: '2026-12-01T00:00:00Z',
      },
      spec: {
        intent: 'reboot',
        nodes: ['worker-1', 'cp-1'],
        maxParallel: 1,
        reason: REASON,
        requestedBy: 'user:default/creator',
        acknowledged: { 'worker-1': 'typed-name', 'cp-1': 'hazard' },
        acknowledgements: [
          {
            by: 'user:default/creator',
            at: '2026-12-01T00:00:00Z',
            on: 'create',
            preflightTakenAt: '2026-11-30T23:59:00Z',
            rungs: { 'worker-1': 'typed-name', 'cp-1': 'hazard' },
          },
        ],
        authorization: {
          by: 'user:default/creator',
          at: '2026-12-01T00:00:00Z',
          until: '2026-12-01T08:00:00Z',
        },
      } as any,
      status: {
        phase: 'Waiting',
        nodes: [
          { name: 'worker-1', controlPlane: false, phase: 'Done' },
          { name: 'cp-1', controlPlane: true, phase: 'Pending' },
        ],
      },
    });
    return cluster;
  }

  it("a renewal with a hazard step left needs the renewer's own pre-flight and typed names; nothing written without; theirs replaces the creator's, on record", async () => {
    const cluster = withHazardStep();
    const { server } = await start(cluster);
    const url = `${BASE}/reboot-plan-cp/renew`;
    const reason = 'the window opens tonight';
    // What was seen: a reason alone renewed it, and cp-1 went on at the creator's hazard.
    const bare = await request(server).post(url).send({ reason });
    expect(bare.status).toBe(400);
    expect(bare.body.error.message).toMatch(
      /^ceremony not met: renewing puts the remaining steps on your authority: cp-1 is at the hazard rung now\. Take the plan pre-flight of the remaining servers \(cp-1\) and send its preflightToken/,
    );
    const pre = await preflight(server, 'intent=reboot&nodes=cp-1');
    expect(pre.status).toBe(200);
    expect(pre.body.nodes.map((n: any) => n.ceremony.level)).toEqual([
      'hazard',
    ]);
    const untyped = await request(server)
      .post(url)
      .send({ reason, preflightToken: pre.body.token });
    expect(untyped.status).toBe(400);
    expect(untyped.body.error.message).toContain(
      'ceremony not met: cp-1 consumes the last of the quorum margin',
    );
    expect(cluster.writes).toBe(0);
    expect(cluster.planList[0].spec.authorization?.by).toBe(
      'user:default/creator',
    );

    const ok = await request(server)
      .post(url)
      .send({ reason, preflightToken: pre.body.token, typedNames: ['cp-1'] });
    expect(ok.status).toBe(200);
    const spec = cluster.planList[0].spec;
    expect(spec.authorization?.by).toBe('user:default/mock');
    // The done step keeps what it ran under; the remaining one is the renewer's.
    expect(spec.acknowledged).toEqual({
      'worker-1': 'typed-name',
      'cp-1': 'hazard',
    });
    expect(spec.acknowledgements).toEqual([
      expect.objectContaining({ by: 'user:default/creator', on: 'create' }),
      {
        by: 'user:default/mock',
        at: expect.any(String),
        on: 'renew',
        preflightTakenAt: pre.body.takenAt,
        rungs: { 'cp-1': 'hazard' },
      },
    ]);
    const view = await request(server).get(`${BASE}/reboot-plan-cp`);
    expect(view.body.acknowledgements.at(-1)).toMatchObject({
      by: 'user:default/mock',
      on: 'renew',
    });
    // One pre-flight acknowledges one renewal.
    const again = await request(server)
      .post(url)
      .send({ reason, preflightToken: pre.body.token, typedNames: ['cp-1'] });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toMatch(/acknowledged already/);
    expect(cluster.planUpdates).toHaveLength(1);
  });

  it('a renewal whose pre-flight went stale, or whose rung grew to a refusal, is a 409 with the new pre-flight; nothing written', async () => {
    const cluster = withHazardStep();
    const { server } = await start(cluster);
    const url = `${BASE}/reboot-plan-cp/renew`;
    const pre = await preflight(server, 'intent=reboot&nodes=cp-1');
    // A control-plane member goes down: rebooting cp-1 would now drop below quorum.
    cluster.nodeList = cluster.nodeList.map(n =>
      n.metadata?.name === 'cp-3'
        ? fakeNode('cp-3', { controlPlane: true, ready: false })
        : n,
    );
    const res = await request(server)
      .post(url)
      .send({
        reason: 'the window opens tonight',
        preflightToken: pre.body.token,
        typedNames: ['cp-1'],
      });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/impact changed/);
    expect(res.body.preflight.nodes[0]).toMatchObject({
      node: 'cp-1',
      quorum: { verdict: 'refuse', members: 3, quorum: 2 },
    });
    expect(cluster.writes).toBe(0);
  });

  it('a renewal of steps at or below their acknowledged rung needs no pre-flight, and keeps their acknowledgement', async () => {
    const cluster = withHazardStep();
    // A worker acknowledged at typed-name, still there: nothing to acknowledge afresh.
    cluster.planList[0].spec.nodes = ['cp-1', 'worker-2'];
    cluster.planList[0].spec.acknowledged = {
      'cp-1': 'hazard',
      'worker-2': 'typed-name',
    };
    cluster.planList[0].status!.nodes = [
      { name: 'worker-2', controlPlane: false, phase: 'Pending' },
      { name: 'cp-1', controlPlane: true, phase: 'Done' },
    ];
    const { server } = await start(cluster);
    const res = await request(server)
      .post(`${BASE}/reboot-plan-cp/renew`)
      .send({ reason: 'the window opens tonight' });
    expect(res.status).toBe(200);
    expect(cluster.planList[0].spec.acknowledged).toEqual({
      'cp-1': 'hazard',
      'worker-2': 'typed-name',
    });
    expect(cluster.planList[0].spec.acknowledgements).toHaveLength(1);
  });

  it('renew of a finished plan is a 409; without servers:plan a 403', async () => {
    const cluster = withPlan();
    cluster.planList[0].status!.phase = 'Complete';
    const { server } = await start(cluster);
    const url = `${BASE}/reboot-plan-1/renew`;
    const done = await request(server)
      .post(url)
      .send({ reason: 'the window opens tonight' });
    expect(done.status).toBe(409);
    const denied = await start(withPlan(), {
      decisions: { 'servers:plan': AuthorizeResult.DENY },
    });
    const res = await request(denied.server)
      .post(url)
      .send({ reason: 'the window opens tonight' });
    expect(res.status).toBe(403);
  });

  it('403 without servers:plan, nothing written', async () => {
    const cluster = withPlan();
    const { server } = await start(cluster, {
      decisions: { 'servers:plan': AuthorizeResult.DENY },
    });
    const res = await request(server)
      .post(`${BASE}/reboot-plan-1/pause`)
      .send({ reason: REASON });
    expect(res.status).toBe(403);
    expect(cluster.writes).toBe(0);
  });
});
