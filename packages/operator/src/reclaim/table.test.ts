import type { MachineReclaim } from '@rackside/plugin-servers-common';
import {
  afterReset,
  DEFAULT_RECLAIM_LIMITS,
  owesCredentialDeletion,
  rowFor,
  sharesCertificate,
  transitions,
  type CredentialRead,
  type Decision,
  type LifecyclePorts,
} from './table';
import {
  CREATED,
  etcdMember,
  fakeTalos,
  reclaimObject,
  talosClusterObject,
  UUID,
  type FakeMachine,
} from '../testing/reclaimFixtures';
import { makeTalosconfig } from '../testing/talosconfigs';

const TARGET = '10.0.2.191';
/** The target cluster's allowed network: the machine to reclaim lives in it. */
const NETWORK = '10.0.2.0/24';
const CP = '10.0.1.10';
/** Where the foreign control planes live: allowed too, or their etcd is never asked. */
const FOREIGN_NETWORK = '10.0.1.0/24';
const T0 = Date.parse(CREATED);
const MIN = 60_000;
let TALOSCONFIG: string;
/** plant-a's own talosconfig: its CA is the target cluster's. */
let OWN: { text: string; caPem: string };

beforeAll(async () => {
  TALOSCONFIG = (await makeTalosconfig('plant-old', [CP])).text;
  OWN = await makeTalosconfig('plant-a', ['10.0.0.11']);
});

/** A configured foreign worker and its control plane, as the happy path sees them. */
function foreignWorker(): Record<string, FakeMachine> {
  return {
    [TARGET]: {
      probe: { mode: 'configured', serverTrusted: true },
      uuid: UUID.toUpperCase(),
      etcd: new Error('etcd is not running on this node (worker)'),
      reset: { actorId: 'actor-1' },
      maintenanceUUID: new Error('certificate required'),
    },
    [CP]: { etcd: [etcdMember(CP)] },
  };
}

function setup(
  options: {
    machines?: Record<string, FakeMachine>;
    now?: number;
    /** The talosconfig in a bound Secret; undefined: no Secret. */
    credential?: string | undefined;
    /** What the credential port answers, overriding `credential`. */
    read?: CredentialRead;
    cluster?: boolean;
    /** Node names by system UUID. */
    nodes?: Record<string, string>;
    /** Other requests whose Reset is on record. */
    inFlight?: Array<{ name: string; address: string }>;
    /** The target cluster's allowed networks (default: the target's network). */
    networks?: string[];
    talosPort?: number;
    /** What names resolve to (anything else does not resolve). */
    names?: Record<string, string[]>;
    /** The SubjectAccessReview's answer for the requester (default: allowed). */
    mayReclaim?: LifecyclePorts['mayReclaim'];
  } = {},
) {
  const talos = fakeTalos(options.machines ?? foreignWorker());
  let now = options.now ?? T0 + 1000;
  const text = 'credential' in options ? options.credential : TALOSCONFIG;
  const ports: LifecyclePorts = {
    credential: {
      read: jest.fn(
        async (): Promise<CredentialRead> =>
          options.read ??
          (text === undefined
            ? { kind: 'absent' }
            : { kind: 'bound', talosconfig: text }),
      ),
      delete: jest.fn(async () => ({ outcome: 'deleted' as const })),
    },
    clusterCa: async () => OWN.caPem,
    nodeWithUUID: uuid => options.nodes?.[uuid],
    resetsInFlight: () => options.inFlight ?? [],
    talos: talos.access,
    cluster: () =>
      options.cluster === false
        ? undefined
        : talosClusterObject({
            allowedNetworks: options.networks ?? [NETWORK, FOREIGN_NETWORK],
            talosPort: options.talosPort ?? 50000,
          }),
    resolve: jest.fn(async (host: string) => {
      const found = options.names?.[host];
      if (!found) throw new Error(`getaddrinfo ENOTFOUND ${host}`);
      return found;
    }),
    limits: DEFAULT_RECLAIM_LIMITS,
    mayReclaim: jest.fn(
      options.mayReclaim ?? (async () => ({ allowed: true })),
    ),
    now: () => now,
  };
  return {
    ports,
    talos,
    setNow: (ms: number) => {
      now = ms;
    },
  };
}

const run = (mr: MachineReclaim, ports: LifecyclePorts) =>
  rowFor(mr)(mr, ports);

function transition(d: Decision) {
  if (d.kind !== 'transition') throw new Error(`not a transition: ${d.kind}`);
  return d;
}

const expires = (minutes = 15) => new Date(T0 + minutes * MIN).toISOString();

