/*
 * What the hardware says (issue 40), through the routes: the health refresh request
 * (once a minute a server, two at once, who may ask, nothing written when refused), the
 * health in the list rows (sorted and filtered on the server side) and in the detail, and
 * the rule that returning a server whose BMC reports Critical needs the typed name.
 */
import { mockCredentials } from '@backstage/backend-test-utils';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import type { ServerHealth } from '@rackside/plugin-servers-common';
import { serverConditions } from '@rackside/plugin-servers-node';
import { createServiceFactory } from '@backstage/backend-plugin-api';
import request from 'supertest';
import {
  clusterRegistryServiceRef,
  staticClusterRegistry,
} from '../cluster/clusterRegistry';
import { FakeCluster, fakeMaintenance, fakeNode } from '../testing/fakeCluster';
import {
  startServersTestBackend,
  type ServersTestBackendOptions,
} from '../testing/testBackend';

const REASON = 'the power supply was replaced';

function critical(readAt = '2026-12-06T10:00:00Z'): ServerHealth {
  return {
    rollup: 'Critical',
    state: 'Enabled',
    readAt,
    parts: [
      {
        kind: 'PowerSupply',
        name: 'PSU 1',
        health: 'Critical',
        state: 'Enabled',
        message: 'input lost',
      },
      { kind: 'Fan', name: 'Fan 3', health: 'Warning' },
    ],
    logEntries: [
      {
        id: '41',
        created: '2026-12-06T09:58:00Z',
        severity: 'Critical',
        message: 'Power supply 1 input lost',
        service: 'System',
      },
    ],
    // A long log: the reading did not look at its 480 oldest entries.
    logEntriesSkipped: 480,
    firmware: [{ name: 'BIOS', version: '2.19.1', updateable: true }],
    missing: ['Storage'],
  };
}

