/*
 * The drain of the rack fixture's worker-5 (docs/drain.md; e2e/rack/README.md): the
 * StatefulSet pod lab/db-0 on a local PersistentVolume, drain-order, skip and
 * wait-completed pods, a pod with an 1800 s grace period and four KubeVirt
 * VirtualMachineInstances (API objects only). The operator runs with exactly the chart's
 * RBAC; evictions are observed from a watch of the node's pods, never from the operator's
 * own report.
 */
import {
  estimateDrain,
  planDrain,
  type PodLike,
} from '@rackside/plugin-servers-common';
import {
  CoreClient,
  coreResources,
  ResourceClient,
} from '@rackside/plugin-servers-node';
import type { Operator } from './operator';
import { startOperatorRack, type OperatorRack } from './testing/operatorRack';
import {
  podsOn,
  recordEvictions as recordPodEvictions,
} from './testing/workloads';

jest.setTimeout(120_000);

const NODE = 'worker-5';
let env: OperatorRack;
let operator: Operator | undefined;

const podsOnNode = () => podsOn(env, NODE);

/** The first deletionTimestamp and the deletion of each pod on the node, in order. */
const recordEvictions = () => recordPodEvictions(env, NODE);

beforeAll(async () => {
  env = await startOperatorRack({ withTalos: false, withRedfish: false });
  operator = await env.startReady({
    drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
  });
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await env?.stop();
}, 60_000);

describe('the drain of the fixture worker-5', () => {
  it('reads what the pre-flight shows: node-local data, the order groups, the estimate and the VMIs', async () => {
    const core = new CoreClient(env.admin);
    const pods = (await podsOnNode()) as PodLike[];
    const [storage, virtualMachines] = await Promise.all([
      core.drainStorage(NODE, ['lab', 'monitoring']),
      core.virtualMachineInstancesOn(NODE),
    ]);
    const options = { allowNodeLocalData: true };
    const plan = planDrain(pods, options, {
      nodeName: NODE,
      ...storage,
      virtualMachines,
    });
    expect(plan.refused).toEqual([]);
    expect(plan.nodeLocal.map(p => `${p.namespace}/${p.name}`)).toEqual([
      'lab/db-0',
    ]);
    expect(plan.orderGroups.map(g => g.order)).toEqual([0, 1, 10]);
    expect(plan.skipped.map(p => p.name)).toEqual([
      expect.stringMatching(/^local-agent-/),
    ]);
    expect(plan.waitCompleted.map(p => p.name)).toEqual([
      expect.stringMatching(/^nightly-report-/),
    ]);
    const estimate = estimateDrain(plan, options);
    expect(estimate.slowest).toEqual({
      pod: expect.stringMatching(/^lab\/archiver-/),
      seconds: 1800,
    });
    expect(estimate.groups).toEqual([
      { order: 0, seconds: 1800 },
      { order: 1, seconds: 30 },
      { order: 10, seconds: 30 },
    ]);
    expect(plan.virtualMachines?.map(v => [v.name, v.action])).toEqual([
      ['vm-build', 'shutdown'],
      ['vm-gpu', 'blocks'],
      ['vm-scratch', 'shutdown'],
      ['vm-web', 'migrate'],
    ]);
  });

  it('refuses it before any eviction or cordon: lab/db-0 has its data on worker-5', async () => {
    await env.create('lab-refused', NODE, 'drain');
    const refused = await env.phaseIs('lab-refused', 'Refused');
    expect(refused.status?.refusal?.reason).toContain(
      'lab/db-0: its data is on this node (PersistentVolumeClaim data-db-0 is bound to local PersistentVolume lab-db-worker-5), so it cannot run elsewhere until worker-5 is back (allowed with allowNodeLocalData)',
    );
    expect(await env.unschedulable(NODE)).toBe(false);
    expect(
      (await podsOnNode()).filter(p => p.metadata?.deletionTimestamp),
    ).toEqual([]);
  });

  it('with allowNodeLocalData: evicts by drain-order, leaves the skip pod, waits for the Job, records the VMIs', async () => {
    const watch = await recordEvictions();
    try {
      await env.create('lab-drain', NODE, 'drain', {
        drain: { allowNodeLocalData: true },
      });
      // Every group is gone once only the wait-completed Job pod is pending.
      const waiting = await env.waitFor(
        'the drain waiting for the nightly report only',
        async () => {
          const nm = await env.nms.get('lab-drain');
          const drain = nm.status?.drain;
          return (
            drain?.pending === 1 &&
            (drain.waitingFor ?? []).length === 1 &&
            watch.seen.includes('gone db') &&
            nm
          );
        },
        60_000,
      );
      expect(waiting.status?.phase).toBe('Draining');
      expect(watch.seen).toEqual([
        'evicted archiver',
        'gone archiver',
        'evicted frontend',
        'gone frontend',
        'evicted db',
        'gone db',
      ]);
      expect(waiting.status?.drain?.virtualMachines).toEqual([
        { vmi: 'lab/vm-build', action: 'shutdown' },
        { vmi: 'lab/vm-gpu', action: 'blocks' },
        { vmi: 'lab/vm-scratch', action: 'shutdown' },
        { vmi: 'lab/vm-web', action: 'migrate' },
      ]);
      const [report] = waiting.status!.drain!.waitingFor!;
      expect(report).toMatch(/^lab\/nightly-report-/);

      // The report finishes on its own (written as its kubelet would).
      await new ResourceClient<any>(env.admin, coreResources.pods).patchStatus(
        report.split('/')[1],
        { status: { phase: 'Succeeded' } },
        { type: 'merge', namespace: 'lab' },
      );
      const drained = await env.phaseIs('lab-drain', 'Drained');
      expect(drained.status?.drain).toMatchObject({ total: 4, evicted: 4 });
      expect(await env.unschedulable(NODE)).toBe(true);

      const left = await podsOnNode();
      const live = left.filter(p => p.status?.phase === 'Running');
      expect(live.map(p => p.metadata?.labels?.app).sort()).toEqual([
        'local-agent',
        'node-exporter',
      ]);
      expect(live.every(p => !p.metadata?.deletionTimestamp)).toBe(true);
      // db-0 cannot run elsewhere: its successor waits for worker-5.
      const db = await env.waitFor(
        'the StatefulSet to recreate db-0',
        async () =>
          env.core
            .readNamespacedPod({ name: 'db-0', namespace: 'lab' })
            .catch(() => undefined),
      );
      expect(db.spec?.nodeName).toBeUndefined();
      expect(db.status?.phase).toBe('Pending');
    } finally {
      watch.stop();
    }
  });
});
