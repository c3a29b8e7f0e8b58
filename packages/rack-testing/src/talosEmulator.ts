import fs from 'node:fs';
import net from 'node:net';
import type { RackInfo } from './rack';

/** A machine of the rack, as `rack.json` lists it (`info.machines`). */
export interface RackMachine {
  kind: 'node' | 'spare' | 'foreign';
  node?: string;
  cluster?: string;
  role?: string;
  host: number;
  address: string;
  uuid: string;
}

/** The Talos emulator of a rack started `withTalos` (`info.talos`). */
export interface RackTalos {
  /** The emulator's control API (counts, power, machine state). */
  controlUrl: string;
  /** A talosconfig file per cluster. */
  talosconfigs: Record<string, string>;
  caFiles: Record<string, string>;
}

/** The sushy-tools BMCs of a rack started `withRedfish` (`info.redfish`). */
export interface RackRedfish {
  url: string;
  caFile: string;
  username: string;
  password: string;
  systemsByUuid: Record<string, string>;
  /** The health proxy's control API (e2e/rack/lib/redfishHealth.mjs); see `bmcHealthControl`. */
  healthControlUrl?: string;
  /** sushy-tools itself, behind the health proxy at `url`. */
  sushyUrl?: string;
}

/** The power verbs the emulator has received for one machine. */
export interface PowerCounts {
  reboot: number;
  shutdown: number;
  powerOn: number;
}

const NO_COUNTS: PowerCounts = { reboot: 0, shutdown: 0, powerOn: 0 };

/**
 * The Talos emulator of a running rack: its machines, its talosconfigs, and its control
 * API (what each machine was sent; power a machine on or off behind the operator's back).
 * A control call that does not answer 2xx throws with the emulator's words.
 */
export function talosEmulator(info: RackInfo) {
  const talos = info.talos as RackTalos;
  const machines = info.machines as RackMachine[];
  if (!talos || !machines) {
    throw new Error('the rack was started without the Talos emulator');
  }

  const control = async <T>(p: string, init?: RequestInit): Promise<T> => {
    const res = await fetch(`${talos.controlUrl}${p}`, init);
    if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const byNode = (node: string): RackMachine => {
    const machine = machines.find(m => m.node === node);
    if (!machine) throw new Error(`no machine of the rack is node ${node}`);
    return machine;
  };
  const allCounts = () =>
    control<Record<string, Partial<PowerCounts> & Record<string, number>>>(
      '/counts',
    );
  const powerMachine = async (uuid: string, state: 'on' | 'off') => {
    await control(`/machines/${uuid}/power`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ state }),
    });
  };

  return {
    talos,
    machines,
    byNode,
    uuidOf: (node: string) => byNode(node).uuid,
    /** The talosconfig of one of the rack's clusters, as text. */
    talosconfig: (cluster: string) =>
      fs.readFileSync(talos.talosconfigs[cluster], 'utf8'),
    control,
    /** Every verb the emulator has received, by machine UUID. */
    allCounts,
    /** The power verbs a node's machine has received (0 for none). */
    async powerCounts(node: string): Promise<PowerCounts> {
      return { ...NO_COUNTS, ...(await allCounts())[byNode(node).uuid] };
    },
    /** The reboots each node's machine has received, by node name. */
    async rebootsByNode(): Promise<Record<string, number>> {
      const all = await allCounts();
      return Object.fromEntries(
        machines
          .filter(m => m.node)
          .map(m => [m.node!, all[m.uuid]?.reboot ?? 0]),
      );
    },
    powerMachine,
    /** Powers a node's machine on or off behind the operator's back. */
    power: (node: string, state: 'on' | 'off') =>
      powerMachine(byNode(node).uuid, state),
  };
}

export type TalosEmulator = ReturnType<typeof talosEmulator>;

/**
 * A TCP server on loopback but outside the rack's machine network
 * (127.0.<10+net>.0/24), on the Talos port, that counts the connections it gets and
 * closes them: what a call that ignored the allowed networks would hit.
 */
export async function startTrap(info: RackInfo, port = 50000) {
  const host = `127.1.${10 + Number(info.net)}.1`;
  let connections = 0;
  const server = net.createServer(socket => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    host,
    /** The port it listens on (the one asked for, or the one given for 0). */
    port: (server.address() as net.AddressInfo).port,
    /** How many connections reached the trap so far. */
    connections: () => connections,
    close: () => new Promise<void>(resolve => server.close(() => resolve())),
  };
}

export type Trap = Awaited<ReturnType<typeof startTrap>>;