function rack(): FakeCluster {
  const cluster = new FakeCluster('plant-a', [
    fakeNode('cp-1', { controlPlane: true }),
    fakeNode('cp-2', { controlPlane: true }),
    fakeNode('cp-3', { controlPlane: true }),
    fakeNode('worker-1', { unschedulable: true }),
    fakeNode('worker-2'),
    fakeNode('worker-3'),
    fakeNode('worker-4'),
  ]);
  cluster.bmcNodes = ['worker-1', 'worker-2', 'worker-3'];
  cluster.setHealth('worker-1', critical());
  cluster.setHealth('worker-2', {
    rollup: 'OK',
    readAt: '2026-12-06T10:00:00Z',
    parts: [],
    logEntries: [],
    firmware: [],
    missing: [],
  });
  cluster.setHealth('worker-3', {
    rollup: 'Warning',
    readAt: '2026-12-06T10:00:00Z',
    parts: [{ kind: 'Drive', name: 'Disk 0', health: 'Warning' }],
    logEntries: [],
    firmware: [],
    missing: [],
  });
  return cluster;
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

const refresh = (node: string, cluster = 'plant-a') =>
  `/api/servers/clusters/${cluster}/servers/${node}/health/refresh`;

describe('POST .../health/refresh', () => {
  it('202 with requestedAt; writes spec.healthRefresh with the user, audited', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster);
    const res = await request(server).post(refresh('worker-2'));
    expect(res.status).toBe(202);
    expect(Date.parse(res.body.requestedAt)).not.toBeNaN();
    expect(cluster.healthRefreshes).toEqual([
      {
        name: 'worker-2',
        refresh: {
          requestedAt: res.body.requestedAt,
          requestedBy: mockCredentials.user().principal.userEntityRef,
        },
      },
    ]);
    expect(events).toHaveLength(1);
    expect(events[0].options).toMatchObject({
      eventId: 'server-health-refresh',
      severityLevel: 'low',
      meta: {
        actor: 'user:default/mock',
        cluster: 'plant-a',
        node: 'worker-2',
      },
    });
    expect(events[0].outcome).toBe('success');
    expect(events[0].meta).toMatchObject({
      outcome: 'requested',
      requestedAt: res.body.requestedAt,
    });
    // The detail says which request is pending.
    const detail = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-2',
    );
    expect(detail.body.health.refreshRequestedAt).toBe(res.body.requestedAt);
  });

  it('429 with Retry-After and a message naming when, within a minute; nothing written, audited', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster);
    const first = await request(server).post(refresh('worker-2'));
    expect(first.status).toBe(202);
    const again = await request(server).post(refresh('worker-2'));
    expect(again.status).toBe(429);
    const retryAfter = Number(again.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(again.body.error.message).toContain(
      `requested at ${first.body.requestedAt}`,
    );
    expect(again.body.error.message).toMatch(
      /ask again after \d{4}-\d\d-\d\dT[\d:.]+Z \(in \d+ s\)/,
    );
    expect(cluster.healthRefreshes).toHaveLength(1);
    expect(events[1].outcome).toBe('fail');
    expect(events[1].meta).toMatchObject({ outcome: 'too-soon' });
    // Another server has its own minute.
    expect((await request(server).post(refresh('worker-3'))).status).toBe(202);
  });

  it('two requests at once (two clicks, two backends): one 202, one 429, one write', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    // Both requests read the ServerBMC before either writes: each patch waits for the
    // other to arrive, so only the resourceVersion can tell them apart.
    const patch = cluster.requestHealthRefresh.bind(cluster);
    let arrived = 0;
    let release!: () => void;
    const both = new Promise<void>(resolve => (release = resolve));
    const versions: string[] = [];
    cluster.requestHealthRefresh = async (name, version, value) => {
      versions.push(version);
      arrived++;
      if (arrived === 2) release();
      if (arrived <= 2) await both;
      return patch(name, version, value);
    };
    const [a, b] = await Promise.all([
      request(server).post(refresh('worker-1')),
      request(server).post(refresh('worker-1')),
    ]);
    expect([a.status, b.status].sort()).toEqual([202, 429]);
    expect(cluster.healthRefreshes).toHaveLength(1);
    // Both patched on the same version: the apiserver's precondition decided.
    expect(versions[0]).toBe(versions[1]);
    const refused = a.status === 429 ? a : b;
    expect(refused.headers['retry-after']).toBeDefined();
  });

  it('takes a request again once the minute is over', async () => {
    const cluster = rack();
    cluster.bmcRefresh.set('worker-2', {
      requestedAt: new Date(Date.now() - 61_000).toISOString(),
      requestedBy: 'user:default/someone-else',
    });
    const { server } = await start(cluster);
    expect((await request(server).post(refresh('worker-2'))).status).toBe(202);
    expect(cluster.healthRefreshes[0].refresh.requestedBy).toBe(
      'user:default/mock',
    );
  });

  it('a status write of the operator between the read and the patch is no refusal', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    // The operator writes a reading (a new resourceVersion) right after the backend read.
    const patch = cluster.requestHealthRefresh.bind(cluster);
    let raced = false;
    cluster.requestHealthRefresh = async (name, version, value) => {
      if (!raced) {
        raced = true;
        cluster.setHealth(name, critical('2026-12-06T10:15:00Z'));
      }
      return patch(name, version, value);
    };
    expect((await request(server).post(refresh('worker-1'))).status).toBe(202);
    expect(cluster.healthRefreshes).toHaveLength(1);
  });

  it('404 for an unknown cluster, an unknown server, a server without a ServerBMC, or one hidden from the caller; nothing written', async () => {
    const cluster = rack();
    const { server } = await start(cluster, {
      read: {
        result: AuthorizeResult.CONDITIONAL,
        pluginId: 'servers',
        resourceType: 'server',
        conditions: serverConditions.isControlPlane({}),
      } as PolicyDecision,
    });
    expect(
      (await request(server).post(refresh('worker-1', 'nope'))).status,
    ).toBe(404);
    expect((await request(server).post(refresh('ghost'))).status).toBe(404);
    // Hidden by the read decision: the same 404 as absent.
    expect((await request(server).post(refresh('worker-1'))).status).toBe(404);
    expect(cluster.healthRefreshes).toEqual([]);

    const open = rack();
    const { server: allowed } = await start(open);
    const noBmc = await request(allowed).post(refresh('worker-4'));
    expect(noBmc.status).toBe(404);
    expect(noBmc.body.error.message).toContain('has no ServerBMC');
    expect(open.healthRefreshes).toEqual([]);
  });

  it('403 when reading servers is denied, and for a caller that is not a user; nothing written', async () => {
    const cluster = rack();
    const { server } = await start(cluster, {
      read: { result: AuthorizeResult.DENY },
    });
    const denied = await request(server).post(refresh('worker-1'));
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain('servers:read');
    const service = rack();
    const { server: asService } = await start(service, {
      credentials: mockCredentials.service(),
    });
    // httpAuth refuses a service principal where only a user is allowed.
    expect((await request(asService).post(refresh('worker-1'))).status).toBe(
      403,
    );
    expect(cluster.healthRefreshes).toEqual([]);
    expect(service.healthRefreshes).toEqual([]);
  });
});

