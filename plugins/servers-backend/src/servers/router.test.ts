import { createServiceFactory } from '@backstage/backend-plugin-api';
import { mockCredentials } from '@backstage/backend-test-utils';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import { serverConditions } from '@rackside/plugin-servers-node';
import request from 'supertest';
import {
  clusterRegistryServiceRef,
  staticClusterRegistry,
} from '../cluster/clusterRegistry';
import {
  FakeCluster,
  fakeBudget,
  fakeMaintenance,
  fakeNode,
  fakePod,
} from '../testing/fakeCluster';
import {
  startServersTestBackend,
  type ServersTestBackendOptions,
} from '../testing/testBackend';

function rack(): FakeCluster {
  return new FakeCluster(
    'plant-a',
    [
      fakeNode('cp-1', { controlPlane: true }),
      fakeNode('cp-2', { controlPlane: true }),
      fakeNode('cp-3', { controlPlane: true }),
      fakeNode('worker-1', { labels: { zone: 'a' } }),
      fakeNode('worker-2', { labels: { zone: 'b' } }),
      fakeNode('worker-3', { unschedulable: true }),
      fakeNode('virt-1', { virtual: true }),
    ],
    [],
    undefined,
    'Plant A',
  );
}

async function start(
  cluster: FakeCluster,
  options: Omit<ServersTestBackendOptions, 'features'> = {},
) {
  return startServersTestBackend({
    ...options,
    features: [
      createServiceFactory({
        service: clusterRegistryServiceRef,
        deps: {},
        factory: () => staticClusterRegistry([cluster]),
      }),
    ],
  });
}

const REASON = 'replace the failed disk in bay 3';

/** The list's form of a server's actions: those offered and allowed, by ceremony level. */
function listedActions(detail: any): Record<string, string> {
  return Object.fromEntries(
    Object.entries(detail.actions as Record<string, any>)
      .filter(([, offer]) => offer.offered && offer.allowed)
      .map(([action, offer]) => [action, offer.ceremony.level]),
  );
}

/**
 * Every listed server's detail, by name, checking on the way that the list says of each
 * exactly what its detail offers and allows.
 */
async function serverDetails(server: any): Promise<Record<string, any>> {
  const list = await request(server).get(
    '/api/servers/clusters/plant-a/servers',
  );
  expect(list.status).toBe(200);
  const details: Record<string, any> = {};
  for (const item of list.body.items) {
    const res = await request(server).get(
      `/api/servers/clusters/plant-a/servers/${item.name}`,
    );
    expect(res.status).toBe(200);
    expect(item.actions).toEqual(listedActions(res.body));
    details[item.name] = res.body;
  }
  return details;
}

