import {
  DEFAULT_NODE_ALERT_MATCHERS,
  racksideSilenceCreatedBy,
  racksideSilenceMarker,
  type SilenceRecorder,
} from '@rackside/plugin-servers-common';
import {
  AlertmanagerUnreachableError,
  type AlertmanagerAlert,
  type AlertmanagerApi,
  type AlertmanagerSilence,
} from '@rackside/plugin-servers-node';
import { fakeNode } from '../testing/fakeCluster';
import {
  alertSummaryOf,
  mapAlertsToNodes,
  NodeAlertsReader,
} from './nodeAlerts';

function alert(
  fingerprint: string,
  labels: Record<string, string>,
  status: Partial<AlertmanagerAlert['status']> = {},
): AlertmanagerAlert {
  return {
    fingerprint,
    labels,
    annotations: { summary: `${labels.alertname} on ${labels.node}` },
    startsAt: '2026-01-01T00:00:00.000Z',
    endsAt: '2999-01-01T00:00:00.000Z',
    status: {
      state: 'active',
      silencedBy: [],
      inhibitedBy: [],
      ...status,
    },
  };
}

/** An Alertmanager that answers what the test set, counting requests, and can hang or fail. */
class FakeAlertmanager implements AlertmanagerApi {
  alertList: AlertmanagerAlert[] = [];
  silenceList: AlertmanagerSilence[] = [];
  alertReads = 0;
  silenceReads = 0;
  down = false;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  /** Holds every alerts read until `release()`. */
  hold() {
    this.gate = new Promise(resolve => {
      this.open = resolve;
    });
  }
  release() {
    this.open?.();
    this.gate = undefined;
  }

  async alerts(): Promise<AlertmanagerAlert[]> {
    this.alertReads++;
    if (this.gate) await this.gate;
    if (this.down) {
      throw new AlertmanagerUnreachableError(
        'Alertmanager GET /alerts: connect ECONNREFUSED 127.0.0.1:9093',
      );
    }
    return structuredClone(this.alertList);
  }
  async silences(): Promise<AlertmanagerSilence[]> {
    this.silenceReads++;
    if (this.down) throw new AlertmanagerUnreachableError('down');
    return structuredClone(this.silenceList);
  }
  async putSilence(): Promise<string> {
    throw new Error('the backend never writes silences');
  }
  async expireSilence(): Promise<void> {
    throw new Error('the backend never writes silences');
  }
}