describe('health in the list and the detail', () => {
  it('each row carries rollup, readAt and the failed parts counted; the detail the whole reading', async () => {
    const { server } = await start(rack());
    const list = await request(server).get(
      '/api/servers/clusters/plant-a/servers',
    );
    const byName = Object.fromEntries(
      list.body.items.map((s: any) => [s.name, s]),
    );
    expect(byName['worker-1'].health).toEqual({
      rollup: 'Critical',
      readAt: '2026-12-06T10:00:00Z',
      failedParts: 2,
    });
    expect(byName['worker-4'].health).toBeUndefined();
    const detail = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1',
    );
    expect(detail.body.health).toEqual({
      rollup: 'Critical',
      state: 'Enabled',
      readAt: '2026-12-06T10:00:00Z',
      failedParts: 2,
      parts: critical().parts,
      logEntries: critical().logEntries,
      logEntriesSkipped: 480,
      firmware: critical().firmware,
      missing: ['Storage'],
    });
  });

  it("the detail carries the BMC's firmware history, field by field", async () => {
    const cluster = rack();
    const entry = {
      at: '2026-12-05T10:00:00Z',
      maintenance: 'bios-2-19',
      uid: 'u-2',
      imageURI: 'https://firmware.plant.example/bios-2.19.1.bin',
      result: 'Complete' as const,
      components: [
        {
          id: '/redfish/v1/UpdateService/FirmwareInventory/BIOS',
          before: '2.17.0',
          after: '2.19.1',
        },
      ],
    };
    cluster.bmcFirmwareHistory.set('worker-1', [entry]);
    const { server } = await start(cluster);
    const detail = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1',
    );
    expect(detail.body.health.firmwareHistory).toEqual([entry]);
    const other = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-2',
    );
    expect(other.body.health.firmwareHistory).toBeUndefined();
  });

  it('a window sorts by health (worst first) and filters on it', async () => {
    const { server } = await start(rack());
    const sorted = await request(server).get(
      '/api/servers/clusters/plant-a/servers?limit=10&sort=health&direction=asc',
    );
    expect(sorted.status).toBe(200);
    expect(sorted.body.items.map((s: any) => s.name)).toEqual([
      'worker-1',
      'worker-3',
      'worker-2',
      'cp-1',
      'cp-2',
      'cp-3',
      'worker-4',
    ]);
    const filtered = await request(server).get(
      '/api/servers/clusters/plant-a/servers?limit=10&filter=critical',
    );
    expect(filtered.body.items.map((s: any) => s.name)).toEqual(['worker-1']);
    expect(filtered.body.total).toBe(1);
  });
});

describe('returning a Critical server to service', () => {
  const uncordon = (node: string) =>
    `/api/servers/clusters/plant-a/servers/${node}/actions/uncordon`;

  function cordoned() {
    const cluster = rack();
    cluster.maintenanceList.push(
      fakeMaintenance('worker-1-cordon-1', 'worker-1', 'cordon', 'Cordoned'),
    );
    return cluster;
  }

  it('the detail and the list ask for the typed name and say why', async () => {
    const { server } = await start(cordoned());
    const detail = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1',
    );
    expect(detail.body.actions.uncordon.ceremony).toMatchObject({
      level: 'typed-name',
      requires: { typedName: true, preflightAck: false },
      why: 'the BMC reports Critical: PSU 1',
    });
    const list = await request(server).get(
      '/api/servers/clusters/plant-a/servers',
    );
    const row = list.body.items.find((s: any) => s.name === 'worker-1');
    expect(row.actions.uncordon).toBe('typed-name');
  });

  it('400 without the typed name or with another name, and nothing written; 200 with it', async () => {
    const cluster = cordoned();
    const { server, events } = await start(cluster);
    const without = await request(server)
      .post(uncordon('worker-1'))
      .send({ reason: REASON });
    expect(without.status).toBe(400);
    expect(without.body.error.message).toContain(
      'Type the node name worker-1 to confirm.',
    );
    const wrong = await request(server)
      .post(uncordon('worker-1'))
      .send({ reason: REASON, typedName: 'worker-2' });
    expect(wrong.status).toBe(400);
    expect(cluster.writes).toBe(0);
    expect(events.map(e => e.meta?.outcome)).toEqual(['invalid', 'invalid']);
    const typed = await request(server)
      .post(uncordon('worker-1'))
      .send({ reason: REASON, typedName: 'worker-1' });
    expect(typed.status).toBe(200);
    expect(cluster.flags.map(f => f.flag)).toEqual(['returnToService']);
  });

  it('once the BMC reads OK again the reason is enough', async () => {
    const cluster = cordoned();
    cluster.setHealth('worker-1', {
      ...critical(new Date(Date.now() - 60_000).toISOString()),
      rollup: 'OK',
      parts: [],
    });
    const { server } = await start(cluster);
    const res = await request(server)
      .post(uncordon('worker-1'))
      .send({ reason: REASON });
    expect(res.status).toBe(200);
  });
});

