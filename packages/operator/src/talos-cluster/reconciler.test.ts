import type {
  TalosCluster,
  TalosClusterStatus,
  TalosMachine,
} from '@rackside/plugin-servers-common';
import {
  addressStatus,
  TalosClusterReconciler,
  type DiscoveryPorts,
} from './reconciler';
import { setCondition } from '../runtime/lifecycle/conditions';
import {
  fakeTalos,
  NS,
  talosClusterObject,
  type FakeMachine,
} from '../testing/reclaimFixtures';
import { makeTalosconfig } from '../testing/talosconfigs';

const T0 = Date.parse('2026-10-30T03:00:00.000Z');
const SPARE = '10.0.3.31';
const MEMBER = '10.0.3.11';
const FOREIGN = '10.0.3.41';
const GONE = '10.0.3.99';
const SPARE_UUID = 'bba72157-81f6-43fd-9ddd-4684b42f4bd9';
const MEMBER_UUID = '616b6ad6-7dd3-45b0-bb99-71c859ec845e';
const version = {
  tag: 'v1.13.9',
  sha: '',
  os: '',
  arch: '',
  platform: 'metal',
};
let TALOSCONFIG: string;

beforeAll(async () => {
  TALOSCONFIG = (await makeTalosconfig('plant-a', [MEMBER])).text;
});

function rack(): Record<string, FakeMachine> {
  return {
    [SPARE]: {
      probe: { mode: 'maintenance', version },
      maintenanceUUID: SPARE_UUID.toUpperCase(),
    },
    [MEMBER]: {
      probe: { mode: 'configured', serverTrusted: true },
      uuid: MEMBER_UUID,
    },
    [FOREIGN]: {
      probe: {
        mode: 'configured',
        serverTrusted: false,
        trustDetail: 'self signed',
      },
    },
  };
}

function cluster(
  addresses: string[],
  status?: TalosClusterStatus,
): TalosCluster {
  const c = talosClusterObject();
  c.spec.discovery = {
    allowedNetworks: ['10.0.3.0/24'],
    talosPort: 50000,
    addresses,
    intervalSeconds: 300,
  };
  c.status = status;
  return c;
}

function setup(
  initial: TalosCluster,
  options: {
    machines?: Record<string, FakeMachine>;
    existing?: TalosMachine[];
    secret?: string | Error;
    /** What each name resolves to (absent: it does not resolve). */
    names?: Record<string, string[]>;
  } = {},
) {
  let current = initial;
  let now = T0;
  const talos = fakeTalos(options.machines ?? rack());
  const created: Array<{ uuid: string; address: string }> = [];
  const seen: Array<{ name: string; address: string }> = [];
  const events: Array<{ reason: string; message: string }> = [];
  const statuses: TalosClusterStatus[] = [];
  const resolved: string[] = [];
  const logs: string[] = [];
  const ports: DiscoveryPorts = {
    cluster: () => current,
    machine: (_ns, name) =>
      options.existing?.find(m => m.metadata.name === name),
    readSecret: async (_ns, ref) => {
      if (ref.name !== 'plant-a-talosconfig')
        throw new Error(`wrong secret ${ref.name}`);
      const secret = options.secret ?? TALOSCONFIG;
      if (secret instanceof Error) throw secret;
      return secret;
    },
    talos: talos.access,
    resolve: async host => {
      resolved.push(host);
      const answer = options.names?.[host];
      if (!answer) throw new Error(`getaddrinfo ENOTFOUND ${host}`);
      return answer;
    },
    log: message => logs.push(message),
    createMachine: async (_c, uuid, s) => {
      created.push({ uuid, address: s.address });
    },
    updateMachineSeen: async (m, s) => {
      seen.push({ name: m.metadata.name, address: s.address });
    },
    writeStatus: async (_c, status) => {
      statuses.push(status);
      current = { ...current, status };
    },
    events: {
      record: async (_c, _type, reason, message) => {
        events.push({ reason, message });
      },
    },
    now: () => now,
    probeTimeoutMs: 5000,
    concurrency: 4,
  };
  return {
    reconciler: new TalosClusterReconciler(ports),
    talos,
    created,
    seen,
    events,
    statuses,
    resolved,
    logs,
    current: () => current,
    setNow: (ms: number) => {
      now = ms;
    },
  };
}