describe('GET routes', () => {
  it('lists clusters with quorum and power verbs', async () => {
    const { server } = await start(rack());
    const res = await request(server).get('/api/servers/clusters');
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([
      expect.objectContaining({
        name: 'plant-a',
        title: 'Plant A',
        quorum: expect.objectContaining({
          derived: true,
          members: 3,
          quorum: 2,
          ready: 3,
          margin: 1,
        }),
        power: expect.objectContaining({ type: 'none', verbs: [] }),
      }),
    ]);
  });

  it('lists servers with facts and per-action offers and permissions', async () => {
    const cluster = rack();
    cluster.maintenanceList.push(
      fakeMaintenance('worker-2-cordon-x', 'worker-2', 'cordon', 'Cordoned'),
    );
    const { server } = await start(cluster, {
      decisions: { 'servers:uncordon': AuthorizeResult.DENY },
    });
    const byName = await serverDetails(server);
    expect(Object.keys(byName)).toHaveLength(7);
    expect(byName['cp-1']).toMatchObject({
      controlPlane: true,
      virtual: false,
      ready: true,
      unschedulable: false,
      roles: ['control-plane'],
      systemUUID: 'uuid-cp-1',
    });
    expect(byName['virt-1'].virtual).toBe(true);
    expect(byName['virt-1'].actions.cordon.offered).toBe(false);
    expect(byName['worker-1'].actions.cordon).toMatchObject({
      offered: true,
      allowed: true,
      ceremony: { level: 'reason' },
    });
    expect(byName['worker-1'].actions.uncordon).toMatchObject({
      offered: false,
      allowed: false,
    });
    expect(byName['worker-2'].maintenance).toMatchObject({
      name: 'worker-2-cordon-x',
      phase: 'Cordoned',
    });
    expect(byName['worker-2'].actions['maintenance-abandon'].offered).toBe(
      true,
    );
    expect(byName['worker-3'].actions.uncordon.offered).toBe(true);
    expect(byName['worker-1'].actions.reboot.offered).toBe(false);
  });

  it('lists each server with only the actions offered and allowed, by ceremony level', async () => {
    const cluster = rack();
    cluster.maintenanceList.push(
      fakeMaintenance('worker-2-cordon-x', 'worker-2', 'cordon', 'Cordoned'),
    );
    const { server } = await start(cluster, {
      decisions: { 'servers:uncordon': AuthorizeResult.DENY },
    });
    const res = await request(server).get(
      '/api/servers/clusters/plant-a/servers',
    );
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(
      res.body.items.map((s: any) => [s.name, s]),
    );
    expect(byName['worker-1'].actions).toEqual({
      cordon: 'reason',
      drain: 'preflight',
    });
    // Uncordon is offered on worker-2 but denied to this user: absent.
    expect(byName['worker-2'].actions).toEqual({
      'maintenance-abandon': 'reason',
    });
    expect(byName['virt-1'].actions).toEqual({});
    // The system UUID is the detail route's.
    expect(byName['cp-1'].systemUUID).toBeUndefined();
    expect(byName['cp-1'].controlPlane).toBe(true);
  });

  it('answers 304 to a repeat while nothing it shows changed, 200 once a server changed', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const url = '/api/servers/clusters/plant-a/servers';
    const first = await request(server).get(url);
    const etag = first.headers.etag;
    expect(etag).toMatch(/^".+"$/);
    expect(
      (await request(server).get(url).set('If-None-Match', etag)).status,
    ).toBe(304);

    // A change as a watch delivers it: a new object with a new resourceVersion.
    const i = cluster.nodeList.findIndex(n => n.metadata?.name === 'worker-1');
    const old = cluster.nodeList[i];
    cluster.nodeList[i] = {
      ...old,
      metadata: { ...old.metadata, resourceVersion: '2' },
      spec: { ...old.spec, unschedulable: true },
    };
    const changed = await request(server).get(url).set('If-None-Match', etag);
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    const w1 = changed.body.items.find((s: any) => s.name === 'worker-1');
    expect(w1).toMatchObject({
      unschedulable: true,
      actions: { uncordon: 'reason', drain: 'preflight' },
    });

    // A new maintenance of worker-3 changes its row.
    cluster.maintenanceList.push(
      fakeMaintenance('worker-3-cordon-y', 'worker-3', 'cordon', 'Cordoned'),
    );
    const withMaintenance = await request(server)
      .get(url)
      .set('If-None-Match', changed.headers.etag);
    expect(withMaintenance.status).toBe(200);
    expect(
      withMaintenance.body.items.find((s: any) => s.name === 'worker-3')
        .maintenance,
    ).toMatchObject({ name: 'worker-3-cordon-y' });
  });

  it('filters servers with a conditional read decision', async () => {
    const { server } = await start(rack(), {
      read: {
        result: AuthorizeResult.CONDITIONAL,
        pluginId: 'servers',
        resourceType: 'server',
        conditions: serverConditions.isControlPlane({}),
      } as PolicyDecision,
    });
    const res = await request(server).get(
      '/api/servers/clusters/plant-a/servers',
    );
    expect(res.status).toBe(200);
    expect(res.body.items.map((s: any) => s.name)).toEqual([
      'cp-1',
      'cp-2',
      'cp-3',
    ]);
    const hidden = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1',
    );
    expect(hidden.status).toBe(404);
  });

  it('403 on every read route when reading is denied', async () => {
    const { server } = await start(rack(), {
      read: { result: AuthorizeResult.DENY },
    });
    for (const path of [
      '/api/servers/clusters',
      '/api/servers/clusters/plant-a/servers',
      '/api/servers/clusters/plant-a/servers/worker-1',
      '/api/servers/clusters/plant-a/servers/worker-1/alerts',
      '/api/servers/clusters/plant-a/maintenances',
    ]) {
      expect((await request(server).get(path)).status).toBe(403);
    }
  });

  it('audits every read at low severity, via http; a denied one fails its event', async () => {
    const { server, events } = await start(rack(), {
      decisions: { 'servers:drain': AuthorizeResult.DENY },
    });
    const one = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1',
    );
    expect(one.status).toBe(200);
    const pre = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1/preflight?action=drain',
    );
    expect(pre.status).toBe(403);
    const reads = events.filter(e => e.options.eventId === 'server-read');
    expect(
      reads.map(e => [
        e.options.severityLevel,
        e.options.meta.read,
        e.options.meta.via,
        e.outcome,
      ]),
    ).toEqual([
      ['low', 'server', 'http', 'success'],
      ['low', 'preflight', 'http', 'fail'],
    ]);
    expect(reads[0].options.meta).toMatchObject({
      actor: 'user:default/mock',
      cluster: 'plant-a',
      node: 'worker-1',
    });
    expect(reads[1].meta).toMatchObject({ action: 'drain', outcome: 'denied' });
  });

  it("answers a node's alerts only to whoever may read it, hidden like absent (404), audited", async () => {
    const cluster = rack();
    const down = {
      fingerprint: 'f1',
      alertname: 'NodeDown',
      severity: 'critical',
      state: 'firing' as const,
      silencedBy: [],
      startsAt: '2026-01-01T00:00:00.000Z',
      labels: { alertname: 'NodeDown', node: 'worker-1' },
    };
    cluster.alertsState = {
      byNode: new Map([['worker-1', [down]]]),
      alerts: [],
      readAt: '2026-01-01T00:01:00.000Z',
    };
    const { server, events } = await start(cluster, {
      read: {
        result: AuthorizeResult.CONDITIONAL,
        pluginId: 'servers',
        resourceType: 'server',
        conditions: serverConditions.hasLabel({ label: 'zone' }),
      } as PolicyDecision,
    });
    const res = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1/alerts',
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      cluster: 'plant-a',
      node: 'worker-1',
      configured: true,
      items: [down],
      readAt: '2026-01-01T00:01:00.000Z',
    });
    const list = await request(server).get(
      '/api/servers/clusters/plant-a/servers',
    );
    expect(list.body.items.map((s: any) => [s.name, s.alerts])).toEqual([
      ['worker-1', { firing: 1, silenced: 0, highestSeverity: 'critical' }],
      ['worker-2', { firing: 0, silenced: 0 }],
    ]);
    for (const hidden of ['cp-1', 'no-such-node']) {
      expect(
        (
          await request(server).get(
            `/api/servers/clusters/plant-a/servers/${hidden}/alerts`,
          )
        ).status,
      ).toBe(404);
    }
    expect(
      events
        .filter(e => e.options.meta.read === 'server-alerts')
        .map(e => [e.options.meta.node, e.outcome]),
    ).toEqual([
      ['worker-1', 'success'],
      ['cp-1', 'fail'],
      ['no-such-node', 'fail'],
    ]);
  });

  it('answers configured: false and no alerts field without an Alertmanager', async () => {
    const { server } = await start(rack());
    const res = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1/alerts',
    );
    expect(res.body).toEqual({
      cluster: 'plant-a',
      node: 'worker-1',
      configured: false,
      items: [],
    });
    const one = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1',
    );
    expect(one.body.alerts).toBeUndefined();
  });

  it('answers one server, 404 for unknown cluster or node', async () => {
    const { server } = await start(rack());
    const one = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1',
    );
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ name: 'worker-1', labels: { zone: 'a' } });
    expect(
      (await request(server).get('/api/servers/clusters/nope/servers')).status,
    ).toBe(404);
    expect(
      (await request(server).get('/api/servers/clusters/plant-a/servers/nope'))
        .status,
    ).toBe(404);
  });

  it('lists maintenances, by node, and one by name', async () => {
    const cluster = rack();
    cluster.maintenanceList.push(
      fakeMaintenance('a', 'worker-1', 'cordon', 'Complete'),
      fakeMaintenance('b', 'worker-2', 'drain', 'Draining'),
    );
    const { server } = await start(cluster);
    const all = await request(server).get(
      '/api/servers/clusters/plant-a/maintenances',
    );
    expect(all.body.items.map((m: any) => m.name).sort()).toEqual(['a', 'b']);
    const byNode = await request(server).get(
      '/api/servers/clusters/plant-a/maintenances?node=worker-2',
    );
    expect(byNode.body.items).toEqual([
      expect.objectContaining({
        name: 'b',
        phase: 'Draining',
        terminal: false,
      }),
    ]);
    const one = await request(server).get(
      '/api/servers/clusters/plant-a/maintenances/a',
    );
    expect(one.body).toMatchObject({ name: 'a', terminal: true });
    expect(
      (
        await request(server).get(
          '/api/servers/clusters/plant-a/maintenances/zzz',
        )
      ).status,
    ).toBe(404);
  });
  it('answers the power records, their timestamps and PowerOffConfirmed of a maintenance', async () => {
    const cluster = rack();
    const off = fakeMaintenance('off', 'worker-1', 'shutdown', 'PoweredOff');
    off.status = {
      ...off.status,
      poweredOffAt: '2026-08-07T10:00:05Z',
      power: {
        shutdown: {
          recordedAt: '2026-08-07T10:00:04Z',
          sentAt: '2026-08-07T10:00:05Z',
          channel: 'redfish',
          detail: 'ResetType GracefulShutdown',
        },
      },
      conditions: [
        {
          type: 'PowerOffConfirmed',
          status: 'True',
          reason: 'PowerStateOff',
          message: 'The BMC reports PowerState Off.',
          lastTransitionTime: '2026-08-07T10:00:09Z',
        },
      ],
    } as any;
    const rebooting = fakeMaintenance('rb', 'worker-2', 'reboot', 'Rebooting');
    rebooting.status = {
      ...rebooting.status,
      rebootSentAt: '2026-08-07T11:00:01Z',
      power: {
        reboot: {
          recordedAt: '2026-08-07T11:00:00Z',
          sentAt: '2026-08-07T11:00:01Z',
          channel: 'talos',
          detail: 'actor 1f2e',
        },
      },
    } as any;
    cluster.maintenanceList.push(off, rebooting);
    const { server } = await start(cluster);
    const one = await request(server).get(
      '/api/servers/clusters/plant-a/maintenances/off',
    );
    expect(one.body).toMatchObject({
      phase: 'PoweredOff',
      poweredOffAt: '2026-08-07T10:00:05Z',
      power: {
        shutdown: {
          sentAt: '2026-08-07T10:00:05Z',
          channel: 'redfish',
          detail: 'ResetType GracefulShutdown',
        },
      },
      conditions: [{ type: 'PowerOffConfirmed', status: 'True' }],
    });
    const list = await request(server).get(
      '/api/servers/clusters/plant-a/servers',
    );
    const w2 = list.body.items.find((i: any) => i.name === 'worker-2');
    expect(w2.maintenance).toMatchObject({
      phase: 'Rebooting',
      rebootSentAt: '2026-08-07T11:00:01Z',
      power: { reboot: { channel: 'talos', sentAt: '2026-08-07T11:00:01Z' } },
    });
    expect(w2.maintenance.poweredOffAt).toBeUndefined();
  });
});