function setup() {
  const api = new FakeAlertmanager();
  let now = 1_000_000;
  let changes = 0;
  const errors: unknown[] = [];
  const nodes = [fakeNode('worker-1'), fakeNode('worker-2')];
  // The NodeMaintenances' status.alerting: which silences Rackside recorded holding.
  const maintenances: SilenceRecorder[] = [
    { status: { alerting: { silenceIds: ['rackside-1'] } } },
  ];
  const reader = new NodeAlertsReader({
    api,
    matchers: DEFAULT_NODE_ALERT_MATCHERS,
    nodes: async () => nodes,
    maintenances: async () => maintenances,
    onChange: () => changes++,
    onError: error => errors.push(error),
    now: () => now,
  });
  return {
    api,
    reader,
    nodes,
    maintenances,
    errors,
    changes: () => changes,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** Lets a refresh that was started without being awaited finish. */
async function settle() {
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await new Promise(resolve => setImmediate(resolve));
}

describe('NodeAlertsReader', () => {
  it('reads Alertmanager at most once per 30 s, however often pages read', async () => {
    const t = setup();
    t.api.alertList = [alert('a', { alertname: 'Down', node: 'worker-1' })];
    await t.reader.read();
    expect(t.api.alertReads).toBe(1);
    t.advance(29_999);
    for (let i = 0; i < 5; i++) await t.reader.read();
    expect(t.api.alertReads).toBe(1);
    t.advance(1);
    await t.reader.read();
    await settle();
    expect(t.api.alertReads).toBe(2);
  });

  it('shares one request among many concurrent first reads', async () => {
    const t = setup();
    t.api.alertList = [alert('a', { alertname: 'Down', node: 'worker-1' })];
    t.api.hold();
    const reads = Array.from({ length: 20 }, () => t.reader.read());
    await settle();
    expect(t.api.alertReads).toBe(1);
    t.api.release();
    const answers = await Promise.all(reads);
    expect(t.api.alertReads).toBe(1);
    for (const answer of answers) {
      expect(answer.byNode.get('worker-1')?.map(a => a.alertname)).toEqual([
        'Down',
      ]);
    }
  });

  it('answers what it knows while a later refresh is on its way, and refreshes once', async () => {
    const t = setup();
    t.api.alertList = [alert('a', { alertname: 'Down', node: 'worker-1' })];
    await t.reader.read();
    t.advance(30_000);
    t.api.alertList = [];
    t.api.hold();
    const during = await Promise.all([t.reader.read(), t.reader.read()]);
    expect(during[0].byNode.get('worker-1')).toHaveLength(1);
    expect(t.api.alertReads).toBe(2);
    t.api.release();
    await settle();
    expect((await t.reader.read()).byNode.get('worker-1')).toBeUndefined();
    expect(t.api.alertReads).toBe(2);
  });

  it('signals a change only when the mapping changes', async () => {
    const t = setup();
    t.api.alertList = [alert('a', { alertname: 'Down', node: 'worker-1' })];
    await t.reader.read();
    expect(t.changes()).toBe(1);
    // The same alerts read again: no signal.
    t.advance(30_000);
    await t.reader.read();
    await settle();
    expect(t.api.alertReads).toBe(2);
    expect(t.changes()).toBe(1);
    // An alert of no node changes no mapping: no signal.
    t.api.alertList.push(alert('b', { alertname: 'Disk', node: 'elsewhere' }));
    t.advance(30_000);
    await t.reader.read();
    await settle();
    expect(t.changes()).toBe(1);
    // A second alert for worker-2: a signal.
    t.api.alertList.push(
      alert('c', { alertname: 'Hot', instance: 'worker-2:9100' }),
    );
    t.advance(30_000);
    await t.reader.read();
    await settle();
    expect(t.changes()).toBe(2);
    expect(
      (await t.reader.read()).byNode.get('worker-2')?.map(a => a.alertname),
    ).toEqual(['Hot']);
  });

  it('keeps the last mapping, marked stale with the error, when Alertmanager is unreachable', async () => {
    const t = setup();
    t.api.alertList = [alert('a', { alertname: 'Down', node: 'worker-1' })];
    const first = await t.reader.read();
    expect(first.stale).toBeUndefined();
    t.api.down = true;
    t.advance(30_000);
    await t.reader.read();
    await settle();
    const stale = await t.reader.read();
    expect(stale.byNode.get('worker-1')?.map(a => a.alertname)).toEqual([
      'Down',
    ]);
    expect(stale.stale?.error).toMatch(/ECONNREFUSED/);
    expect(stale.readAt).toBe(first.readAt);
    expect(t.errors).toHaveLength(1);
    // Going stale is shown (the rows say so): one signal.
    expect(t.changes()).toBe(2);
    // A down Alertmanager is not asked more often than a healthy one.
    await t.reader.read();
    await settle();
    expect(t.api.alertReads).toBe(2);
    // Back: fresh again, and another signal.
    t.api.down = false;
    t.advance(30_000);
    await t.reader.read();
    await settle();
    expect((await t.reader.read()).stale).toBeUndefined();
    expect(t.changes()).toBe(3);
  });

  it('answers an empty stale mapping, never an error, when the first read fails', async () => {
    const t = setup();
    t.api.down = true;
    const answer = await t.reader.read();
    expect(answer.byNode.size).toBe(0);
    expect(answer.stale?.error).toMatch(/ECONNREFUSED/);
    expect(answer.readAt).toBeUndefined();
  });

  it("shows an alert a person silenced as silenced, not Rackside's, with one silences read", async () => {
    const t = setup();
    t.api.alertList = [
      alert(
        'a',
        { alertname: 'Down', node: 'worker-1', severity: 'critical' },
        { state: 'suppressed', silencedBy: ['person-1'] },
      ),
      alert(
        'b',
        { alertname: 'Reboot', node: 'worker-2', severity: 'warning' },
        { state: 'suppressed', silencedBy: ['rackside-1'] },
      ),
    ];
    t.api.silenceList = [
      {
        id: 'person-1',
        matchers: [],
        startsAt: '',
        endsAt: '',
        createdBy: 'alice',
        comment: 'known flapping disk',
        status: { state: 'active' },
      },
      {
        id: 'rackside-1',
        matchers: [],
        startsAt: '',
        endsAt: '',
        createdBy: racksideSilenceCreatedBy('user:default/bob'),
        comment: `reboot ${racksideSilenceMarker({
          name: 'reboot-worker-2',
          uid: 'u1',
        })}`,
        status: { state: 'active' },
      },
    ];
    const answer = await t.reader.read();
    expect(t.api.silenceReads).toBe(1);
    expect(answer.byNode.get('worker-1')).toEqual([
      expect.objectContaining({
        alertname: 'Down',
        state: 'silenced',
        silencedByRackside: false,
        silencedBy: ['person-1'],
      }),
    ]);
    expect(answer.byNode.get('worker-2')).toEqual([
      expect.objectContaining({ state: 'silenced', silencedByRackside: true }),
    ]);
    expect(alertSummaryOf(answer.byNode.get('worker-1'), false)).toEqual({
      firing: 0,
      silenced: 1,
    });
  });

  it("shows an alert under a forged silence (Rackside's marker and 'Rackside for alice', recorded by no maintenance) as a person's", async () => {
    const t = setup();
    t.api.alertList = [
      alert(
        'a',
        { alertname: 'Down', node: 'worker-1', severity: 'critical' },
        { state: 'suppressed', silencedBy: ['forged-1'] },
      ),
    ];
    t.api.silenceList = [
      {
        id: 'forged-1',
        matchers: [],
        startsAt: '',
        endsAt: '',
        createdBy: racksideSilenceCreatedBy('alice'),
        comment: `reboot ${racksideSilenceMarker({
          name: 'reboot-worker-1',
          uid: 'u1',
        })}`,
        status: { state: 'active' },
      },
    ];
    const answer = await t.reader.read();
    expect(answer.racksideSilenceIds?.has('forged-1')).toBe(false);
    expect(answer.byNode.get('worker-1')).toEqual([
      expect.objectContaining({
        state: 'silenced',
        silencedByRackside: false,
        silencedBy: ['forged-1'],
      }),
    ]);
  });

  it('reads no silences when no alert is silenced', async () => {
    const t = setup();
    t.api.alertList = [alert('a', { alertname: 'Down', node: 'worker-1' })];
    await t.reader.read();
    expect(t.api.silenceReads).toBe(0);
  });
});

describe('mapAlertsToNodes and alertSummaryOf', () => {
  it('maps by node or instance (with a port), never a name that merely starts alike', () => {
    const nodes = [fakeNode('worker-1'), fakeNode('worker-10')];
    const byNode = mapAlertsToNodes(
      [
        alert('a', { alertname: 'A', node: 'worker-1' }),
        alert('b', { alertname: 'B', instance: 'worker-10:9100' }),
        alert('c', { alertname: 'C', instance: 'worker-1x' }),
      ],
      nodes,
      DEFAULT_NODE_ALERT_MATCHERS,
      undefined,
    );
    expect(byNode.get('worker-1')?.map(a => a.alertname)).toEqual(['A']);
    expect(byNode.get('worker-10')?.map(a => a.alertname)).toEqual(['B']);
  });

  it('leaves out alerts that have ended, and counts firing by highest severity', () => {
    const nodes = [fakeNode('worker-1')];
    const ended = alert('z', { alertname: 'Old', node: 'worker-1' });
    ended.endsAt = '2000-01-01T00:00:00.000Z';
    const list = mapAlertsToNodes(
      [
        alert('a', { alertname: 'A', node: 'worker-1', severity: 'warning' }),
        alert('b', { alertname: 'B', node: 'worker-1', severity: 'critical' }),
        alert(
          'c',
          { alertname: 'C', node: 'worker-1', severity: 'critical' },
          { state: 'suppressed', inhibitedBy: ['x'] },
        ),
        ended,
      ],
      nodes,
      DEFAULT_NODE_ALERT_MATCHERS,
      undefined,
    ).get('worker-1');
    expect(list?.map(a => [a.alertname, a.state])).toEqual([
      ['B', 'firing'],
      ['A', 'firing'],
      ['C', 'inhibited'],
    ]);
    expect(alertSummaryOf(list, true)).toEqual({
      firing: 2,
      silenced: 0,
      highestSeverity: 'critical',
      stale: true,
    });
  });
});