describe('(new)', () => {
  it('goes to Pending with expiresAt = creation + TTL', async () => {
    const { ports } = setup();
    const d = transition(await run(reclaimObject(), ports));
    expect(d.to).toBe('Pending');
    expect(d.status?.expiresAt).toBe(expires(15));
    expect(d.audit).toEqual([
      expect.objectContaining({
        event: 'Created',
        actor: 'user:default/admin',
        message: expect.stringMatching(
          /Reset and add of 10\.0\.2\.191 into TalosCluster plant-a requested: reuse the old worker/,
        ),
      }),
    ]);
  });

  it('caps the TTL at the configured maximum', async () => {
    const { ports } = setup();
    ports.limits = { ...ports.limits, ttlMaxMs: 5000 };
    const d = transition(
      await run(reclaimObject(undefined, { ttlMinutes: 60 }), ports),
    );
    expect(d.status?.expiresAt).toBe(new Date(T0 + 5000).toISOString());
  });

  it('refuses a request for a TalosCluster that does not exist, deleting the credential', async () => {
    const { ports } = setup({ cluster: false });
    const d = transition(await run(reclaimObject(), ports));
    expect(d).toMatchObject({ to: 'Refused', deleteCredential: true });
    expect(d.status?.result).toMatch(/no TalosCluster plant-a/);
  });
});

