/*
 * Reads filtered by a conditional `servers:read` (docs/architecture.md, "The backend"): the cluster list, the
 * quorum summary, the refusals and the pre-flight tell a user nothing about servers the
 * decision does not let them read. Route tests with the recording test backend.
 */
import { createServiceFactory } from '@backstage/backend-plugin-api';
import {
  AuthorizeResult,
  type PermissionCriteria,
  type PermissionCondition,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import { serverConditions } from '@rackside/plugin-servers-node';
import request from 'supertest';
import {
  clusterRegistryServiceRef,
  staticClusterRegistry,
} from './cluster/clusterRegistry';
import { FakeCluster, fakeMaintenance, fakeNode } from './testing/fakeCluster';
import { startServersTestBackend } from './testing/testBackend';

const REASON = 'replace the failed disk in bay 3';

function plantA(): FakeCluster {
  return new FakeCluster(
    'plant-a',
    [
      fakeNode('cp-1', { controlPlane: true, labels: { rack: 'r1' } }),
      fakeNode('cp-2', { controlPlane: true }),
      fakeNode('cp-3', { controlPlane: true }),
      fakeNode('worker-1', { labels: { rack: 'r1' } }),
      fakeNode('worker-2'),
      fakeNode('worker-3', { unschedulable: true }),
    ],
    [],
    undefined,
    'Plant A',
  );
}

function plantB(): FakeCluster {
  return new FakeCluster(
    'plant-b',
    [
      fakeNode('b-cp-1', { controlPlane: true }),
      fakeNode('b-worker-1', { labels: { rack: 'r9' } }),
    ],
    [],
    undefined,
    'Plant B',
  );
}

function conditional(
  conditions: PermissionCriteria<PermissionCondition<'server'>>,
): PolicyDecision {
  return {
    result: AuthorizeResult.CONDITIONAL,
    pluginId: 'servers',
    resourceType: 'server',
    conditions,
  } as PolicyDecision;
}

async function start(clusters: FakeCluster[], read: PolicyDecision) {
  return startServersTestBackend({
    read,
    features: [
      createServiceFactory({
        service: clusterRegistryServiceRef,
        deps: {},
        factory: () => staticClusterRegistry(clusters),
      }),
    ],
  });
}

const notControlPlane = conditional({
  not: serverConditions.isControlPlane({}),
});
const rackR1 = conditional(
  serverConditions.hasLabel({ label: 'rack', value: 'r1' }),
);

describe('GET /clusters with a conditional servers:read', () => {
  it('lists only the clusters the decision lets the user read', async () => {
    const { server } = await start(
      [plantA(), plantB()],
      conditional(serverConditions.isInCluster({ clusters: ['plant-b'] })),
    );
    const res = await request(server).get('/api/servers/clusters');
    expect(res.status).toBe(200);
    expect(res.body.items.map((c: any) => c.name)).toEqual(['plant-b']);
    expect(JSON.stringify(res.body)).not.toMatch(/plant-a|Plant A/);
  });

  it('lists a cluster when some of its servers are readable, counting only those', async () => {
    // r1 servers exist in plant-a only; plant-b has none the user may read.
    const { server } = await start([plantA(), plantB()], rackR1);
    const res = await request(server).get('/api/servers/clusters');
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([
      expect.objectContaining({ name: 'plant-a', servers: 2 }),
    ]);
  });

  it('withholds the quorum numbers from a user who cannot read every control-plane member', async () => {
    const cluster = plantA();
    cluster.maintenanceList.push(
      fakeMaintenance('cp-2-reboot-x', 'cp-2', 'reboot', 'Rebooting'),
    );
    for (const read of [notControlPlane, rackR1]) {
      const { server } = await start([cluster], read);
      const clusters = await request(server).get('/api/servers/clusters');
      const list = await request(server).get(
        '/api/servers/clusters/plant-a/servers',
      );
      for (const quorum of [clusters.body.items[0].quorum, list.body.quorum]) {
        expect(quorum).toEqual({
          derived: false,
          hidden: true,
          reason: expect.stringMatching(/every control-plane member/),
        });
      }
      // Neither the member going down nor the member counts are told.
      for (const body of [clusters.body, list.body]) {
        expect(JSON.stringify(body)).not.toMatch(/cp-2|cp-3|members/);
      }
    }
  });

  it('shows the quorum to a user who may read every control-plane member', async () => {
    const cluster = plantA();
    cluster.maintenanceList.push(
      fakeMaintenance('cp-2-reboot-x', 'cp-2', 'reboot', 'Rebooting'),
    );
    const { server } = await start(
      [cluster],
      conditional(serverConditions.isControlPlane({})),
    );
    const res = await request(server).get('/api/servers/clusters');
    expect(res.body.items[0]).toMatchObject({
      servers: 3,
      quorum: {
        derived: true,
        members: 3,
        quorum: 2,
        ready: 2,
        margin: 0,
        goingDown: ['cp-2'],
      },
    });
  });
});

describe('actions with a conditional servers:read', () => {
  const url = (node: string, action: string) =>
    `/api/servers/clusters/plant-a/servers/${node}/actions/${action}`;

  it('answers 404, as for an absent server, on a server the user cannot read', async () => {
    const cluster = plantA();
    cluster.maintenanceList.push(
      fakeMaintenance('worker-2-drain-abc', 'worker-2', 'drain', 'Draining'),
    );
    const { server } = await start([cluster], rackR1);
    // Before: uncordon of worker-3 wrote a maintenance (201) and the cordons were 409s
    // naming worker-3's state and worker-2's maintenance.
    for (const [node, action] of [
      ['worker-3', 'uncordon'],
      ['worker-3', 'cordon'],
      ['worker-2', 'cordon'],
    ]) {
      const res = await request(server)
        .post(url(node, action))
        .send({ reason: REASON });
      expect([node, action, res.status]).toEqual([node, action, 404]);
      expect(res.body.error.message).toBe(
        `no server named ${node} in cluster plant-a`,
      );
    }
    expect(cluster.writes).toBe(0);
  });

  it('refuses below quorum without the numbers of members the user cannot read', async () => {
    const cluster = plantA();
    cluster.maintenanceList.push(
      fakeMaintenance('cp-2-reboot-x', 'cp-2', 'reboot', 'Rebooting'),
    );
    const { server } = await start([cluster], rackR1);
    const res = await request(server)
      .post(url('cp-1', 'reboot'))
      .send({ reason: REASON, typedName: 'cp-1' });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      name: 'ConflictError',
      members: null,
      quorum: null,
      margin: null,
      marginAfter: null,
    });
    expect(res.body.error.message).toMatch(
      /Rebooting cp-1 is refused: it would drop the control plane below quorum/,
    );
    expect(JSON.stringify(res.body)).not.toMatch(/cp-2|cp-3| of 3/);
    expect(cluster.writes).toBe(0);
  });

  it('shows a pre-flight without the quorum numbers to a user who cannot read every member', async () => {
    const { server } = await start([plantA()], rackR1);
    const res = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1/preflight?action=drain',
    );
    expect(res.status).toBe(200);
    expect(res.body.quorum).toEqual({
      verdict: 'allow',
      reason: expect.any(String),
      members: null,
      quorum: null,
      ready: null,
      margin: null,
      marginAfter: null,
    });
    expect(res.body.quorum.reason).not.toMatch(/of 3|quorum needs/);
    // The token still binds the real impact: the drain goes through with it.
    const drain = await request(server)
      .post(url('worker-1', 'drain'))
      .send({ reason: REASON, preflightToken: res.body.token });
    expect(drain.status).toBe(201);
  });
});

