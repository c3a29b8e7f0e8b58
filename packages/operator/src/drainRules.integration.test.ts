/*
 * Drains that know what they move (DESIGN section 16) on the simulated rack: a real
 * apiserver, kwok running the pods, the operator with exactly the chart's RBAC. Each test
 * owns one worker. Evictions are observed from a watch of the node's pods (the first
 * deletionTimestamp of each pod, and its deletion), never from the operator's own report.
 */
import { AppsV1Api, Watch } from '@kubernetes/client-node';
import { coreResources, ResourceClient } from '@rackside/plugin-servers-node';
import type { Operator } from './operator';
import { startOperatorRack, type OperatorRack } from './testing/operatorRack';

jest.setTimeout(120_000);

const NS = 'drain-rules';
let env: OperatorRack;
let operator: Operator | undefined;
let apps: AppsV1Api;

const fastDrain = { initialBackoffMs: 200, maxBackoffMs: 1000 };

function deployment(
  name: string,
  node: string,
  opts: {
    annotations?: Record<string, string>;
    graceSeconds?: number;
    volumes?: any[];
  } = {},
) {
  return {
    metadata: { name, namespace: NS },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations: opts.annotations },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': node },
          terminationGracePeriodSeconds: opts.graceSeconds,
          volumes: opts.volumes,
          containers: [{ name, image: `registry.example/${name}:1` }],
        },
      },
    },
  };
}

async function podsOn(node: string) {
  const list = await env.core.listPodForAllNamespaces({
    fieldSelector: `spec.nodeName=${node}`,
  });
  return list.items.filter(p => p.metadata?.namespace === NS);
}

async function running(app: string, node: string, count = 1) {
  return env.waitFor(`${count} ${app} pods Running on ${node}`, async () => {
    const pods = (await podsOn(node)).filter(
      p => p.metadata?.labels?.app === app && p.status?.phase === 'Running',
    );
    return pods.length === count && pods;
  });
}

/** Every pod event on a node, in the order the apiserver sent them. */
async function recordEvictions(node: string) {
  const seen: string[] = [];
  const marked = new Set<string>();
  const request = await new Watch(env.admin).watch(
    `/api/v1/namespaces/${NS}/pods`,
    { fieldSelector: `spec.nodeName=${node}` },
    (type: string, pod: any) => {
      const app = pod.metadata?.labels?.app;
      const name = pod.metadata?.name;
      if (type === 'DELETED') seen.push(`gone ${app}`);
      else if (pod.metadata?.deletionTimestamp && !marked.has(name)) {
        marked.add(name);
        seen.push(`evicted ${app}`);
      }
    },
    () => undefined,
  );
  return { seen, stop: () => request.abort() };
}

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: false,
    withRedfish: false,
    withWorkloads: false,
  });
  apps = env.admin.makeApiClient(AppsV1Api);
  await env.core.createNamespace({ body: { metadata: { name: NS } } });
  operator = await env.start({ drain: fastDrain });
  await env.waitFor('operator ready', async () => operator!.isReady());
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
  });

  it('evicts drain-order groups lowest first: the next only once the previous is gone', async () => {
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
        annotations: { 'rackside.dev/drain-order': '5' },
      }),
    });
    await running('early', 'worker-3');
    await running('late', 'worker-3');
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
});