describe('POST actions', () => {
  const url = (node: string, action: string, cluster = 'plant-a') =>
    `/api/servers/clusters/${cluster}/servers/${node}/actions/${action}`;

  it('cordons: 201 with the CR written and an audit event', async () => {
    const cluster = rack();
    const { server, events, authorized } = await start(cluster);
    const res = await request(server)
      .post(url('worker-1', 'cordon'))
      .send({ reason: REASON });
    expect(res.status).toBe(201);
    expect(res.body.name).toMatch(/^worker-1-cordon-[0-9a-z]+$/);
    expect(cluster.created).toEqual([
      {
        apiVersion: 'rackside.dev/v1alpha1',
        kind: 'NodeMaintenance',
        metadata: { name: res.body.name },
        spec: {
          nodeName: 'worker-1',
          intent: 'cordon',
          reason: REASON,
          requestedBy: mockCredentials.user().principal.userEntityRef,
        },
      },
    ]);
    expect(authorized).toEqual([
      expect.objectContaining({
        permission: expect.objectContaining({ name: 'servers:cordon' }),
        resourceRef: 'plant-a/worker-1',
      }),
    ]);
    expect(events).toHaveLength(1);
    expect(events[0].options).toMatchObject({
      eventId: 'server-action',
      severityLevel: 'medium',
      meta: {
        actor: 'user:default/mock',
        action: 'cordon',
        cluster: 'plant-a',
        node: 'worker-1',
        reason: REASON,
      },
    });
    expect(events[0].outcome).toBe('success');
    expect(events[0].meta).toMatchObject({
      maintenance: res.body.name,
      outcome: 'created',
    });
  });

  it('403 when denied: nothing written, audited as denied', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster, {
      decisions: { 'servers:cordon': AuthorizeResult.DENY },
    });
    const res = await request(server)
      .post(url('worker-1', 'cordon'))
      .send({ reason: REASON });
    expect(res.status).toBe(403);
    expect(res.body.error.name).toBe('NotAllowedError');
    expect(cluster.writes).toBe(0);
    expect(events).toHaveLength(1);
    expect(events[0].outcome).toBe('fail');
    expect(events[0].meta).toMatchObject({ outcome: 'denied' });
  });

  it('refuses a non-user caller, audited, nothing written', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster, {
      credentials: mockCredentials.service(),
    });
    const res = await request(server)
      .post(url('worker-1', 'cordon'))
      .send({ reason: REASON });
    expect(res.status).toBeGreaterThanOrEqual(401);
    expect(res.status).toBeLessThanOrEqual(403);
    expect(cluster.writes).toBe(0);
    expect(events).toHaveLength(1);
    expect(events[0].outcome).toBe('fail');
    expect(events[0].meta).toMatchObject({ outcome: 'unauthenticated' });
  });

  it('400 for a bad body, naming the field', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster);
    const res = await request(server)
      .post(url('worker-1', 'cordon'))
      .send({ reason: 42 });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/reason/);
    const missing = await request(server)
      .post(url('worker-1', 'cordon'))
      .send({});
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/reason/);
    const typed = await request(server)
      .post(url('worker-1', 'cordon'))
      .send({ reason: REASON, typedName: 7 });
    expect(typed.status).toBe(400);
    expect(typed.body.error.message).toMatch(/typedName/);
    for (const [healthyReturn, message] of [
      [
        { healthyForSeconds: -1 },
        /healthyReturn.healthyForSeconds must be 0 to 3600/,
      ],
      [
        { timeoutSeconds: 86401 },
        /healthyReturn.timeoutSeconds must be 60 to 86400/,
      ],
      [
        { healthyForSeconds: 1.5 },
        /healthyReturn.healthyForSeconds must be a whole number/,
      ],
      [
        { grace: 1 },
        /healthyReturn takes only healthyForSeconds and timeoutSeconds/,
      ],
      ['yes', /healthyReturn must be an object/],
    ] as const) {
      const bad = await request(server)
        .post(url('worker-1', 'cordon'))
        .send({ reason: REASON, healthyReturn });
      expect({ healthyReturn, status: bad.status }).toEqual({
        healthyReturn,
        status: 400,
      });
      expect(bad.body.error.message).toMatch(message);
    }
    expect(cluster.writes).toBe(0);
    expect(events.every(e => e.outcome === 'fail')).toBe(true);
  });

  it('400 for a reason failing the policy (defaults and configured pattern)', async () => {
    const cluster = rack();
    const { server } = await start(cluster, {
      config: {
        reasonPolicy: { pattern: '[A-Z]+-[0-9]+', hint: 'cite a ticket' },
      },
    });
    const short = await request(server)
      .post(url('worker-1', 'cordon'))
      .send({ reason: 'disk' });
    expect(short.status).toBe(400);
    expect(short.body.error.message).toMatch(/at least 10/);
    const noTicket = await request(server)
      .post(url('worker-1', 'cordon'))
      .send({ reason: REASON });
    expect(noTicket.status).toBe(400);
    expect(noTicket.body.error.message).toMatch(/cite a ticket/);
    const ok = await request(server)
      .post(url('worker-1', 'cordon'))
      .send({ reason: `${REASON} OPS-12` });
    expect(ok.status).toBe(201);
    expect(cluster.created).toHaveLength(1);
  });

  it('404 for an unknown cluster or node, nothing written', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    expect(
      (
        await request(server)
          .post(url('worker-1', 'cordon', 'nope'))
          .send({ reason: REASON })
      ).status,
    ).toBe(404);
    expect(
      (
        await request(server)
          .post(url('nope', 'cordon'))
          .send({ reason: REASON })
      ).status,
    ).toBe(404);
    expect(
      (
        await request(server)
          .post(url('worker-1', 'explode'))
          .send({ reason: REASON })
      ).status,
    ).toBe(404);
    expect(cluster.writes).toBe(0);
  });

  it('409 naming the maintenance when the node is busy', async () => {
    const cluster = rack();
    cluster.maintenanceList.push(
      fakeMaintenance('worker-1-drain-abc', 'worker-1', 'drain', 'Draining'),
    );
    const { server } = await start(cluster);
    const res = await request(server)
      .post(url('worker-1', 'cordon'))
      .send({ reason: REASON });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/worker-1-drain-abc/);
    expect(cluster.writes).toBe(0);
  });

  it('409 with numbers when the guard refuses (virtual node)', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster);
    const res = await request(server)
      .post(url('virt-1', 'cordon'))
      .send({ reason: REASON });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      name: 'ConflictError',
      members: 3,
      quorum: 2,
      margin: 1,
      reason: expect.stringMatching(/virtual/),
    });
    expect(cluster.writes).toBe(0);
    expect(events[0].meta).toMatchObject({ outcome: 'refused' });
  });

  it('uncordon sets returnToService on the active maintenance (200)', async () => {
    const cluster = rack();
    cluster.maintenanceList.push(
      fakeMaintenance('worker-1-cordon-1', 'worker-1', 'cordon', 'Cordoned'),
    );
    const { server } = await start(cluster);
    const res = await request(server)
      .post(url('worker-1', 'uncordon'))
      .send({ reason: REASON });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 'worker-1-cordon-1' });
    expect(cluster.flags).toEqual([
      {
        name: 'worker-1-cordon-1',
        flag: 'returnToService',
        value: {
          by: 'user:default/mock',
          reason: REASON,
          at: expect.any(String),
        },
      },
    ]);
    const again = await request(server)
      .post(url('worker-1', 'uncordon'))
      .send({ reason: REASON });
    expect(again.status).toBe(409);
  });

  it('uncordon of a node cordoned outside Rackside records a maintenance (201)', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const res = await request(server)
      .post(url('worker-3', 'uncordon'))
      .send({ reason: REASON });
    expect(res.status).toBe(201);
    expect(cluster.created[0].spec).toEqual({
      nodeName: 'worker-3',
      intent: 'cordon',
      reason: REASON,
      requestedBy: 'user:default/mock',
      returnToService: {
        by: 'user:default/mock',
        reason: REASON,
        at: expect.any(String),
      },
    });
    const inService = await request(server)
      .post(url('worker-2', 'uncordon'))
      .send({ reason: REASON });
    expect(inService.status).toBe(409);
  });

  it('maintenance-abandon sets abandon, 409 when there is none', async () => {
    const cluster = rack();
    cluster.maintenanceList.push(
      fakeMaintenance('worker-1-cordon-1', 'worker-1', 'cordon', undefined),
    );
    const { server } = await start(cluster);
    const res = await request(server)
      .post(url('worker-1', 'maintenance-abandon'))
      .send({ reason: REASON });
    expect(res.status).toBe(200);
    expect(cluster.flags[0]).toMatchObject({
      name: 'worker-1-cordon-1',
      flag: 'abandon',
    });
    const none = await request(server)
      .post(url('worker-2', 'maintenance-abandon'))
      .send({ reason: REASON });
    expect(none.status).toBe(409);
    expect(cluster.flags).toHaveLength(1);
  });
});

