/*
 * A rolling Talos upgrade through a MaintenancePlan on the simulated rack (docs/plans.md,
 * "Rolling upgrades"; docs/upgrades.md, "The operator's own node"): the six workers at
 * maxParallel 2, one of them already at the target (Skipped up front, nothing sent to it),
 * and two operator replicas, the leader saying it runs on worker-4. The leader must not
 * send worker-4's upgrade: it hands the Lease over and the other replica sends it. The
 * Talos emulator's record of every Upgrade it received says how many were sent; the
 * Events' reporting instance says which replica did what.
 */
import {
  maintenancePlanResource,
  POWER_PROVIDER_NAME,
  type MaintenancePlan,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import { ResourceClient } from '@rackside/plugin-servers-node';
import type { Operator, OperatorOptions } from './operator';
import {
  ADMIN_USER,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';
import { powerRack, TALOS_PROVIDER } from './testing/powerRack';

jest.setTimeout(300_000);

const FACTORY = 'factory.talos.dev/installer/';
const SCHEMATIC =
  '376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba';
const TARGET = 'v1.14.0';
const IMAGE = `${FACTORY}${SCHEMATIC}:${TARGET}`;
const WORKERS = [
  'worker-1',
  'worker-2',
  'worker-3',
  'worker-4',
  'worker-5',
  'worker-6',
];
/** Already at the target before the plan: Skipped up front. */
const AT_TARGET = 'worker-2';
/** The node the first leader says it runs on. */
const LEADERS_NODE = 'worker-4';

interface UpgradeHistory {
  version: string;
  count: number;
}

let env: OperatorRack;
let rack: ReturnType<typeof powerRack>;
let plans: ResourceClient<MaintenancePlan>;
let first: Operator | undefined;
let second: Operator | undefined;
let firstLostLeadership = 0;

const upgradesOf = (node: string) =>
  rack.control<UpgradeHistory>(`/machines/${rack.uuidOf(node)}/upgrades`);

/** Both replicas as the Deployment runs them, with short election times. */
const replica = (
  identity: string,
  nodeName: string,
  extra: Partial<OperatorOptions> = {},
): Partial<OperatorOptions> => ({
  identity,
  nodeName,
  leaderElection: {
    leaseDurationMs: 4000,
    renewDeadlineMs: 2500,
    retryPeriodMs: 250,
  },
  drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
  power: { rebootSeconds: 90, unansweredSeconds: 60, upgradeSeconds: 90 },
  upgrades: { imagePrefixes: [FACTORY] },
  ...extra,
});

/** The Events about `name`, with the replica that reported each. */
async function eventsOf(name: string) {
  const { items } = await env.core.listNamespacedEvent({
    namespace: 'default',
    fieldSelector: `involvedObject.name=${name}`,
  });
  return items.map(e => ({
    reason: e.reason ?? '',
    instance: e.reportingInstance ?? '',
    message: e.message ?? '',
  }));
}

/** The most steps of a plan open at the same moment, from their histories. */
function mostOpenAtOnce(steps: NodeMaintenance[]): number {
  const edges = steps.flatMap(nm => [
    { at: Date.parse(nm.status?.history?.[0]?.at ?? ''), d: 1 },
    { at: Date.parse(nm.status?.completedAt ?? ''), d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let open = 0;
  let most = 0;
  for (const e of edges) {
    open += e.d;
    most = Math.max(most, open);
  }
  return most;
}

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: false,
    withWorkloads: false,
  });
  plans = new ResourceClient<MaintenancePlan>(
    env.admin,
    maintenancePlanResource,
  );
  rack = powerRack(env);
  await rack.createPowerSecrets();
  await rack.control('/upgrade', {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ delayMs: 500, failing: [] }),
  });
  // The first replica leads before the second starts: it is the one on worker-4.
  first = await env.startReady(
    replica('replica-on-worker-4', LEADERS_NODE, {
      onLostLeadership: () => {
        firstLostLeadership++;
      },
    }),
  );
  await env.waitFor('the first replica leads', async () => first!.isLeader());
  second = await env.start(replica('replica-on-cp-1', 'cp-1'));
  await env.waitFor('the second replica is ready', async () =>
    second!.isReady(),
  );
  await rack.provide(TALOS_PROVIDER);
  await env.waitFor(
    'the channel advertises reboot',
    async () =>
      (await rack.providers.get(POWER_PROVIDER_NAME)).status?.reboot === true,
  );
}, 300_000);