describe('maintenance records with a conditional servers:read', () => {
  const numbers =
    'Rebooting cp-1 would leave 1 of 3 control-plane members ready; quorum needs 2 (margin 0).';

  function refusedReboot(): FakeCluster {
    const cluster = plantA();
    const refused = fakeMaintenance(
      'cp-1-reboot-x',
      'cp-1',
      'reboot',
      'Refused',
    );
    refused.status = {
      phase: 'Refused',
      refusal: { reason: numbers, members: 3, quorum: 2, ready: 2, margin: 0 },
      history: [
        { phase: 'Refused', at: '2026-01-01T00:00:01Z', message: numbers },
      ],
      conditions: [
        {
          type: 'Refused',
          status: 'True',
          reason: 'Guard',
          message: numbers,
          lastTransitionTime: '2026-01-01T00:00:01Z',
        },
      ],
    } as any;
    cluster.maintenanceList.push(refused);
    return cluster;
  }

  it('shows a quorum refusal without the numbers to a user who cannot read every member', async () => {
    const { server } = await start([refusedReboot()], rackR1);
    const list = await request(server).get(
      '/api/servers/clusters/plant-a/maintenances?node=cp-1',
    );
    const one = await request(server).get(
      '/api/servers/clusters/plant-a/maintenances/cp-1-reboot-x',
    );
    for (const m of [list.body.items[0], one.body]) {
      expect(m).toMatchObject({
        name: 'cp-1-reboot-x',
        phase: 'Refused',
        refusal: {
          reason: expect.stringMatching(/below quorum/),
        },
      });
      expect(m.refusal.members).toBeUndefined();
      expect(JSON.stringify(m)).not.toMatch(/ of 3|quorum needs/);
    }
  });

  it('keeps the numbers for a user who may read every member', async () => {
    const { server } = await start(
      [refusedReboot()],
      conditional(serverConditions.isControlPlane({})),
    );
    const one = await request(server).get(
      '/api/servers/clusters/plant-a/maintenances/cp-1-reboot-x',
    );
    expect(one.body.refusal).toEqual({
      reason: numbers,
      members: 3,
      quorum: 2,
      ready: 2,
      margin: 0,
    });
    expect(one.body.history[0].message).toBe(numbers);
  });
});

