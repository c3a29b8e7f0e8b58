/*
 * MaintenancePlans on the simulated rack (docs/plans.md): the operator with its own
 * ServiceAccount under the chart's admission policies creates each step as a
 * NodeMaintenance owned by the plan; the Talos emulator counts every verb it receives;
 * the fixture's workloads (shop/payments behind a budget of minAvailable 2 with 2
 * replicas: no eviction allowed) stand in for the budget that blocks a drain. worker-5
 * holds the drain-rule fixture and is left out.
 */
import {
  maintenancePlanResource,
  POWER_PROVIDER_NAME,
  type MaintenancePlan,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import { coreResources, ResourceClient } from '@rackside/plugin-servers-node';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Operator } from './operator';
import {
  ADMIN_USER,
  OPERATOR_NAMESPACE as NS,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';
import { powerRack, TALOS_PROVIDER } from './testing/powerRack';

jest.setTimeout(300_000);

let env: OperatorRack;
let rack: ReturnType<typeof powerRack>;
let operator: Operator | undefined;
let plans: ResourceClient<MaintenancePlan>;

const WORKERS = ['worker-1', 'worker-2', 'worker-3', 'worker-4', 'worker-6'];
/** The fixture's pods need these to be evicted (an emptyDir cache, an unmanaged shell). */
const DRAIN = { deleteEmptyDirData: true, force: true };

const reboots = () => rack.rebootsByNode();
const power = (node: string, state: 'on' | 'off') => rack.power(node, state);
const isReady = (node: string) => env.isReady(node);

async function paymentsMinAvailable(minAvailable: number) {
  await new ResourceClient<any>(
    env.admin,
    coreResources.podDisruptionBudgets,
  ).patch(
    'payments',
    { spec: { minAvailable } },
    { type: 'merge', namespace: 'shop' },
  );
}

/** A plan written as the admin, or as `writer` (the Backstage backend's identity). */
async function createPlan(
  name: string,
  spec: Record<string, unknown>,
  writer?: KubeConfig,
): Promise<MaintenancePlan> {
  const client = writer
    ? new ResourceClient<MaintenancePlan>(writer, maintenancePlanResource)
    : plans;
  return client.create({
    apiVersion: maintenancePlanResource.apiVersion,
    kind: 'MaintenancePlan',
    metadata: { name },
    spec: {
      reason: 'kernel update',
      requestedBy: ADMIN_USER,
      // The healthy return's default (60 s Ready per step) is planAlerts' subject.
      healthyReturn: { healthyForSeconds: 0 },
      ...spec,
    },
  } as any);
}

function planIs(
  name: string,
  what: string,
  test: (plan: MaintenancePlan) => boolean,
  timeoutMs = 60_000,
): Promise<MaintenancePlan> {
  return env.waitFor(
    `plan ${name}: ${what}`,
    async () => {
      const plan = await plans.get(name);
      return test(plan) && plan;
    },
    timeoutMs,
  );
}

async function stepsOf(plan: string): Promise<NodeMaintenance[]> {
  const { items } = await env.nms.list({
    labelSelector: `rackside.dev/plan=${plan}`,
  });
  return items;
}

/** The most steps of a plan that were open at the same moment, from their histories. */
function mostOpenAtOnce(steps: NodeMaintenance[]): number {
  const edges = steps.flatMap(nm => {
    const start = Date.parse(nm.status?.history?.[0]?.at ?? '');
    const end = Date.parse(nm.status?.completedAt ?? '');
    return [
      { at: start, d: 1 },
      { at: end, d: -1 },
    ];
  });
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let open = 0;
  let most = 0;
  for (const e of edges) {
    open += e.d;
    most = Math.max(most, open);
  }
  return most;
}

/** Starts the operator and waits until it is ready. */
const startOperator = () =>
  env.startReady({
    drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
    power: { rebootSeconds: 90, unansweredSeconds: 60 },
    // The chart's operator.planGateReads: the object gate below reads ConfigMaps.
    planGateReads: ['configmaps'],
  });

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: false,
    withWorkloads: true,
  });
  plans = new ResourceClient<MaintenancePlan>(
    env.admin,
    maintenancePlanResource,
  );
  rack = powerRack(env);
  await rack.createPowerSecrets();
  // An object gate below reads ConfigMaps in default: the deployer grants that read.
  const rbac = (plural: string, kind: string) =>
    new ResourceClient<any>(env.admin, {
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      plural,
      kind,
      namespaced: true,
    });
  await rbac('roles', 'Role').create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'plan-gates', namespace: 'default' },
    rules: [
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'list', 'watch'],
      },
    ],
  });
  await rbac('rolebindings', 'RoleBinding').create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'plan-gates', namespace: 'default' },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'plan-gates',
    },
    subjects: [
      { kind: 'ServiceAccount', name: 'rackside-operator', namespace: NS },
    ],
  });
  operator = await startOperator();
  await rack.provide(TALOS_PROVIDER);
  await env.waitFor(
    'the channel advertises reboot',
    async () =>
      (await rack.providers.get(POWER_PROVIDER_NAME)).status?.reboot === true,
  );
}, 300_000);