describe('Pending', () => {
  const pending = () =>
    reclaimObject({ phase: 'Pending', expiresAt: expires() });

  it('reads the UUID with the foreign talosconfig and awaits the typed UUID', async () => {
    const { ports, talos } = setup();
    const d = transition(await run(pending(), ports));
    expect(d.to).toBe('AwaitingConfirmation');
    expect(d.status?.machineUUID).toBe(UUID);
    expect(d.audit[0]).toMatchObject({
      event: 'UUIDRead',
      message: expect.stringMatching(/not an etcd member/),
    });
    expect(talos.calls.map(c => c.call)).toEqual([
      'probe',
      'uuid',
      'etcdMembers',
      'etcdMembers',
    ]);
    expect(talos.calls.some(c => c.call === 'reset')).toBe(false);
  });

  it('expires at expiresAt, deleting the credential', async () => {
    const { ports, talos } = setup({ now: T0 + 15 * MIN });
    const d = transition(await run(pending(), ports));
    expect(d).toMatchObject({ to: 'Expired', deleteCredential: true });
    expect(d.status?.result).toMatch(
      /not confirmed before .*Nothing was reset/,
    );
    expect(talos.calls).toEqual([]);
  });

  it('looks for a missing credential Secret again soon while the request is young', async () => {
    const { ports } = setup({ credential: undefined, now: T0 + 200 });
    expect(await run(pending(), ports)).toMatchObject({
      kind: 'wait',
      requeueAfterMs: 500,
    });
    const older = setup({ credential: undefined, now: T0 + 3000 });
    expect(await run(pending(), older.ports)).toMatchObject({
      requeueAfterMs: 3000,
    });
    const old = setup({ credential: undefined, now: T0 + 60_000 });
    expect(await run(pending(), old.ports)).toMatchObject({
      requeueAfterMs: 10_000,
    });
  });

  it('waits for the credential Secret, at most until the expiry', async () => {
    const { ports } = setup({
      credential: undefined,
      now: T0 + 15 * MIN - 3000,
    });
    expect(await run(pending(), ports)).toEqual({
      kind: 'wait',
      requeueAfterMs: 3000,
      waiting: {
        reason: 'CredentialMissing',
        message: expect.stringMatching(/reclaim-1-talosconfig/),
      },
    });
  });

  const NOT_BOUND = [
    'it has no ownerReference to MachineReclaim reclaim-1 (uid uid-1)',
    'no label rackside.dev/credential-of=reclaim-1',
  ];

  it('refuses a Secret not bound to the request, never calling the machine and never deleting it', async () => {
    const { ports, talos } = setup({
      read: { kind: 'notBound', problems: NOT_BOUND },
    });
    const d = transition(await run(pending(), ports));
    expect(d.to).toBe('Refused');
    expect(d.deleteCredential).toBeUndefined();
    expect(d.status).toEqual({
      result:
        'The Secret reclaim-1-talosconfig named by spec.credentialSecretRef is not the credential of this request: it has no ownerReference to MachineReclaim reclaim-1 (uid uid-1), and no label rackside.dev/credential-of=reclaim-1. It was left untouched (not read, not deleted). Nothing was reset.',
      credentialLeftAt: new Date(T0 + 1000).toISOString(),
    });
    expect(d.audit.map(a => a.event)).toEqual([
      'Refused',
      'CredentialNotBound',
    ]);
    expect(talos.calls).toEqual([]);
    // Refused with credentialLeftAt: the credential rule owes no deletion.
    expect(
      owesCredentialDeletion(
        reclaimObject({ phase: 'Refused', credentialLeftAt: CREATED }),
      ),
    ).toBe(false);
  });

  it('fails a bound Secret without the key (it is immutable: the key will not come)', async () => {
    const { ports, talos } = setup({ read: { kind: 'bound' } });
    const d = transition(await run(pending(), ports));
    expect(d).toMatchObject({ to: 'Failed', deleteCredential: true });
    expect(d.status?.result).toBe(
      'The credential Secret reclaim-1-talosconfig has no key talosconfig. Nothing was reset.',
    );
    expect(talos.calls).toEqual([]);
  });

  it("refuses a talosconfig issued by the target cluster's own CA, before any call to the machine", async () => {
    const { ports, talos } = setup({ credential: OWN.text });
    const d = transition(await run(pending(), ports));
    expect(d).toMatchObject({ to: 'Refused', deleteCredential: true });
    expect(d.status?.result).toBe(
      `The talosconfig in Secret reclaim-1-talosconfig is issued by the CA of TalosCluster plant-a itself: ${TARGET} would be one of our own machines, and taking our own machines out goes through maintenance. Nothing was reset.`,
    );
    expect(talos.calls).toEqual([]);
  });

  it("waits while the target cluster's own talosconfig cannot be read to compare", async () => {
    const { ports, talos } = setup();
    ports.clusterCa = async () => {
      throw new Error('Secret rackside-system/plant-a-talosconfig not found');
    };
    expect(await run(pending(), ports)).toMatchObject({
      kind: 'wait',
      waiting: { reason: 'TargetTalosconfigUnreadable' },
    });
    expect(talos.calls).toEqual([]);
  });

  it('refuses a machine whose UUID is a Node of this cluster: that goes through maintenance', async () => {
    const { ports, talos } = setup({ nodes: { [UUID]: 'worker-3' } });
    const d = transition(await run(pending(), ports));
    expect(d).toMatchObject({ to: 'Refused', deleteCredential: true });
    expect(d.status?.result).toBe(
      `${TARGET} has the UUID ${UUID}, the system UUID of Node worker-3 of this cluster: taking our own machines out goes through maintenance. Nothing was reset.`,
    );
    expect(d.status?.machineUUID).toBeUndefined();
    // The etcd of the foreign cluster is not even asked.
    expect(talos.calls.map(c => c.call)).toEqual(['probe', 'uuid']);
  });

  it('fails on a talosconfig that cannot be used, without quoting it', async () => {
    const broken = TALOSCONFIG.replace(
      /key: .*/,
      'key: c2VjcmV0LWtleS1tYXRlcmlhbA==',
    );
    const { ports } = setup({ credential: broken });
    const d = transition(await run(pending(), ports));
    expect(d).toMatchObject({ to: 'Failed', deleteCredential: true });
    expect(d.status?.result).toMatch(
      /cannot be used: talosconfig context "plant-old": key is not base64 of a PEM block/,
    );
    expect(d.status?.result).not.toMatch(/c2VjcmV0|secret-key/);
  });

  it('waits while the machine is unreachable; the probe never outlives the TTL', async () => {
    const machines = foreignWorker();
    machines[TARGET].probe = {
      mode: 'unreachable',
      reason: 'connection refused',
    };
    const { ports, talos } = setup({ machines, now: T0 + 15 * MIN - 2500 });
    const d = await run(pending(), ports);
    expect(d).toMatchObject({
      kind: 'wait',
      requeueAfterMs: 2500,
      waiting: { reason: 'MachineUnreachable' },
    });
    expect(talos.calls[0].timeoutMs).toBe(2500);
  });

  it('refuses a machine in maintenance mode: nothing to reset', async () => {
    const machines = foreignWorker();
    machines[TARGET].probe = {
      mode: 'maintenance',
      version: { tag: 'v1', sha: '', os: '', arch: '', platform: '' },
    };
    const { ports } = setup({ machines });
    const d = transition(await run(pending(), ports));
    expect(d.to).toBe('Refused');
    expect(d.status?.result).toMatch(/maintenance mode/);
  });

  it('refuses a machine the talosconfig does not belong to', async () => {
    const machines = foreignWorker();
    machines[TARGET].probe = {
      mode: 'configured',
      serverTrusted: false,
      trustDetail: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    };
    const { ports } = setup({ machines });
    const d = transition(await run(pending(), ports));
    expect(d.to).toBe('Refused');
    expect(d.status?.result).toMatch(
      /not a machine of the cluster this talosconfig belongs to .*UNABLE_TO_VERIFY/,
    );
  });

  it('waits when the UUID cannot be read', async () => {
    const machines = foreignWorker();
    machines[TARGET].uuid = new Error('DEADLINE_EXCEEDED');
    const { ports } = setup({ machines });
    expect(await run(pending(), ports)).toMatchObject({
      kind: 'wait',
      waiting: { reason: 'UUIDUnreadable' },
    });
  });

  it("refuses the reset of the foreign cluster's last control plane", async () => {
    const machines = {
      [TARGET]: {
        ...foreignWorker()[TARGET],
        etcd: [etcdMember(TARGET)],
      },
    };
    const { ports } = setup({ machines });
    const d = transition(await run(pending(), ports));
    expect(d).toMatchObject({ to: 'Refused', deleteCredential: true });
    expect(d.status?.result).toMatch(
      /last control plane of the foreign cluster/,
    );
  });

  it("refuses a reset that would break the foreign cluster's etcd quorum", async () => {
    const machines = {
      [TARGET]: {
        ...foreignWorker()[TARGET],
        etcd: [etcdMember(TARGET), etcdMember(CP)],
      },
    };
    const { ports } = setup({ machines });
    const d = transition(await run(pending(), ports));
    expect(d.status?.result).toMatch(/etcd quorum: 2 voting members need 2/);
  });

  it('waits when no control plane tells the etcd members', async () => {
    const machines = foreignWorker();
    machines[CP].etcd = new Error('connection refused');
    const { ports } = setup({ machines });
    expect(await run(pending(), ports)).toMatchObject({
      kind: 'wait',
      waiting: {
        reason: 'EtcdMembersUnknown',
        message: expect.stringMatching(/connection refused/),
      },
    });
  });

  it("never dials the foreign talosconfig's control plane when it is outside the allowed networks", async () => {
    const { ports, talos } = setup({
      machines: foreignWorker(),
      networks: [NETWORK],
    });
    expect(await run(pending(), ports)).toMatchObject({
      kind: 'wait',
      waiting: {
        reason: 'EtcdMembersUnknown',
        message: `the etcd members of the foreign cluster could not be read: ${TARGET}: etcd is not running on this node (worker); ${CP}: not contacted: outside the allowed networks (${NETWORK})`,
      },
    });
    expect(talos.calls.map(c => c.address)).not.toContain(CP);
  });
});