const KEY = `${NS}/plant-a`;

describe('TalosClusterReconciler (discovery)', () => {
  it('probes every address and tells Maintenance, Member, AlreadyConfigured and Unreachable apart', async () => {
    const t = setup(cluster([SPARE, MEMBER, FOREIGN, GONE]));
    expect(await t.reconciler.reconcile(KEY)).toEqual({
      requeueAfterMs: 300_000,
    });
    const status = t.current().status!;
    expect(status.addresses).toEqual([
      expect.objectContaining({
        address: SPARE,
        state: 'Maintenance',
        uuid: SPARE_UUID,
      }),
      expect.objectContaining({
        address: MEMBER,
        state: 'Member',
        uuid: MEMBER_UUID,
      }),
      expect.objectContaining({
        address: FOREIGN,
        state: 'AlreadyConfigured',
        message: expect.stringMatching(/another Talos cluster/),
      }),
      expect.objectContaining({
        address: GONE,
        state: 'Unreachable',
        message: 'no answer at this address',
      }),
    ]);
    // Error texts are for the log, not for status.
    const text = JSON.stringify(status);
    expect(text).not.toContain('self signed');
    expect(text).not.toContain('no route');
    expect(t.logs.join('\n')).toMatch(/10\.0\.3\.99: Unreachable: no route/);
    expect(status.addresses?.[3].uuid).toBeUndefined();
    expect(status.lastDiscoveryTime).toBe(new Date(T0).toISOString());
    expect(status.observedGeneration).toBe(1);
    expect(status.conditions?.[0]).toMatchObject({
      type: 'Ready',
      status: 'True',
      message:
        '4 address(es): 1 Maintenance, 1 Member, 1 AlreadyConfigured, 1 Unreachable',
    });
    // Probed with our CA and a bounded deadline.
    expect(
      t.talos.calls.filter(c => c.call === 'probe').map(c => c.timeoutMs),
    ).toEqual([5000, 5000, 5000, 5000]);
  });

  it('never contacts an address outside the allowed networks or on another port', async () => {
    const t = setup(
      cluster([
        SPARE,
        '127.0.0.1',
        '169.254.169.254:50000',
        '[::ffff:10.0.4.1]:50000',
        '10.0.3.32:6443',
      ]),
    );
    await t.reconciler.reconcile(KEY);
    expect(t.talos.calls.map(c => c.address)).toEqual([SPARE, SPARE]);
    const [, ...refused] = t.current().status!.addresses!;
    expect(refused.map(a => [a.state, a.message])).toEqual([
      ['NotAllowed', 'outside the allowed networks (10.0.3.0/24)'],
      ['NotAllowed', 'outside the allowed networks (10.0.3.0/24)'],
      ['NotAllowed', 'outside the allowed networks (10.0.3.0/24)'],
      [
        'NotAllowed',
        'port 6443 is not the Talos API port of this cluster (50000)',
      ],
    ]);
    expect(t.created).toEqual([{ uuid: SPARE_UUID, address: SPARE }]);
  });

  it('resolves a name at the probe: every address inside, and the probe goes to the checked address', async () => {
    const t = setup(
      cluster(['spare.rack', 'split.rack', 'meta.rack', 'nowhere.rack']),
      {
        machines: { [`${SPARE}:50000`]: rack()[SPARE] },
        names: {
          'spare.rack': [SPARE],
          'split.rack': [SPARE, '169.254.169.254'],
          'meta.rack': ['169.254.169.254'],
        },
      },
    );
    await t.reconciler.reconcile(KEY);
    expect(t.resolved.sort()).toEqual([
      'meta.rack',
      'nowhere.rack',
      'spare.rack',
      'split.rack',
    ]);
    expect(t.talos.calls.map(c => [c.call, c.address])).toEqual([
      ['probe', `${SPARE}:50000`],
      ['maintenanceUUID', `${SPARE}:50000`],
    ]);
    const states = t
      .current()
      .status!.addresses!.map(a => [a.state, a.message]);
    expect(states).toEqual([
      ['Maintenance', 'maintenance mode'],
      [
        'NotAllowed',
        'split.rack resolves to an address outside the allowed networks (10.0.3.0/24)',
      ],
      [
        'NotAllowed',
        'meta.rack resolves to an address outside the allowed networks (10.0.3.0/24)',
      ],
      ['Unreachable', 'nowhere.rack does not resolve'],
    ]);
    // The machine is recorded at the name the deployer listed.
    expect(t.created).toEqual([{ uuid: SPARE_UUID, address: 'spare.rack' }]);
  });

  it('probes on the cluster’s Talos port, also for an address that names none', async () => {
    const c = cluster([SPARE, `${MEMBER}:50000`]);
    c.spec.discovery.talosPort = 50001;
    const t = setup(c, {
      machines: { [`${SPARE}:50001`]: rack()[SPARE] },
    });
    await t.reconciler.reconcile(KEY);
    expect(t.talos.calls.map(c2 => [c2.call, c2.address])).toEqual([
      ['probe', `${SPARE}:50001`],
      ['maintenanceUUID', `${SPARE}:50001`],
    ]);
    expect(t.current().status!.addresses![1]).toMatchObject({
      state: 'NotAllowed',
      message: 'port 50000 is not the Talos API port of this cluster (50001)',
    });
  });

  it('fails closed: a cluster with no allowed networks contacts nothing and says why', async () => {
    const c = cluster([SPARE, MEMBER]);
    c.spec.discovery.allowedNetworks = [];
    const t = setup(c);
    await t.reconciler.reconcile(KEY);
    expect(t.talos.calls).toEqual([]);
    const status = t.current().status!;
    expect(status.addresses?.map(a => a.state)).toEqual([
      'NotAllowed',
      'NotAllowed',
    ]);
    expect(status.conditions?.[0]).toMatchObject({
      type: 'Ready',
      status: 'False',
      reason: 'NoAllowedNetworks',
    });
  });

  it('tells NotTalos (something answered) from Unreachable (nothing did)', async () => {
    const t = setup(cluster(['10.0.3.50', '10.0.3.51']), {
      machines: {
        '10.0.3.50': {
          probe: {
            mode: 'unreachable',
            reason: 'PERMISSION_DENIED: Received HTTP status code 403',
            answered: true,
          },
        },
        '10.0.3.51': {
          probe: {
            mode: 'unreachable',
            reason: 'connect ECONNREFUSED 10.0.3.51:50000',
            answered: false,
          },
        },
      },
    });
    await t.reconciler.reconcile(KEY);
    const status = t.current().status!;
    expect(status.addresses?.map(a => [a.state, a.message])).toEqual([
      ['NotTalos', 'something answered, but not as a Talos machine API'],
      ['Unreachable', 'no answer at this address'],
    ]);
    expect(JSON.stringify(status)).not.toMatch(/403|ECONNREFUSED/);
    expect(t.logs.join('\n')).toMatch(/Received HTTP status code 403/);
  });

  it('creates a Pending TalosMachine for a machine in maintenance mode, once', async () => {
    const t = setup(cluster([SPARE]));
    await t.reconciler.reconcile(KEY);
    expect(t.created).toEqual([{ uuid: SPARE_UUID, address: SPARE }]);
    expect(t.events).toEqual([
      expect.objectContaining({ reason: 'MachineDiscovered' }),
    ]);
  });

  it('updates where a known Pending machine answered, and leaves a joining one alone', async () => {
    const machine = (phase: 'Pending' | 'Joining'): TalosMachine => ({
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'TalosMachine',
      metadata: { name: SPARE_UUID, namespace: NS },
      spec: { cluster: 'plant-a' },
      status: { phase, address: '10.0.3.30' },
    });
    const pending = setup(cluster([SPARE]), { existing: [machine('Pending')] });
    await pending.reconciler.reconcile(KEY);
    expect(pending.created).toEqual([]);
    expect(pending.seen).toEqual([{ name: SPARE_UUID, address: SPARE }]);
    const joining = setup(cluster([SPARE]), { existing: [machine('Joining')] });
    await joining.reconciler.reconcile(KEY);
    expect(joining.seen).toEqual([]);
  });

  it('notes a machine another TalosCluster already found', async () => {
    const t = setup(cluster([SPARE]), {
      existing: [
        {
          apiVersion: 'rackside.dev/v1alpha1',
          kind: 'TalosMachine',
          metadata: { name: SPARE_UUID, namespace: NS },
          spec: { cluster: 'plant-b' },
        },
      ],
    });
    await t.reconciler.reconcile(KEY);
    expect(t.created).toEqual([]);
    expect(t.current().status?.addresses?.[0].message).toMatch(
      /already a machine of TalosCluster plant-b/,
    );
  });

  it('probes again only when the interval has passed, the spec changed, or it is woken', async () => {
    const t = setup(cluster([SPARE]));
    await t.reconciler.reconcile(KEY);
    const probes = () => t.talos.calls.filter(c => c.call === 'probe').length;
    expect(probes()).toBe(1);

    t.setNow(T0 + 100_000);
    expect(await t.reconciler.reconcile(KEY)).toEqual({
      requeueAfterMs: 200_000,
    });
    expect(probes()).toBe(1);

    t.reconciler.wake(KEY);
    await t.reconciler.reconcile(KEY);
    expect(probes()).toBe(2);

    // The pass at T0 + 100 s is the last one now: the next is due 300 s after it.
    t.setNow(T0 + 400_000);
    await t.reconciler.reconcile(KEY);
    expect(probes()).toBe(3);

    const c = t.current();
    c.metadata.generation = 2;
    t.setNow(T0 + 400_001);
    await t.reconciler.reconcile(KEY);
    expect(probes()).toBe(4);
    expect(t.current().status?.observedGeneration).toBe(2);
  });

  it('probes nothing without the cluster’s talosconfig, and says so once', async () => {
    const t = setup(cluster([SPARE, FOREIGN]), {
      secret: new Error('Secret rackside-system/plant-a-talosconfig not found'),
    });
    expect(await t.reconciler.reconcile(KEY)).toEqual({
      requeueAfterMs: 60_000,
    });
    expect(t.talos.calls).toEqual([]);
    expect(t.current().status?.conditions?.[0]).toMatchObject({
      type: 'Ready',
      status: 'False',
      reason: 'TalosconfigUnavailable',
    });
    expect(t.current().status?.addresses).toBeUndefined();
    await t.reconciler.reconcile(KEY);
    expect(t.statuses).toHaveLength(1);
    expect(t.events).toHaveLength(1);
  });

  it('forgets a deleted cluster', async () => {
    const t = setup(cluster([SPARE]));
    (t.reconciler as any).ports.cluster = () => undefined;
    expect(await t.reconciler.reconcile(KEY)).toEqual({});
  });
});

describe('addressStatus', () => {
  const at = new Date(T0).toISOString();
  it('reports a machine in maintenance mode whose UUID could not be read', () => {
    expect(
      addressStatus(
        SPARE,
        { mode: 'maintenance', version },
        { error: 'timeout' },
        at,
      ),
    ).toEqual({
      address: SPARE,
      state: 'Maintenance',
      lastProbeTime: at,
      message: 'maintenance mode, but its UUID could not be read',
    });
  });
});

describe('setCondition', () => {
  it('keeps lastTransitionTime while the status stays', () => {
    const first = setCondition(
      undefined,
      { type: 'Ready', status: 'True', reason: 'Probed', message: 'a' },
      'T1',
    );
    const second = setCondition(
      first,
      { type: 'Ready', status: 'True', reason: 'Probed', message: 'b' },
      'T2',
    );
    expect(second[0]).toMatchObject({ message: 'b', lastTransitionTime: 'T1' });
    const third = setCondition(
      second,
      { type: 'Ready', status: 'False', reason: 'X', message: 'c' },
      'T3',
    );
    expect(third[0].lastTransitionTime).toBe('T3');
  });
});
