import { ConflictError } from '@backstage/errors';
import type {
  MachineReclaim,
  MachineReclaimStatus,
} from '@rackside/plugin-servers-common';
import {
  DEFAULT_RECLAIM_LIMITS,
  type CredentialDeletion,
  type ReclaimLimits,
} from './table';
import {
  MachineReclaimReconciler,
  WAITING_CONDITION,
  type ReclaimReconcilerPorts,
} from './reconciler';
import {
  CREATED,
  etcdMember,
  fakeTalos,
  NS,
  reclaimObject,
  talosClusterObject,
  UUID,
  type FakeMachine,
} from '../testing/reclaimFixtures';
import { makeTalosconfig } from '../testing/talosconfigs';

const TARGET = '10.0.2.191';
const CP = '10.0.1.10';
const T0 = Date.parse(CREATED);
let TALOSCONFIG: string;
let OWN_CA: string;

beforeAll(async () => {
  TALOSCONFIG = (await makeTalosconfig('plant-old', [CP])).text;
  OWN_CA = (await makeTalosconfig('plant-a', [])).caPem;
});

function foreignWorker(): Record<string, FakeMachine> {
  return {
    [TARGET]: {
      probe: { mode: 'configured', serverTrusted: true },
      uuid: UUID,
      etcd: new Error('etcd is not running on this node (worker)'),
      reset: { actorId: 'actor-1' },
      maintenanceUUID: new Error('certificate required'),
    },
    [CP]: { etcd: [etcdMember(CP)] },
  };
}

function setup(
  initial: MachineReclaim,
  options: {
    machines?: Record<string, FakeMachine>;
    limits?: Partial<ReclaimLimits>;
    beforeWrite?: (status: MachineReclaimStatus) => Promise<void>;
    deleteCredential?: () => Promise<CredentialDeletion>;
  } = {},
) {
  let current = initial;
  let rv = Number(initial.metadata.resourceVersion);
  let now = T0 + 1000;
  const order: string[] = [];
  const writes: MachineReclaimStatus[] = [];
  const events: Array<{ type: string; reason: string; message: string }> = [];
  const talos = fakeTalos(options.machines ?? foreignWorker());
  const reset = talos.access.reset;
  talos.access.reset = async (...args) => {
    order.push('reset');
    return reset(...args);
  };
  const wakes: string[] = [];
  const ports: ReclaimReconcilerPorts = {
    view: { reclaim: () => current },
    status: {
      write: jest.fn(
        async (mr: MachineReclaim, status: MachineReclaimStatus) => {
          await options.beforeWrite?.(status);
          if (
            mr.metadata.resourceVersion !== current.metadata.resourceVersion
          ) {
            throw new ConflictError('409 Conflict');
          }
          order.push(`write ${status.phase}`);
          writes.push(status);
          current = {
            ...current,
            metadata: { ...current.metadata, resourceVersion: String(++rv) },
            status,
          };
          return current;
        },
      ),
      read: async () => current,
    },
    credential: {
      read: async () => ({ kind: 'bound', talosconfig: TALOSCONFIG }),
      delete: jest.fn(
        options.deleteCredential ??
          (async (): Promise<CredentialDeletion> => {
            order.push('delete credential');
            return { outcome: 'deleted' };
          }),
      ),
    },
    clusterCa: async () => OWN_CA,
    nodeWithUUID: () => undefined,
    resetsInFlight: () => [],
    events: {
      record: async (_mr, type, reason, message) => {
        order.push(`event ${reason}`);
        events.push({ type, reason, message });
      },
    },
    wakeDiscovery: (namespace, cluster) => {
      order.push('wake');
      wakes.push(`${namespace}/${cluster}`);
    },
    cluster: () =>
      talosClusterObject({
        allowedNetworks: ['10.0.2.0/24', '10.0.1.0/24'],
      }),
    resolve: async host => {
      if (host === 'old-worker.rack') return [TARGET];
      throw new Error(`getaddrinfo ENOTFOUND ${host}`);
    },
    talos: talos.access,
    limits: { ...DEFAULT_RECLAIM_LIMITS, ...options.limits },
    mayReclaim: async () => ({ allowed: true }),
    now: () => now,
    reconcileTimeoutMs: 120_000,
  };
  return {
    reconciler: new MachineReclaimReconciler(ports),
    ports,
    current: () => current,
    order,
    writes,
    events,
    talos,
    wakes,
    /** Another writer (a `kubectl label`, say) moves the resourceVersion. */
    touch: () => {
      current = {
        ...current,
        metadata: { ...current.metadata, resourceVersion: String(++rv) },
      };
    },
    setNow: (ms: number) => {
      now = ms;
    },
  };
}

