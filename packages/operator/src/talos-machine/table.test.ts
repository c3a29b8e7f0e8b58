import type {
  TalosMachine,
  TalosMachineStatus,
} from '@rackside/plugin-servers-common';
import { TalosApiError } from '@rackside/plugin-servers-node';
import type { NodeView } from '../runtime/nodeView';
import { DEFAULT_JOIN_LIMITS, joinRowFor, type JoinPorts } from './table';
import { TalosMachineReconciler } from './reconciler';
import {
  fakeTalos,
  NS,
  talosClusterObject,
  type FakeMachine,
} from '../testing/reclaimFixtures';

const T0 = Date.parse('2026-10-30T03:00:00.000Z');
const UUID = 'bba72157-81f6-43fd-9ddd-4684b42f4bd9';
const ADDRESS = '10.0.3.31';
const JOIN_CONFIG = 'version: v1alpha1\nmachine:\n  type: worker\n';
/** gRPC status codes. */
const GrpcStatus = {
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  UNAVAILABLE: 14,
};
const flag = { by: 'user:default/admin', reason: 'more capacity' };

function machine(
  status?: Partial<TalosMachineStatus>,
  join: typeof flag | null = flag,
): TalosMachine {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'TalosMachine',
    metadata: {
      name: UUID,
      namespace: NS,
      generation: 2,
      resourceVersion: '5',
    },
    spec: { cluster: 'plant-a', join: join ?? undefined },
    status: {
      phase: 'Pending',
      address: ADDRESS,
      ...status,
    } as TalosMachineStatus,
  };
}

function node(ready: boolean, uuid = UUID.toUpperCase()): NodeView {
  return {
    metadata: { name: 'talos-bba72157' },
    status: {
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      nodeInfo: { systemUUID: uuid },
    },
  };
}

const spare = (): Record<string, FakeMachine> => ({
  [ADDRESS]: {
    maintenanceUUID: UUID,
    apply: { mode: 'REBOOT', modeDetails: 'install', warnings: [] },
  },
});

function setup(
  options: {
    machines?: Record<string, FakeMachine>;
    node?: NodeView;
    secret?: string | Error;
    now?: number;
    cluster?: boolean;
  } = {},
) {
  const talos = fakeTalos(options.machines ?? spare());
  let now = options.now ?? T0;
  const ports: JoinPorts = {
    cluster: () =>
      options.cluster === false ? undefined : talosClusterObject(),
    nodeWithUUID: uuid =>
      options.node &&
      options.node.status?.nodeInfo?.systemUUID?.toLowerCase() === uuid
        ? options.node
        : undefined,
    readSecret: async (_ns, ref) => {
      expect(ref.name).toBe('plant-a-join');
      if (options.secret instanceof Error) throw options.secret;
      return options.secret ?? JOIN_CONFIG;
    },
    talos: talos.access,
    resolve: async host => {
      if (host === 'meta.rack') return ['169.254.169.254'];
      throw new Error(`getaddrinfo ENOTFOUND ${host}`);
    },
    limits: DEFAULT_JOIN_LIMITS,
    now: () => now,
  };
  return { ports, talos, setNow: (ms: number) => (now = ms) };
}

const run = (tm: TalosMachine, ports: JoinPorts) => joinRowFor(tm)(tm, ports);

