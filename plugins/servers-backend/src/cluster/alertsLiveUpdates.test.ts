/*
 * Alerts as a shown change (issue 39): the watch-backed cluster state with an Alertmanager
 * (a fake of its API), the servers list and the change signal as the plugin wires them. A
 * new alert of a node reaches its row through one read per 30 s, and only a change of the
 * mapping moves the rows, the entity tag and sends a signal.
 */
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import type {
  AlertmanagerAlert,
  AlertmanagerApi,
  ClusterConfig,
} from '@rackside/plugin-servers-node';
import { FakeKube } from '@rackside/plugin-servers-node/testing';
import { staticClusterRegistry } from './clusterRegistry';
import { KubeClusterState } from './KubeClusterState';
import { PreflightTokens } from '../preflight/tokens';
import { announceChanges } from './changeSignals';
import { createServersService } from '../servers/createServersService';

const NODES = '/api/v1/nodes';
const MAINTENANCES = '/apis/rackside.dev/v1alpha1/nodemaintenances';

function node(name: string, ready = 'True', beat = '2026-12-01T10:00:00Z') {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name },
      managedFields: [{ manager: 'kubelet', time: beat }],
    },
    spec: {},
    status: {
      conditions: [
        { type: 'DiskPressure', status: 'False', lastHeartbeatTime: beat },
        { type: 'Ready', status: ready, lastHeartbeatTime: beat },
      ],
      nodeInfo: { systemUUID: `uuid-${name}` },
      allocatable: { cpu: '4' },
    },
  } as any;
}

function maintenance(phase: string) {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'NodeMaintenance',
    metadata: { name: 'm-1', creationTimestamp: '2026-12-01T09:00:00Z' },
    spec: {
      nodeName: 'worker-1',
      intent: 'drain',
      reason: 'replace the failed disk',
      requestedBy: 'user:default/someone',
    },
    status: { phase, drain: { podsTotal: 4, podsRemaining: 2 } },
  } as any;
}

const cluster: ClusterConfig = {
  name: 'plant-a',
  title: 'Plant A',
  operatorNamespace: 'rackside-system',
  access: {
    type: 'token',
    url: 'https://127.0.0.1:1',
    token: 'unused',
    skipTLSVerify: true,
  },
  alerting: {
    url: 'http://alertmanager.invalid:9093',
    matchers: ['node="{{node}}"', 'instance=~"{{node}}(:[0-9]+)?"'],
  },
};

function alert(fingerprint: string, labels: Record<string, string>) {
  return {
    fingerprint,
    labels,
    startsAt: '2026-12-01T10:00:00Z',
    endsAt: '2999-01-01T00:00:00Z',
    status: { state: 'active', silencedBy: [], inhibitedBy: [] },
  } as AlertmanagerAlert;
}

class FakeAlertmanager implements AlertmanagerApi {
  alertList: AlertmanagerAlert[] = [];
  reads = 0;
  async alerts() {
    this.reads++;
    return structuredClone(this.alertList);
  }
  async silences() {
    return [];
  }
  async putSilence(): Promise<string> {
    throw new Error('the backend writes no silence');
  }
  async expireSilence(): Promise<void> {
    throw new Error('the backend writes no silence');
  }
}