describe('pre-flight and drain', () => {
  const url = (node: string, action: string) =>
    `/api/servers/clusters/plant-a/servers/${node}/actions/${action}`;
  const preflightUrl = (node: string, query = 'action=drain') =>
    `/api/servers/clusters/plant-a/servers/${node}/preflight?${query}`;

  function withWorkloads(): FakeCluster {
    const cluster = rack();
    cluster.pods.set('worker-1', [
      fakePod('web-1', 'worker-1', { app: 'web' }),
      fakePod('payments-1', 'worker-1', { app: 'payments' }),
      fakePod('exporter-a', 'worker-1', {
        namespace: 'monitoring',
        owner: 'DaemonSet/node-exporter',
      }),
    ]);
    cluster.pods.set('worker-2', [
      fakePod('debug-shell', 'worker-2', { namespace: 'ops', owner: null }),
      fakePod('cache-1', 'worker-2', { emptyDir: true }),
    ]);
    cluster.budgets = [
      fakeBudget('web', 'web', 1),
      fakeBudget('payments', 'payments', 0),
    ];
    return cluster;
  }

  it('shows pods to evict, DaemonSet pods kept, budgets, quorum effect, ceremony and a token', async () => {
    const { server } = await start(withWorkloads());
    const res = await request(server).get(preflightUrl('worker-1'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      cluster: 'plant-a',
      node: 'worker-1',
      action: 'drain',
      options: { deleteEmptyDirData: false, force: false },
      refused: [],
      canProceed: true,
      blockers: [],
      ceremony: { level: 'preflight' },
      quorum: { verdict: 'allow', members: 3, quorum: 2, ready: 3 },
    });
    expect(res.body.evict.map((p: any) => `${p.namespace}/${p.name}`)).toEqual([
      'shop/payments-1',
      'shop/web-1',
    ]);
    expect(res.body.daemonSet.map((p: any) => p.name)).toEqual(['exporter-a']);
    expect(
      res.body.budgets.map((b: any) => [b.name, b.blocksNow, b.pods]),
    ).toEqual([
      ['payments', true, ['shop/payments-1']],
      ['web', false, ['shop/web-1']],
    ]);
    expect(res.body.token).toEqual(expect.any(String));
  });

  it('lists refused pods with their causes and allows them with the options', async () => {
    const { server } = await start(withWorkloads());
    const res = await request(server).get(preflightUrl('worker-2'));
    expect(res.body.canProceed).toBe(false);
    expect(res.body.refused.map((r: any) => [r.pod.name, r.causes])).toEqual([
      ['debug-shell', ['unmanaged']],
      ['cache-1', ['emptyDir']],
    ]);
    expect(res.body.blockers[0]).toMatch(/2 pod\(s\) cannot be evicted/);
    const allowed = await request(server).get(
      preflightUrl(
        'worker-2',
        'action=drain&force=true&deleteEmptyDirData=true',
      ),
    );
    expect(allowed.body).toMatchObject({
      canProceed: true,
      refused: [],
      options: { force: true, deleteEmptyDirData: true },
    });
    expect(allowed.body.evict).toHaveLength(2);
  });

  it('400 for an unknown action or option value, 403 without the action permission', async () => {
    const { server } = await start(withWorkloads(), {
      decisions: { 'servers:drain': AuthorizeResult.DENY },
    });
    const bad = await request(server).get(
      preflightUrl('worker-1', 'action=cordon'),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/drain, reboot, shutdown/);
    const badFlag = await request(server).get(
      preflightUrl('worker-1', 'action=reboot&force=yes'),
    );
    expect(badFlag.status).toBe(400);
    expect(badFlag.body.error.message).toMatch(/force must be true or false/);
    const denied = await request(server).get(preflightUrl('worker-1'));
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toMatch(/servers:drain/);
  });

  it('drains with the acknowledged token and records the snapshot and options', async () => {
    const cluster = withWorkloads();
    const { server, events } = await start(cluster);
    const pre = await request(server).get(preflightUrl('worker-1'));
    const res = await request(server)
      .post(url('worker-1', 'drain'))
      .send({
        reason: REASON,
        preflightToken: pre.body.token,
        healthyReturn: { healthyForSeconds: 30 },
      });
    expect(res.status).toBe(201);
    expect(cluster.created).toHaveLength(1);
    const spec = cluster.created[0].spec;
    // Asked for, the healthy return is written into the spec (the defaults fill the rest).
    expect(spec.healthyReturn).toEqual({ healthyForSeconds: 30 });
    expect(spec).toMatchObject({
      nodeName: 'worker-1',
      intent: 'drain',
      reason: REASON,
      drain: { deleteEmptyDirData: false, force: false },
      preflight: {
        takenAt: pre.body.takenAt,
        token: pre.body.token,
        ceremony: 'preflight',
        pods: [
          { namespace: 'shop', name: 'payments-1' },
          { namespace: 'shop', name: 'web-1' },
        ],
        blockingPDBs: [{ namespace: 'shop', name: 'payments' }],
        quorum: { members: 3, quorum: 2, ready: 3, margin: 1 },
      },
    });
    expect(events.at(-1)).toMatchObject({
      outcome: 'success',
      meta: { action: 'drain', maintenance: res.body.name, node: 'worker-1' },
    });
  });

  it('409 with the new pre-flight when the impact changed, nothing written', async () => {
    const cluster = withWorkloads();
    const { server, events } = await start(cluster);
    const pre = await request(server).get(preflightUrl('worker-1'));
    cluster.pods
      .get('worker-1')!
      .push(fakePod('web-2', 'worker-1', { app: 'web' }));
    const res = await request(server)
      .post(url('worker-1', 'drain'))
      .send({ reason: REASON, preflightToken: pre.body.token });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/impact changed/);
    expect(res.body.preflight.evict.map((p: any) => p.name)).toContain('web-2');
    expect(res.body.preflight.token).not.toBe(pre.body.token);
    expect(cluster.writes).toBe(0);
    expect(events.at(-1)).toMatchObject({
      outcome: 'fail',
      meta: { outcome: 'conflict' },
    });
    // The new token is accepted.
    const again = await request(server)
      .post(url('worker-1', 'drain'))
      .send({ reason: REASON, preflightToken: res.body.preflight.token });
    expect(again.status).toBe(201);
  });

  it('409 when the options of the request differ from the acknowledged ones', async () => {
    const cluster = withWorkloads();
    const { server } = await start(cluster);
    const pre = await request(server).get(
      preflightUrl(
        'worker-2',
        'action=drain&force=true&deleteEmptyDirData=true',
      ),
    );
    const res = await request(server)
      .post(url('worker-2', 'drain'))
      .send({ reason: REASON, preflightToken: pre.body.token, force: true });
    expect(res.status).toBe(409);
    expect(res.body.preflight.canProceed).toBe(false);
    const ok = await request(server).post(url('worker-2', 'drain')).send({
      reason: REASON,
      preflightToken: pre.body.token,
      force: true,
      deleteEmptyDirData: true,
    });
    expect(ok.status).toBe(201);
    expect(cluster.created[0].spec.drain).toEqual({
      allowNodeLocalData: false,
      deleteEmptyDirData: true,
      force: true,
    });
  });

  it('409 with blockers when pods would be refused, even with a matching token', async () => {
    const cluster = withWorkloads();
    const { server } = await start(cluster);
    const pre = await request(server).get(preflightUrl('worker-2'));
    const res = await request(server)
      .post(url('worker-2', 'drain'))
      .send({ reason: REASON, preflightToken: pre.body.token });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/cannot be evicted/);
    expect(cluster.writes).toBe(0);
  });

  it('400 without a token or with a forged one, nothing written', async () => {
    const cluster = withWorkloads();
    const { server } = await start(cluster);
    const none = await request(server)
      .post(url('worker-1', 'drain'))
      .send({ reason: REASON });
    expect(none.status).toBe(400);
    expect(none.body.error.message).toMatch(/pre-flight token/);
    const pre = await request(server).get(preflightUrl('worker-1'));
    const [body] = pre.body.token.split('.');
    const forged = await request(server)
      .post(url('worker-1', 'drain'))
      .send({ reason: REASON, preflightToken: `${body}.AAAA` });
    expect(forged.status).toBe(400);
    expect(forged.body.error.message).toMatch(/not valid/);
    expect(cluster.writes).toBe(0);
  });

  it('a token is bound to the user it was shown to', async () => {
    const cluster = withWorkloads();
    const alice = await start(cluster, {
      credentials: mockCredentials.user('user:default/alice'),
    });
    const pre = await request(alice.server).get(preflightUrl('worker-1'));
    const bob = await start(cluster, {
      credentials: mockCredentials.user('user:default/bob'),
      config: { preflight: { secret: 'shared' } },
    });
    const res = await request(bob.server)
      .post(url('worker-1', 'drain'))
      .send({ reason: REASON, preflightToken: pre.body.token });
    expect(res.status).toBe(400);
    expect(cluster.writes).toBe(0);
  });

  it('tokens from one replica are accepted by another with the same secret, and only the same user', async () => {
    const cluster = withWorkloads();
    const config = { preflight: { secret: 'shared between replicas' } };
    const one = await start(cluster, { config });
    const two = await start(cluster, { config });
    const pre = await request(one.server).get(preflightUrl('worker-1'));
    const res = await request(two.server)
      .post(url('worker-1', 'drain'))
      .send({ reason: REASON, preflightToken: pre.body.token });
    expect(res.status).toBe(201);
    const other = await start(cluster, {
      config,
      credentials: mockCredentials.user('user:default/mallory'),
    });
    const pre2 = await request(one.server).get(
      preflightUrl(
        'worker-2',
        'action=drain&force=true&deleteEmptyDirData=true',
      ),
    );
    const stolen = await request(other.server)
      .post(url('worker-2', 'drain'))
      .send({
        reason: REASON,
        preflightToken: pre2.body.token,
        force: true,
        deleteEmptyDirData: true,
      });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error.message).toMatch(/another user/);
  });

  it('offers drain on a node without a maintenance, not on one under maintenance or virtual', async () => {
    const cluster = withWorkloads();
    cluster.maintenanceList.push(
      fakeMaintenance('c', 'worker-2', 'cordon', 'Cordoned'),
    );
    const { server } = await start(cluster);
    const byName = Object.fromEntries(
      Object.values(await serverDetails(server)).map(s => [
        s.name,
        s.actions.drain,
      ]),
    );
    expect(byName['worker-1']).toMatchObject({
      offered: true,
      ceremony: { level: 'preflight' },
    });
    expect(byName['worker-3'].offered).toBe(true);
    expect(byName['worker-2']).toMatchObject({
      offered: false,
      why: expect.stringMatching(/already under maintenance c/),
    });
    expect(byName['virt-1'].offered).toBe(false);
  });
});