describe('join table: Pending', () => {
  it('waits for spec.join, touching nothing', async () => {
    const { ports, talos } = setup();
    expect(await run(machine({}, null), ports)).toEqual({ kind: 'wait' });
    expect(talos.calls).toEqual([]);
  });

  it('applies the join config (mode AUTO) after checking the UUID at the address: Joining', async () => {
    const { ports, talos } = setup();
    const d = await run(machine(), ports);
    expect(d).toMatchObject({
      kind: 'transition',
      to: 'Joining',
      status: { configAppliedAt: new Date(T0).toISOString() },
      event: { reason: 'ConfigApplied' },
      message: expect.stringMatching(
        /Join requested by user:default\/admin: more capacity\. The join config of plant-a was applied at 10\.0\.3\.31 \(mode REBOOT: install\)/,
      ),
    });
    expect(talos.calls.map(c => c.call)).toEqual(['maintenanceUUID', 'apply']);
  });

  it('is Joined at once when a Ready Node already carries the UUID', async () => {
    const { ports, talos } = setup({ node: node(true) });
    expect(await run(machine(), ports)).toMatchObject({
      to: 'Joined',
      status: { nodeName: 'talos-bba72157' },
    });
    expect(talos.calls).toEqual([]);
  });

  it('does not apply to another machine that took the address', async () => {
    const { ports, talos } = setup({
      machines: {
        [ADDRESS]: { maintenanceUUID: '5c5b2654-0de5-4349-8eb0-23547ef8895d' },
      },
    });
    expect(await run(machine(), ports)).toMatchObject({
      kind: 'wait',
      message: expect.stringMatching(/answers at 10\.0\.3\.31, not this one/),
    });
    expect(talos.calls.map(c => c.call)).toEqual(['maintenanceUUID']);
  });

  it.each([
    ['no address', machine({ address: undefined }), {}, /no address known/],
    [
      'no cluster',
      machine(),
      { cluster: false },
      /TalosCluster plant-a not found/,
    ],
    [
      'no join config',
      machine(),
      { secret: new Error('Secret plant-a-join not found') },
      /join config cannot be read/,
    ],
    [
      'not in maintenance',
      machine(),
      {
        machines: {
          [ADDRESS]: { maintenanceUUID: new Error('certificate required') },
        },
      },
      /does not answer in maintenance mode/,
    ],
  ] as const)(
    'waits with a message: %s',
    async (_what, tm, options, message) => {
      const { ports, talos } = setup(options as any);
      expect(await run(tm, ports)).toMatchObject({
        kind: 'wait',
        message: expect.stringMatching(message),
        requeueAfterMs: 10_000,
      });
      expect(talos.calls.some(c => c.call === 'apply')).toBe(false);
    },
  );

  const grpcError = (code: number, details: string) =>
    new TalosApiError({
      code,
      endpoint: ADDRESS,
      method: '/machine.MachineService/ApplyConfiguration',
      details,
    });

  it('fails when the machine refuses the config', async () => {
    const { ports } = setup({
      machines: {
        [ADDRESS]: {
          maintenanceUUID: UUID,
          apply: grpcError(
            GrpcStatus.INVALID_ARGUMENT,
            'failed to parse config',
          ),
        },
      },
    });
    expect(await run(machine(), ports)).toMatchObject({
      to: 'Failed',
      event: { type: 'Warning', reason: 'JoinFailed' },
      message: expect.stringMatching(/refused the join config of plant-a/),
    });
    // The machine's words go to the log, not to status.
    expect(
      ((await run(machine(), ports)) as { message: string }).message,
    ).not.toContain('failed to parse config');
  });

  it.each([
    ['127.0.0.1', /outside the allowed networks \(10\.0\.3\.0\/24\)/],
    ['10.0.3.31:6443', /port 6443 is not the Talos API port/],
    ['meta.rack', /meta\.rack resolves to an address outside/],
  ])(
    'never contacts %s: outside the allowed networks (or its port)',
    async (address, message) => {
      const { ports, talos } = setup({
        machines: { [address]: { maintenanceUUID: UUID } },
      });
      expect(await run(machine({ address }), ports)).toMatchObject({
        kind: 'wait',
        message: expect.stringMatching(message),
      });
      expect(talos.calls).toEqual([]);
    },
  );

  it('retries a config that was never sent, and never resends one without a clear answer', async () => {
    const notSent = setup({
      machines: {
        [ADDRESS]: {
          maintenanceUUID: UUID,
          apply: grpcError(GrpcStatus.UNAVAILABLE, 'No connection established'),
        },
      },
    });
    expect(await run(machine(), notSent.ports)).toMatchObject({ kind: 'wait' });
    const unclear = setup({
      machines: {
        [ADDRESS]: {
          maintenanceUUID: UUID,
          apply: grpcError(GrpcStatus.DEADLINE_EXCEEDED, 'deadline'),
        },
      },
    });
    expect(await run(machine(), unclear.ports)).toMatchObject({
      to: 'Joining',
      event: { reason: 'ConfigUnanswered' },
    });
  });
});

describe('join table: Joining', () => {
  const joining = () =>
    machine({ phase: 'Joining', configAppliedAt: new Date(T0).toISOString() });

  it('is Joined when a Ready Node carries its system UUID', async () => {
    const { ports } = setup({ node: node(true), now: T0 + 5000 });
    expect(await run(joining(), ports)).toMatchObject({
      to: 'Joined',
      status: {
        nodeName: 'talos-bba72157',
        joinedAt: new Date(T0 + 5000).toISOString(),
      },
      event: { reason: 'Joined' },
    });
  });

  it('waits for a registered Node to be Ready, until the join timeout', async () => {
    const { ports, setNow } = setup({ node: node(false), now: T0 + 60_000 });
    expect(await run(joining(), ports)).toEqual({
      kind: 'wait',
      message: 'Node talos-bba72157 registered; waiting for it to be Ready',
      requeueAfterMs: 14 * 60_000,
    });
    setNow(T0 + 15 * 60_000);
    expect(await run(joining(), ports)).toMatchObject({
      to: 'Failed',
      message: expect.stringMatching(
        /no Ready Node with system UUID .* within 900 s/,
      ),
    });
  });

  it('Joined and Failed are final', async () => {
    const { ports } = setup();
    expect(await run(machine({ phase: 'Joined' }), ports)).toEqual({
      kind: 'done',
    });
    expect(await run(machine({ phase: 'Failed' }), ports)).toEqual({
      kind: 'done',
    });
  });
});

describe('TalosMachineReconciler', () => {
  it('writes the transition, then the Event; a wait writes its message only when new', async () => {
    const { ports } = setup();
    let current = machine();
    const order: string[] = [];
    const reconciler = new TalosMachineReconciler({
      ...ports,
      view: { machine: () => current },
      writeStatus: async (_tm, status) => {
        order.push(`write ${status.phase}: ${status.message}`);
        current = { ...current, status };
        return current;
      },
      events: {
        record: async (_tm, _type, reason) => {
          order.push(`event ${reason}`);
        },
      },
    });
    await reconciler.reconcile(`${NS}/${UUID}`);
    expect(order).toEqual([
      expect.stringMatching(/^write Joining: Join requested/),
      'event ConfigApplied',
    ]);
    expect(current.status).toMatchObject({
      phase: 'Joining',
      observedGeneration: 2,
    });
    order.length = 0;
    await reconciler.reconcile(`${NS}/${UUID}`);
    await reconciler.reconcile(`${NS}/${UUID}`);
    expect(order).toEqual([]);
  });
});
