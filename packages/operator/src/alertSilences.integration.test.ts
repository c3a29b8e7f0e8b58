/*
 * The silence a maintenance holds on its node's alerts (maintenance/silenceLease.ts,
 * docs/alerts.md), against the rack's real Alertmanager: the test posts alerts as Prometheus
 * would and reads silences and alert states from Alertmanager's API v2. Short flags (lease
 * 20 s, renew 5 s, grace 5 s) so a renewal across a lease and the return grace happen within
 * a test; every wait is on Alertmanager's or the apiserver's state, never a sleep.
 */
import {
  isSilenceOfMaintenance,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import {
  AlertmanagerClient,
  type AlertmanagerSilence,
} from '@rackside/plugin-servers-node';
import { AppsV1Api, PolicyV1Api } from '@kubernetes/client-node';
import net from 'node:net';
import type { Operator } from './operator';
import type { SilenceSettings } from './maintenance/silenceLease';
import {
  ADMIN_USER,
  flag,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';
import { startAlertmanagerProxy } from './testing/alertmanagerProxy';
import { pinnedDeployment, runningOn } from './testing/workloads';

jest.setTimeout(180_000);

const SETTINGS: SilenceSettings = {
  matchers: ['node="{{node}}"', 'instance=~"{{node}}(:[0-9]+)?"'],
  silenceLeaseMs: 20_000,
  silenceRenewMs: 5_000,
  silenceMaxMs: 600_000,
  returnGraceMs: 5_000,
};

let env: OperatorRack;
let url: string;
let am: AlertmanagerClient;
let operator: Operator | undefined;

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: false,
    withRedfish: false,
    withWorkloads: false,
  });
  url = env.rack.info.alertmanager!.url;
  am = new AlertmanagerClient({ url });
}, 240_000);

afterEach(async () => {
  await operator?.stop();
  operator = undefined;
}, 60_000);

afterAll(async () => {
  await am?.close();
  await env?.stop();
}, 60_000);

function startWith(
  settings: Partial<SilenceSettings> = {},
  extra: Parameters<OperatorRack['startReady']>[0] = {},
  alertmanagerUrl = url,
) {
  return env.startReady({
    alerting: {
      alertmanager: new AlertmanagerClient({ url: alertmanagerUrl }),
      settings: { ...SETTINGS, ...settings },
    },
    ...extra,
  });
}