describe('AwaitingConfirmation', () => {
  const awaiting = (confirmUUID?: string) =>
    reclaimObject(
      {
        phase: 'AwaitingConfirmation',
        expiresAt: expires(),
        machineUUID: UUID,
      },
      { confirmUUID },
    );

  it('waits for the typed UUID, looking again at the smaller of 10 s and the time left', async () => {
    const { ports, setNow } = setup();
    expect(await run(awaiting(), ports)).toEqual({
      kind: 'wait',
      requeueAfterMs: 10_000,
    });
    setNow(T0 + 15 * MIN - 4000);
    expect(await run(awaiting(), ports)).toEqual({
      kind: 'wait',
      requeueAfterMs: 4000,
    });
  });

  it('expires without a confirmation, and also with one that came too late', async () => {
    const { ports, talos } = setup({ now: T0 + 15 * MIN });
    expect(transition(await run(awaiting(), ports)).to).toBe('Expired');
    expect(transition(await run(awaiting(UUID), ports)).to).toBe('Expired');
    expect(talos.calls).toEqual([]);
  });

  it('refuses a typed UUID that does not match, sending nothing', async () => {
    const { ports, talos } = setup();
    const d = transition(
      await run(awaiting('00000000-0000-4000-8000-000000000000'), ports),
    );
    expect(d).toMatchObject({ to: 'Refused', deleteCredential: true });
    expect(d.status?.result).toMatch(/does not match/);
    expect(talos.calls).toEqual([]);
  });

  it('records the reset (confirmedAt, resetRecordedAt) after checking machine and quorum again', async () => {
    const { ports, talos } = setup();
    const d = await run(awaiting(UUID.toUpperCase()), ports);
    expect(d).toMatchObject({
      kind: 'reset',
      status: {
        confirmedAt: new Date(T0 + 1000).toISOString(),
        resetRecordedAt: new Date(T0 + 1000).toISOString(),
      },
    });
    expect(
      (d as { audit: Array<{ event: string }> }).audit.map(a => a.event),
    ).toEqual(['Confirmed', 'ResetRecorded']);
    // The row only decides: the reset is the reconciler's, after the record.
    expect(talos.calls.map(c => c.call)).toEqual([
      'probe',
      'uuid',
      'etcdMembers',
      'etcdMembers',
    ]);
  });

  it('checks the reclaim verb as the requester right before the reset, whatever the webhook: denied, Refused and nothing sent', async () => {
    const engineer = 'system:serviceaccount:rackside-system:engineer';
    const byKubectl = (confirmUUID: string) =>
      reclaimObject(
        {
          phase: 'AwaitingConfirmation',
          expiresAt: expires(),
          machineUUID: UUID,
        },
        { confirmUUID, requestedBy: engineer },
      );
    const { ports, talos } = setup({
      mayReclaim: async () => ({ allowed: false, reason: 'no RBAC rule' }),
    });
    const d = transition(await run(byKubectl(UUID), ports));
    expect(d).toMatchObject({ to: 'Refused', deleteCredential: true });
    expect(d.status?.result).toMatch(
      new RegExp(
        `${engineer} may not reset .*"reclaim" verb on machinereclaims.rackside.dev in namespace rackside-system, checked by the operator right before the reset \\(no RBAC rule\\)\\. Nothing was reset\\.`,
      ),
    );
    expect(ports.mayReclaim).toHaveBeenCalledWith(
      engineer,
      expect.objectContaining({
        spec: expect.objectContaining({ requestedBy: engineer }),
      }),
    );
    expect(talos.calls.map(c => c.call)).not.toContain('reset');
    // No answer from the apiserver: fail closed, wait.
    const unsure = setup({
      mayReclaim: async () => {
        throw new Error('connection refused');
      },
    });
    expect(await run(byKubectl(UUID), unsure.ports)).toMatchObject({
      kind: 'wait',
      waiting: { reason: 'PermissionCheckFailed' },
    });
    // Allowed: the reset is recorded.
    const allowed = setup();
    expect((await run(byKubectl(UUID), allowed.ports)).kind).toBe('reset');
    // No requester at all: Refused.
    const nobody = setup();
    const none = transition(
      await run(
        reclaimObject(
          {
            phase: 'AwaitingConfirmation',
            expiresAt: expires(),
            machineUUID: UUID,
          },
          { confirmUUID: UUID, requestedBy: '' },
        ),
        nobody.ports,
      ),
    );
    expect(none.to).toBe('Refused');
    expect(none.status?.result).toMatch(/names no requester/);
  });

  it('fails when the credential is gone', async () => {
    const { ports } = setup({ credential: undefined });
    expect(transition(await run(awaiting(UUID), ports))).toMatchObject({
      to: 'Failed',
      status: { result: expect.stringMatching(/is gone/) },
    });
  });

  it('refuses when another machine took the address', async () => {
    const machines = foreignWorker();
    machines[TARGET].uuid = '11111111-2222-4333-8444-555555555555';
    const { ports } = setup({ machines });
    expect(transition(await run(awaiting(UUID), ports))).toMatchObject({
      to: 'Refused',
      status: {
        result: expect.stringMatching(/another machine took the address/),
      },
    });
  });

  it('refuses when the reset became unsafe since the UUID was read', async () => {
    const machines = foreignWorker();
    machines[TARGET].etcd = [etcdMember(TARGET)];
    const { ports } = setup({ machines });
    expect(transition(await run(awaiting(UUID), ports)).to).toBe('Refused');
  });

  /** The target is one of three control planes; `downs` do not answer. */
  function threeControlPlanes(...downs: string[]) {
    const machines = foreignWorker();
    const members = [
      etcdMember(TARGET),
      etcdMember(CP),
      etcdMember('10.0.1.11'),
    ];
    machines[TARGET].etcd = members;
    machines[CP] = { etcd: members };
    machines['10.0.1.11'] = { etcd: members };
    for (const down of downs) {
      machines[down] = { etcd: new Error('connection refused') };
    }
    return machines;
  }

  it('asks every other voting member whether it is up: one down since the UUID was read refuses the reset', async () => {
    const { ports, talos } = setup({
      machines: threeControlPlanes('10.0.1.11'),
    });
    const d = transition(await run(awaiting(UUID), ports));
    expect(d).toMatchObject({ to: 'Refused', deleteCredential: true });
    expect(d.status?.result).toBe(
      `Refused: resetting ${TARGET} would break the foreign cluster's etcd quorum: 3 voting members need 2, 2 are up (cp-10.0.1.11 at 10.0.1.11 does not answer), and 1 would remain. Nothing was reset.`,
    );
    expect(
      talos.calls
        .filter(c => c.call === 'etcdMembers')
        .map(c => c.address)
        .sort(),
    ).toEqual([TARGET, CP, '10.0.1.11'].sort());
    expect(talos.calls.map(c => c.call)).not.toContain('reset');
  });

  it('counts a member whose Reset another request recorded as down: both at once would break quorum', async () => {
    const { ports, talos } = setup({
      machines: threeControlPlanes(),
      inFlight: [{ name: 'reclaim-2', address: '10.0.1.11' }],
    });
    const d = transition(await run(awaiting(UUID), ports));
    expect(d.to).toBe('Refused');
    expect(d.status?.result).toBe(
      `Refused: resetting ${TARGET} would break the foreign cluster's etcd quorum: 3 voting members need 2, 2 are up (cp-10.0.1.11 at 10.0.1.11 is being reset by MachineReclaim reclaim-2), and 1 would remain. Nothing was reset.`,
    );
    expect(talos.calls.map(c => c.call)).not.toContain('reset');
  });

  it('refuses a second request for a machine another request is resetting', async () => {
    const { ports, talos } = setup({
      machines: threeControlPlanes(),
      inFlight: [{ name: 'reclaim-2', address: `${TARGET}:50000` }],
    });
    const d = transition(await run(awaiting(UUID), ports));
    expect(d).toMatchObject({
      to: 'Refused',
      status: {
        result: `MachineReclaim reclaim-2 is resetting ${TARGET} already. Nothing was reset.`,
      },
    });
    expect(talos.calls.map(c => c.call)).not.toContain('etcdMembers');
  });

  it('records the reset when all three control planes are up', async () => {
    const { ports } = setup({ machines: threeControlPlanes() });
    const d = await run(awaiting(UUID), ports);
    expect(d.kind).toBe('reset');
    expect(
      (d as { audit: Array<{ message: string }> }).audit[0].message,
    ).toMatch(/3 voting etcd members, quorum 2, 2 remain after the reset/);
  });

  it('refuses when the credential Secret was replaced by one not bound to the request', async () => {
    const { ports, talos } = setup({
      read: {
        kind: 'notBound',
        problems: ['no label rackside.dev/credential-of=reclaim-1'],
      },
    });
    const d = transition(await run(awaiting(UUID), ports));
    expect(d.to).toBe('Refused');
    expect(d.deleteCredential).toBeUndefined();
    expect(d.status?.credentialLeftAt).toBeDefined();
    expect(talos.calls).toEqual([]);
  });
});