function provider(
  type: 'talos' | 'redfish',
  attendedRack = false,
): NonNullable<FakeCluster['provider']> {
  const redfish = type === 'redfish';
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'PowerProvider',
    metadata: { name: 'default', generation: 2 },
    spec: { type, attendedRack } as any,
    status: {
      reboot: true,
      shutdown: redfish || attendedRack,
      powerOn: redfish,
      confirmsPowerOff: redfish,
      observedGeneration: 2,
    },
  };
}

describe('reboot, shutdown and power-on', () => {
  const url = (node: string, action: string) =>
    `/api/servers/clusters/plant-a/servers/${node}/actions/${action}`;
  const preflightUrl = (node: string, action: string) =>
    `/api/servers/clusters/plant-a/servers/${node}/preflight?action=${action}`;

  async function acknowledged(server: any, node: string, action: string) {
    const pre = await request(server).get(preflightUrl(node, action));
    expect(pre.status).toBe(200);
    return pre.body;
  }

  it('offers no power verb anywhere without a provider, and refuses one with 409', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    for (const item of Object.values(await serverDetails(server))) {
      expect(item.powerVerbs).toEqual([]);
      for (const verb of ['reboot', 'shutdown', 'power-on']) {
        expect(item.actions[verb].offered).toBe(false);
      }
    }
    const pre = await acknowledged(server, 'worker-1', 'reboot');
    const res = await request(server).post(url('worker-1', 'reboot')).send({
      reason: REASON,
      typedName: 'worker-1',
      preflightToken: pre.token,
    });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/No power channel/);
    expect(cluster.writes).toBe(0);
  });

  it('reboots over talos with the typed name and the acknowledged pre-flight', async () => {
    const cluster = rack();
    cluster.provider = provider('talos');
    const { server, events } = await start(cluster);
    const w1 = (await serverDetails(server))['worker-1'];
    expect(w1.powerVerbs).toEqual(['reboot']);
    expect(w1.actions.reboot).toMatchObject({
      offered: true,
      ceremony: { level: 'typed-name' },
    });
    expect(w1.actions.shutdown.offered).toBe(false);
    expect(w1.actions.shutdown.why).toMatch(/recoverable/);
    const pre = await acknowledged(server, 'worker-1', 'reboot');
    expect(pre.ceremony.level).toBe('typed-name');
    const untyped = await request(server)
      .post(url('worker-1', 'reboot'))
      .send({ reason: REASON, preflightToken: pre.token });
    expect(untyped.status).toBe(400);
    expect(untyped.body.error.message).toMatch(/Type the node name worker-1/);
    const wrong = await request(server).post(url('worker-1', 'reboot')).send({
      reason: REASON,
      preflightToken: pre.token,
      typedName: 'worker-2',
    });
    expect(wrong.status).toBe(400);
    expect(cluster.writes).toBe(0);
    const ok = await request(server).post(url('worker-1', 'reboot')).send({
      reason: REASON,
      preflightToken: pre.token,
      typedName: 'worker-1',
    });
    expect(ok.status).toBe(201);
    expect(cluster.created[0].spec).toMatchObject({
      intent: 'reboot',
      nodeName: 'worker-1',
      preflight: { ceremony: 'typed-name' },
    });
    expect(events.at(-1)).toMatchObject({
      outcome: 'success',
      options: { severityLevel: 'high' },
    });
  });

  it('refuses a talos shutdown without attendedRack (409), allows it with attendedRack', async () => {
    const cluster = rack();
    cluster.provider = provider('talos');
    const { server } = await start(cluster);
    const pre = await acknowledged(server, 'worker-1', 'shutdown');
    const res = await request(server).post(url('worker-1', 'shutdown')).send({
      reason: REASON,
      typedName: 'worker-1',
      preflightToken: pre.token,
    });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/recoverable/);
    expect(cluster.writes).toBe(0);
    cluster.provider = provider('talos', true);
    const again = await request(server).post(url('worker-1', 'shutdown')).send({
      reason: REASON,
      typedName: 'worker-1',
      preflightToken: pre.token,
    });
    expect(again.status).toBe(201);
  });

  it('the last quorum margin takes the hazard ceremony; below quorum is refused with the numbers', async () => {
    const cluster = rack();
    cluster.provider = provider('redfish');
    cluster.bmcNodes = ['cp-1', 'cp-2', 'cp-3'];
    const { server } = await start(cluster);
    const pre = await acknowledged(server, 'cp-1', 'reboot');
    expect(pre.ceremony).toMatchObject({
      level: 'hazard',
      requires: { typedName: true, typedReason: true, preflightAck: true },
      hint: { icon: 'warning' },
    });
    expect(pre.quorum).toMatchObject({
      verdict: 'hazard',
      margin: 1,
      marginAfter: 0,
    });
    const ok = await request(server).post(url('cp-1', 'reboot')).send({
      reason: REASON,
      typedName: 'cp-1',
      preflightToken: pre.token,
    });
    expect(ok.status).toBe(201);
    // cp-1 now going down: rebooting cp-2 would drop below quorum.
    cluster.maintenanceList[0].status = { phase: 'Rebooting' } as any;
    const refused = await request(server).post(url('cp-2', 'reboot')).send({
      reason: REASON,
      typedName: 'cp-2',
      preflightToken: 'x',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      members: 3,
      quorum: 2,
      margin: 0,
    });
    const refusedPre = await acknowledged(server, 'cp-2', 'reboot');
    expect(refusedPre.canProceed).toBe(false);
    expect(refusedPre.ceremony.level).toBe('refused');
  });

  it('over redfish offers power verbs only on nodes with a ServerBMC', async () => {
    const cluster = rack();
    cluster.provider = provider('redfish');
    cluster.bmcNodes = ['worker-1'];
    const { server } = await start(cluster);
    const byName = await serverDetails(server);
    expect(byName['worker-1'].powerVerbs).toEqual([
      'reboot',
      'shutdown',
      'power-on',
    ]);
    expect(byName['worker-1'].actions.shutdown.offered).toBe(true);
    expect(byName['worker-2'].powerVerbs).toEqual([]);
    expect(byName['worker-2'].actions.reboot).toMatchObject({
      offered: false,
      why: expect.stringMatching(/no ServerBMC/),
    });
    const pre = await acknowledged(server, 'worker-2', 'reboot');
    const res = await request(server).post(url('worker-2', 'reboot')).send({
      reason: REASON,
      typedName: 'worker-2',
      preflightToken: pre.token,
    });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/no ServerBMC/);
    expect(cluster.writes).toBe(0);
  });

  it('power-on sets the flag on a PoweredOff shutdown, 409 otherwise', async () => {
    const cluster = rack();
    cluster.provider = provider('redfish');
    cluster.bmcNodes = ['worker-1', 'worker-2'];
    cluster.maintenanceList.push(
      fakeMaintenance('off', 'worker-1', 'shutdown', 'PoweredOff'),
      fakeMaintenance('busy', 'worker-2', 'drain', 'Drained'),
    );
    const { server } = await start(cluster);
    const offers = Object.fromEntries(
      Object.values(await serverDetails(server)).map(s => [
        s.name,
        s.actions['power-on'].offered,
      ]),
    );
    expect(offers).toMatchObject({ 'worker-1': true, 'worker-2': false });
    const res = await request(server)
      .post(url('worker-1', 'power-on'))
      .send({ reason: REASON });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 'off' });
    expect(cluster.flags).toEqual([
      expect.objectContaining({ name: 'off', flag: 'powerOn' }),
    ]);
    const notOff = await request(server)
      .post(url('worker-2', 'power-on'))
      .send({ reason: REASON });
    expect(notOff.status).toBe(409);
    expect(notOff.body.error.message).toMatch(/not powered off/);
    const twice = await request(server)
      .post(url('worker-1', 'power-on'))
      .send({ reason: REASON });
    expect(twice.status).toBe(409);
  });
});