afterAll(async () => {
  await first?.stop();
  await second?.stop();
  await env?.stop();
}, 60_000);

describe('a rolling Talos upgrade plan', () => {
  it('upgrades the six workers two at a time, skips the one already there, and hands the Lease over before its own node', async () => {
    await rack.control(`/machines/${rack.uuidOf(AT_TARGET)}/version`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ version: TARGET }),
    });
    await env.waitFor(`${AT_TARGET} reporting the target`, async () => {
      const node = await env.nodes.get(AT_TARGET);
      return node.status?.nodeInfo?.osImage === `Talos (${TARGET})`;
    });
    const before = Object.fromEntries(
      await Promise.all(
        WORKERS.map(async w => [w, await upgradesOf(w)] as const),
      ),
    );
    for (const w of WORKERS.filter(n => n !== AT_TARGET)) {
      expect(before[w].version).not.toBe(TARGET);
    }
    expect(first!.isLeader()).toBe(true);

    await plans.create({
      apiVersion: maintenancePlanResource.apiVersion,
      kind: 'MaintenancePlan',
      metadata: { name: 'talos' },
      spec: {
        intent: 'upgrade',
        upgrade: { image: IMAGE },
        nodes: WORKERS,
        maxParallel: 2,
        reason: 'Talos upgrade',
        requestedBy: ADMIN_USER,
        healthyReturn: { healthyForSeconds: 0 },
      },
    } as any);

    // Skipped up front: the plan's first status already says so.
    const resolved = await env.waitFor('the plan resolved', async () => {
      const plan = await plans.get('talos');
      return plan.status?.nodes && plan;
    });
    expect(
      resolved.status?.nodes?.find(s => s.name === AT_TARGET),
    ).toMatchObject({
      phase: 'Skipped',
      message: `already at ${TARGET}`,
      talosVersion: { before: TARGET, after: TARGET },
    });
    expect(resolved.status?.upgrade?.summary).toBe(`1 of 6 at ${TARGET}`);

    const done = await env.waitFor(
      'the plan Complete',
      async () => {
        const plan = await plans.get('talos');
        if (plan.status?.phase === 'Failed') {
          throw new Error(`plan failed: ${plan.status.message}`);
        }
        return plan.status?.phase === 'Complete' && plan;
      },
      240_000,
    );
    expect(done.status?.message).toBe(
      `5 of 6 upgraded, 1 skipped (already at ${TARGET})`,
    );
    expect(done.status?.upgrade).toEqual({
      target: TARGET,
      atTarget: 6,
      total: 6,
      summary: `6 of 6 at ${TARGET}`,
    });
    for (const step of done.status?.nodes ?? []) {
      if (step.name === AT_TARGET) continue;
      expect(step).toMatchObject({
        phase: 'Done',
        talosVersion: { before: before[step.name].version, after: TARGET },
      });
    }

    // One Upgrade per upgraded machine, none to the one already there.
    for (const w of WORKERS) {
      const after = await upgradesOf(w);
      expect(after.version).toBe(TARGET);
      expect(after.count).toBe(before[w].count + (w === AT_TARGET ? 0 : 1));
    }
    const { items: steps } = await env.nms.list({
      labelSelector: 'rackside.dev/plan=talos',
    });
    expect(steps.map(s => s.spec.nodeName).sort()).toEqual(
      WORKERS.filter(w => w !== AT_TARGET),
    );
    for (const s of steps) expect(s.spec.upgrade).toEqual({ image: IMAGE });
    expect(mostOpenAtOnce(steps)).toBeLessThanOrEqual(2);

    // worker-4's upgrade: the replica on it handed over, the other one sent it.
    expect(firstLostLeadership).toBe(1);
    expect(first!.isLeader()).toBe(false);
    expect(second!.isLeader()).toBe(true);
    const ownStep = `talos-${LEADERS_NODE}`;
    const events = await eventsOf(ownStep);
    expect(events).toContainEqual(
      expect.objectContaining({
        reason: 'LeaderHandover',
        instance: 'replica-on-worker-4',
      }),
    );
    const sent = events.filter(e => e.reason === 'Rebooting');
    expect(sent).toEqual([
      expect.objectContaining({ instance: 'replica-on-cp-1' }),
    ]);
    expect(
      (await env.nms.get(ownStep)).status?.power?.upgrade?.sentAt,
    ).toBeDefined();
  });
});
