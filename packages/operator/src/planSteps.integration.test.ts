/*
 * A plan's steps tell the truth and its status stays within its schema (docs/plans.md),
 * tried with kubectl on the simulated rack: the operator under its own ServiceAccount and
 * the chart's admission policies, the Talos emulator counting every verb it receives, the
 * fixture's payments budget (minAvailable 2 of 2 replicas) holding a drain.
 *
 * - A node returned to service while its reboot step drains is Skipped ("returned to
 *   service before the reboot"), not Done, and the plan says so when it completes.
 * - A plan of 24 long node names gets a status: every message is cut to the CRD limit.
 * - A NodeMaintenance made with kubectl under a step's name, owned by the plan, is adopted
 *   only if its node, intent and requester are the plan's.
 * - Object gates read nothing: a gate on a pod's containers never shows what it read; a
 *   gate on a namespaced kind without a namespace, or on a kind the chart does not allow,
 *   is refused; a plan of 9 gates is refused.
 */
import {
  maintenancePlanResource,
  POWER_PROVIDER_NAME,
  type MaintenancePlan,
} from '@rackside/plugin-servers-common';
import { coreResources, ResourceClient } from '@rackside/plugin-servers-node';
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

/** The fixture's pods need these to be evicted (an emptyDir cache, an unmanaged shell). */
const DRAIN = { deleteEmptyDirData: true, force: true };