describe('alerts and plan messages with a user who sees half the cluster', () => {
  // rack r1 (cp-1, worker-1, worker-2) is readable; cp-2, worker-3 and worker-4 are not.
  function halfRack(): FakeCluster {
    const cluster = new FakeCluster('plant-a', [
      fakeNode('cp-1', { controlPlane: true, labels: { rack: 'r1' } }),
      fakeNode('cp-2', { controlPlane: true }),
      fakeNode('worker-1', { labels: { rack: 'r1' } }),
      fakeNode('worker-2', { labels: { rack: 'r1' } }),
      fakeNode('worker-3'),
      fakeNode('worker-4'),
    ]);
    const raw = (
      fingerprint: string,
      labels: Record<string, string>,
      summary?: string,
    ) => ({
      fingerprint,
      labels,
      ...(summary ? { annotations: { summary } } : {}),
      startsAt: '2026-01-01T00:00:00.000Z',
      status: { state: 'active', silencedBy: [], inhibitedBy: [] },
    });
    const alerts = [
      raw('f-down', {
        alertname: 'NodeDown',
        node: 'worker-3',
        severity: 'critical',
      }),
      raw('f-disk', {
        alertname: 'DiskFull',
        node: 'worker-4',
        severity: 'warning',
      }),
      raw('f-load', {
        alertname: 'HighLoad',
        node: 'worker-1',
        severity: 'warning',
      }),
      raw(
        'f-link',
        {
          alertname: 'LinkDown',
          node: 'worker-1',
          peer: 'worker-3',
          severity: 'warning',
        },
        'the link from worker-1 to worker-3 is down',
      ),
    ];
    const shown = (a: (typeof alerts)[number]) => ({
      fingerprint: a.fingerprint,
      alertname: a.labels.alertname,
      severity: a.labels.severity,
      state: 'firing' as const,
      silencedBy: [],
      startsAt: a.startsAt,
      ...(a.annotations ? { summary: a.annotations.summary } : {}),
      labels: a.labels,
    });
    cluster.alertsState = {
      byNode: new Map([
        ['worker-1', [shown(alerts[2]), shown(alerts[3])]],
        ['worker-3', [shown(alerts[0]), shown(alerts[3])]],
        ['worker-4', [shown(alerts[1])]],
      ]),
      alerts: alerts as any,
      readAt: '2026-01-01T00:01:00.000Z',
    };
    return cluster;
  }

  const HIDDEN = /worker-3|worker-4|cp-2|NodeDown|DiskFull/;

  it("the plan pre-flight's gate preview names only readable servers, counting the others", async () => {
    const { server } = await start([halfRack()], rackR1);
    const res = await request(server)
      .get('/api/servers/clusters/plant-a/plans/preflight')
      .query({ intent: 'drain', nodes: 'worker-1', alertGate: '{}' });
    expect(res.status).toBe(200);
    // What was seen: every alert of the cluster, with the nodes it belongs to.
    expect(JSON.stringify(res.body.alerts)).not.toMatch(HIDDEN);
    expect(
      res.body.alerts.holding.map((a: any) => [a.alertname, a.nodes]),
    ).toEqual([
      ['HighLoad', ['worker-1']],
      ['LinkDown', ['worker-1']],
    ]);
    expect(res.body.alerts).toMatchObject({
      known: true,
      hiddenServers: 2,
      hiddenAlerts: 2,
      hidden: 'and 2 servers you cannot see',
    });
    // The label and the summary that name a hidden server say so instead.
    const link = res.body.alerts.holding[1];
    expect(link.labels.peer).toBe('a server you cannot see');
    expect(link.summary).toBe(
      'the link from worker-1 to a server you cannot see is down',
    );
  });

  it("a plan's message, waiting message and step messages name only readable servers", async () => {
    const cluster = halfRack();
    const firing =
      'alerts firing: DiskFull (worker-4, warning), HighLoad (worker-1, warning), NodeDown (worker-3, critical)';
    cluster.planList.push({
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'MaintenancePlan',
      metadata: {
        name: 'drain-plan-1',
        creationTimestamp: '2026-12-01T00:00:00Z',
      },
      spec: {
        intent: 'drain',
        nodes: ['worker-1', 'worker-2'],
        reason: REASON,
        requestedBy: 'user:default/mock',
      } as any,
      status: {
        phase: 'Waiting',
        message: `${firing}: 1 step(s) not started`,
        nodes: [
          {
            name: 'worker-1',
            controlPlane: false,
            phase: 'Running',
            message: `healthy return waits: LinkDown (worker-1, warning) names worker-3`,
          },
          { name: 'worker-2', controlPlane: false, phase: 'Pending' },
        ],
        waiting: {
          on: 'gate',
          gate: 'alerts',
          message: firing,
          since: '2026-12-01T00:10:00Z',
        },
      } as any,
    });
    const { server } = await start([cluster], rackR1);
    const one = await request(server).get(
      '/api/servers/clusters/plant-a/plans/drain-plan-1',
    );
    const list = await request(server).get(
      '/api/servers/clusters/plant-a/plans',
    );
    expect(one.status).toBe(200);
    for (const plan of [one.body, list.body.items[0]]) {
      expect(JSON.stringify(plan)).not.toMatch(HIDDEN);
      expect(plan.waiting.message).toBe(
        'alerts firing: HighLoad (worker-1, warning), and 2 servers you cannot see',
      );
      expect(plan.message).toBe(
        'alerts firing: HighLoad (worker-1, warning), and 2 servers you cannot see: 1 step(s) not started',
      );
      expect(plan.nodes[0].message).toBe(
        'healthy return waits: LinkDown (worker-1, warning) names a server you cannot see',
      );
    }
    // Whoever reads every server reads the operator's words unchanged.
    const all = await start([cluster], { result: AuthorizeResult.ALLOW });
    const full = await request(all.server).get(
      '/api/servers/clusters/plant-a/plans/drain-plan-1',
    );
    expect(full.body.waiting.message).toBe(firing);
  });

  it("a server's alert list names only readable servers", async () => {
    const { server } = await start([halfRack()], rackR1);
    const res = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1/alerts',
    );
    expect(res.status).toBe(200);
    expect(res.body.items.map((a: any) => a.alertname)).toEqual([
      'HighLoad',
      'LinkDown',
    ]);
    expect(JSON.stringify(res.body)).not.toMatch(HIDDEN);
    expect(res.body.items[1]).toMatchObject({
      labels: { node: 'worker-1', peer: 'a server you cannot see' },
      summary: 'the link from worker-1 to a server you cannot see is down',
    });
  });
});
