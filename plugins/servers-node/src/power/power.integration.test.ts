/*
 * Both power channels against the simulated rack: the Talos emulator (official machinery
 * stubs and COSI server, mTLS with the cluster's Ed25519 CA) and sushy-tools BMCs (HTTPS
 * with the rack's CA, Basic auth: no SessionService), linked to the kwok Nodes. The
 * emulator counts the verbs it receives, so "sent exactly once" is checked where it lands.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import {
  eventually,
  startTestRack,
  type TestRack,
} from '@rackside/rack-testing';
import fs from 'node:fs';
import {
  parseTalosconfig,
  probeTalosMachine,
  TalosApiClient,
  TalosPowerChannel,
  type Talosconfig,
} from './talos';
import { RedfishClient, RedfishPowerChannel } from './redfish';
import { PowerChannelError, type PowerNode } from './types';

jest.setTimeout(120_000);

interface RackMachine {
  kind: 'node' | 'spare' | 'foreign';
  node?: string;
  host: number;
  address: string;
  uuid: string;
  bmc: boolean;
}
interface RackTalos {
  controlUrl: string;
  talosconfigs: Record<string, string>;
  caFiles: Record<string, string>;
}
interface RackRedfish {
  url: string;
  caFile: string;
  username: string;
  password: string;
  systems: Record<string, string>;
}
type Counts = Record<
  string,
  {
    reboot: number;
    shutdown: number;
    reset: number;
    apply: number;
    powerOn: number;
    powerOff: number;
  }
>;

let rack: TestRack;
let core: CoreV1Api;
let talos: RackTalos;
let redfish: RackRedfish;
let machines: RackMachine[];
let plantA: Talosconfig;
let plantOld: Talosconfig;
const closers: Array<() => unknown> = [];

const byNode = (name: string) => machines.find(m => m.node === name)!;
const byHost = (host: number) => machines.find(m => m.host === host)!;
const powerNode = (name: string): PowerNode => {
  const m = byNode(name);
  return { name, address: m.address, systemUUID: m.uuid };
};

async function control<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(`${talos.controlUrl}${path}`, init);
  if (!response.ok) {
    throw new Error(`${path}: ${response.status} ${await response.text()}`);
  }
  return (await response.json()) as T;
}
const counts = () => control<Counts>('/counts');

async function nodeStatus(name: string) {
  const node = await core.readNode({ name });
  const ready = node.status?.conditions?.find(c => c.type === 'Ready')?.status;
  return { ready: ready === 'True', bootID: node.status?.nodeInfo?.bootID };
}

beforeAll(async () => {
  rack = await startTestRack({
    withTalos: true,
    withRedfish: true,
    withWorkloads: false,
  });
  core = rack.adminKubeConfig().makeApiClient(CoreV1Api);
  talos = rack.info.talos as RackTalos;
  redfish = rack.info.redfish as RackRedfish;
  machines = rack.info.machines as RackMachine[];
  plantA = parseTalosconfig(
    fs.readFileSync(talos.talosconfigs['plant-a'], 'utf8'),
  );
  plantOld = parseTalosconfig(
    fs.readFileSync(talos.talosconfigs['plant-old'], 'utf8'),
  );
}, 240_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await rack?.stop();
});

describe('Talos machine API', () => {
  it('reads a configured machine over mTLS with the talosconfig (Ed25519 keys)', async () => {
    const cp2 = byNode('cp-2');
    const client = new TalosApiClient(cp2.address, {
      mode: 'mtls',
      identity: plantA.identity,
    });
    closers.push(() => client.close());
    expect((await client.version()).tag).toBe('v1.13.9');
    expect(await client.systemUUID()).toBe(cp2.uuid);
    const members = await client.etcdMemberList();
    expect(members.map(m => m.hostname).sort()).toEqual([
      'cp-1',
      'cp-2',
      'cp-3',
    ]);
    expect(members.every(m => /^\d+$/.test(m.id))).toBe(true);
  });

  it('probes: maintenance mode, our member, and a machine another cluster configured', async () => {
    const spare = byHost(31);
    const maintenance = await probeTalosMachine(spare.address, {
      ca: plantA.identity.ca,
    });
    expect(maintenance).toMatchObject({
      mode: 'maintenance',
      version: { tag: 'v1.13.9' },
    });
    const ours = await probeTalosMachine(byNode('worker-1').address, {
      ca: plantA.identity.ca,
    });
    expect(ours).toEqual({
      mode: 'configured',
      serverTrusted: true,
      trustDetail: undefined,
    });
    const foreign = await probeTalosMachine(byHost(41).address, {
      ca: plantA.identity.ca,
    });
    expect(foreign).toMatchObject({ mode: 'configured', serverTrusted: false });
    expect(await probeTalosMachine(byHost(41).address)).toEqual({
      mode: 'configured',
    });
    const nothing = await probeTalosMachine(
      byHost(31).address.replace(/\.31$/, '.99'),
      { timeoutMs: 2000 },
    );
    expect(nothing.mode).toBe('unreachable');
  });

  it('reads the SMBIOS UUID of a machine in maintenance mode without a client certificate', async () => {
    const spare = byHost(31);
    const client = new TalosApiClient(spare.address, { mode: 'maintenance' });
    closers.push(() => client.close());
    expect(await client.systemUUID()).toBe(spare.uuid);
  });

  it('a configured machine refuses a connection without a client certificate', async () => {
    const client = new TalosApiClient(byNode('cp-1').address, {
      mode: 'maintenance',
    });
    closers.push(() => client.close());
    const error = await client.version().catch(e => e);
    expect(error.certificateRequired).toBe(true);
    expect(error.notSent).toBe(true);
  });
});

describe('talos power channel', () => {
  let channel: TalosPowerChannel;
  beforeAll(() => {
    channel = new TalosPowerChannel({
      talosconfig: fs.readFileSync(talos.talosconfigs['plant-a'], 'utf8'),
    });
    closers.push(() => channel.close());
  });

  it('one reboot() is exactly one Reboot, and the node comes back with a new boot ID', async () => {
    const node = powerNode('worker-3');
    const uuid = byNode('worker-3').uuid;
    const before = await nodeStatus('worker-3');
    expect(before.ready).toBe(true);
    expect((await counts())[uuid].reboot).toBe(0);

    const receipt = await channel.reboot(node);
    expect(receipt).toMatchObject({
      channel: 'talos',
      verb: 'reboot',
      node: 'worker-3',
    });
    expect(receipt.detail).toMatch(
      /^reboot accepted by 127\.0\.\d+\.23:50000, actor \S+$/,
    );

    const after = await eventually(
      'worker-3 Ready with a new boot ID',
      async () => {
        const status = await nodeStatus('worker-3');
        return status.ready && status.bootID !== before.bootID && status;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(after.bootID).toBeTruthy();
    const c = (await counts())[uuid];
    expect(c).toMatchObject({ reboot: 1, shutdown: 0, reset: 0 });
    // And the machine answers again on the same channel.
    expect((await control<{ state: string }>(`/machines/${uuid}`)).state).toBe(
      'running',
    );
  });

  it('one shutdown() is exactly one Shutdown; the node stays NotReady until powered on', async () => {
    const uuid = byNode('worker-5').uuid;
    await channel.shutdown(powerNode('worker-5'));
    await eventually(
      'worker-5 NotReady',
      async () => !(await nodeStatus('worker-5')).ready,
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    expect((await counts())[uuid]).toMatchObject({ shutdown: 1, reboot: 0 });
    // Talos cannot power on: the rack's control API does, as a person at the rack would.
    await control(`/machines/${uuid}/power`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ state: 'on' }),
    });
    await eventually(
      'worker-5 Ready again',
      async () => (await nodeStatus('worker-5')).ready,
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    expect((await counts())[uuid].shutdown).toBe(1);
  });

  it("another cluster's talosconfig is refused before anything is sent", async () => {
    const foreignChannel = new TalosPowerChannel({ talosconfig: plantOld });
    closers.push(() => foreignChannel.close());
    const uuid = byNode('cp-3').uuid;
    const error = await foreignChannel.reboot(powerNode('cp-3')).catch(e => e);
    expect(error).toBeInstanceOf(PowerChannelError);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toMatch(
      /^talos: reboot of node cp-3 not sent: the SMBIOS UUID at 127\.0\.\d+\.13:50000 could not be read to check it is this node \(UNAVAILABLE: No connection established/,
    );
    expect((await counts())[uuid].reboot).toBe(0);
  });

  it('reads the boot ID through MachineService/Read, the same as the Node reports', async () => {
    const bootId = await channel.bootId(powerNode('cp-1'));
    expect(bootId).toMatch(/^[0-9a-f-]{8,}$/);
    expect(bootId).toBe((await nodeStatus('cp-1')).bootID);
  });
});

describe('Talos API for adding and resetting machines', () => {
  it('applies a configuration to a machine in maintenance mode (mode AUTO) and it joins', async () => {
    const spare = byHost(32);
    const client = new TalosApiClient(spare.address, { mode: 'maintenance' });
    closers.push(() => client.close());
    const config = [
      'version: v1alpha1',
      'machine:',
      '  type: worker',
      '  network:',
      '    hostname: worker-32',
      'cluster:',
      '  clusterName: plant-a',
      '',
    ].join('\n');
    const result = await client.applyConfiguration(config);
    expect(result.mode).toBe('REBOOT');
    expect((await counts())[spare.uuid].apply).toBe(1);
    await eventually(
      'spare 32 configured (requires a client certificate)',
      async () => {
        const probe = await probeTalosMachine(spare.address, {
          ca: plantA.identity.ca,
        });
        return probe.mode === 'configured' && probe.serverTrusted;
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    await eventually(
      'Node worker-32 Ready',
      async () => (await nodeStatus('worker-32')).ready,
      { timeoutMs: 20_000, intervalMs: 250 },
    );
  });

  it('resets a foreign machine (graceful, reboot, wipe STATE and EPHEMERAL) into maintenance mode', async () => {
    const foreign = byHost(42);
    const client = new TalosApiClient(foreign.address, {
      mode: 'mtls',
      identity: plantOld.identity,
    });
    closers.push(() => client.close());
    expect(await client.systemUUID()).toBe(foreign.uuid);
    const ack = await client.reset();
    expect(ack.actorId).not.toBe('');
    expect((await counts())[foreign.uuid].reset).toBe(1);
    await eventually(
      'machine 42 in maintenance mode',
      async () =>
        (await probeTalosMachine(foreign.address)).mode === 'maintenance',
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    const maintenance = new TalosApiClient(foreign.address, {
      mode: 'maintenance',
    });
    closers.push(() => maintenance.close());
    expect(await maintenance.systemUUID()).toBe(foreign.uuid);
  });
});

describe('redfish power channel (sushy-tools)', () => {
  let channel: RedfishPowerChannel;
  beforeAll(() => {
    channel = new RedfishPowerChannel({
      resolveBmc: node => ({
        address: redfish.url,
        systemPath:
          node.name === 'worker-4' ? undefined : redfish.systems[node.name],
        credentials: { username: redfish.username, password: redfish.password },
      }),
      tls: { caBundle: fs.readFileSync(redfish.caFile, 'utf8') },
      minIntervalMs: 100,
    });
    closers.push(() => channel.close());
  });

  it('reboot sends one GracefulRestart; the machine goes off and on, never through Talos', async () => {
    const uuid = byNode('worker-1').uuid;
    const before = await nodeStatus('worker-1');
    const receipt = await channel.reboot(powerNode('worker-1'));
    expect(receipt.detail).toBe(
      `ResetType GracefulRestart accepted by ${redfish.url}${redfish.systems['worker-1']} (HTTP 204)`,
    );
    await eventually(
      'worker-1 back with a new boot ID',
      async () => {
        const status = await nodeStatus('worker-1');
        return status.ready && status.bootID !== before.bootID;
      },
      { timeoutMs: 45_000, intervalMs: 500 },
    );
    expect((await counts())[uuid]).toMatchObject({
      reboot: 0,
      powerOff: 1,
      powerOn: 1,
    });
  });

  it('shutdown is GracefulShutdown, PowerState reads back Off; power-on brings the node back', async () => {
    const node = powerNode('worker-2');
    expect(await channel.powerState(node)).toBe('On');
    const off = await channel.shutdown(node);
    expect(off.detail).toContain('ResetType GracefulShutdown');
    await eventually(
      'BMC PowerState Off',
      async () => (await channel.powerState(node)) === 'Off',
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    await eventually(
      'worker-2 NotReady',
      async () => !(await nodeStatus('worker-2')).ready,
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    const on = await channel.powerOn(node);
    expect(on.detail).toContain('ResetType On');
    await eventually(
      'BMC PowerState On',
      async () => (await channel.powerState(node)) === 'On',
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    await eventually(
      'worker-2 Ready',
      async () => (await nodeStatus('worker-2')).ready,
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const c = (await counts())[byNode('worker-2').uuid];
    expect(c).toMatchObject({ shutdown: 0, powerOff: 1, powerOn: 1 });
  });

  it('finds the system by the node UUID when the BMC object names none', async () => {
    expect(await channel.powerState(powerNode('worker-4'))).toBe('On');
  });

  it('uses Basic auth: sushy-tools has no SessionService', async () => {
    const client = new RedfishClient({
      address: redfish.url,
      credentials: { username: redfish.username, password: redfish.password },
      tls: { caBundle: fs.readFileSync(redfish.caFile, 'utf8') },
    });
    closers.push(() => client.close());
    expect(await client.authKind()).toBe('basic');
    const action = await client.resetAction(redfish.systems['worker-6']);
    expect(action.source).toBe('AllowableValues');
    expect(action.allowed).toEqual(
      expect.arrayContaining(['GracefulRestart', 'GracefulShutdown', 'On']),
    );
  });

  it('a BMC certificate the CA bundle does not cover is refused before anything is sent', async () => {
    const wrongCa = new RedfishPowerChannel({
      resolveBmc: () => ({
        address: redfish.url,
        systemPath: redfish.systems['worker-6'],
        credentials: { username: redfish.username, password: redfish.password },
      }),
      tls: { caBundle: plantA.identity.ca },
    });
    closers.push(() => wrongCa.close());
    const error = await wrongCa.reboot(powerNode('worker-6')).catch(e => e);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toContain(
      `Redfish BMC ${redfish.url}: GET /redfish/v1/ failed`,
    );
    expect((await counts())[byNode('worker-6').uuid].powerOff).toBe(0);
  });

  it('wrong credentials: a clear error without the password', async () => {
    const wrong = new RedfishPowerChannel({
      resolveBmc: () => ({
        address: redfish.url,
        systemPath: redfish.systems['worker-6'],
        credentials: {
          username: redfish.username,
          password: 'not-the-password',
        },
      }),
      tls: { insecureSkipVerify: true },
    });
    closers.push(() => wrong.close());
    const error = await wrong.powerState(powerNode('worker-6')).catch(e => e);
    expect(error.message).toBe(
      `redfish: read the power state of node worker-6 failed: Redfish BMC ${redfish.url}: the BMC refused the credentials (401 Unauthorized on GET ${redfish.systems['worker-6']})`,
    );
    expect(error.message).not.toContain('not-the-password');
    expect(error.message).not.toContain(redfish.password);
  });
});
