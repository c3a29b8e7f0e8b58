/*
 * The backend's reading of Alertmanager (cluster/nodeAlerts.ts, docs/alerts.md "In the
 * portal") against the rack's real Alertmanager: alerts posted as Prometheus would, a
 * person's silence, a silence as Rackside's operator writes it (its id recorded in a
 * NodeMaintenance's status.alerting), one forged to look like it (recorded by none),
 * Alertmanager's own silencing; and a cluster whose Alertmanager cannot be reached answers
 * stale, not an error.
 */
import {
  racksideSilenceCreatedBy,
  racksideSilenceMarker,
} from '@rackside/plugin-servers-common';
import {
  eventually,
  startTestRack,
  type TestRack,
} from '@rackside/rack-testing';
import net from 'node:net';
import request from 'supertest';
import {
  installRackside,
  startServersBackendOnRack,
} from './testing/rackBackend';

jest.setTimeout(90_000);

type Obj = Record<string, any>;

let rack: TestRack | undefined;
let alertmanagerUrl: string;
let server: Parameters<typeof request>[0];
let unreachable: Parameters<typeof request>[0];

async function am(path: string, init?: { method: string; body: unknown }) {
  const res = await fetch(`${alertmanagerUrl}/api/v2${path}`, {
    method: init?.method ?? 'GET',
    headers: { 'content-type': 'application/json' },
    body: init ? JSON.stringify(init.body) : undefined,
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  const text = await res.text();
  return text ? JSON.parse(text) : undefined;
}

/** A port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

const hour = () => new Date(Date.now() + 3600_000).toISOString();

beforeAll(async () => {
  rack = await startTestRack({ withTalos: false, withRedfish: false });
  alertmanagerUrl = (rack.info.alertmanager as { url: string }).url;
  // Before the backend's first read: it reads once, then at most every 30 s.
  await am('/alerts', {
    method: 'POST',
    body: [
      {
        labels: {
          alertname: 'NodeDown',
          node: 'worker-1',
          severity: 'critical',
        },
        annotations: { summary: 'worker-1 does not answer' },
      },
      {
        labels: {
          alertname: 'DiskSlow',
          instance: 'worker-1:9100',
          severity: 'warning',
        },
      },
      {
        labels: {
          alertname: 'FanNoise',
          node: 'worker-2',
          severity: 'warning',
        },
      },
      {
        labels: {
          alertname: 'RebootPending',
          node: 'worker-3',
          severity: 'info',
        },
      },
      {
        labels: {
          alertname: 'SensorGlitch',
          node: 'worker-5',
          severity: 'warning',
        },
      },
      // No node's: shown on no row, but a gate over the whole cluster sees it.
      { labels: { alertname: 'BackupLate', severity: 'critical' } },
    ],
  });
  // Before the silences: a NodeMaintenance of worker-3 to hold Rackside's silence.
  const rackside = await installRackside(rack);
  const nmPath = '/apis/rackside.dev/v1alpha1/nodemaintenances';
  await rackside.apply({
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'NodeMaintenance',
    metadata: { name: 'reboot-worker-3' },
    spec: {
      nodeName: 'worker-3',
      intent: 'cordon',
      reason: 'reboot of worker-3',
      requestedBy: 'rackside-admin',
    },
  });
  const nm: Obj = await rackside.admin.request({
    method: 'GET',
    path: `${nmPath}/reboot-worker-3`,
  });
  const now = new Date().toISOString();
  await am('/silences', {
    method: 'POST',
    body: {
      matchers: [
        { name: 'node', value: 'worker-2', isRegex: false, isEqual: true },
      ],
      startsAt: now,
      endsAt: hour(),
      createdBy: 'alice',
      comment: 'the fan is known to be loud',
    },
  });
  // As the operator holds it: created, then its id recorded in the maintenance's status
  // (which only the operator writes; here the test's admin, as the operator would).
  const { silenceID } = await am('/silences', {
    method: 'POST',
    body: {
      matchers: [
        { name: 'node', value: 'worker-3', isRegex: false, isEqual: true },
      ],
      startsAt: now,
      endsAt: hour(),
      createdBy: racksideSilenceCreatedBy('rackside-admin'),
      comment: `reboot of worker-3 ${racksideSilenceMarker({
        name: nm.metadata.name,
        uid: nm.metadata.uid,
      })}`,
    },
  });
  await rackside.admin.request({
    method: 'PUT',
    path: `${nmPath}/reboot-worker-3/status`,
    body: { ...nm, status: { alerting: { silenceIds: [silenceID] } } },
  });
  // A person's silence forged to look like Rackside's (createdBy and marker copied): no
  // maintenance recorded its id, so it is a person's.
  await am('/silences', {
    method: 'POST',
    body: {
      matchers: [
        {
          name: 'alertname',
          value: 'SensorGlitch',
          isRegex: false,
          isEqual: true,
        },
      ],
      startsAt: now,
      endsAt: hour(),
      createdBy: racksideSilenceCreatedBy('alice'),
      comment: `reboot of worker-5 ${racksideSilenceMarker({
        name: 'reboot-worker-5',
        uid: '00000000-0000-0000-0000-000000000005',
      })}`,
    },
  });
  // Alertmanager has taken them in, with its inhibition applied (a critical alert of
  // worker-1 inhibits its warnings), before the backend reads.
  await eventually(
    'Alertmanager shows the alerts silenced and inhibited',
    async () => {
      const alerts: Obj[] = await am('/alerts');
      const byName = Object.fromEntries(
        alerts.map(a => [a.labels.alertname, a]),
      );
      return byName.FanNoise?.status.silencedBy.length &&
        byName.RebootPending?.status.silencedBy.length &&
        byName.SensorGlitch?.status.silencedBy.length &&
        byName.NodeDown?.status.state === 'active' &&
        byName.BackupLate
        ? true
        : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );

  server = (
    await startServersBackendOnRack({
      rack,
      token: rackside.backstageToken,
      cluster: { alertmanager: { url: alertmanagerUrl } },
    })
  ).server;
  unreachable = (
    await startServersBackendOnRack({
      rack,
      token: rackside.backstageToken,
      cluster: {
        alertmanager: { url: `http://127.0.0.1:${await closedPort()}` },
      },
    })
  ).server;
}, 240_000);

afterAll(async () => {
  await rack?.stop();
}, 60_000);

describe('alerts from the rack’s Alertmanager', () => {
  it('counts each row’s firing and silenced alerts', async () => {
    const res = await request(server).get(
      '/api/servers/clusters/plant-a/servers',
    );
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(
      res.body.items.map((s: Obj) => [s.name, s]),
    );
    expect(byName['worker-1'].alerts).toEqual({
      firing: 1,
      silenced: 0,
      highestSeverity: 'critical',
    });
    expect(byName['worker-2'].alerts).toEqual({ firing: 0, silenced: 1 });
    expect(byName['worker-3'].alerts).toEqual({ firing: 0, silenced: 1 });
    expect(byName['worker-4'].alerts).toEqual({ firing: 0, silenced: 0 });
    // The detail route carries the same.
    const one = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1',
    );
    expect(one.body.alerts).toEqual(byName['worker-1'].alerts);
  });

  it('lists a node’s alerts: firing, inhibited, and whose silence holds one', async () => {
    const w1 = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1/alerts',
    );
    expect(w1.status).toBe(200);
    expect(w1.body).toMatchObject({
      cluster: 'plant-a',
      node: 'worker-1',
      configured: true,
    });
    expect(w1.body.stale).toBeUndefined();
    expect(
      w1.body.items.map((a: Obj) => [a.alertname, a.state, a.summary]),
    ).toEqual([
      ['NodeDown', 'firing', 'worker-1 does not answer'],
      ['DiskSlow', 'inhibited', undefined],
    ]);
    const w2 = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-2/alerts',
    );
    expect(w2.body.items).toEqual([
      expect.objectContaining({
        alertname: 'FanNoise',
        state: 'silenced',
        silencedByRackside: false,
      }),
    ]);
    const w3 = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-3/alerts',
    );
    expect(w3.body.items).toEqual([
      expect.objectContaining({
        alertname: 'RebootPending',
        state: 'silenced',
        silencedByRackside: true,
      }),
    ]);
    // The forged one: Rackside's marker and createdBy, recorded by no maintenance.
    const w5 = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-5/alerts',
    );
    expect(w5.body.items).toEqual([
      expect.objectContaining({
        alertname: 'SensorGlitch',
        state: 'silenced',
        silencedByRackside: false,
      }),
    ]);
    const absent = await request(server).get(
      '/api/servers/clusters/plant-a/servers/no-such-node/alerts',
    );
    expect(absent.status).toBe(404);
  });

  it('shows in the plan pre-flight the alerts that would hold an alert gate', async () => {
    const gate = (alertGate: unknown) =>
      request(server)
        .get('/api/servers/clusters/plant-a/plans/preflight')
        .query({
          intent: 'drain',
          nodes: 'worker-4,worker-5',
          alertGate: JSON.stringify(alertGate),
        });
    const critical = await gate({ severities: ['critical'] });
    expect(critical.status).toBe(200);
    expect(critical.body.alerts).toMatchObject({
      configured: true,
      known: true,
    });
    expect(
      critical.body.alerts.holding
        .map((a: Obj) => [a.alertname, a.nodes])
        .sort(),
    ).toEqual([
      ['BackupLate', []],
      ['NodeDown', ['worker-1']],
    ]);
    // A person's silence hides an alert from the gate; Rackside's own does only while
    // ignoreSilencedByRackside is on (the default).
    const silenced = await gate({ alertnames: 'FanNoise|RebootPending' });
    expect(silenced.body.alerts.holding).toEqual([]);
    const through = await gate({
      alertnames: 'FanNoise|RebootPending',
      ignoreSilencedByRackside: false,
    });
    expect(through.body.alerts.holding.map((a: Obj) => a.alertname)).toEqual([
      'RebootPending',
    ]);
    // A forged "Rackside" silence is a person's: looking through Rackside's silences does
    // not see through it.
    const forgedThrough = await gate({
      alertnames: 'SensorGlitch',
      ignoreSilencedByRackside: false,
    });
    expect(forgedThrough.body.alerts.holding).toEqual([]);
    // As a person's, it holds a gate that includes what people silenced, as the plan
    // dialog asks with its checkbox (the query takes every field the dialog sends).
    const forgedIncluded = await gate({
      alertnames: 'SensorGlitch|FanNoise',
      includeSilenced: true,
      whenUnknown: 'Hold',
    });
    expect(forgedIncluded.status).toBe(200);
    expect(
      forgedIncluded.body.alerts.holding.map((a: Obj) => a.alertname).sort(),
    ).toEqual(['FanNoise', 'SensorGlitch']);
    const bad = await gate({ alertnames: 'Node(' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/alertGate.alertnames/);
    const none = await request(server)
      .get('/api/servers/clusters/plant-a/plans/preflight')
      .query({ intent: 'drain', nodes: 'worker-4' });
    expect(none.body.alerts).toBeUndefined();
  });

  it('answers stale, never an error, when Alertmanager cannot be reached', async () => {
    const res = await request(unreachable).get(
      '/api/servers/clusters/plant-a/servers',
    );
    expect(res.status).toBe(200);
    const w1 = res.body.items.find((s: Obj) => s.name === 'worker-1');
    expect(w1.alerts).toEqual({ firing: 0, silenced: 0, stale: true });
    const alerts = await request(unreachable).get(
      '/api/servers/clusters/plant-a/servers/worker-1/alerts',
    );
    expect(alerts.status).toBe(200);
    expect(alerts.body.stale.error).toMatch(/ECONNREFUSED|connect/i);
    const preflight = await request(unreachable)
      .get('/api/servers/clusters/plant-a/plans/preflight')
      .query({
        intent: 'drain',
        nodes: 'worker-4',
        alertGate: JSON.stringify({ severities: ['critical'] }),
      });
    expect(preflight.status).toBe(200);
    expect(preflight.body.alerts).toMatchObject({
      configured: true,
      known: false,
      holding: [],
    });
  });
});