describe('afterReset', () => {
  const resetting = reclaimObject({
    phase: 'Resetting',
    machineUUID: UUID,
    resetRecordedAt: CREATED,
  });
  const limits = DEFAULT_RECLAIM_LIMITS;

  it('accepted: WaitingForMaintenance with resetSentAt, credential deleted', () => {
    expect(
      afterReset(resetting, { ok: true, actorId: 'a', at: CREATED }, limits),
    ).toMatchObject({
      kind: 'transition',
      to: 'WaitingForMaintenance',
      status: { resetSentAt: CREATED },
      deleteCredential: true,
      audit: [{ event: 'ResetSent' }],
    });
  });

  it('no clear answer: waits all the same (it may have run) and never resends', () => {
    const d = transition(
      afterReset(
        resetting,
        { ok: false, outcome: 'unknown', message: 'DEADLINE_EXCEEDED' },
        limits,
      ),
    );
    expect(d).toMatchObject({
      to: 'WaitingForMaintenance',
      deleteCredential: true,
    });
    expect(d.status?.resetSentAt).toBeUndefined();
    expect(d.audit[0].event).toBe('ResetUnanswered');
  });

  it.each(['notSent', 'refused'] as const)('%s: Failed', outcome => {
    expect(
      transition(
        afterReset(resetting, { ok: false, outcome, message: 'x' }, limits),
      ),
    ).toMatchObject({ to: 'Failed', deleteCredential: true });
  });
});

