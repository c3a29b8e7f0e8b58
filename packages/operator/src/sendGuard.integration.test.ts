/*
 * The operator is authoritative at the moment it acts (DESIGN section 4), on the
 * simulated rack: the quorum guard runs again right before a power verb is recorded, so a
 * reboot admitted earlier is not sent once the cluster changed under it; two reboots
 * ready to send at once are checked one at a time; and an abandon written with kubectl
 * on a machine that is off is held until the machine is powered on. The Talos emulator
 * and the sushy-tools BMCs count every verb they receive.
 */
import { AppsV1Api, PolicyV1Api } from '@kubernetes/client-node';
import type { NodeMaintenance } from '@rackside/plugin-servers-common';
import { coreResources, ResourceClient } from '@rackside/plugin-servers-node';
import type { Operator } from './operator';
import {
  ADMIN_USER,
  flag,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';
import {
  powerRack,
  REDFISH_PROVIDER,
  TALOS_PROVIDER,
} from './testing/powerRack';
import {
  CONTROL_PLANE_TOLERATION,
  pinnedDeployment,
} from './testing/workloads';

jest.setTimeout(120_000);

const APPS = 'send-guard';

let env: OperatorRack;
let rack: ReturnType<typeof powerRack>;
let operator: Operator | undefined;
let apps: AppsV1Api;
let policy: PolicyV1Api;

const counts = (node: string) => rack.powerCounts(node);
const power = (node: string, state: 'on' | 'off') => rack.power(node, state);
const isReady = (node: string) => env.isReady(node);

/** The pre-flight a hazard-tier reboot carries when the backend writes it. */
function hazardPreflight(ready: number, margin: number) {
  return {
    takenAt: new Date().toISOString(),
    ceremony: 'hazard',
    quorum: { members: 3, quorum: 2, ready, margin },
  };
}

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: true,
    withWorkloads: false,
  });
  rack = powerRack(env);
  apps = env.admin.makeApiClient(AppsV1Api);
  policy = env.admin.makeApiClient(PolicyV1Api);
  await env.core.createNamespace({ body: { metadata: { name: APPS } } });
  await rack.createPowerSecrets();
  operator = await env.startReady({
    drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
    power: { rebootSeconds: 60, unansweredSeconds: 60 },
  });
  await rack.provide(TALOS_PROVIDER);
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await env?.stop();
}, 60_000);

