/*
 * Discovery and Add node on the simulated rack: the operator with its own ServiceAccount
 * probes a TalosCluster's addresses on the Talos emulator, a spare machine in maintenance
 * mode becomes a Pending TalosMachine, spec.join applies the join config and the machine
 * is Joined when its Node (created by the emulator, made Ready by kwok) carries its UUID.
 */
import type { Operator } from './operator';
import {
  ADMIN_USER,
  OPERATOR_NAMESPACE as NS,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';
import { machinesRack } from './testing/machinesRack';

jest.setTimeout(120_000);

let env: OperatorRack;
let rack: ReturnType<typeof machinesRack>;
let operator: Operator | undefined;

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: false,
    withWorkloads: false,
  });
  rack = machinesRack(env);
  await rack.createClusterSecrets();
  operator = await env.startReady();
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await env?.stop();
}, 60_000);

describe('discovery', () => {
  it('tells Maintenance (with UUID), Member, AlreadyConfigured and Unreachable apart', async () => {
    const [spare] = rack.spares;
    const member = rack.byNode('cp-1');
    const foreign = rack.foreign[0];
    const nowhere = rack.unusedAddress(99);
    await rack.createCluster(
      [spare.address, member.address, foreign.address, nowhere],
      300,
    );
    const cluster = await env.waitFor('the first discovery pass', async () => {
      const c = await rack.cluster();
      return c.status?.addresses?.length === 4 && c;
    });
    const byAddress = Object.fromEntries(
      cluster.status!.addresses!.map(a => [a.address, a]),
    );
    expect(byAddress[spare.address]).toMatchObject({
      state: 'Maintenance',
      uuid: spare.uuid,
    });
    expect(byAddress[member.address]).toMatchObject({
      state: 'Member',
      uuid: member.uuid,
    });
    expect(byAddress[foreign.address]).toMatchObject({
      state: 'AlreadyConfigured',
      message: expect.stringMatching(/another Talos cluster/),
    });
    expect(byAddress[foreign.address].uuid).toBeUndefined();
    expect(byAddress[nowhere].state).toBe('Unreachable');
    expect(cluster.status?.observedGeneration).toBe(
      cluster.metadata.generation,
    );
    expect(cluster.status?.conditions?.[0]).toMatchObject({
      type: 'Ready',
      status: 'True',
    });

    const tm = await rack.machinePhase(spare.uuid, 'Pending');
    expect(tm.spec.cluster).toBe('plant-a');
    expect(tm.status?.address).toBe(spare.address);
    // Only the machine in maintenance mode became a TalosMachine.
    const { items } = await rack.api.talosMachines.list({ namespace: NS });
    expect(items.map(m => m.metadata.name)).toEqual([spare.uuid]);
    expect(await rack.eventReasons('plant-a', ['MachineDiscovered'])).toContain(
      'MachineDiscovered',
    );
  });

  it('probes an added address at once, not at the next interval', async () => {
    const second = rack.spares[1];
    const cluster = await rack.cluster();
    const before = cluster.status!.lastDiscoveryTime!;
    await rack.api.talosClusters.patch(
      'plant-a',
      {
        spec: {
          discovery: {
            addresses: [...cluster.spec.discovery!.addresses!, second.address],
          },
        },
      } as any,
      { namespace: NS, type: 'merge' },
    );
    // The interval is 300 s: a Pending machine within seconds proves the wake-up.
    const tm = await rack.machinePhase(second.uuid, 'Pending', 20_000);
    expect(tm.status?.address).toBe(second.address);
    // The probe of the new address is in status, and no earlier than the last pass
    // (timestamps have whole seconds: the wake-up can land in the same second). The
    // pass creates the machine before it writes the cluster's status: wait for that
    // write rather than read between the two (clean-clone CI of c0f648c did).
    const after = await env.waitFor(
      `plant-a's status lists ${second.address}`,
      async () => {
        const status = (await rack.cluster()).status;
        return (
          status?.addresses?.some(a => a.address === second.address) && status
        );
      },
      20_000,
    );
    expect(after.addresses).toContainEqual(
      expect.objectContaining({
        address: second.address,
        state: 'Maintenance',
      }),
    );
    expect(Date.parse(after.lastDiscoveryTime!)).toBeGreaterThanOrEqual(
      Date.parse(before),
    );
  });
});

describe('Add node', () => {
  it('joins a spare on spec.join: config applied once, Joined when its Node is Ready', async () => {
    const [spare] = rack.spares;
    expect((await rack.counts(spare.uuid)).apply ?? 0).toBe(0);
    await rack.api.talosMachines.patch(
      spare.uuid,
      {
        spec: {
          join: {
            by: ADMIN_USER,
            reason: 'more capacity for shop',
            at: new Date().toISOString(),
          },
        },
      } as any,
      { namespace: NS, type: 'merge' },
    );
    const joined = await rack.machinePhase(spare.uuid, 'Joined', 60_000);
    expect(joined.status).toMatchObject({
      configAppliedAt: expect.any(String),
      joinedAt: expect.any(String),
      nodeName: expect.any(String),
    });
    const node = await env.nodes.get(joined.status!.nodeName!);
    expect(node.status?.nodeInfo?.systemUUID?.toLowerCase()).toBe(spare.uuid);
    expect(node.status?.conditions?.find(c => c.type === 'Ready')?.status).toBe(
      'True',
    );
    expect((await rack.counts(spare.uuid)).apply).toBe(1);
    expect((await rack.emulated(spare.uuid)).cluster).toBe('plant-a');
    expect(
      await rack.eventReasons(spare.uuid, ['ConfigApplied', 'Joined']),
    ).toEqual(expect.arrayContaining(['ConfigApplied', 'Joined']));

    // The next discovery pass sees a member where the spare was.
    await rack.api.talosClusters.patch(
      'plant-a',
      { spec: { discovery: { intervalSeconds: 10 } } } as any,
      { namespace: NS, type: 'merge' },
    );
    await env.waitFor('the joined machine probed as a Member', async () => {
      const c = await rack.cluster();
      return (
        c.status?.addresses?.find(a => a.address === spare.address)?.state ===
        'Member'
      );
    });
  });
});