function planObject(name: string, spec: Record<string, unknown>) {
  return {
    apiVersion: maintenancePlanResource.apiVersion,
    kind: 'MaintenancePlan',
    metadata: { name },
    spec: {
      intent: 'reboot',
      reason: 'kernel update',
      requestedBy: ADMIN_USER,
      // The healthy return's default (60 s Ready per step) is planAlerts' subject.
      healthyReturn: { healthyForSeconds: 0 },
      ...spec,
    },
  } as any;
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

/** The node a running payments pod is on: its drain waits on the payments budget. */
async function paymentsNode(): Promise<string> {
  const { items } = await env.core.listNamespacedPod({
    namespace: 'shop',
    labelSelector: 'app=payments',
  });
  return items.find(p => p.status?.phase === 'Running')!.spec!.nodeName!;
}

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
  operator = await env.startReady({
    drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
    power: { rebootSeconds: 90, unansweredSeconds: 60 },
    // The chart's operator.planGateReads: [{apiGroups: [''], resources: [pods]}].
    planGateReads: ['pods'],
  });
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

describe('a plan step tells the truth', () => {
  it('a node returned to service while its reboot step drains is Skipped, not rebooted, and the plan says so', async () => {
    await paymentsMinAvailable(2);
    const node = await paymentsNode();
    const before = await rack.rebootsByNode();
    await plans.create(planObject('truth', { nodes: [node], drain: DRAIN }));
    const held = await planIs(
      'truth',
      `${node} held by the payments budget`,
      p =>
        (p.status?.nodes ?? []).some(n =>
          /PodDisruptionBudget payments/.test(n.message ?? ''),
        ),
      120_000,
    );
    // A person returns the node to service with kubectl before the reboot is sent.
    await env.nms.patch(
      held.status!.nodes![0].maintenance!,
      {
        spec: {
          returnToService: {
            by: ADMIN_USER,
            reason: 'needed back',
            at: new Date().toISOString(),
          },
        },
      } as any,
      { type: 'merge' },
    );
    const done = await planIs(
      'truth',
      'Complete',
      p => p.status?.phase === 'Complete',
      120_000,
    );
    expect(done.status?.nodes?.[0]).toMatchObject({
      name: node,
      phase: 'Skipped',
      message: 'returned to service before the reboot',
    });
    expect(done.status?.counts).toMatchObject({ done: 0, skipped: 1 });
    expect(done.status?.message).toBe(
      '0 of 1 rebooted, 1 returned to service before the reboot',
    );
    expect(await rack.rebootsByNode()).toEqual(before);
    await paymentsMinAvailable(1);
  });
});

describe('a plan status within its schema', () => {
  it('a plan of 24 long node names gets a status: its messages cut to the CRD limits', async () => {
    // 24 names of 200 characters: listed whole, the message would pass 4096.
    const names = Array.from(
      { length: 24 },
      (_, i) =>
        `${'r'.repeat(60)}.${'a'.repeat(60)}.${'c'.repeat(60)}.node-${String(
          i,
        ).padStart(10, '0')}`,
    );
    await plans.create(planObject('long-names', { nodes: names }));
    // None of them is a Node: each step is Skipped, and the plan completes.
    const done = await planIs(
      'long-names',
      'Complete',
      p => p.status?.phase === 'Complete',
    );
    expect(done.status?.nodes).toHaveLength(24);
    expect(done.status?.message?.length).toBeLessThanOrEqual(4096);
    expect(done.status?.message).toBe(
      '0 of 24 rebooted, 24 skipped (no such Node)',
    );
    const reasons = await env.eventReasons('long-names', ['Resolved']);
    expect(reasons).not.toContain('StatusWriteFailed');
  });
});

describe('a step is adopted only if it is what the plan would have created', () => {
  it('a NodeMaintenance made with kubectl under the step name, owned by the plan, for another intent, fails the step: nothing is sent', async () => {
    const before = await rack.rebootsByNode();
    // Paused from the start: the plan resolves its nodes and starts nothing.
    const plan = await plans.create(
      planObject('adopt', {
        nodes: ['worker-2'],
        drain: DRAIN,
        pause: {
          by: ADMIN_USER,
          reason: 'not yet',
          at: new Date().toISOString(),
        },
      }),
    );
    await planIs('adopt', 'Paused', p => p.status?.phase === 'Paused');
    // The admin writes the step's name, with the plan as its controller owner.
    await env.nms.create({
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'NodeMaintenance',
      metadata: {
        name: 'adopt-worker-2',
        ownerReferences: [
          {
            apiVersion: plan.apiVersion,
            kind: 'MaintenancePlan',
            name: 'adopt',
            uid: plan.metadata.uid!,
            controller: true,
          },
        ],
      },
      spec: {
        nodeName: 'worker-2',
        intent: 'cordon',
        reason: 'hand-made',
        requestedBy: ADMIN_USER,
      },
    } as any);
    const failed = await planIs(
      'adopt',
      'Failed',
      p => p.status?.phase === 'Failed',
    );
    expect(failed.status?.nodes?.[0]).toMatchObject({
      name: 'worker-2',
      phase: 'Failed',
      message:
        'NodeMaintenance adopt-worker-2 names this plan as its owner but has intent cordon, not reboot: not adopted, nothing is done on worker-2',
    });
    expect(await rack.rebootsByNode()).toEqual(before);
    // The hand-made cordon is the admin's own request: returned, it ends.
    await env.nms.patch(
      'adopt-worker-2',
      {
        spec: {
          returnToService: {
            by: ADMIN_USER,
            reason: 'test done',
            at: new Date().toISOString(),
          },
        },
      } as any,
      { type: 'merge' },
    );
    await env.phaseIs('adopt-worker-2', 'Complete');
  });
});

describe('object gates read nothing', () => {
  const gatePlan = (name: string, gate: Record<string, unknown>) =>
    planObject(name, {
      nodes: ['worker-6'],
      gates: { objects: [{ name: 'g', ...gate }] },
    });

  it("a gate on a pod's containers waits saying what it expects, never the pod's environment", async () => {
    const secret = 'sekrit-env-value-4711';
    await env.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'gate-env', labels: { app: 'gate-env' } },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'registry.example/app:1',
              env: [{ name: 'DB_PASSWORD', value: secret }],
            },
          ],
        },
      },
    });
    await plans.create(
      gatePlan('pod-gate', {
        apiVersion: 'v1',
        kind: 'Pod',
        namespace: 'default',
        objectName: 'gate-env',
        field: { path: '.spec.containers', value: 'x' },
      }),
    );
    const held = await planIs(
      'pod-gate',
      'waiting on gate g',
      p =>
        p.status?.waiting?.gate === 'g' &&
        !/reading/.test(p.status.waiting.message),
    );
    expect(held.status?.waiting?.message).toBe(
      'Pod default/gate-env: .spec.containers is not x',
    );
    expect(JSON.stringify(held)).not.toContain(secret);
    expect(
      await env.nms.list({ labelSelector: 'rackside.dev/plan=pod-gate' }),
    ).toMatchObject({ items: [] });
  });

  it('a gate on a namespaced kind without a namespace, or on a kind the chart does not allow, is refused: the plan fails, starting nothing', async () => {
    await plans.create(
      gatePlan('no-namespace', {
        apiVersion: 'v1',
        kind: 'Pod',
        selector: { matchLabels: { app: 'gate-env' } },
        condition: { type: 'Ready', status: 'True' },
      }),
    );
    await plans.create(
      gatePlan('not-allowed', {
        apiVersion: 'v1',
        kind: 'Secret',
        namespace: NS,
        objectName: 'anything',
        field: { path: '.data.password', value: 'x' },
      }),
    );
    const noNamespace = await planIs(
      'no-namespace',
      'Failed',
      p => p.status?.phase === 'Failed',
    );
    expect(noNamespace.status?.message).toBe(
      'gate g refused: pods is namespaced: the gate names its namespace (a gate never reads a kind cluster-wide)',
    );
    const notAllowed = await planIs(
      'not-allowed',
      'Failed',
      p => p.status?.phase === 'Failed',
    );
    expect(notAllowed.status?.message).toBe(
      "gate g refused: secrets is not among the kinds plan gates may read (the chart's operator.planGateReads)",
    );
    for (const plan of ['no-namespace', 'not-allowed']) {
      const { items } = await env.nms.list({
        labelSelector: `rackside.dev/plan=${plan}`,
      });
      expect(items).toEqual([]);
    }
  });

  it('a plan of 9 object gates is refused at admission', async () => {
    const gate = (i: number) => ({
      name: `g${i}`,
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: 'default',
      objectName: 'gate-env',
      condition: { type: 'Ready', status: 'True' },
    });
    await expect(
      plans.create(
        planObject('nine-gates', {
          nodes: ['worker-6'],
          gates: { objects: Array.from({ length: 9 }, (_, i) => gate(i)) },
        }),
      ),
    ).rejects.toThrow(/must have at most 8 items|Too many/);
  });
});