describe('Resetting (after a crash between record and answer)', () => {
  it('waits for maintenance mode and does not send the reset again', async () => {
    const { ports, talos } = setup();
    const d = transition(
      await run(
        reclaimObject({
          phase: 'Resetting',
          machineUUID: UUID,
          resetRecordedAt: CREATED,
        }),
        ports,
      ),
    );
    expect(d).toMatchObject({
      to: 'WaitingForMaintenance',
      deleteCredential: true,
    });
    expect(talos.calls).toEqual([]);
  });
});

describe('WaitingForMaintenance', () => {
  const SENT = T0 + 5 * MIN;
  const waiting = (status: Record<string, string> = {}) =>
    reclaimObject({
      phase: 'WaitingForMaintenance',
      machineUUID: UUID,
      resetRecordedAt: new Date(SENT - 100).toISOString(),
      resetSentAt: new Date(SENT).toISOString(),
      credentialDeletedAt: new Date(SENT).toISOString(),
      ...status,
    });
  const back = (uuid: string | Error): Record<string, FakeMachine> => ({
    [TARGET]: { maintenanceUUID: uuid },
  });

  it('Done when the machine answers in maintenance mode with the same UUID; wakes discovery', async () => {
    const { ports } = setup({
      machines: back(UUID.toUpperCase()),
      now: SENT + 12_000,
    });
    const d = transition(await run(waiting(), ports));
    expect(d).toMatchObject({ to: 'Done', wakeDiscovery: true });
    expect(d.status?.result).toMatch(/answers in maintenance mode with UUID/);
  });

  it('keeps waiting while another machine answers there', async () => {
    const { ports } = setup({
      machines: back('99999999-0000-4000-8000-000000000000'),
      now: SENT + 12_000,
    });
    expect(await run(waiting(), ports)).toMatchObject({
      kind: 'wait',
      waiting: { reason: 'OtherMachine' },
    });
  });

  it('waits at the smaller of 10 s and the time left; the probe never runs past the deadline', async () => {
    const { ports, talos } = setup({
      machines: back(new Error('connection refused')),
      now: SENT + 10 * MIN - 1500,
    });
    expect(await run(waiting(), ports)).toMatchObject({
      kind: 'wait',
      requeueAfterMs: 1500,
      waiting: { reason: 'NotInMaintenanceYet' },
    });
    expect(talos.calls[0]).toMatchObject({
      call: 'maintenanceUUID',
      timeoutMs: 1500,
    });
  });

  it('is not Failed a millisecond before the deadline, and Failed exactly at it with the DHCP hint', async () => {
    const { ports, talos, setNow } = setup({
      machines: back(new Error('connection refused')),
      now: SENT + 10 * MIN - 1,
    });
    expect((await run(waiting(), ports)).kind).toBe('wait');
    setNow(SENT + 10 * MIN);
    talos.calls.length = 0;
    const d = transition(await run(waiting(), ports));
    expect(d.to).toBe('Failed');
    expect(d.status?.result).toBe(
      `${TARGET} did not return to maintenance mode with UUID ${UUID} within 10 minutes of the reset. It may have taken a new address from DHCP: scan for the machine and add its address to a TalosCluster's spec.discovery.addresses.`,
    );
    expect(d.audit[0]).toMatchObject({ event: 'ReclaimFailed', warning: true });
    expect(talos.calls).toEqual([]);
  });

  it('counts the deadline from resetRecordedAt when the answer was never recorded', async () => {
    const { ports } = setup({
      machines: back(new Error('down')),
      now: SENT - 100 + 10 * MIN,
    });
    const w = waiting();
    delete w.status!.resetSentAt;
    expect(transition(await run(w, ports)).to).toBe('Failed');
  });

  it('uses the configured wait (tests shorten it)', async () => {
    const { ports } = setup({
      machines: back(new Error('down')),
      now: SENT + 20_000,
    });
    ports.limits = { ...ports.limits, maintenanceWaitMs: 20_000 };
    const d = transition(await run(waiting(), ports));
    expect(d.status?.result).toMatch(/within 20 seconds of the reset/);
  });
});