describe('no machine left off, and a refusal at the moment of acting', () => {
  const url = (node: string, action: string) =>
    `/api/servers/clusters/plant-a/servers/${node}/actions/${action}`;
  const redfish = {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'PowerProvider',
    metadata: { name: 'default' },
    spec: { type: 'redfish', attendedRack: false },
    status: {
      reboot: true,
      shutdown: true,
      powerOn: true,
      confirmsPowerOff: true,
    },
  } as any;

  it('does not offer abandon while PoweredOff: a POST answers 409 and writes nothing; power-on stays offered', async () => {
    const cluster = rack();
    cluster.provider = redfish;
    cluster.bmcNodes = ['worker-1'];
    cluster.maintenanceList.push(
      fakeMaintenance('off', 'worker-1', 'shutdown', 'PoweredOff'),
    );
    const { server } = await start(cluster);
    const byName = await serverDetails(server);
    expect(byName['worker-1'].actions['maintenance-abandon']).toMatchObject({
      offered: false,
      why: expect.stringMatching(/no way back/),
    });
    expect(byName['worker-1'].actions['power-on'].offered).toBe(true);
    const res = await request(server)
      .post(url('worker-1', 'maintenance-abandon'))
      .send({ reason: REASON });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/powered the machine off/);
    expect(cluster.writes).toBe(0);
  });

  it('keeps power-on offered while an abandon written with kubectl is held', async () => {
    const cluster = rack();
    cluster.provider = redfish;
    cluster.bmcNodes = ['worker-1'];
    cluster.maintenanceList.push(
      fakeMaintenance('off', 'worker-1', 'shutdown', 'PoweredOff', {
        abandon: { by: 'kubernetes-admin', reason: 'changed my mind' },
      }),
    );
    const { server } = await start(cluster);
    const byName = await serverDetails(server);
    expect(byName['worker-1'].actions['power-on'].offered).toBe(true);
    const res = await request(server)
      .post(url('worker-1', 'power-on'))
      .send({ reason: REASON });
    expect(res.status).toBe(200);
    expect(cluster.flags).toEqual([
      expect.objectContaining({ name: 'off', flag: 'powerOn' }),
    ]);
  });

  it('shows a node left cordoned by a maintenance refused at send time, with its numbers, and returns it to service', async () => {
    const cluster = rack();
    cluster.nodeList = cluster.nodeList.map(n =>
      n.metadata?.name === 'cp-1'
        ? { ...n, spec: { ...n.spec, unschedulable: true } }
        : n,
    );
    const refused = fakeMaintenance('reboot-cp1', 'cp-1', 'reboot', 'Refused');
    refused.status = {
      ...refused.status,
      cordonedAt: '2026-01-01T00:00:10Z',
      refusal: {
        reason:
          'reboot of cp-1 was not sent: the quorum changed since it was admitted.',
        members: 3,
        quorum: 2,
        ready: 2,
        margin: 0,
      },
    } as any;
    cluster.maintenanceList.push(refused);
    const { server } = await start(cluster);
    const list = await request(server).get(
      '/api/servers/clusters/plant-a/servers',
    );
    const row = list.body.items.find((i: any) => i.name === 'cp-1');
    expect(row.maintenance).toMatchObject({
      name: 'reboot-cp1',
      phase: 'Refused',
      terminal: true,
      refusal: { members: 3, quorum: 2, ready: 2, margin: 0 },
    });
    expect(row.actions.uncordon).toBe('reason');
    // Nothing more than return to service: the refused maintenance is over.
    expect(row.actions['maintenance-abandon']).toBeUndefined();
    const res = await request(server)
      .post(url('cp-1', 'uncordon'))
      .send({ reason: REASON });
    expect(res.status).toBe(201);
    expect(cluster.created[0].spec).toMatchObject({
      nodeName: 'cp-1',
      intent: 'cordon',
      returnToService: expect.objectContaining({ reason: REASON }),
    });
  });
});

describe('signals', () => {
  it('publishes one debounced changed signal per cluster', async () => {
    const cluster = rack();
    const { published } = await start(cluster);
    cluster.emitChange();
    cluster.emitChange();
    await new Promise(resolve => setTimeout(resolve, 1200));
    expect(published).toEqual([
      {
        recipients: { type: 'broadcast' },
        channel: 'rackside:servers',
        message: { cluster: 'plant-a' },
      },
    ]);
  });
});
