/*
 * Changes, not heartbeats (issue 21): the watch-backed cluster state over an in-memory
 * apiserver, the servers list and the change signal as the plugin wires them. A Node
 * update that changes only what nobody sees (resourceVersion, the conditions'
 * heartbeat times, managedFields, images) must change no row, no entity tag and send
 * no signal; a readiness change must send one and change the tag.
 */
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import type { ClusterConfig } from '@rackside/plugin-servers-node';
import { FakeKube } from '@rackside/plugin-servers-node/testing';
import { staticClusterRegistry } from './clusterRegistry';
import { KubeClusterState } from './KubeClusterState';
import { PreflightTokens } from '../preflight/tokens';
import { announceChanges } from './changeSignals';
import { createServersService } from '../servers/createServersService';

const NODES = '/api/v1/nodes';
const MAINTENANCES = '/apis/rackside.dev/v1alpha1/nodemaintenances';
const SERVER_BMCS = '/apis/rackside.dev/v1alpha1/serverbmcs';

/** worker-1's ServerBMC with a reading, as the operator writes it. */
function serverBmc(rollup: string, readAt: string, failed: string[] = []) {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'ServerBMC',
    metadata: { name: 'worker-1' },
    spec: {
      address: 'https://10.0.5.21',
      credentialsSecretRef: { name: 'bmc-worker-1' },
    },
    status: {
      health: {
        rollup,
        readAt,
        parts: failed.map(name => ({
          kind: 'PowerSupply',
          name,
          health: 'Critical',
        })),
        logEntries: [],
        firmware: [{ name: 'BMC', version: '1.2.3', updateable: true }],
        missing: [],
      },
    },
  } as any;
}

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
};