describe('network reach of spec.address (docs/architecture.md, "Adding machines")', () => {
  const pending = (address: string) =>
    reclaimObject({ phase: 'Pending', expiresAt: expires() }, { address });
  const awaiting = (address: string) =>
    reclaimObject(
      {
        phase: 'AwaitingConfirmation',
        expiresAt: expires(),
        machineUUID: UUID,
      },
      { address, confirmUUID: UUID },
    );
  /** A name is dialed at its checked IP with the cluster's Talos port. */
  const DIALED = `${TARGET}:50000`;
  const SENT = T0 + 5 * MIN;
  const waiting = (address: string) =>
    reclaimObject(
      {
        phase: 'WaitingForMaintenance',
        machineUUID: UUID,
        resetRecordedAt: new Date(SENT - 100).toISOString(),
        resetSentAt: new Date(SENT).toISOString(),
        credentialDeletedAt: new Date(SENT).toISOString(),
      },
      { address },
    );

  it.each([
    ['an IP outside', '169.254.169.254'],
    ['an IP outside with the Talos port', '169.254.169.254:50000'],
    ['an IPv4-mapped IPv6 address outside', '[::ffff:127.0.0.1]:50000'],
  ])(
    'refuses %s before any call, naming the networks, and deletes the (bound) credential',
    async (_what, address) => {
      // The machine answers as a configured foreign worker at any of those addresses.
      const { ports, talos } = setup({
        machines: { ...foreignWorker(), [address]: foreignWorker()[TARGET] },
      });
      const d = transition(await run(pending(address), ports));
      expect(d).toMatchObject({ to: 'Refused', deleteCredential: true });
      expect(d.status?.result).toBe(
        `${address} is not contacted: outside the allowed networks (${NETWORK}, ${FOREIGN_NETWORK}). Nothing was reset.`,
      );
      expect(d.audit).toEqual([
        expect.objectContaining({ event: 'Refused', warning: true }),
      ]);
      expect(talos.calls).toEqual([]);
    },
  );

  it("refuses another port than the cluster's Talos port (the apiserver's, say)", async () => {
    const { ports, talos } = setup();
    const d = transition(await run(pending(`${TARGET}:6443`), ports));
    expect(d.to).toBe('Refused');
    expect(d.status?.result).toBe(
      `${TARGET}:6443 is not contacted: port 6443 is not the Talos API port of this cluster (50000). Nothing was reset.`,
    );
    expect(talos.calls).toEqual([]);
  });

  it('refuses everything when the cluster lists no networks (fail closed)', async () => {
    const { ports, talos } = setup({ networks: [] });
    const d = transition(await run(pending(TARGET), ports));
    expect(d.to).toBe('Refused');
    expect(d.status?.result).toMatch(
      /lists no allowed networks \(spec\.discovery\.allowedNetworks\)/,
    );
    expect(talos.calls).toEqual([]);
  });

  it('refuses a name when any address it resolves to is outside', async () => {
    const { ports, talos } = setup({
      names: { 'old-worker.rack': [TARGET, '169.254.169.254'] },
    });
    const d = transition(await run(pending('old-worker.rack'), ports));
    expect(d.to).toBe('Refused');
    expect(d.status?.result).toBe(
      `old-worker.rack is not contacted: old-worker.rack resolves to an address outside the allowed networks (${NETWORK}, ${FOREIGN_NETWORK}). Nothing was reset.`,
    );
    expect(talos.calls).toEqual([]);
  });

  it('waits, contacting nothing, while a name does not resolve', async () => {
    const { ports, talos } = setup();
    const d = await run(pending('gone.rack'), ports);
    expect(d).toMatchObject({
      kind: 'wait',
      waiting: {
        reason: 'MachineUnreachable',
        message: 'gone.rack is not contacted: gone.rack does not resolve',
      },
    });
    expect(talos.calls).toEqual([]);
  });

  it('dials the checked IP of a name, never the name again, for the probe, the UUID and etcd', async () => {
    const { ports, talos } = setup({
      names: { 'old-worker.rack': [TARGET] },
      machines: { ...foreignWorker(), [DIALED]: foreignWorker()[TARGET] },
    });
    const d = transition(await run(pending('old-worker.rack'), ports));
    expect(d.to).toBe('AwaitingConfirmation');
    expect(talos.calls.map(c => `${c.call} ${c.address}`)).toEqual([
      `probe ${DIALED}`,
      `uuid ${DIALED}`,
      `etcdMembers ${DIALED}`,
      `etcdMembers ${CP}`,
    ]);
  });

  it("names the cluster's Talos port when the address gives none", async () => {
    const dialed = `${TARGET}:50001`;
    const { ports, talos } = setup({
      talosPort: 50001,
      // The foreign control plane is asked on the allowed Talos port too.
      machines: {
        ...foreignWorker(),
        [dialed]: foreignWorker()[TARGET],
        [`${CP}:50001`]: foreignWorker()[CP],
      },
    });
    const d = transition(await run(pending(TARGET), ports));
    expect(d.to).toBe('AwaitingConfirmation');
    expect(talos.calls[0]).toMatchObject({ call: 'probe', address: dialed });
  });

  it('refuses at the confirmation when the networks no longer hold the address: no reset', async () => {
    const { ports, talos } = setup({ networks: ['10.0.9.0/24'] });
    const d = transition(await run(awaiting(TARGET), ports));
    expect(d).toMatchObject({ to: 'Refused', deleteCredential: true });
    expect(d.status?.result).toBe(
      `${TARGET} is not contacted: outside the allowed networks (10.0.9.0/24). Nothing was reset.`,
    );
    expect(talos.calls).toEqual([]);
  });

  it('hands the reset the checked IP of a name, resolved right before it is recorded', async () => {
    const { ports } = setup({
      names: { 'old-worker.rack': [TARGET] },
      machines: { ...foreignWorker(), [DIALED]: foreignWorker()[TARGET] },
    });
    const d = await run(awaiting('old-worker.rack'), ports);
    expect(d).toMatchObject({ kind: 'reset', dial: DIALED });
  });

  it('after the reset, does not look for maintenance mode outside the networks; fails at the deadline', async () => {
    const { ports, talos, setNow } = setup({
      networks: ['10.0.9.0/24'],
      machines: { [TARGET]: { maintenanceUUID: UUID } },
      now: SENT + 12_000,
    });
    expect(await run(waiting(TARGET), ports)).toMatchObject({
      kind: 'wait',
      waiting: {
        reason: 'NotAllowed',
        message: `${TARGET} is not contacted: outside the allowed networks (10.0.9.0/24)`,
      },
    });
    setNow(SENT + 10 * MIN);
    expect(transition(await run(waiting(TARGET), ports)).to).toBe('Failed');
    expect(talos.calls).toEqual([]);
  });

  it('after the reset, looks for maintenance mode at the checked IP of a name', async () => {
    const { ports, talos } = setup({
      names: { 'old-worker.rack': [TARGET] },
      machines: { [DIALED]: { maintenanceUUID: UUID } },
      now: SENT + 12_000,
    });
    expect(transition(await run(waiting('old-worker.rack'), ports)).to).toBe(
      'Done',
    );
    expect(talos.calls.map(c => `${c.call} ${c.address}`)).toEqual([
      `maintenanceUUID ${DIALED}`,
    ]);
  });
});