const KEY = `${NS}/reclaim-1`;

/** A request whose UUID was read and typed: the next pass records and sends the Reset. */
function confirmed(spec: Partial<MachineReclaim['spec']> = {}) {
  return reclaimObject(
    {
      phase: 'AwaitingConfirmation',
      machineUUID: UUID,
      expiresAt: new Date(T0 + 15 * 60_000).toISOString(),
    },
    { confirmUUID: UUID, ...spec },
  );
}

describe('MachineReclaimReconciler', () => {
  it('takes a new request to AwaitingConfirmation: status first, then one Event per audit entry', async () => {
    const t = setup(reclaimObject());
    expect(await t.reconciler.reconcile(KEY)).toEqual({
      requeueAfterMs: 10_000,
    });
    const status = t.current().status!;
    expect(status.phase).toBe('AwaitingConfirmation');
    expect(status.machineUUID).toBe(UUID);
    expect(status.expiresAt).toBe(new Date(T0 + 15 * 60_000).toISOString());
    expect(status.observedGeneration).toBe(1);
    expect(status.audit?.map(a => a.event)).toEqual(['Created', 'UUIDRead']);
    expect(status.audit?.[0].actor).toBe('user:default/admin');
    expect(t.order).toEqual([
      'write Pending',
      'event Created',
      'write AwaitingConfirmation',
      'event UUIDRead',
    ]);
    expect(t.talos.calls.some(c => c.call === 'reset')).toBe(false);
  });

  it('sends the Reset of a name to the IP checked against the allowed networks, never to the name', async () => {
    const t = setup(confirmed({ address: 'old-worker.rack' }), {
      machines: {
        ...foreignWorker(),
        [`${TARGET}:50000`]: foreignWorker()[TARGET],
      },
    });
    await t.reconciler.reconcile(KEY);
    const dialed = t.talos.calls.map(c => c.address);
    expect(dialed).not.toContain('old-worker.rack');
    expect(t.talos.calls.filter(c => c.call === 'reset')).toEqual([
      expect.objectContaining({ address: `${TARGET}:50000` }),
    ]);
    expect(t.current().status?.phase).toBe('WaitingForMaintenance');
  });

  it('refuses a request outside the allowed networks before any call; the bound credential is deleted', async () => {
    const t = setup(reclaimObject(undefined, { address: '169.254.169.254' }));
    await t.reconciler.reconcile(KEY);
    const status = t.current().status!;
    expect(status.phase).toBe('Refused');
    expect(status.result).toBe(
      '169.254.169.254 is not contacted: outside the allowed networks (10.0.2.0/24, 10.0.1.0/24). Nothing was reset.',
    );
    expect(status.credentialDeletedAt).toBeDefined();
    expect(t.talos.calls).toEqual([]);
    expect(t.events.map(e => e.reason)).toEqual([
      'Created',
      'Refused',
      'CredentialDeleted',
    ]);
  });

  it('records the reset before sending it once, then deletes the credential with the answer', async () => {
    const t = setup(confirmed());
    await t.reconciler.reconcile(KEY);
    expect(t.order.slice(0, 8)).toEqual([
      'write Resetting',
      'event Confirmed',
      'event ResetRecorded',
      'reset',
      'delete credential',
      'write WaitingForMaintenance',
      'event ResetSent',
      'event CredentialDeleted',
    ]);
    // Then it looks for the machine, which is not back yet.
    expect(t.order.slice(8)).toEqual(['write WaitingForMaintenance']);
    const status = t.current().status!;
    expect(status.conditions?.[0]).toMatchObject({
      type: WAITING_CONDITION,
      reason: 'NotInMaintenanceYet',
    });
    expect(status).toMatchObject({
      phase: 'WaitingForMaintenance',
      confirmedAt: expect.any(String),
      resetRecordedAt: expect.any(String),
      resetSentAt: expect.any(String),
      credentialDeletedAt: expect.any(String),
    });
    expect(t.writes[0].resetRecordedAt).toBeDefined();
    expect(t.writes[0].resetSentAt).toBeUndefined();
    expect(t.talos.calls.filter(c => c.call === 'reset')).toHaveLength(1);
  });

  it("keeps the Reset's answer when the request was labelled while the Reset was out: one Reset, one deletion", async () => {
    let touched = false;
    const t = setup(confirmed(), {
      beforeWrite: async status => {
        if (!touched && status.phase === 'WaitingForMaintenance') {
          touched = true;
          t.touch();
        }
      },
    });
    await t.reconciler.reconcile(KEY);
    expect(touched).toBe(true);
    const status = t.current().status!;
    expect(status.phase).toBe('WaitingForMaintenance');
    expect(status.resetSentAt).toEqual(expect.any(String));
    const events = status.audit?.map(a => a.event);
    expect(events).toContain('ResetSent');
    expect(events).toContain('CredentialDeleted');
    expect(events).not.toContain('ResetUnanswered');
    expect(t.ports.credential.delete).toHaveBeenCalledTimes(1);
    expect(t.talos.calls.filter(c => c.call === 'reset')).toHaveLength(1);
  });

  it('never sends the reset again after dying between the send and its record', async () => {
    let die = true;
    const t = setup(confirmed(), {
      beforeWrite: async status => {
        if (die && status.phase === 'WaitingForMaintenance') {
          throw new Error('the operator died');
        }
      },
    });
    await expect(t.reconciler.reconcile(KEY)).rejects.toThrow(/died/);
    expect(t.current().status?.phase).toBe('Resetting');
    die = false;
    await t.reconciler.reconcile(KEY);
    expect(t.current().status?.phase).toBe('WaitingForMaintenance');
    expect(t.current().status?.audit?.map(a => a.event)).toContain(
      'ResetUnanswered',
    );
    expect(t.talos.calls.filter(c => c.call === 'reset')).toHaveLength(1);
  });

  it('keeps the answer when the credential cannot be deleted, and deletes it on a later pass', async () => {
    let fail = true;
    const t = setup(confirmed(), {
      deleteCredential: async () => {
        if (fail) throw new Error('apiserver unavailable');
        return { outcome: 'deleted' };
      },
    });
    await expect(t.reconciler.reconcile(KEY)).rejects.toThrow(/unavailable/);
    // The reset's answer is on record; only the deletion is owed.
    expect(t.current().status).toMatchObject({
      phase: 'WaitingForMaintenance',
      resetSentAt: expect.any(String),
    });
    expect(t.current().status?.credentialDeletedAt).toBeUndefined();
    expect(t.current().status?.audit?.map(a => a.event)).toContain(
      'CredentialDeletionFailed',
    );
    fail = false;
    await t.reconciler.reconcile(KEY);
    expect(t.current().status?.credentialDeletedAt).toBeDefined();
    expect(t.talos.calls.filter(c => c.call === 'reset')).toHaveLength(1);
  });

  it('Done wakes the target cluster’s discovery after the write', async () => {
    const machines = foreignWorker();
    machines[TARGET].maintenanceUUID = UUID;
    const t = setup(
      reclaimObject({
        phase: 'WaitingForMaintenance',
        machineUUID: UUID,
        resetRecordedAt: CREATED,
        resetSentAt: CREATED,
        credentialDeletedAt: CREATED,
      }),
      { machines },
    );
    await t.reconciler.reconcile(KEY);
    expect(t.current().status?.phase).toBe('Done');
    expect(t.wakes).toEqual([`${NS}/plant-a`]);
    expect(t.order.indexOf('write Done')).toBeLessThan(t.order.indexOf('wake'));
  });

  it('expires a request and deletes its credential', async () => {
    const t = setup(
      reclaimObject({
        phase: 'AwaitingConfirmation',
        machineUUID: UUID,
        expiresAt: new Date(T0 + 1000).toISOString(),
      }),
    );
    await t.reconciler.reconcile(KEY);
    expect(t.current().status).toMatchObject({
      phase: 'Expired',
      credentialDeletedAt: expect.any(String),
    });
    expect(t.order).toEqual([
      'delete credential',
      'write Expired',
      'event Expired',
      'event CredentialDeleted',
    ]);
    expect(t.events[0].type).toBe('Warning');
  });

  it('leaves a Secret not bound to the request as it is, records so, and never tries again', async () => {
    const deletes: string[] = [];
    const t = setup(
      reclaimObject(undefined, { targetCluster: 'no-such-cluster' }),
      {
        deleteCredential: async () => {
          deletes.push('asked');
          return {
            outcome: 'notBound',
            problems: ['it has no ownerReference to MachineReclaim reclaim-1'],
          };
        },
      },
    );
    t.ports.cluster = () => undefined;
    await t.reconciler.reconcile(KEY);
    expect(t.current().status).toMatchObject({
      phase: 'Refused',
      credentialLeftAt: expect.any(String),
    });
    expect(t.current().status?.credentialDeletedAt).toBeUndefined();
    expect(t.events.map(e => e.reason)).toEqual([
      'Refused',
      'CredentialNotBound',
    ]);
    expect(t.events[1]).toMatchObject({
      type: 'Warning',
      message: expect.stringMatching(
        /reclaim-1-talosconfig named by spec.credentialSecretRef is not the credential of this request: it has no ownerReference to MachineReclaim reclaim-1\. It was left untouched/,
      ),
    });
    // The credential rule owes nothing any more: a later pass asks nothing.
    await t.reconciler.reconcile(KEY);
    expect(deletes).toEqual(['asked']);
  });

  it('shows why it waits once, and drops the condition at the next transition', async () => {
    const machines = foreignWorker();
    machines[TARGET].probe = {
      mode: 'unreachable',
      reason: 'no route to host',
    };
    const t = setup(
      reclaimObject({
        phase: 'Pending',
        expiresAt: new Date(T0 + 15 * 60_000).toISOString(),
      }),
      { machines },
    );
    await t.reconciler.reconcile(KEY);
    await t.reconciler.reconcile(KEY);
    expect(t.writes).toHaveLength(1);
    expect(t.current().status?.conditions).toEqual([
      expect.objectContaining({
        type: WAITING_CONDITION,
        status: 'True',
        reason: 'MachineUnreachable',
        message: expect.stringMatching(/no route to host/),
      }),
    ]);
    machines[TARGET].probe = { mode: 'configured', serverTrusted: true };
    await t.reconciler.reconcile(KEY);
    expect(t.current().status?.phase).toBe('AwaitingConfirmation');
    expect(t.current().status?.conditions).toEqual([]);
  });

  it('bounds a reconcile: an overrunning pass returns, and no second pass starts meanwhile', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      let release!: () => void;
      const stuck = new Promise<void>(resolve => {
        release = resolve;
      });
      const t = setup(
        reclaimObject({
          phase: 'Pending',
          expiresAt: new Date(T0 + 4000).toISOString(),
        }),
      );
      t.ports.reconcileTimeoutMs = 120_000;
      const probe = jest.fn(async () => {
        await stuck;
        return { mode: 'unreachable' as const, reason: 'late' };
      });
      t.ports.talos.probe = probe;
      const first = t.reconciler.reconcile(KEY);
      await Promise.resolve();
      jest.advanceTimersByTime(120_000);
      // The requeue is the smaller of 10 s and the time left before the expiry.
      await expect(first).resolves.toEqual({ requeueAfterMs: 3000 });
      await expect(t.reconciler.reconcile(KEY)).resolves.toEqual({
        requeueAfterMs: 3000,
      });
      expect(probe).toHaveBeenCalledTimes(1);
      release();
    } finally {
      jest.useRealTimers();
    }
  });
});
