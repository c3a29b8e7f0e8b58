/*
 * Drains on the simulated rack: a real apiserver with the disruption controller computing
 * PodDisruptionBudgets, kwok running the pods, and the operator with its own ServiceAccount.
 * Every workload is pinned to its node so each test owns what it drains.
 */
import { AppsV1Api, PolicyV1Api } from '@kubernetes/client-node';
import { coreResources, ResourceClient } from '@rackside/plugin-servers-node';
import type { Operator } from './operator';
import { startOperatorRack, type OperatorRack } from './testing/operatorRack';
import {
  HONOR_GRACE,
  pinnedDeployment,
  podsOn as podsOnNode,
  runningOn,
  type PinnedDeploymentOptions,
} from './testing/workloads';

jest.setTimeout(90_000);

const NS = 'drain-test';
let env: OperatorRack;
let operator: Operator | undefined;
let apps: AppsV1Api;
let policy: PolicyV1Api;

const fastDrain = { initialBackoffMs: 200, maxBackoffMs: 1000 };

const deployment = (
  name: string,
  node: string,
  opts: PinnedDeploymentOptions = {},
) => pinnedDeployment(NS, name, node, opts);

async function pdb(name: string, minAvailable: number) {
  await policy.createNamespacedPodDisruptionBudget({
    namespace: NS,
    body: {
      metadata: { name, namespace: NS },
      spec: { minAvailable, selector: { matchLabels: { app: name } } },
    },
  });
}

async function setMinAvailable(name: string, minAvailable: number) {
  await new ResourceClient<any>(
    env.admin,
    coreResources.podDisruptionBudgets,
  ).patch(name, { spec: { minAvailable } }, { type: 'merge', namespace: NS });
}

const podsOn = (node: string) => podsOnNode(env, node);

/** Running pods of `app` on `node`, waiting for `count` of them. */
async function running(app: string, node: string, count: number) {
  await runningOn(env, app, node, count);
}

/** Waits until a PDB's status reflects its pods (the disruption controller caught up). */
async function budgetSettled(name: string, disruptionsAllowed: number) {
  await env.waitFor(`PDB ${name} allows ${disruptionsAllowed}`, async () => {
    const got = await policy.readNamespacedPodDisruptionBudget({
      name,
      namespace: NS,
    });
    return (
      got.status?.observedGeneration === got.metadata?.generation &&
      got.status?.currentHealthy === got.status?.expectedPods &&
      got.status?.disruptionsAllowed === disruptionsAllowed
    );
  });
}

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: false,
    withRedfish: false,
    withWorkloads: false,
  });
  apps = env.admin.makeApiClient(AppsV1Api);
  policy = env.admin.makeApiClient(PolicyV1Api);
  await env.core.createNamespace({ body: { metadata: { name: NS } } });
  // A DaemonSet on every worker: drains leave its pods in place.
  await apps.createNamespacedDaemonSet({
    namespace: NS,
    body: {
      metadata: { name: 'agent', namespace: NS },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [
                    {
                      matchExpressions: [
                        {
                          key: 'node-role.kubernetes.io/control-plane',
                          operator: 'DoesNotExist',
                        },
                        {
                          key: 'rackside.dev/virtual-node',
                          operator: 'DoesNotExist',
                        },
                      ],
                    },
                  ],
                },
              },
            },
            containers: [{ name: 'agent', image: 'registry.example/agent:1' }],
          },
        },
      },
    },
  });
  operator = await env.startReady({ drain: fastDrain });
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await env?.stop();
}, 60_000);