describe('guard at send time', () => {
  it('does not send a reboot admitted at margin 1 once another member went NotReady during its drain: Refused with the numbers, node left cordoned and drained', async () => {
    // One pod on cp-1 behind a budget that allows no disruption: the drain waits.
    await apps.createNamespacedDeployment({
      namespace: APPS,
      body: pinnedDeployment(APPS, 'held', 'cp-1', {
        tolerations: [CONTROL_PLANE_TOLERATION],
      }),
    });
    await policy.createNamespacedPodDisruptionBudget({
      namespace: APPS,
      body: {
        metadata: { name: 'held', namespace: APPS },
        spec: { minAvailable: 1, selector: { matchLabels: { app: 'held' } } },
      },
    });
    await env.waitFor('held Running on cp-1, budget settled', async () => {
      const got = await policy.readNamespacedPodDisruptionBudget({
        name: 'held',
        namespace: APPS,
      });
      return (
        got.status?.observedGeneration === got.metadata?.generation &&
        got.status?.currentHealthy === 1 &&
        got.status?.disruptionsAllowed === 0
      );
    });

    await env.create('reboot-cp1', 'cp-1', 'reboot', {
      preflight: hazardPreflight(3, 1),
    });
    await env.waitFor('the drain of cp-1 blocked by the budget', async () => {
      const nm = await env.nms.get('reboot-cp1');
      return (
        nm.status?.phase === 'Draining' &&
        (nm.status?.drain?.blockedBy ?? []).length === 1
      );
    });

    // Meanwhile cp-2 goes down, outside Rackside.
    await power('cp-2', 'off');
    await env.waitFor('cp-2 NotReady', async () => !(await isReady('cp-2')));

    // The budget goes away: the drain finishes, and the reboot would be next.
    await new ResourceClient<any>(
      env.admin,
      coreResources.podDisruptionBudgets,
    ).patch(
      'held',
      { spec: { minAvailable: 0 } },
      { type: 'merge', namespace: APPS },
    );
    const done = await env.waitFor(
      'reboot-cp1 past Drained',
      async () => {
        const nm = await env.nms.get('reboot-cp1');
        const phase = nm.status?.phase;
        return phase && !['Cordoned', 'Draining', 'Drained'].includes(phase)
          ? nm
          : undefined;
      },
      60_000,
    );

    expect((await counts('cp-1')).reboot).toBe(0);
    expect(done.status?.phase).toBe('Refused');
    expect(done.status?.power?.reboot).toBeUndefined();
    expect(done.status?.refusal).toMatchObject({
      members: 3,
      quorum: 2,
      ready: 2,
      margin: 0,
    });
    // What changed since admission, in words.
    expect(done.status?.refusal?.reason).toMatch(/at admission/i);
    expect(done.status?.refusal?.reason).toMatch(/3 of 3/);
    expect(done.status?.refusal?.reason).toMatch(/cp-2/);
    expect(done.status?.history?.map(h => h.phase)).toEqual([
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
      'Refused',
    ]);
    expect(await env.unschedulable('cp-1')).toBe(true);
    const pods = await env.core.listNamespacedPod({ namespace: APPS });
    expect(
      pods.items.filter(
        p => p.spec?.nodeName === 'cp-1' && !p.metadata?.deletionTimestamp,
      ),
    ).toEqual([]);
    expect(
      await env.eventReasons('reboot-cp1', ['Drained', 'Refused']),
    ).toEqual(expect.arrayContaining(['Drained', 'Refused']));
    // Counted after the status write and its Event: wait for it.
    await env.waitFor('the guard refusal counted', async () =>
      /rackside_refusals_total\{cause="guard"\} 1/.test(
        (
          await operator!.metrics.render()
        ).body,
      ),
    );

    // Return to service of the node the refused maintenance left cordoned, as the backend
    // writes it: a cordon maintenance with returnToService set.
    await env.create('return-cp1', 'cp-1', 'cordon', {
      returnToService: flag,
    });
    await env.phaseIs('return-cp1', 'Complete', 30_000);
    expect(await env.unschedulable('cp-1')).toBe(false);
    expect((await counts('cp-1')).reboot).toBe(0);

    await power('cp-2', 'on');
    await env.waitFor('cp-2 Ready again', () => isReady('cp-2'), 60_000);
  });

  it('of two reboots of control-plane nodes both ready to send at margin 1, exactly one is sent', async () => {
    // Both were admitted earlier and are drained (status as a previous run left it): the
    // operator starts and finds both about to send.
    await operator!.stop();
    operator = undefined;
    const before = {
      'cp-1': (await counts('cp-1')).reboot,
      'cp-3': (await counts('cp-3')).reboot,
    };
    const names = { 'cp-1': 'both-cp1', 'cp-3': 'both-cp3' } as const;
    let offset = 0;
    for (const [node, name] of Object.entries(names)) {
      await env.nodes.patch(
        node,
        { spec: { unschedulable: true } },
        { type: 'merge' },
      );
      await env.create(name, node, 'reboot', {
        preflight: hazardPreflight(3, 1),
      });
      const created = await env.nms.get(name);
      const at = new Date(Date.now() - 60_000 + offset++ * 1000).toISOString();
      await env.nms.patchStatus(
        name,
        {
          metadata: { resourceVersion: created.metadata.resourceVersion },
          status: {
            phase: 'Drained',
            message: 'drained',
            wasUnschedulable: false,
            cordonedAt: at,
            admission: {
              verdict: 'hazard',
              at,
              members: 3,
              quorum: 2,
              ready: 3,
              margin: 1,
            },
            drain: { total: 0, evicted: 0, pending: 0 },
            history: [
              { phase: 'Requested', at },
              { phase: 'Cordoned', at },
              { phase: 'Draining', at },
              { phase: 'Drained', at },
            ],
          },
        } as any,
        { type: 'merge' },
      );
    }
    operator = await env.start({
      identity: 'after-restart',
      drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
      power: { rebootSeconds: 60, unansweredSeconds: 60 },
    });
    const phases = await env.waitFor(
      'both past Drained',
      async () => {
        const got = await Promise.all(
          Object.values(names).map(
            async n => (await env.nms.get(n)).status?.phase,
          ),
        );
        return got.every(p => p !== 'Drained') && got;
      },
      60_000,
    );
    expect(phases.filter(p => p === 'Refused')).toHaveLength(1);
    const sent =
      (await counts('cp-1')).reboot -
      before['cp-1'] +
      ((await counts('cp-3')).reboot - before['cp-3']);
    expect(sent).toBe(1);
    const refusedName = phases[0] === 'Refused' ? names['cp-1'] : names['cp-3'];
    const refused: NodeMaintenance = await env.nms.get(refusedName);
    expect(refused.status?.refusal).toMatchObject({
      members: 3,
      quorum: 2,
      margin: 0,
    });
    expect(refused.status?.power?.reboot).toBeUndefined();
    const winner =
      refusedName === names['cp-1'] ? names['cp-3'] : names['cp-1'];
    await env.phaseIs(winner, 'Complete', 60_000);
  });
});