describe('alerts, as a shown change', () => {
  let kube: FakeKube;
  let alertmanager: FakeAlertmanager;
  let state: KubeClusterState;
  let published: any[];
  let stopSignals: () => void;
  let service: ReturnType<typeof createServersService>;
  const credentials = mockCredentials.user();

  const rows = async () => {
    const answer = await service.listServersJson(credentials, 'plant-a');
    return {
      etag: answer.etag,
      alerts: Object.fromEntries(
        JSON.parse(answer.body).items.map((s: any) => [s.name, s.alerts]),
      ),
    };
  };

  beforeEach(async () => {
    jest.useFakeTimers({
      doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'],
    });
    kube = new FakeKube();
    kube.put(NODES, node('cp-1'));
    kube.put(NODES, node('worker-1'));
    kube.put(NODES, node('worker-2'));
    kube.put(MAINTENANCES, maintenance('Draining'));
    alertmanager = new FakeAlertmanager();
    const logger = mockServices.logger.mock();
    state = new KubeClusterState(cluster, logger, {
      transport: kube,
      alertmanager,
    });
    const clusters = staticClusterRegistry([state]);
    published = [];
    stopSignals = announceChanges({
      sources: clusters
        .list()
        .map(c => ({ cluster: c.name, onChange: c.onChange.bind(c) })),
      signals: { publish: async (m: unknown) => void published.push(m) } as any,
      logger,
      channel: 'rackside:servers',
      debounceMs: 1000,
    });
    service = createServersService({
      clusters,
      permissions: mockServices.permissions.mock({
        authorizeConditional: async requests =>
          requests.map(() => ({ result: AuthorizeResult.ALLOW })),
      }) as any,
      auditor: mockServices.auditor.mock(),
      logger,
      reasonPolicy: { minLength: 10, maxLength: 500 },
      preflightTokens: new PreflightTokens('secret'),
      applyConditions: () => true,
    });
    await state.snapshot();
    await jest.advanceTimersByTimeAsync(5000);
    published.length = 0;
  });

  afterEach(async () => {
    stopSignals();
    jest.useRealTimers();
    await state.stop();
  });

  it('an open page that reads nothing still hears of a new alert: the backend reads every 30 s and signals the change', async () => {
    expect(alertmanager.reads).toBe(1);
    alertmanager.alertList = [
      alert('a', { alertname: 'FanFailure', node: 'worker-2' }),
    ];
    // No request reads the cluster; the backend's own 30 s read finds the alert.
    await jest.advanceTimersByTimeAsync(30_000);
    await jest.advanceTimersByTimeAsync(5000);
    expect(alertmanager.reads).toBe(2);
    expect(published).toHaveLength(1);
    // Nothing changed since: reads go on every 30 s, no signal.
    await jest.advanceTimersByTimeAsync(30_000);
    await jest.advanceTimersByTimeAsync(5000);
    expect(alertmanager.reads).toBe(3);
    expect(published).toHaveLength(1);
  });

  it("a node's new alert reaches its row within one refresh, with one signal", async () => {
    const before = await rows();
    expect(before.alerts['worker-1']).toEqual({ firing: 0, silenced: 0 });
    expect(alertmanager.reads).toBe(1);

    alertmanager.alertList = [
      alert('a', {
        alertname: 'NodeDown',
        node: 'worker-1',
        severity: 'critical',
      }),
    ];
    // Within 30 s: no read, the same rows, no signal.
    await jest.advanceTimersByTimeAsync(20_000);
    expect((await rows()).etag).toBe(before.etag);
    expect(alertmanager.reads).toBe(1);
    expect(published).toEqual([]);

    // Past 30 s: the next read of the list starts one refresh; the new mapping is a change.
    await jest.advanceTimersByTimeAsync(10_000);
    await rows();
    await jest.advanceTimersByTimeAsync(5000);
    expect(alertmanager.reads).toBe(2);
    expect(published).toEqual([
      {
        recipients: { type: 'broadcast' },
        channel: 'rackside:servers',
        message: { cluster: 'plant-a' },
      },
    ]);
    const after = await rows();
    expect(after.etag).not.toBe(before.etag);
    expect(after.alerts['worker-1']).toEqual({
      firing: 1,
      silenced: 0,
      highestSeverity: 'critical',
    });
  });

  it('the same alerts again, or an alert of no node, send no signal and keep the entity tag', async () => {
    alertmanager.alertList = [
      alert('a', {
        alertname: 'NodeDown',
        node: 'worker-1',
        severity: 'critical',
      }),
    ];
    await jest.advanceTimersByTimeAsync(30_000);
    await rows();
    await jest.advanceTimersByTimeAsync(5000);
    const before = await rows();
    published.length = 0;

    alertmanager.alertList.push(
      alert('b', { alertname: 'BackupLate', job: 'backup' }),
    );
    for (let i = 0; i < 3; i++) {
      await jest.advanceTimersByTimeAsync(30_000);
      await rows();
      await jest.advanceTimersByTimeAsync(5000);
    }
    expect(alertmanager.reads).toBe(5);
    expect(published).toEqual([]);
    expect((await rows()).etag).toBe(before.etag);
  });
});