describe('drain on the rack', () => {
  it('stays Draining behind a blocking PDB, names it, keeps DaemonSet pods, and completes within seconds once the PDB allows', async () => {
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('guarded', 'worker-1', { replicas: 2 }),
    });
    await pdb('guarded', 2);
    await running('guarded', 'worker-1', 2);
    await running('agent', 'worker-1', 1);
    await budgetSettled('guarded', 0);

    await env.create('drain-guarded', 'worker-1', 'drain');
    const blocked = await env.waitFor('blockedBy names the PDB', async () => {
      const nm = await env.nms.get('drain-guarded');
      return (nm.status?.drain?.blockedBy ?? []).length === 2 && nm;
    });
    expect(blocked.status?.phase).toBe('Draining');
    expect(blocked.status?.drain).toMatchObject({
      total: 2,
      evicted: 0,
      pending: 2,
    });
    for (const entry of blocked.status!.drain!.blockedBy!) {
      expect(entry.pdb).toBe('guarded');
      expect(entry.pod).toMatch(/^drain-test\/guarded-/);
      expect(entry.message).toMatch(/disruption budget/i);
    }
    expect(await env.unschedulable('worker-1')).toBe(true);
    // Still blocked a while later: the refusal is retried, never swallowed.
    await new Promise(r => setTimeout(r, 2000));
    expect((await env.nms.get('drain-guarded')).status?.phase).toBe('Draining');

    const allowedAt = Date.now();
    await setMinAvailable('guarded', 0);
    const drained = await env.phaseIs('drain-guarded', 'Drained');
    const seconds = (Date.now() - allowedAt) / 1000;
    expect(seconds).toBeLessThan(15);
    expect(drained.status?.drain).toMatchObject({
      total: 2,
      evicted: 2,
      pending: 0,
    });
    expect(drained.status?.drain?.blockedBy ?? []).toEqual([]);
    const left = await podsOn('worker-1');
    expect(left.map(p => p.metadata?.labels?.app)).toEqual(['agent']);
    expect(
      await env.eventReasons('drain-guarded', [
        'Cordoned',
        'Draining',
        'Drained',
      ]),
    ).toEqual(expect.arrayContaining(['Cordoned', 'Draining', 'Drained']));
  });

  it('refuses a drain with an unmanaged pod before evicting anything, and drains it with force', async () => {
    await env.core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'loner', namespace: NS, labels: { app: 'loner' } },
        spec: {
          nodeName: 'worker-2',
          containers: [{ name: 'sh', image: 'registry.example/sh:1' }],
        },
      },
    });
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('web', 'worker-2', { replicas: 2 }),
    });
    await running('loner', 'worker-2', 1);
    await running('web', 'worker-2', 2);

    await env.create('drain-loner', 'worker-2', 'drain');
    const refused = await env.phaseIs('drain-loner', 'Refused');
    expect(refused.status?.refusal?.reason).toContain('drain-test/loner');
    expect(refused.status?.refusal?.reason).toMatch(/force/);
    expect(await env.unschedulable('worker-2')).toBe(false);
    const still = await podsOn('worker-2');
    expect(still.filter(p => p.metadata?.deletionTimestamp)).toEqual([]);
    expect(still.map(p => p.metadata?.labels?.app).sort()).toEqual([
      'agent',
      'loner',
      'web',
      'web',
    ]);

    await env.create('drain-loner-forced', 'worker-2', 'drain', {
      drain: { force: true },
    });
    const drained = await env.phaseIs('drain-loner-forced', 'Drained');
    expect(drained.status?.drain).toMatchObject({ total: 3, evicted: 3 });
    expect(
      (await podsOn('worker-2')).map(p => p.metadata?.labels?.app),
    ).toEqual(['agent']);
  });

  it('waits for pods with a long grace period to terminate', async () => {
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('slow', 'worker-3', {
        graceSeconds: 6,
        annotations: HONOR_GRACE,
      }),
    });
    await running('slow', 'worker-3', 1);
    const started = Date.now();
    await env.create('drain-slow', 'worker-3', 'drain');
    const terminating = await env.waitFor('slow pod terminating', async () => {
      const pods = (await podsOn('worker-3')).filter(
        p => p.metadata?.labels?.app === 'slow',
      );
      return pods.length === 1 && !!pods[0].metadata?.deletionTimestamp;
    });
    expect(terminating).toBe(true);
    await new Promise(r => setTimeout(r, 2000));
    const waiting = await env.nms.get('drain-slow');
    expect(waiting.status?.phase).toBe('Draining');
    expect(waiting.status?.drain).toMatchObject({ total: 1, pending: 1 });
    await env.phaseIs('drain-slow', 'Drained');
    expect(Date.now() - started).toBeGreaterThanOrEqual(5000);
  });

  it('resumes a drain after an operator restart and finishes it', async () => {
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('free', 'worker-4', { replicas: 2 }),
    });
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('pinned', 'worker-4'),
    });
    await pdb('pinned', 1);
    await running('free', 'worker-4', 2);
    await running('pinned', 'worker-4', 1);
    await budgetSettled('pinned', 0);

    await env.create('drain-restart', 'worker-4', 'drain');
    await env.waitFor('free pods gone, pinned blocked', async () => {
      const nm = await env.nms.get('drain-restart');
      return (
        nm.status?.drain?.evicted === 2 &&
        nm.status.drain.blockedBy?.[0]?.pdb === 'pinned'
      );
    });
    await operator!.stop();
    await setMinAvailable('pinned', 0);
    operator = await env.start({ drain: fastDrain, identity: 'successor' });
    const drained = await env.phaseIs('drain-restart', 'Drained', 45_000);
    expect(drained.status?.drain).toMatchObject({
      total: 3,
      evicted: 3,
      pending: 0,
    });
    expect(drained.status?.history?.map(h => h.phase)).toEqual([
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
    ]);
  });

  it('fails at its timeout with the pending pods listed and the node left cordoned', async () => {
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('stuck', 'worker-5'),
    });
    await pdb('stuck', 1);
    await running('stuck', 'worker-5', 1);
    await budgetSettled('stuck', 0);
    await env.create('drain-timeout', 'worker-5', 'drain', {
      drain: { timeoutSeconds: 4 },
    });
    const failed = await env.phaseIs('drain-timeout', 'Failed');
    expect(failed.status?.message).toMatch(
      /timed out after 4s .*drain-test\/stuck-.*left cordoned/,
    );
    expect(failed.status?.drain?.pendingPods).toEqual([
      expect.stringMatching(/^drain-test\/stuck-/),
    ]);
    expect(await env.unschedulable('worker-5')).toBe(true);
    expect(await env.eventReasons('drain-timeout', ['DrainFailed'])).toContain(
      'DrainFailed',
    );
  });
});