describe('send once, with a baseline', () => {
  it('a reboot recorded for a node already NotReady, the operator killed right after the record: the successor takes no sign from NotReady, sends nothing, Failed at the deadline', async () => {
    await rack.provide(TALOS_PROVIDER);
    await power('worker-5', 'off');
    await env.waitFor(
      'worker-5 NotReady',
      async () => !(await isReady('worker-5')),
    );
    const before = await counts('worker-5');
    await operator!.stop();
    let reached!: () => void;
    const atCrashPoint = new Promise<void>(resolve => {
      reached = resolve;
    });
    operator = await env.start({
      identity: 'killed-after-record',
      beforeStatusWrite: async (name, phase, status) => {
        const record = status.power?.reboot;
        if (name !== 'reboot-w5' || phase !== 'Drained' || !record) return;
        if (record.sentAt || record.error) return;
        // The record reaches the apiserver, then the process "dies" before the send.
        await env.nms.patchStatus('reboot-w5', { status } as any, {
          type: 'merge',
        });
        reached();
        await new Promise(() => {});
      },
    });
    await env.create('reboot-w5', 'worker-5', 'reboot');
    await atCrashPoint;
    await operator.stop();
    const recorded = await env.nms.get('reboot-w5');
    expect(recorded.status?.power?.reboot?.recordedAt).toBeDefined();
    expect((await counts('worker-5')).reboot).toBe(before.reboot);

    operator = await env.start({
      identity: 'successor-of-killed',
      power: { rebootSeconds: 60, unansweredSeconds: 10 },
    });
    const ended = await env.waitFor(
      'reboot-w5 settled',
      async () => {
        const nm = await env.nms.get('reboot-w5');
        return (
          ['Rebooting', 'Failed', 'Complete'].includes(
            nm.status?.phase ?? '',
          ) && nm
        );
      },
      60_000,
    );
    // Old code: "reboot accepted (no answer was recorded; the node went NotReady)".
    expect(ended.status?.phase).toBe('Failed');
    expect(ended.status?.message).toMatch(/shows no sign of it after 10s/);
    expect(ended.status?.power?.reboot?.sentAt).toBeUndefined();
    expect(ended.status?.history?.map(h => h.phase)).not.toContain('Rebooting');
    expect((await counts('worker-5')).reboot).toBe(before.reboot);
    // The baseline it compared against, recorded with the verb.
    expect(recorded.status?.power?.reboot?.nodeBefore).toMatchObject({
      ready: false,
    });

    await operator.stop();
    await power('worker-5', 'on');
    await env.waitFor('worker-5 Ready', () => isReady('worker-5'));
    operator = await env.startReady({
      drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
      power: { rebootSeconds: 60, unansweredSeconds: 60 },
    });
  });
});

describe('no machine left off', () => {
  it('holds an abandon written with kubectl on a PoweredOff maintenance until power-on, powers on once, then restores the schedulability from before', async () => {
    await rack.linkBmc('worker-2');
    await rack.provide(REDFISH_PROVIDER);
    await rack.bmcReconciled('worker-2');
    // Cordoned before the maintenance: abandon must leave it cordoned.
    await env.nodes.patch(
      'worker-2',
      { spec: { unschedulable: true } },
      { type: 'merge' },
    );
    const before = await counts('worker-2');

    await env.create('shutdown-w2', 'worker-2', 'shutdown');
    await env.phaseIs('shutdown-w2', 'PoweredOff', 60_000);
    await env.waitFor(
      'worker-2 NotReady',
      async () => !(await isReady('worker-2')),
    );

    await env.nms.patch('shutdown-w2', {
      spec: { abandon: { by: ADMIN_USER, reason: 'changed my mind' } },
    } as any);
    const held = await env.waitFor(
      'AbandonPending True',
      async () => {
        const nm = await env.nms.get('shutdown-w2');
        const c = nm.status?.conditions?.find(x => x.type === 'AbandonPending');
        return c?.status === 'True' && nm;
      },
      30_000,
    );
    expect(held.status?.phase).toBe('PoweredOff');
    expect(held.status?.abandoned).toBeUndefined();
    const condition = held.status!.conditions!.find(
      x => x.type === 'AbandonPending',
    )!;
    expect(condition.message).toContain(ADMIN_USER);
    expect(condition.message).toMatch(/changed my mind/);
    expect(condition.message).toMatch(/power/i);
    expect(await env.eventReasons('shutdown-w2', ['AbandonPending'])).toContain(
      'AbandonPending',
    );
    const warnings = await env.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'involvedObject.name=shutdown-w2,reason=AbandonPending',
    });
    expect(warnings.items.map(e => e.type)).toContain('Warning');
    expect((await counts('worker-2')).powerOn).toBe(before.powerOn);
    expect((await env.nms.get('shutdown-w2')).status?.phase).toBe('PoweredOff');

    await env.nms.patch('shutdown-w2', { spec: { powerOn: flag } } as any);
    const complete = await env.phaseIs('shutdown-w2', 'Complete', 60_000);
    expect(complete.status?.abandoned).toBe(true);
    expect(complete.status?.powerOnSentAt).toBeDefined();
    expect(complete.status?.power?.powerOn?.sentAt).toBeDefined();
    expect((await counts('worker-2')).powerOn).toBe(before.powerOn + 1);
    expect(await isReady('worker-2')).toBe(true);
    // The abandon's restore: cordoned as it was before the maintenance.
    expect(await env.unschedulable('worker-2')).toBe(true);
    expect(
      complete.status?.conditions?.find(x => x.type === 'AbandonPending')
        ?.status,
    ).toBe('False');
  });
});
