/*
 * Drains that know what they move (docs/drain.md) on the simulated rack: a real
 * apiserver, kwok running the pods, the operator with exactly the chart's RBAC. Each test
 * owns one worker. Evictions are observed from a watch of the node's pods (the first
 * deletionTimestamp of each pod, and its deletion), never from the operator's own report.
 */
import { AppsV1Api, PolicyV1Api } from '@kubernetes/client-node';
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
  pinnedDeployment,
  podsOn as podsOnNode,
  recordEvictions as recordPodEvictions,
  runningOn,
  type PinnedDeploymentOptions,
} from './testing/workloads';

jest.setTimeout(120_000);

const NS = 'drain-rules';
let env: OperatorRack;
let operator: Operator | undefined;
let apps: AppsV1Api;

const fastDrain = { initialBackoffMs: 200, maxBackoffMs: 1000 };

const deployment = (
  name: string,
  node: string,
  opts: PinnedDeploymentOptions = {},
) => pinnedDeployment(NS, name, node, opts);

const podsOn = (node: string) => podsOnNode(env, node, NS);

const running = (app: string, node: string, count = 1) =>
  runningOn(env, app, node, count, NS);

/** Every pod event on a node, in the order the apiserver sent them, and when it came. */
const recordEvictions = (node: string) => recordPodEvictions(env, node, NS);

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: false,
    withRedfish: false,
    withWorkloads: false,
  });
  apps = env.admin.makeApiClient(AppsV1Api);
  await env.core.createNamespace({ body: { metadata: { name: NS } } });
  operator = await env.startReady({ drain: fastDrain });
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await env?.stop();
}, 60_000);

