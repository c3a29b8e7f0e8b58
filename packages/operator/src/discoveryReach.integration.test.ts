/*
 * Discovery reaches only the TalosCluster's allowed networks (docs/architecture.md, "Adding machines"), on the simulated
 * rack with the operator's own identity. The cluster's spec is written with the admin
 * identity (as a deployer or an old backend would), so the addresses outside are already
 * listed: the operator reports them and never connects. A TCP server on an address
 * outside the rack's machine network counts the connections it gets, which proves it.
 */
import { startTrap, type Trap } from '@rackside/rack-testing';
import type { Operator } from './operator';
import {
  OPERATOR_NAMESPACE as NS,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';
import { machinesRack } from './testing/machinesRack';

jest.setTimeout(120_000);

let env: OperatorRack;
let rack: ReturnType<typeof machinesRack>;
let operator: Operator | undefined;
/** A TCP server outside the rack's machine network that counts the connections it gets. */
let trap: Trap;

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: false,
    withWorkloads: false,
  });
  rack = machinesRack(env);
  // Loopback, but outside 127.0.<10+net>.0/24, on the Talos port: what a probe would hit.
  trap = await startTrap(env.rack.info);
  await rack.createClusterSecrets();
  operator = await env.startReady();
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await trap?.close();
  await env?.stop();
}, 60_000);

const statusOf = async (address: string) =>
  (await rack.cluster()).status?.addresses?.find(a => a.address === address);

describe('discovery reach', () => {
  it('reports addresses outside the allowed networks and never connects to them; inside is still discovered', async () => {
    const [spare] = rack.spares;
    const apiserverPort = new URL(env.rack.info.server as string).port;
    const outside = [
      trap.host,
      `${trap.host}:50000`,
      `[::ffff:${trap.host}]:50000`,
      `127.0.0.1:${apiserverPort}`,
    ];
    await rack.createCluster([spare.address, ...outside, 'localhost'], 10);
    const cluster = await env.waitFor('the first discovery pass', async () => {
      const c = await rack.cluster();
      return c.status?.addresses?.length === 6 && c;
    });
    const byAddress = Object.fromEntries(
      cluster.status!.addresses!.map(a => [a.address, a]),
    );
    const networks = rack.machineNetwork();
    expect(byAddress[spare.address]).toMatchObject({
      state: 'Maintenance',
      uuid: spare.uuid,
    });
    await rack.machinePhase(spare.uuid, 'Pending');
    for (const address of outside.slice(0, 3)) {
      expect(byAddress[address]).toMatchObject({
        state: 'NotAllowed',
        message: `outside the allowed networks (${networks})`,
      });
      expect(byAddress[address].uuid).toBeUndefined();
    }
    expect(byAddress[`127.0.0.1:${apiserverPort}`]).toMatchObject({
      state: 'NotAllowed',
      message: `port ${apiserverPort} is not the Talos API port of this cluster (50000)`,
    });
    // A name is resolved at the probe: localhost is 127.0.0.1 (and ::1), outside.
    expect(byAddress.localhost).toMatchObject({
      state: 'NotAllowed',
      message: `localhost resolves to an address outside the allowed networks (${networks})`,
    });

    // Several passes later (interval 10 s) still no connection to the trap.
    const first = Date.parse(cluster.status!.lastDiscoveryTime!);
    await env.waitFor(
      'a second discovery pass',
      async () =>
        Date.parse((await rack.cluster()).status!.lastDiscoveryTime!) > first,
      30_000,
    );
    expect(trap.connections()).toBe(0);
    // Only the machine inside became a TalosMachine.
    const { items } = await rack.api.talosMachines.list({ namespace: NS });
    expect(items.map(m => m.metadata.name)).toEqual([spare.uuid]);
  });

  it('status carries categories, never the error text of a probe', async () => {
    const nowhere = rack.unusedAddress(99);
    const cluster = await rack.cluster();
    await rack.api.talosClusters.patch(
      'plant-a',
      {
        spec: {
          discovery: {
            addresses: [...cluster.spec.discovery!.addresses!, nowhere],
          },
        },
      } as any,
      { namespace: NS, type: 'merge' },
    );
    const entry = await env.waitFor('the added address probed', async () => {
      const s = await statusOf(nowhere);
      return s?.state && s;
    });
    expect(entry).toMatchObject({
      state: 'Unreachable',
      message: 'no answer at this address',
    });
    const status = JSON.stringify((await rack.cluster()).status);
    expect(status).not.toMatch(
      /ECONNREFUSED|UNAVAILABLE|HTTP status|No connection|certificate/i,
    );
    // The operator's log has the reason.
    expect(env.logs.join('\n')).toMatch(
      new RegExp(`${nowhere.replace(/\./g, '\\.')}: Unreachable: .+`),
    );
  });

  it('a cluster whose allowed networks are taken away stops probing (fail closed)', async () => {
    await rack.api.talosClusters.patch(
      'plant-a',
      { spec: { discovery: { allowedNetworks: [] } } } as any,
      { namespace: NS, type: 'merge' },
    );
    const cluster = await env.waitFor('the pass without networks', async () => {
      const c = await rack.cluster();
      return (
        c.status?.observedGeneration === c.metadata.generation &&
        c.status?.conditions?.find(x => x.type === 'Ready')?.reason ===
          'NoAllowedNetworks' &&
        c
      );
    });
    expect(new Set(cluster.status!.addresses!.map(a => a.state))).toEqual(
      new Set(['NotAllowed']),
    );
    expect(trap.connections()).toBe(0);
  });
});