describe('changes, not heartbeats', () => {
  let kube: FakeKube;
  let state: KubeClusterState;
  let published: any[];
  let stopSignals: () => void;
  let service: ReturnType<typeof createServersService>;
  const credentials = mockCredentials.user();

  beforeEach(async () => {
    jest.useFakeTimers({
      doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'],
    });
    kube = new FakeKube();
    kube.put(NODES, node('cp-1'));
    kube.put(NODES, node('worker-1'));
    kube.put(NODES, node('worker-2'));
    kube.put(MAINTENANCES, maintenance('Draining'));
    kube.put(SERVER_BMCS, serverBmc('OK', '2026-12-01T10:00:00Z'));
    const logger = mockServices.logger.mock();
    state = new KubeClusterState(cluster, logger, { transport: kube });
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
    await state.snapshot(); // every cache listed once
    // The first list is a change: let its signal go out, then start counting.
    await jest.advanceTimersByTimeAsync(5000);
    published.length = 0;
  });

  afterEach(async () => {
    stopSignals();
    jest.useRealTimers();
    await state.stop();
  });

  it('a heartbeat changes no row, no entity tag, and publishes no signal', async () => {
    const before = await service.listServersJson(credentials, 'plant-a');
    const generation = state.generation;
    // The kubelet's heartbeat: a new resourceVersion, new lastHeartbeatTime on every
    // condition, new managedFields, and a field no page shows.
    const beat = node('worker-1', 'True', '2026-12-01T10:00:40Z');
    beat.status.allocatable = { cpu: '3900m' };
    kube.put(NODES, beat);
    kube.put(NODES, node('cp-1', 'True', '2026-12-01T10:00:41Z'));
    // The operator rewriting a maintenance with the same status.
    kube.put(MAINTENANCES, maintenance('Draining'));
    await jest.advanceTimersByTimeAsync(10_000);

    expect(published).toEqual([]);
    expect(state.generation).toBe(generation);
    const after = await service.listServersJson(credentials, 'plant-a');
    expect(after.etag).toBe(before.etag);
    expect(after.body).toBe(before.body);
  });

  it('a readiness change publishes one signal and changes the entity tag', async () => {
    const before = await service.listServersJson(credentials, 'plant-a');
    kube.put(NODES, node('worker-2', 'False', '2026-12-01T10:00:40Z'));
    // A heartbeat in the same burst adds nothing.
    kube.put(NODES, node('worker-1', 'True', '2026-12-01T10:00:40Z'));
    await jest.advanceTimersByTimeAsync(10_000);

    expect(published).toEqual([
      {
        recipients: { type: 'broadcast' },
        channel: 'rackside:servers',
        message: { cluster: 'plant-a' },
      },
    ]);
    const after = await service.listServersJson(credentials, 'plant-a');
    expect(after.etag).not.toBe(before.etag);
    const items = JSON.parse(after.body).items;
    expect(items.find((s: any) => s.name === 'worker-2').ready).toBe(false);
    expect(items.find((s: any) => s.name === 'worker-1').ready).toBe(true);
  });

  it("a maintenance's phase or progress is a change; schedulability and labels too", async () => {
    let etag = (await service.listServersJson(credentials, 'plant-a')).etag;
    const expectOneSignalAndNewTag = async () => {
      await jest.advanceTimersByTimeAsync(10_000);
      expect(published).toHaveLength(1);
      published.length = 0;
      const next = (await service.listServersJson(credentials, 'plant-a')).etag;
      expect(next).not.toBe(etag);
      etag = next;
    };
    const progressed = maintenance('Draining');
    progressed.status.drain.podsRemaining = 1;
    kube.put(MAINTENANCES, progressed);
    await expectOneSignalAndNewTag();

    const cordoned = node('worker-2');
    cordoned.spec.unschedulable = true;
    kube.put(NODES, cordoned);
    await expectOneSignalAndNewTag();

    const labelled = node('worker-2');
    labelled.spec.unschedulable = true;
    labelled.metadata.labels.rack = 'r7';
    kube.put(NODES, labelled);
    await expectOneSignalAndNewTag();

    kube.delete(NODES, 'worker-2');
    await expectOneSignalAndNewTag();
  });

  it("a change of a server's health rollup publishes one signal; a new reading that changes only readAt none, yet the row shows it", async () => {
    const before = await service.listServersJson(credentials, 'plant-a');
    const row = (body: string) =>
      JSON.parse(body).items.find((s: any) => s.name === 'worker-1');
    expect(row(before.body).health).toEqual({
      rollup: 'OK',
      readAt: '2026-12-01T10:00:00Z',
      failedParts: 0,
    });

    // The 15-minute sweep reads the same: no signal, and the row's age moves.
    kube.put(SERVER_BMCS, serverBmc('OK', '2026-12-01T10:15:00Z'));
    await jest.advanceTimersByTimeAsync(10_000);
    expect(published).toEqual([]);
    const swept = await service.listServersJson(credentials, 'plant-a');
    expect(row(swept.body).health.readAt).toBe('2026-12-01T10:15:00Z');

    // A power supply fails: one signal, the row says Critical with the part counted.
    kube.put(
      SERVER_BMCS,
      serverBmc('Critical', '2026-12-01T10:30:00Z', ['PSU 1']),
    );
    await jest.advanceTimersByTimeAsync(10_000);
    expect(published).toEqual([
      {
        recipients: { type: 'broadcast' },
        channel: 'rackside:servers',
        message: { cluster: 'plant-a' },
      },
    ]);
    const failed = await service.listServersJson(credentials, 'plant-a');
    expect(failed.etag).not.toBe(swept.etag);
    expect(row(failed.body).health).toEqual({
      rollup: 'Critical',
      readAt: '2026-12-01T10:30:00Z',
      failedParts: 1,
    });
    // The detail names the part and the firmware, and never the BMC's address or Secret.
    const detail = await service.getServer(credentials, 'plant-a', 'worker-1');
    expect(detail.health).toMatchObject({
      rollup: 'Critical',
      parts: [{ kind: 'PowerSupply', name: 'PSU 1', health: 'Critical' }],
      firmware: [{ name: 'BMC', version: '1.2.3', updateable: true }],
    });
    const text = JSON.stringify(detail) + failed.body;
    expect(text).not.toContain('10.0.5.21');
    expect(text).not.toContain('bmc-worker-1');
  });

  it('derives the facts once per change, not per request', async () => {
    const first = await state.snapshot();
    expect(await state.snapshot()).toBe(first);
    kube.put(NODES, node('worker-1', 'True', '2026-12-01T10:01:00Z'));
    expect(await state.snapshot()).toBe(first);
    kube.put(NODES, node('worker-1', 'False'));
    const next = await state.snapshot();
    expect(next).not.toBe(first);
    expect(next.facts.find(f => f.name === 'worker-1')!.ready).toBe(false);
    // The whole answer too: the same prepared JSON while nothing changed.
    const a = await service.listServersJson(credentials, 'plant-a');
    expect(await service.listServersJson(credentials, 'plant-a')).toBe(a);
  });
});