describe('returning a server whose hardware state is unknown', () => {
  const uncordon = (node: string) =>
    `/api/servers/clusters/plant-a/servers/${node}/actions/uncordon`;
  const ok = (over: Partial<ServerHealth>): ServerHealth => ({
    ...critical(new Date(Date.now() - 60_000).toISOString()),
    rollup: 'OK',
    parts: [],
    sweepIntervalSeconds: 900,
    ...over,
  });

  function cordonedWith(health: ServerHealth) {
    const cluster = rack();
    cluster.setHealth('worker-1', health);
    cluster.maintenanceList.push(
      fakeMaintenance('worker-1-cordon-1', 'worker-1', 'cordon', 'Cordoned'),
    );
    return cluster;
  }

  it('an OK reading three hours old (two 15-min sweeps missed) asks for the typed name in the detail, the list and the request, saying how old', async () => {
    const cluster = cordonedWith(
      ok({ readAt: new Date(Date.now() - 3 * 3600_000 - 5_000).toISOString() }),
    );
    const { server } = await start(cluster);
    const detail = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1',
    );
    expect(detail.body.actions.uncordon.ceremony).toMatchObject({
      level: 'typed-name',
      requires: { typedName: true },
      why: 'hardware state unknown: last reading 3 h ago (the sweep reads every 15 min)',
    });
    const list = await request(server).get(
      '/api/servers/clusters/plant-a/servers',
    );
    const row = list.body.items.find((s: any) => s.name === 'worker-1');
    expect(row.actions.uncordon).toBe('typed-name');
    // The row carries what the dialog needs to say the same.
    expect(row.health.sweepIntervalSeconds).toBe(900);
    const without = await request(server)
      .post(uncordon('worker-1'))
      .send({ reason: REASON });
    expect(without.status).toBe(400);
    expect(without.body.error.message).toContain(
      'Type the node name worker-1 to confirm.',
    );
    expect(cluster.writes).toBe(0);
    const typed = await request(server)
      .post(uncordon('worker-1'))
      .send({ reason: REASON, typedName: 'worker-1' });
    expect(typed.status).toBe(200);
  });

  it('a fresh reading whose last read failed asks for the typed name and says the error', async () => {
    const cluster = cordonedWith(
      ok({ error: 'the BMC answer was larger than 16 MiB' }),
    );
    const { server } = await start(cluster);
    const detail = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1',
    );
    expect(detail.body.actions.uncordon.ceremony).toMatchObject({
      level: 'typed-name',
      why: 'hardware state unknown: the last reading failed: the BMC answer was larger than 16 MiB',
    });
    const list = await request(server).get(
      '/api/servers/clusters/plant-a/servers',
    );
    const row = list.body.items.find((s: any) => s.name === 'worker-1');
    expect(row.health.error).toBe('the BMC answer was larger than 16 MiB');
    const without = await request(server)
      .post(uncordon('worker-1'))
      .send({ reason: REASON });
    expect(without.status).toBe(400);
  });

  it('a server without a ServerBMC asks nothing more than the reason', async () => {
    const cluster = rack();
    cluster.maintenanceList.push(
      fakeMaintenance('worker-4-cordon-1', 'worker-4', 'cordon', 'Cordoned'),
    );
    cluster.nodeList = cluster.nodeList.map(n =>
      n.metadata?.name === 'worker-4'
        ? { ...n, spec: { ...n.spec, unschedulable: true } }
        : n,
    );
    const { server } = await start(cluster);
    const res = await request(server)
      .post(uncordon('worker-4'))
      .send({ reason: REASON });
    expect(res.status).toBe(200);
  });
});
