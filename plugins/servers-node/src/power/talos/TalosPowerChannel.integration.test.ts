/*
 * Talos verbs go only to the machine that is the node (docs/architecture.md, "Power channels"), on the simulated rack:
 * the Talos emulator serves each machine's SMBIOS UUID and counts the verbs it receives.
 * A Node whose address another machine answers at (here: cp-2's Node pointing at
 * worker-1's address, as after a new DHCP lease) is refused before anything is sent.
 */
import { startTestRack, type TestRack } from '@rackside/rack-testing';
import fs from 'node:fs';
import { PowerChannelError } from '../types';
import { parseTalosconfig } from './talosconfig';
import { TalosPowerChannel } from './TalosPowerChannel';

jest.setTimeout(120_000);

interface RackMachine {
  node?: string;
  address: string;
  uuid: string;
}
type Counts = Record<string, { reboot?: number; shutdown?: number }>;

let rack: TestRack;
let machines: RackMachine[];
let controlUrl: string;
let channel: TalosPowerChannel;

const byNode = (name: string) => machines.find(m => m.node === name)!;
const counts = async (): Promise<Counts> =>
  (await (await fetch(`${controlUrl}/counts`)).json()) as Counts;
const verbsAt = (all: Counts, uuid: string) =>
  (all[uuid]?.reboot ?? 0) + (all[uuid]?.shutdown ?? 0);

beforeAll(async () => {
  rack = await startTestRack({
    withTalos: true,
    withRedfish: false,
    withWorkloads: false,
  });
  machines = rack.info.machines as RackMachine[];
  const talos = rack.info.talos as {
    controlUrl: string;
    talosconfigs: Record<string, string>;
  };
  controlUrl = talos.controlUrl;
  channel = new TalosPowerChannel({
    talosconfig: parseTalosconfig(
      fs.readFileSync(talos.talosconfigs['plant-a'], 'utf8'),
    ),
    timeoutMs: 5000,
  });
}, 240_000);

afterAll(async () => {
  await channel?.close();
  await rack?.stop();
});

describe('talos verbs reach only the node they name', () => {
  it('refuses reboot and shutdown, notSent, when another machine answers at the address', async () => {
    const cp2 = byNode('cp-2');
    const worker1 = byNode('worker-1');
    const before = await counts();
    // cp-2's Node, but worker-1 (also a member: our talosconfig reaches it) at the address.
    const node = {
      name: 'cp-2',
      address: worker1.address,
      systemUUID: cp2.uuid,
    };
    for (const verb of ['reboot', 'shutdown'] as const) {
      const error = await channel[verb](node).catch(e => e);
      expect(error).toBeInstanceOf(PowerChannelError);
      expect(error.outcome).toBe('notSent');
      expect(error.message).toBe(
        `talos: ${verb} of node cp-2 not sent: the machine at ${worker1.address}:50000 has SMBIOS UUID ${worker1.uuid}, not the Node's system UUID ${cp2.uuid}: the address belongs to another machine`,
      );
    }
    const after = await counts();
    expect(verbsAt(after, worker1.uuid)).toBe(verbsAt(before, worker1.uuid));
    expect(verbsAt(after, cp2.uuid)).toBe(verbsAt(before, cp2.uuid));
  });

  it('reads the Talos version only from the machine that is the node', async () => {
    const cp2 = byNode('cp-2');
    const worker1 = byNode('worker-1');
    const error = await channel
      .talosVersion({
        name: 'cp-2',
        address: worker1.address,
        systemUUID: cp2.uuid,
      })
      .catch(e => e);
    expect(error).toBeInstanceOf(PowerChannelError);
    expect(error.message).toBe(
      `talos: version read of node cp-2 not sent: the machine at ${worker1.address}:50000 has SMBIOS UUID ${worker1.uuid}, not the Node's system UUID ${cp2.uuid}: the address belongs to another machine`,
    );
    const version = await channel.talosVersion({
      name: 'cp-2',
      address: cp2.address,
      systemUUID: cp2.uuid,
    });
    expect(version).toMatch(/^v\d+\.\d+\.\d+$/);
  });

  it('sends the verb once when the machine at the address is the node', async () => {
    const worker3 = byNode('worker-3');
    const before = verbsAt(await counts(), worker3.uuid);
    const receipt = await channel.reboot({
      name: 'worker-3',
      address: worker3.address,
      systemUUID: worker3.uuid.toUpperCase(),
    });
    expect(receipt).toMatchObject({ channel: 'talos', verb: 'reboot' });
    expect(verbsAt(await counts(), worker3.uuid)).toBe(before + 1);
  });
});