/** Posts (or, with `endsAt` now, resolves) an alert as Prometheus does. */
async function postAlert(labels: Record<string, string>, resolve = false) {
  const now = Date.now();
  const response = await fetch(`${url}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([
      {
        labels,
        annotations: { summary: 'integration test' },
        startsAt: new Date(now - 60_000).toISOString(),
        endsAt: new Date(resolve ? now : now + 3_600_000).toISOString(),
      },
    ]),
  });
  expect(response.status).toBe(200);
}

async function silencesOf(nm: NodeMaintenance): Promise<AlertmanagerSilence[]> {
  const identity = { name: nm.metadata.name, uid: nm.metadata.uid! };
  return (await am.silences()).filter(s => isSilenceOfMaintenance(s, identity));
}

const live = (silences: AlertmanagerSilence[]) =>
  silences.filter(s => s.status.state !== 'expired');

async function alertOf(alertname: string) {
  return (await am.alerts([`alertname="${alertname}"`]))[0];
}

function condition(nm: NodeMaintenance) {
  return nm.status?.conditions?.find(c => c.type === 'AlertsSilenced');
}

/** Waits until status.alerting has `count` silences and the condition is True. */
function silenced(name: string, count = 2) {
  return env.waitFor(`${name} silenced`, async () => {
    const nm = await env.nms.get(name);
    return (
      nm.status?.alerting?.silenceIds.length === count &&
      condition(nm)?.status === 'True' &&
      nm
    );
  });
}

describe('the silence of a maintenance', () => {
  it('is created at Cordoned with one silence per matcher template and the comment, silences the node, is renewed past its lease, comes back after a person deletes it, and ends after the return grace', async () => {
    operator = await startWith();
    const node = 'worker-1';
    await postAlert({
      alertname: 'SilenceTestNodeDown',
      node,
      instance: `${node}:9100`,
      severity: 'critical',
    });
    // Another node's alert with a name holding this one's: never silenced.
    await postAlert({
      alertname: 'SilenceTestOther',
      instance: `${node}0:9100`,
      severity: 'warning',
    });
    await env.create('am-cordon', node, 'cordon');
    await env.phaseIs('am-cordon', 'Cordoned');
    const nm = await silenced('am-cordon');
    expect(condition(nm)).toMatchObject({ reason: 'Silenced' });

    const silences = live(await silencesOf(nm));
    expect(silences).toHaveLength(2);
    expect(
      silences
        .map(s => s.matchers)
        .sort((a, b) => a[0].name.localeCompare(b[0].name)),
    ).toEqual([
      [
        {
          name: 'instance',
          value: `${node}(:[0-9]+)?`,
          isRegex: true,
          isEqual: true,
        },
      ],
      [{ name: 'node', value: node, isRegex: false, isEqual: true }],
    ]);
    for (const s of silences) {
      expect(s.createdBy).toBe(`Rackside for ${ADMIN_USER}`);
      expect(s.comment).toContain('am-cordon');
      expect(s.comment).toContain('cordon of worker-1');
      expect(s.comment).toContain('integration test');
      expect(s.comment).toContain(
        `[rackside.dev/maintenance am-cordon ${nm.metadata.uid}]`,
      );
      expect(nm.status!.alerting!.silenceIds).toContain(s.id);
    }
    expect(await env.eventReasons('am-cordon', ['SilenceCreated'])).toContain(
      'SilenceCreated',
    );

    // Alertmanager silences the node's alert with Rackside's ids, not the other node's.
    const ids = new Set(nm.status!.alerting!.silenceIds);
    await env.waitFor('the node alert silenced by Rackside', async () => {
      const alert = await alertOf('SilenceTestNodeDown');
      return (
        alert?.status.state === 'suppressed' &&
        alert.status.silencedBy.some(id => ids.has(id))
      );
    });
    expect((await alertOf('SilenceTestOther')).status.state).toBe('active');

    // Renewal: still silenced after the first lease would have ended.
    const firstEnd = Date.parse(nm.status!.alerting!.until!);
    await env.waitFor(
      'a renewal past the first lease',
      async () => {
        if (Date.now() <= firstEnd + 1000) return false;
        const now = live(await silencesOf(nm));
        return (
          now.length === 2 &&
          now.every(s => Date.parse(s.endsAt) > firstEnd) &&
          (await alertOf('SilenceTestNodeDown')).status.state === 'suppressed'
        );
      },
      60_000,
    );

    // Renewed in place: the same two silences, not replacements.
    expect(
      live(await silencesOf(nm))
        .map(s => s.id)
        .sort(),
    ).toEqual([...ids].sort());

    // A person expires one of the silences: the next renewal creates it again.
    const removed = live(await silencesOf(nm)).find(
      s => s.matchers[0].name === 'node',
    )!;
    await am.expireSilence(removed.id);
    await env.waitFor('the deleted silence recreated', async () => {
      const now = live(await silencesOf(nm));
      return (
        now.length === 2 &&
        now.some(s => s.matchers[0].name === 'node' && s.id !== removed.id)
      );
    });

    // Back in service: held through the return grace, then expired.
    await env.nms.patch('am-cordon', {
      spec: { returnToService: flag },
    } as any);
    const complete = await env.phaseIs('am-cordon', 'Complete');
    const completedAt = Date.parse(complete.status!.completedAt!);
    const ended = await env.waitFor('the silence expired', async () => {
      const got = await env.nms.get('am-cordon');
      return got.status?.alerting?.expiredAt ? got : undefined;
    });
    expect(
      Date.parse(ended.status!.alerting!.expiredAt!),
    ).toBeGreaterThanOrEqual(completedAt + SETTINGS.returnGraceMs);
    expect(condition(ended)).toMatchObject({
      status: 'False',
      reason: 'Expired',
    });
    expect(live(await silencesOf(nm))).toHaveLength(0);
    await env.waitFor('the node alert active again', async () => {
      const alert = await alertOf('SilenceTestNodeDown');
      return (
        alert?.status.state === 'active' && alert.status.silencedBy.length === 0
      );
    });
    expect(await env.eventReasons('am-cordon', ['SilenceExpired'])).toContain(
      'SilenceExpired',
    );
    await postAlert(
      {
        alertname: 'SilenceTestNodeDown',
        node,
        instance: `${node}:9100`,
        severity: 'critical',
      },
      true,
    );
  });

  it('a restart between the silence and its status write, and a new leader, adopt the silence by its marker: never a second one', async () => {
    const node = 'worker-2';
    let hang = true;
    // The first operator creates the silences, then "crashes" before writing them down.
    // A lease longer than the first operator's stop (it waits up to 20 s for the hung
    // reconcile): the silences must still be there for the second to adopt.
    const lease = { silenceLeaseMs: 120_000 };
    operator = await startWith(lease, {
      identity: 'first',
      beforeStatusWrite: (name, _phase, status) =>
        hang && name === 'am-restart' && status.alerting
          ? new Promise<void>(() => {})
          : Promise.resolve(),
    });
    await env.create('am-restart', node, 'cordon');
    await env.phaseIs('am-restart', 'Cordoned');
    const first = await env.nms.get('am-restart');
    await env.waitFor(
      'the first operator created the silences',
      async () => live(await silencesOf(first)).length === 2,
    );
    expect(first.status?.alerting).toBeUndefined();
    const created = live(await silencesOf(first))
      .map(s => s.id)
      .sort();
    hang = false;
    await operator.stop();

    // Another replica leads: it finds them by the marker and writes them down.
    operator = await startWith(lease, { identity: 'second' });
    const nm = await silenced('am-restart');
    expect([...nm.status!.alerting!.silenceIds].sort()).toEqual(created);
    // Across its renewals still the same two.
    const renewedAt = nm.status!.alerting!.renewedAt!;
    await env.waitFor('a renewal by the second leader', async () => {
      const got = await env.nms.get('am-restart');
      return got.status?.alerting?.renewedAt !== renewedAt;
    });
    expect(
      live(await silencesOf(nm))
        .map(s => s.id)
        .sort(),
    ).toEqual(created);
    expect(await silencesOf(nm)).toHaveLength(2);
  });

  it('abandon expires the silence at once (no return grace) and a deleted maintenance takes its silence with it', async () => {
    operator = await startWith({ returnGraceMs: 600_000 });
    await env.create('am-abandon', 'worker-3', 'cordon');
    const held = await silenced('am-abandon');
    await env.nms.patch('am-abandon', { spec: { abandon: flag } } as any);
    await env.phaseIs('am-abandon', 'Complete');
    const ended = await env.waitFor('abandon expired the silence', async () => {
      const got = await env.nms.get('am-abandon');
      return got.status?.alerting?.expiredAt ? got : undefined;
    });
    expect(condition(ended)?.message).toMatch(/abandoned/);
    expect(live(await silencesOf(held))).toHaveLength(0);

    await env.create('am-delete', 'worker-4', 'cordon');
    const open = await silenced('am-delete');
    await env.nms.delete('am-delete');
    await env.waitFor(
      "the deleted maintenance's silences expired",
      async () => live(await silencesOf(open)).length === 0,
    );
  });

  it('a Failed maintenance expires its silence at once (no return grace)', async () => {
    const NS = 'silence-test';
    await env.core.createNamespace({ body: { metadata: { name: NS } } });
    await env.admin.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: NS,
      body: pinnedDeployment(NS, 'stuck', 'worker-6'),
    });
    // A budget that allows no eviction: the drain times out and the maintenance fails.
    await env.admin
      .makeApiClient(PolicyV1Api)
      .createNamespacedPodDisruptionBudget({
        namespace: NS,
        body: {
          metadata: { name: 'stuck', namespace: NS },
          spec: {
            minAvailable: 1,
            selector: { matchLabels: { app: 'stuck' } },
          },
        },
      });
    await runningOn(env, 'stuck', 'worker-6', 1, NS);
    operator = await startWith(
      { returnGraceMs: 600_000 },
      { drain: { initialBackoffMs: 200, maxBackoffMs: 1000 } },
    );
    await env.create('am-failed', 'worker-6', 'drain', {
      drain: { timeoutSeconds: 6 },
    });
    const held = await silenced('am-failed');
    await env.phaseIs('am-failed', 'Failed');
    const ended = await env.waitFor('Failed expired the silence', async () => {
      const got = await env.nms.get('am-failed');
      return got.status?.alerting?.expiredAt ? got : undefined;
    });
    expect(condition(ended)?.message).toMatch(/ended Failed/);
    expect(live(await silencesOf(held))).toHaveLength(0);
    expect(await env.eventReasons('am-failed', ['SilenceExpired'])).toContain(
      'SilenceExpired',
    );
  });

  it('with Alertmanager unreachable the maintenance goes on and completes; the condition says why and the metric counts', async () => {
    const closed = await closedPort();
    operator = await startWith({}, {}, `http://127.0.0.1:${closed}`);
    await env.create('am-down', 'worker-5', 'cordon');
    await env.phaseIs('am-down', 'Cordoned');
    const down = await env.waitFor('the condition False', async () => {
      const got = await env.nms.get('am-down');
      return condition(got)?.reason === 'AlertmanagerUnreachable' && got;
    });
    expect(condition(down)).toMatchObject({ status: 'False' });
    expect(
      await env.eventReasons('am-down', ['AlertmanagerUnreachable']),
    ).toContain('AlertmanagerUnreachable');
    await env.nms.patch('am-down', { spec: { returnToService: flag } } as any);
    await env.phaseIs('am-down', 'Complete');
    const metrics = (await operator.metrics.render()).body;
    const counted =
      /rackside_alertmanager_errors_total\{operation="list"\} (\d+)/.exec(
        metrics,
      );
    expect(Number(counted?.[1])).toBeGreaterThan(0);
  });

  it('with an Alertmanager that sends its headers and then stalls mid-body, the maintenance still completes; the condition says why and the metric counts', async () => {
    const proxy = await startAlertmanagerProxy(url);
    try {
      proxy.mode = 'stall';
      operator = await startWith({}, {}, proxy.url);
      await env.create('am-stall', 'worker-3', 'cordon');
      const stalled = await env.waitFor(
        'the condition False, the stall named',
        async () => {
          const got = await env.nms.get('am-stall');
          return condition(got)?.reason === 'AlertmanagerUnreachable' && got;
        },
      );
      expect(proxy.stalled).toBeGreaterThan(0);
      expect(condition(stalled)).toMatchObject({
        status: 'False',
        message: expect.stringMatching(
          /^Alertmanager could not be reached \(list\): Alertmanager GET \/silences: the answer did not arrive in time.*the maintenance goes on/,
        ),
      });
      expect(stalled.status?.alerting?.failedAt).toBeDefined();
      await env.nms.patch('am-stall', {
        spec: { returnToService: flag },
      } as any);
      await env.phaseIs('am-stall', 'Complete');
      const metrics = (await operator.metrics.render()).body;
      const counted =
        /rackside_alertmanager_errors_total\{operation="list"\} (\d+)/.exec(
          metrics,
        );
      expect(Number(counted?.[1])).toBeGreaterThan(0);
    } finally {
      await operator?.stop();
      operator = undefined;
      await proxy.stop();
    }
  });
});

/** A loopback port nothing listens on (bound, then closed). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