describe('drain rules on the rack', () => {
  it('refuses a StatefulSet pod whose claim is bound to a local PersistentVolume before anything is evicted or cordoned', async () => {
    await env.core.createPersistentVolume({
      body: {
        metadata: { name: 'db-local' },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'local-disks',
          local: { path: '/mnt/disks/db' },
          nodeAffinity: {
            required: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [
                    {
                      key: 'kubernetes.io/hostname',
                      operator: 'In',
                      values: ['worker-1'],
                    },
                  ],
                },
              ],
            },
          },
        },
      },
    });
    await env.core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: {
        metadata: { name: 'db-data', namespace: NS },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'local-disks',
          volumeName: 'db-local',
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });
    // Placed by nodeName: the rack has no volume binder for the scheduler to wait on.
    await apps.createNamespacedStatefulSet({
      namespace: NS,
      body: {
        metadata: { name: 'db', namespace: NS },
        spec: {
          replicas: 1,
          serviceName: 'db',
          selector: { matchLabels: { app: 'db' } },
          template: {
            metadata: { labels: { app: 'db' } },
            spec: {
              nodeName: 'worker-1',
              volumes: [
                {
                  name: 'data',
                  persistentVolumeClaim: { claimName: 'db-data' },
                },
              ],
              containers: [{ name: 'db', image: 'registry.example/db:1' }],
            },
          },
        },
      },
    });
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('web', 'worker-1'),
    });
    await running('db', 'worker-1');
    await running('web', 'worker-1');

    await env.create('local-refused', 'worker-1', 'drain');
    const refused = await env.phaseIs('local-refused', 'Refused');
    const reason = refused.status?.refusal?.reason ?? '';
    expect(reason).toContain(
      `${NS}/db-0: its data is on this node (PersistentVolumeClaim db-data is bound to local PersistentVolume db-local)`,
    );
    expect(reason).toMatch(/cannot run elsewhere until worker-1 is back/);
    expect(reason).toMatch(/allowNodeLocalData/);
    expect(reason).not.toContain('/web-');
    expect(await env.unschedulable('worker-1')).toBe(false);
    expect(
      (await podsOn('worker-1')).filter(p => p.metadata?.deletionTimestamp),
    ).toEqual([]);
  });

  it('refuses a hostPath pod, then drains it with allowNodeLocalData', async () => {
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('logs', 'worker-2', {
        volumes: [{ name: 'host', hostPath: { path: '/var/log/app' } }],
      }),
    });
    await running('logs', 'worker-2');
    await env.create('hostpath-refused', 'worker-2', 'drain');
    const refused = await env.phaseIs('hostpath-refused', 'Refused');
    expect(refused.status?.refusal?.reason).toMatch(
      /drain-rules\/logs-.*hostPath volume host \(\/var\/log\/app\).*cannot run elsewhere until worker-2 is back/,
    );
    expect(await env.unschedulable('worker-2')).toBe(false);

    await env.create('hostpath-allowed', 'worker-2', 'drain', {
      drain: { allowNodeLocalData: true },
    });
    const drained = await env.phaseIs('hostpath-allowed', 'Drained');
    expect(drained.spec.drain?.allowNodeLocalData).toBe(true);
    expect(drained.status?.drain).toMatchObject({ total: 1, evicted: 1 });
    expect(await podsOn('worker-2')).toEqual([]);
    // This rack serves no kubevirt.io API: no VMI list, and no error for it.
    expect(drained.status?.drain?.virtualMachines).toBeUndefined();
    expect(
      await new CoreClient(env.admin).virtualMachineInstancesOn('worker-2'),
    ).toBeUndefined();
  });

  it('evicts drain-order groups lowest first: the next only once the previous is gone, within the estimate from the grace periods', async () => {
    // `early` takes its 4 s grace period to go: time enough for a later group to jump ahead.
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('early', 'worker-3', {
        graceSeconds: 4,
        annotations: {
          'rack.rackside.dev/honor-grace-period': 'true',
          'rackside.dev/drain-order': '1',
        },
      }),
    });
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('late', 'worker-3', {
        graceSeconds: 2,
        annotations: {
          'rack.rackside.dev/honor-grace-period': 'true',
          'rackside.dev/drain-order': '5',
        },
      }),
    });
    await running('early', 'worker-3');
    await running('late', 'worker-3');
    // The estimate the pre-flight shows, from the same servers-common functions.
    const estimate = estimateDrain(
      planDrain(
        (await podsOn('worker-3')) as PodLike[],
        {},
        {
          nodeName: 'worker-3',
        },
      ),
    );
    expect(estimate).toMatchObject({
      seconds: 6,
      groups: [
        { order: 1, seconds: 4 },
        { order: 5, seconds: 2 },
      ],
      slowest: {
        pod: expect.stringMatching(/^drain-rules\/early-/),
        seconds: 4,
      },
    });
    const watch = await recordEvictions('worker-3');
    try {
      await env.create('ordered', 'worker-3', 'drain');
      await env.phaseIs('ordered', 'Drained');
      await env.waitFor('both deletions seen', async () =>
        watch.seen.includes('gone late'),
      );
      expect(watch.seen).toEqual([
        'evicted early',
        'gone early',
        'evicted late',
        'gone late',
      ]);
      // The groups took their grace periods one after the other (deletion timestamps
      // have whole seconds, so each can end up to a second early), and the drain ended
      // within the estimate plus what the rack needs to react.
      const took = (watch.at[3] - watch.at[0]) / 1000;
      expect(took).toBeGreaterThanOrEqual(estimate.seconds - 2);
      expect(took).toBeLessThanOrEqual(estimate.seconds + 10);
    } finally {
      watch.stop();
    }
  });

  it('leaves a skip pod in place and reaches Drained with it there', async () => {
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('kept', 'worker-4', {
        annotations: { 'rackside.dev/drain': 'skip' },
      }),
    });
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('moved', 'worker-4'),
    });
    const [kept] = await running('kept', 'worker-4');
    await running('moved', 'worker-4');
    await env.create('skipping', 'worker-4', 'drain');
    const drained = await env.phaseIs('skipping', 'Drained');
    expect(drained.status?.drain).toMatchObject({ total: 1, evicted: 1 });
    const left = await podsOn('worker-4');
    expect(
      left.map(p => [p.metadata?.uid, p.metadata?.deletionTimestamp]),
    ).toEqual([[kept.metadata?.uid, undefined]]);
  });

  it('waits for a wait-completed pod without evicting it, and is Drained once it completes', async () => {
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('batch', 'worker-5', {
        annotations: { 'rackside.dev/drain': 'wait-completed' },
      }),
    });
    const [batch] = await running('batch', 'worker-5');
    const name = batch.metadata!.name!;
    await env.create('waiting', 'worker-5', 'drain');
    const waiting = await env.waitFor('the drain waits for batch', async () => {
      const nm = await env.nms.get('waiting');
      return (
        (nm.status?.drain?.waitingFor ?? []).includes(`${NS}/${name}`) && nm
      );
    });
    expect(waiting.status?.phase).toBe('Draining');
    expect(waiting.status?.drain).toMatchObject({ pending: 1 });
    const still = await env.core.readNamespacedPod({ name, namespace: NS });
    expect(still.metadata?.deletionTimestamp).toBeUndefined();

    // The workload finishes on its own (written as its kubelet would).
    await new ResourceClient<any>(env.admin, coreResources.pods).patchStatus(
      name,
      { status: { phase: 'Succeeded' } },
      { type: 'merge', namespace: NS },
    );
    await env.phaseIs('waiting', 'Drained');
    const after = await env.core.readNamespacedPod({ name, namespace: NS });
    expect(after.metadata?.deletionTimestamp).toBeUndefined();
    expect(after.status?.phase).toBe('Succeeded');
  });
  it('times out Failed with the node cordoned and the pods named while the volumes cannot be read', async () => {
    // A budget holds `held` (429), so the drain is still running when the operator loses
    // the right to read claims and volumes and a pod with a claim it has not read arrives.
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: deployment('held', 'worker-6'),
    });
    await env.admin
      .makeApiClient(PolicyV1Api)
      .createNamespacedPodDisruptionBudget({
        namespace: NS,
        body: {
          metadata: { name: 'held', namespace: NS },
          spec: { minAvailable: 1, selector: { matchLabels: { app: 'held' } } },
        },
      });
    const [held] = await running('held', 'worker-6');
    await env.waitFor('the held budget computed', async () => {
      const pdb = await env.admin
        .makeApiClient(PolicyV1Api)
        .readNamespacedPodDisruptionBudget({ name: 'held', namespace: NS });
      return (
        pdb.status?.currentHealthy === 1 && pdb.status.disruptionsAllowed === 0
      );
    });
    await env.create('storage-timeout', 'worker-6', 'drain', {
      drain: { timeoutSeconds: 15 },
    });
    await env.waitFor('the budget refusing held', async () => {
      const nm = await env.nms.get('storage-timeout');
      return (nm.status?.drain?.blockedBy ?? []).length > 0;
    });
    const roles = new ResourceClient<any>(env.admin, {
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      plural: 'clusterroles',
      kind: 'ClusterRole',
      namespaced: false,
    });
    const role = await roles.get('rackside-operator');
    const rules = role.rules;
    try {
      await roles.update({
        ...role,
        rules: rules.filter(
          (r: any) => !(r.resources ?? []).includes('persistentvolumes'),
        ),
      });
      // Bound by name: the node is cordoned, so the scheduler would place it nowhere.
      const late = deployment('late-claim', 'worker-6', {
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: 'late-data' } },
        ],
      });
      (late.spec.template.spec as any).nodeName = 'worker-6';
      await apps.createNamespacedDeployment({ namespace: NS, body: late });
      const [claimPod] = await running('late-claim', 'worker-6');

      const failed = await env.phaseIs('storage-timeout', 'Failed', 40_000);
      const reason = failed.status?.message ?? '';
      expect(reason).toContain(
        `the drain timed out after 15s with 2 pod(s) still on worker-6: ${NS}/${held.metadata?.name}, ${NS}/${claimPod.metadata?.name}. Evictions waited for the node's volumes, which could not be read (reading the node's volumes:`,
      );
      expect(reason).toMatch(/forbidden.*\)\. The node is left cordoned\./);
      expect(await env.unschedulable('worker-6')).toBe(true);
      const claimNow = await env.core.readNamespacedPod({
        name: claimPod.metadata!.name!,
        namespace: NS,
      });
      expect(claimNow.metadata?.deletionTimestamp).toBeUndefined();
    } finally {
      const current = await roles.get('rackside-operator');
      await roles.update({ ...current, rules });
    }
  });
});