describe('sharesCertificate', () => {
  it('compares certificates by fingerprint, whatever the PEM text around them', () => {
    const other = TALOSCONFIG; // not PEM: no certificate in it
    expect(sharesCertificate(OWN.caPem, OWN.caPem)).toBe(true);
    expect(
      sharesCertificate(`junk\n${OWN.caPem.replace(/\n/g, '\r\n')}`, OWN.caPem),
    ).toBe(true);
    expect(sharesCertificate(other, OWN.caPem)).toBe(false);
    expect(sharesCertificate('', OWN.caPem)).toBe(false);
  });

  it('reads a CA of 25,000 unclosed BEGIN lines (a 700 KB Secret written with kubectl) once, not once per line', () => {
    // The CA loads (its first block is a certificate), so parseTalosconfig lets it through.
    const hostile = `${OWN.caPem}${'-----BEGIN CERTIFICATE-----x'.repeat(
      25_000,
    )}`;
    // CPU time, not wall-clock: the bound is against a pathological path (seconds to
    // minutes), and a busy machine stretches the wall clock but not the work done.
    const started = process.cpuUsage();
    expect(sharesCertificate(hostile, OWN.caPem)).toBe(true);
    expect(sharesCertificate(TALOSCONFIG, hostile)).toBe(false);
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(1000);
  });
});

describe('terminal phases and the credential rule', () => {
  it.each(['Done', 'Failed', 'Expired', 'Refused'] as const)(
    '%s is final once the credential is deleted',
    async phase => {
      const { ports, talos } = setup();
      const mr = reclaimObject({ phase, credentialDeletedAt: CREATED });
      expect(await run(mr, ports)).toEqual({ kind: 'done' });
      expect(talos.calls).toEqual([]);
    },
  );

  it('deletes a credential still owed, in any phase from the reset on', async () => {
    const { ports } = setup();
    for (const phase of [
      'WaitingForMaintenance',
      'Done',
      'Failed',
      'Expired',
      'Refused',
    ] as const) {
      const mr = reclaimObject({ phase });
      expect(owesCredentialDeletion(mr)).toBe(true);
      expect(await run(mr, ports)).toEqual({
        kind: 'record',
        audit: [],
        deleteCredential: true,
      });
    }
    for (const phase of [
      'Pending',
      'AwaitingConfirmation',
      'Resetting',
    ] as const) {
      expect(owesCredentialDeletion(reclaimObject({ phase }))).toBe(false);
    }
    expect(owesCredentialDeletion(reclaimObject())).toBe(false);
  });

  it('has a row for every phase', () => {
    expect(Object.keys(transitions).sort()).toEqual(
      [
        'New',
        'Pending',
        'AwaitingConfirmation',
        'Resetting',
        'WaitingForMaintenance',
        'Done',
        'Failed',
        'Expired',
        'Refused',
      ].sort(),
    );
  });
});