afterAll(async () => {
  await operator?.stop();
  await env?.stop();
}, 60_000);

describe('MaintenancePlan', () => {
  it('reboots five workers two at a time, waits on the blocking budget saying why, survives an operator restart, and reboots each once', async () => {
    const before = await reboots();
    await createPlan('roll', {
      intent: 'reboot',
      nodes: WORKERS,
      maxParallel: 2,
      drain: DRAIN,
    });
    // The payments budget allows no eviction: a step's drain waits, and the plan says so.
    const blocked = await planIs(
      'roll',
      'a step held by the payments budget',
      p =>
        (p.status?.nodes ?? []).some(n =>
          /PodDisruptionBudget payments/.test(n.message ?? ''),
        ) && /PodDisruptionBudget payments/.test(p.status?.message ?? ''),
      120_000,
    );
    expect(blocked.status?.phase).toBe('Running');
    expect(blocked.status?.counts?.running).toBeLessThanOrEqual(2);
    expect(blocked.status?.nodes?.map(n => n.name)).toEqual(WORKERS);

    // The operator dies mid-plan; a new one picks up from status.
    await operator!.stop();
    operator = await startOperator();

    await paymentsMinAvailable(1);
    const done = await planIs(
      'roll',
      'Complete',
      p => p.status?.phase === 'Complete',
      240_000,
    );
    expect(done.status?.counts).toMatchObject({ total: 5, done: 5 });
    expect(done.status?.message).toBe('5 of 5 rebooted');
    expect(done.status?.estimate?.stepSeconds).toBeGreaterThan(0);

    const steps = await stepsOf('roll');
    expect(steps.map(s => s.metadata.name).sort()).toEqual(
      WORKERS.map(w => `roll-${w}`).sort(),
    );
    for (const nm of steps) {
      expect(nm.status?.phase).toBe('Complete');
      expect(nm.spec).toMatchObject({
        intent: 'reboot',
        reason: 'kernel update',
        requestedBy: ADMIN_USER,
      });
      expect(nm.metadata.ownerReferences).toEqual([
        expect.objectContaining({
          kind: 'MaintenancePlan',
          name: 'roll',
          uid: done.metadata.uid,
          controller: true,
        }),
      ]);
    }
    expect(mostOpenAtOnce(steps)).toBeLessThanOrEqual(2);
    const after = await reboots();
    for (const w of WORKERS) expect(after[w] - before[w]).toBe(1);
    for (const w of WORKERS) expect(await env.unschedulable(w)).toBe(false);
  });

  it('cancel with onCancel abandon abandons the open step and skips the rest', async () => {
    await paymentsMinAvailable(2);
    const { items: pods } = await env.core.listNamespacedPod({
      namespace: 'shop',
      labelSelector: 'app=payments',
    });
    const node = pods.find(p => p.status?.phase === 'Running')!.spec!.nodeName!;
    // Control-plane members go after every worker: cp-1 is the step not started.
    await createPlan('cancel-me', {
      intent: 'drain',
      nodes: ['cp-1', node],
      onCancel: 'abandon',
      drain: DRAIN,
    });
    await planIs('cancel-me', `${node} held by the payments budget`, p =>
      (p.status?.nodes ?? []).some(
        n =>
          n.name === node &&
          n.phase === 'Running' &&
          /PodDisruptionBudget payments/.test(n.message ?? ''),
      ),
    );
    await plans.patch(
      'cancel-me',
      { spec: { cancel: { by: ADMIN_USER, reason: 'wrong pool' } } } as any,
      { type: 'merge' },
    );
    const cancelled = await planIs(
      'cancel-me',
      'Cancelled',
      p => p.status?.phase === 'Cancelled',
    );
    expect(cancelled.status?.message).toBe(
      `cancelled by ${ADMIN_USER}: wrong pool`,
    );
    const steps = await stepsOf('cancel-me');
    expect(steps.map(s => s.metadata.name)).toEqual([`cancel-me-${node}`]);
    expect(steps[0].spec.abandon?.by).toBe(ADMIN_USER);
    expect(steps[0].status).toMatchObject({
      phase: 'Complete',
      abandoned: true,
    });
    expect(cancelled.status?.nodes).toEqual([
      expect.objectContaining({
        name: node,
        phase: 'Skipped',
        message: `abandoned by ${ADMIN_USER}`,
      }),
      expect.objectContaining({
        name: 'cp-1',
        phase: 'Skipped',
        message: 'the plan was cancelled',
      }),
    ]);
    expect(await env.unschedulable(node)).toBe(false);
    await paymentsMinAvailable(1);
  });

  it('a window that opens in a few seconds: Waiting with when, then the step starts', async () => {
    const notBefore = new Date(Date.now() + 4000);
    notBefore.setMilliseconds(0);
    await createPlan('tonight', {
      intent: 'reboot',
      nodes: ['worker-4'],
      drain: DRAIN,
      window: { notBefore: notBefore.toISOString() },
    });
    const waiting = await planIs(
      'tonight',
      'Waiting on the window',
      p => p.status?.waiting?.on === 'window',
    );
    expect(waiting.status).toMatchObject({
      phase: 'Waiting',
      waiting: {
        message: `the window opens at ${notBefore.toISOString()}`,
        until: notBefore.toISOString(),
      },
    });
    expect(await stepsOf('tonight')).toHaveLength(0);
    const done = await planIs(
      'tonight',
      'Complete',
      p => p.status?.phase === 'Complete',
      90_000,
    );
    expect(
      Date.parse(done.status!.nodes![0].startedAt!),
    ).toBeGreaterThanOrEqual(notBefore.getTime());
  });

  it('the every-PodDisruptionBudget-healthy gate holds the plan while payments is below its budget, saying which, then lets it run', async () => {
    const budgets = new ResourceClient<any>(
      env.admin,
      coreResources.podDisruptionBudgets,
    );
    const deployments = new ResourceClient<any>(env.admin, {
      group: 'apps',
      version: 'v1',
      plural: 'deployments',
      kind: 'Deployment',
      namespaced: true,
    });
    const payments = (replicas: number) =>
      deployments.patch(
        'payments',
        { spec: { replicas } },
        { type: 'merge', namespace: 'shop' },
      );
    const healthy = (b: any) =>
      b.status?.observedGeneration === b.metadata.generation &&
      b.status.currentHealthy >= b.status.desiredHealthy;
    await paymentsMinAvailable(1);
    await env.waitFor('every budget healthy', async () =>
      (await budgets.list()).items.every(healthy),
    );
    // payments loses both replicas: 0 healthy pods against a budget of 1.
    await payments(0);
    await env.waitFor('payments below its budget', async () => {
      const b = await budgets.get('payments', { namespace: 'shop' });
      return b.status?.currentHealthy === 0 && b.status?.desiredHealthy === 1;
    });
    const nodes = ['worker-3', 'worker-6'];
    const before = await reboots();
    await createPlan('budgets', {
      intent: 'reboot',
      nodes,
      drain: DRAIN,
    });
    const held = await planIs(
      'budgets',
      'Waiting on the budget gate, naming payments',
      p =>
        p.status?.waiting?.message ===
        'PodDisruptionBudgets below their desired healthy pods: shop/payments',
    );
    expect(held.status).toMatchObject({
      phase: 'Waiting',
      waiting: { on: 'gate', gate: 'podDisruptionBudgetsHealthy' },
    });
    expect(held.status?.waiting?.until).toBeUndefined();
    expect(held.status?.nodes?.map(n => [n.name, n.phase])).toEqual(
      nodes.map(n => [n, 'Pending']),
    );
    expect(await stepsOf('budgets')).toHaveLength(0);
    expect((await plans.get('budgets')).status?.waiting?.gate).toBe(
      'podDisruptionBudgetsHealthy',
    );

    // payments is back: the budget is healthy again and the plan goes on by itself.
    const healedAt = Date.now();
    await payments(2);
    const done = await planIs(
      'budgets',
      'Complete',
      p => p.status?.phase === 'Complete',
      180_000,
    );
    expect(done.status?.waiting).toBeUndefined();
    expect(done.status?.counts).toMatchObject({ total: 2, done: 2 });
    for (const step of done.status!.nodes!)
      expect(Date.parse(step.startedAt!)).toBeGreaterThanOrEqual(
        Math.floor(healedAt / 1000) * 1000,
      );
    expect((await stepsOf('budgets')).map(s => s.metadata.name).sort()).toEqual(
      nodes.map(n => `budgets-${n}`),
    );
    const after = await reboots();
    for (const n of nodes) expect(after[n] - before[n]).toBe(1);
  });

  it('control plane: one at a time, held by a false object gate, paused and resumed, stops at a refusal with the numbers', async () => {
    const configMaps = new ResourceClient<any>(env.admin, {
      group: '',
      version: 'v1',
      plural: 'configmaps',
      kind: 'ConfigMap',
      namespaced: true,
    });
    const go = (value: string) =>
      configMaps.apply(
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'plan-go', namespace: 'default' },
          data: { go: value },
        },
        { force: true },
      );
    await go('no');
    const before = await reboots();
    // Each control-plane reboot takes the last quorum margin: the plan carries the rung
    // each step was acknowledged at, which only the Backstage backend writes.
    await createPlan(
      'cp',
      {
        intent: 'reboot',
        nodes: ['cp-3', 'cp-1', 'cp-2'],
        acknowledged: { 'cp-1': 'hazard', 'cp-2': 'hazard', 'cp-3': 'hazard' },
        gates: {
          objects: [
            {
              name: 'go',
              apiVersion: 'v1',
              kind: 'ConfigMap',
              namespace: 'default',
              objectName: 'plan-go',
              field: { path: '.data.go', value: 'yes' },
            },
          ],
        },
      },
      await env.backstageKc(),
    );
    const held = await planIs(
      'cp',
      'waiting on gate go',
      p => p.status?.waiting?.gate === 'go',
    );
    expect(held.status).toMatchObject({
      phase: 'Waiting',
      waiting: {
        on: 'gate',
        message: 'ConfigMap default/plan-go: .data.go is not yes',
      },
    });
    expect(held.status?.nodes?.map(n => n.name)).toEqual([
      'cp-1',
      'cp-2',
      'cp-3',
    ]);
    expect(await stepsOf('cp')).toHaveLength(0);

    await go('yes');
    await planIs(
      'cp',
      'cp-1 running',
      p => p.status?.nodes?.[0].phase === 'Running',
    );
    await go('no');
    // One at a time: cp-2 waits while cp-1 is open.
    expect((await stepsOf('cp')).map(s => s.metadata.name)).toEqual([
      'cp-cp-1',
    ]);
    await planIs(
      'cp',
      'cp-1 done, held by the gate',
      p =>
        p.status?.nodes?.[0].phase === 'Done' &&
        p.status?.waiting?.gate === 'go',
      120_000,
    );

    // Paused: the gate turning true starts nothing.
    await plans.patch(
      'cp',
      {
        spec: {
          pause: {
            by: ADMIN_USER,
            reason: 'shift change',
            at: new Date().toISOString(),
          },
        },
      } as any,
      { type: 'merge' },
    );
    await planIs('cp', 'Paused', p => p.status?.phase === 'Paused');
    await go('yes');
    // cp-3 goes down outside Rackside: the next control-plane reboot would lose quorum.
    await power('cp-3', 'off');
    await env.waitFor('cp-3 NotReady', async () => !(await isReady('cp-3')));
    const paused = await plans.get('cp');
    expect(paused.status?.phase).toBe('Paused');
    expect(paused.status?.message).toBe(
      `paused by ${ADMIN_USER}: shift change`,
    );
    expect(await stepsOf('cp')).toHaveLength(1);

    await plans.patch(
      'cp',
      {
        spec: {
          resume: {
            by: ADMIN_USER,
            reason: 'back',
            at: new Date(Date.now() + 1000).toISOString(),
          },
        },
      } as any,
      { type: 'merge' },
    );
    const failed = await planIs(
      'cp',
      'Failed',
      p => p.status?.phase === 'Failed',
    );
    expect(failed.status?.counts).toMatchObject({
      total: 3,
      done: 1,
      refused: 1,
      skipped: 1,
    });
    expect(failed.status?.nodes?.[1]).toMatchObject({
      name: 'cp-2',
      phase: 'Refused',
      maintenance: 'cp-cp-2',
    });
    expect(failed.status?.message).toMatch(
      /1 step\(s\) failed or were refused \(tolerated: 0\): cp-2 refused: .*\(members 3, quorum 2, ready 2, margin 0\)/,
    );
    const after = await reboots();
    expect(after['cp-1'] - before['cp-1']).toBe(1);
    expect(after['cp-2'] - before['cp-2']).toBe(0);
    expect(after['cp-3'] - before['cp-3']).toBe(0);
    await power('cp-3', 'on');
  });
});
