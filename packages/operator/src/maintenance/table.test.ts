import {
  advertise,
  approvalSchema,
  DEFAULT_NODE_ALERT_MATCHERS,
  type AlertSnapshot,
  invoke,
  nodeFactsFromNode,
  type MaintenanceIntent,
  type HardwareHealthFacts,
  type NodeMaintenance,
  type NodeMaintenanceStatus,
  type PodLike,
  type PowerProviderType,
} from '@rackside/plugin-servers-common';
import type { AlertReads } from '../runtime/alertReads';
import { ConflictError } from '@backstage/errors';
import type { DrainOutcome } from './drain/DrainRunner';
import {
  blockingMaintenance,
  needsAdmissionLock,
  phaseOf,
  transitions,
} from './table';
import { testNode as node } from '../testing/nodes';
import type { NodeView, PowerSendVerb, SendOutcome } from './types';
import {
  HISTORY_MAX,
  MaintenanceReconciler,
  Mutex,
  nextStatus,
  type ReconcilerPorts,
} from './reconciler';

const flag = { by: 'user:default/ops', reason: 'because' };

/** When the fake channel accepts a verb: when the test file loads, so deadlines lie ahead. */
const ACCEPTED_AT = new Date().toISOString();

/** A fake cluster: nodes and maintenances in memory, every write recorded. */
class FakeCluster {
  nodes = new Map<string, NodeView>();
  maintenances = new Map<string, NodeMaintenance>();
  events: Array<{
    name: string;
    type: string;
    reason: string;
    message: string;
  }> = [];
  nodePatches: Array<{ node: string; unschedulable: boolean }> = [];
  /** BMC health readings by node (ServerBMC status.health). */
  hardware = new Map<string, HardwareHealthFacts>();
  statusWrites: Array<{ name: string; phase?: string }> = [];
  rv = 1;
  /** Pods per node, as admission reads them. */
  pods = new Map<string, PodLike[]>();
  /** What the fake drain answers; `ensure` calls are recorded. */
  drainOutcome: DrainOutcome = {
    state: 'running',
    progress: { total: 2, evicted: 1, pending: 1 },
  };
  drainsStarted: string[] = [];
  /** The power channel: its type, what it answers, what it was sent and reads. */
  channel: PowerProviderType = 'talos';
  attendedRack = false;
  sent: Array<{ verb: PowerSendVerb; node: string }> = [];
  sendOutcome: SendOutcome = {
    ok: true,
    // Accepted just now: the deadlines count from here.
    receipt: { acceptedAt: ACCEPTED_AT, detail: 'actor a1' },
  };
  powerStateOf = new Map<string, 'On' | 'Off'>();
  readbackWindow:
    | { windowSeconds: number; intervalSeconds: number }
    | undefined;
  deadlines = { rebootSeconds: 900, unansweredSeconds: 300 };
  /** Throws once before writing a transition to this phase (a crash). */
  crashBefore?: string;
  /** Runs while a verb is out, before the channel answers (another writer, say). */
  whileSending?: () => void;

  constructor(nodes: NodeView[]) {
    for (const n of nodes) this.nodes.set(n.metadata!.name!, n);
  }

  create(
    name: string,
    nodeName: string,
    intent: MaintenanceIntent = 'cordon',
    extra: Partial<NodeMaintenance['spec']> = {},
    status?: NodeMaintenanceStatus,
  ): NodeMaintenance {
    const nm: NodeMaintenance = {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'NodeMaintenance',
      metadata: {
        name,
        generation: 1,
        resourceVersion: String(this.rv++),
        creationTimestamp: `2026-01-01T00:00:${String(this.rv).padStart(
          2,
          '0',
        )}Z`,
      },
      spec: {
        nodeName,
        intent,
        reason: 'disk swap',
        requestedBy: 'user:default/ops',
        ...extra,
      },
      status,
    };
    this.maintenances.set(name, nm);
    return nm;
  }

  setSpec(name: string, spec: Partial<NodeMaintenance['spec']>) {
    const nm = this.maintenances.get(name)!;
    this.maintenances.set(name, {
      ...nm,
      metadata: { ...nm.metadata, resourceVersion: String(this.rv++) },
      spec: { ...nm.spec, ...spec },
    });
  }

  phase(name: string) {
    return this.maintenances.get(name)!.status?.phase;
  }

  /** A merge patch of some status fields by another writer (the drain's progress, say). */
  patchStatus(name: string, fields: Partial<NodeMaintenanceStatus>) {
    const nm = this.maintenances.get(name)!;
    this.maintenances.set(name, {
      ...nm,
      metadata: { ...nm.metadata, resourceVersion: String(this.rv++) },
      status: { ...nm.status, ...fields },
    });
  }

  ports(): ReconcilerPorts {
    return {
      view: {
        maintenance: name => this.maintenances.get(name),
        maintenances: () => [...this.maintenances.values()],
        node: name => this.nodes.get(name),
        nodes: () => [...this.nodes.values()],
        hardware: name => this.hardware.get(name),
      },
      nodes: {
        setUnschedulable: async (name, unschedulable) => {
          const n = this.nodes.get(name)!;
          this.nodePatches.push({ node: name, unschedulable });
          this.nodes.set(name, { ...n, spec: { unschedulable } });
        },
      },
      pods: { onNode: async name => this.pods.get(name) ?? [] },
      power: {
        check: (verb, n) =>
          invoke(
            advertise(this.channel, { attendedRack: this.attendedRack }),
            verb,
            n ? nodeFactsFromNode(n) : undefined,
          ),
        channelType: () => (this.channel === 'none' ? undefined : this.channel),
        powerState: async n => this.powerStateOf.get(n?.metadata?.name ?? ''),
        readback: () => this.readbackWindow,
        deadlines: this.deadlines,
      },
      powerSend: {
        send: async (verb, n) => {
          this.sent.push({ verb, node: n?.metadata?.name ?? '' });
          this.whileSending?.();
          return this.sendOutcome;
        },
      },
      drains: {
        ensure: nm => {
          if (!this.drainsStarted.includes(nm.metadata.name)) {
            this.drainsStarted.push(nm.metadata.name);
          }
          return this.drainOutcome;
        },
      },
      status: {
        write: async (nm, status) => {
          if (this.crashBefore && this.crashBefore === status.phase) {
            this.crashBefore = undefined;
            throw new Error('crash');
          }
          const current = this.maintenances.get(nm.metadata.name)!;
          if (
            current.metadata.resourceVersion !== nm.metadata.resourceVersion
          ) {
            throw new ConflictError('conflict');
          }
          const next = {
            ...current,
            metadata: {
              ...current.metadata,
              resourceVersion: String(this.rv++),
            },
            status,
          };
          this.maintenances.set(nm.metadata.name, next);
          this.statusWrites.push({
            name: nm.metadata.name,
            phase: status.phase,
          });
          return next;
        },
        read: async name => this.maintenances.get(name),
      },
      events: {
        record: async (nm, type, reason, message) => {
          this.events.push({ name: nm.metadata.name, type, reason, message });
        },
      },
      admissionLock: new Mutex(),
      now: () => Date.now() + this.clockOffsetMs,
      returnAlerts: this.returnAlerts,
    };
  }

  /** Moves the clock on (a healthy return's timeout). */
  clockOffsetMs = 0;
  /** What a fake Alertmanager answers a healthy return; undefined: none configured. */
  returnAlerts?: AlertReads;

  reconciler() {
    return new MaintenanceReconciler(this.ports());
  }
}

/** Sets a node's readiness and boot ID (a machine going off, or coming back). */
function setNode(
  c: FakeCluster,
  name: string,
  { ready, bootID }: { ready: boolean; bootID: string },
) {
  const n = c.nodes.get(name)!;
  c.nodes.set(name, {
    ...n,
    status: {
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      nodeInfo: { bootID },
    },
  });
}

function rack() {
  return new FakeCluster([
    node('cp-1', { cp: true }),
    node('cp-2', { cp: true }),
    node('cp-3', { cp: true }),
    node('worker-1'),
    node('worker-2', { unschedulable: true }),
    node('virt-1', { virtual: true }),
  ]);
}

describe('the transition table', () => {
  it('has one row per phase', () => {
    expect(Object.keys(transitions).sort()).toEqual(
      [
        'New',
        'AwaitingApproval',
        'Requested',
        'Cordoned',
        'Draining',
        'Drained',
        'Rebooting',
        'PoweredOff',
        'Returning',
        'Complete',
        'Refused',
        'Failed',
      ].sort(),
    );
  });

  it('cordon: New -> Requested -> Cordoned, parks, records wasUnschedulable first', async () => {
    const c = rack();
    c.create('m1', 'worker-1');
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Cordoned');
    expect(nm.status?.wasUnschedulable).toBe(false);
    expect(nm.status?.cordonedAt).toBeDefined();
    expect(nm.status?.observedGeneration).toBe(1);
    expect(nm.status?.history?.map(h => h.phase)).toEqual([
      'Requested',
      'Cordoned',
    ]);
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(true);
    expect(c.events.map(e => e.reason)).toEqual(['Requested', 'Cordoned']);
    // The Requested write (with wasUnschedulable) came before the node patch.
    expect(c.statusWrites[0].phase).toBe('Requested');
    // Parked: another pass changes nothing.
    await c.reconciler().reconcile('m1');
    expect(c.statusWrites).toHaveLength(2);
  });

  it('returnToService: Cordoned -> Returning -> Complete, node schedulable', async () => {
    const c = rack();
    c.create('m1', 'worker-1');
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { returnToService: flag });
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Complete');
    expect(nm.status?.returnedAt).toBeDefined();
    expect(nm.status?.completedAt).toBeDefined();
    expect(nm.status?.abandoned).toBeUndefined();
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(false);
    expect(c.events.map(e => e.reason)).toEqual([
      'Requested',
      'Cordoned',
      'Returning',
      'Complete',
    ]);
  });

  it('return to service always uncordons, even a node that was cordoned before', async () => {
    const c = rack();
    c.create('m1', 'worker-2', 'cordon', { returnToService: flag });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Complete');
    expect(c.nodes.get('worker-2')!.spec?.unschedulable).toBe(false);
    expect(c.maintenances.get('m1')!.status?.wasUnschedulable).toBe(true);
  });

  it('Returning waits for the node to be Ready, then completes', async () => {
    const c = rack();
    c.create('m1', 'worker-1');
    await c.reconciler().reconcile('m1');
    c.nodes.set(
      'worker-1',
      node('worker-1', { ready: false, unschedulable: true }),
    );
    c.setSpec('m1', { returnToService: flag });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Returning');
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(false);
    c.nodes.set('worker-1', node('worker-1'));
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Complete');
  });

  it("a healthy return asked for holds Complete while an alert of the node fires, seen through Rackside's silence", async () => {
    const c = rack();
    let snapshot: AlertSnapshot = {
      known: true,
      alerts: [
        {
          labels: { alertname: 'NodeDown', node: 'worker-1' },
          status: {
            state: 'suppressed',
            silencedBy: ['rs-1'],
            inhibitedBy: [],
          },
        },
      ],
      racksideSilenceIds: new Set(['rs-1']),
    };
    c.returnAlerts = {
      matchers: DEFAULT_NODE_ALERT_MATCHERS,
      returnGraceMs: 0,
      pollMs: 2000,
      snapshot: async () => snapshot,
    };
    c.create('m1', 'worker-1', 'cordon', {
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 60 },
    });
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { returnToService: flag });
    const held = await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Returning');
    expect(c.maintenances.get('m1')!.status?.message).toBe(
      'healthy return: alerts firing: NodeDown (worker-1)',
    );
    expect(held.requeueAfterMs).toBe(2000);
    snapshot = { ...snapshot, alerts: [] };
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Complete');
    expect(c.maintenances.get('m1')!.status?.message).toBe(
      'worker-1 is schedulable and Ready, and its return healthy',
    );
  });

  it('a healthy return asked for holds while Alertmanager cannot be read, and fails past the timeout saying the alert state was unknown', async () => {
    const c = rack();
    c.returnAlerts = {
      matchers: DEFAULT_NODE_ALERT_MATCHERS,
      returnGraceMs: 0,
      pollMs: 2000,
      snapshot: async () => ({
        known: false,
        reason:
          'Alertmanager unreachable: Alertmanager GET /alerts: the answer did not arrive in time',
      }),
    };
    c.create('m1', 'worker-1', 'cordon', {
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 60 },
    });
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { returnToService: flag });
    const held = await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Returning');
    expect(c.maintenances.get('m1')!.status?.message).toBe(
      'healthy return: alert state unknown: Alertmanager unreachable: Alertmanager GET /alerts: the answer did not arrive in time',
    );
    expect(held.requeueAfterMs).toBe(2000);
    c.clockOffsetMs = 61_000;
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Failed');
    expect(c.maintenances.get('m1')!.status?.message).toBe(
      'worker-1 is back in service but not healthy 60 s after it came back: alert state unknown: Alertmanager unreachable: Alertmanager GET /alerts: the answer did not arrive in time',
    );
  });

  it('a healthy-return message past its 4,096 limit is compared cut with the stored one: an unchanged one is written once, not on every wake', async () => {
    const c = rack();
    // 120 alerts with long names: "alerts firing: ..." runs far past 4,096 characters.
    const alerts = Array.from({ length: 120 }, (_, i) => ({
      labels: {
        alertname: `NodeFilesystemAlmostOutOfSpaceOnVolume${String(i).padStart(
          3,
          '0',
        )}`,
        node: 'worker-1',
      },
      status: {
        state: 'active' as const,
        silencedBy: [],
        inhibitedBy: [],
      },
    }));
    c.returnAlerts = {
      matchers: DEFAULT_NODE_ALERT_MATCHERS,
      returnGraceMs: 0,
      pollMs: 2000,
      snapshot: async () => ({
        known: true,
        alerts,
        racksideSilenceIds: new Set<string>(),
      }),
    };
    c.create('m1', 'worker-1', 'cordon', {
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 600 },
    });
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { returnToService: flag });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Returning');
    const stored = c.maintenances.get('m1')!.status!.message!;
    expect(stored).toHaveLength(4096);
    expect(stored.startsWith('healthy return: alerts firing: ')).toBe(true);
    // Two more wakes with the same alerts: nothing new to say, nothing written.
    const writes = c.statusWrites.length;
    await c.reconciler().reconcile('m1');
    await c.reconciler().reconcile('m1');
    expect(c.statusWrites.length).toBe(writes);
    expect(c.phase('m1')).toBe('Returning');
  });

  it('a healthy return waits while the BMC reports Critical and fails past the timeout naming the part; without the opt-in it completes', async () => {
    const c = rack();
    c.hardware.set('worker-1', {
      rollup: 'Critical',
      parts: [{ name: 'PSU 2', health: 'Critical' }],
    });
    c.create('m1', 'worker-1', 'cordon', {
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 60 },
    });
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { returnToService: flag });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Returning');
    expect(c.maintenances.get('m1')!.status?.message).toBe(
      'healthy return: the BMC reports Critical: PSU 2',
    );
    c.clockOffsetMs = 61_000;
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Failed');
    expect(c.maintenances.get('m1')!.status?.message).toBe(
      'worker-1 is back in service but not healthy 60 s after it came back: the BMC reports Critical: PSU 2',
    );
    c.create('m2', 'worker-1', 'cordon', { returnToService: flag });
    await c.reconciler().reconcile('m2');
    expect(c.phase('m2')).toBe('Complete');
  });

  it('a healthy return waits while the hardware state is unknown (a reading older than two sweeps) and fails past the timeout saying so', async () => {
    const c = rack();
    c.hardware.set('worker-1', {
      rollup: 'OK',
      parts: [],
      readAt: new Date(Date.now() - 3 * 3600_000).toISOString(),
      sweepIntervalSeconds: 900,
    });
    c.create('m1', 'worker-1', 'cordon', {
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 60 },
    });
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { returnToService: flag });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Returning');
    expect(c.maintenances.get('m1')!.status?.message).toMatch(
      /^healthy return: hardware state unknown: last reading 3 h ago/,
    );
    c.clockOffsetMs = 61_000;
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Failed');
    expect(c.maintenances.get('m1')!.status?.message).toMatch(
      /^worker-1 is back in service but not healthy 60 s after it came back: hardware state unknown: last reading 3 h ago/,
    );
  });

  it('a healthy return waits while the last BMC reading failed, and completes once one succeeds', async () => {
    const c = rack();
    c.hardware.set('worker-1', {
      rollup: 'OK',
      parts: [],
      readAt: new Date().toISOString(),
      error: 'answer larger than 16 MiB',
      sweepIntervalSeconds: 900,
    });
    c.create('m1', 'worker-1', 'cordon', {
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 60 },
    });
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { returnToService: flag });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Returning');
    expect(c.maintenances.get('m1')!.status?.message).toBe(
      'healthy return: hardware state unknown: the last reading failed: answer larger than 16 MiB',
    );
    c.hardware.set('worker-1', {
      rollup: 'OK',
      parts: [],
      readAt: new Date().toISOString(),
      sweepIntervalSeconds: 900,
    });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Complete');
  });

  it('a healthy return fails the maintenance past its timeout, naming the alerts; without the opt-in it completes', async () => {
    const c = rack();
    c.returnAlerts = {
      matchers: DEFAULT_NODE_ALERT_MATCHERS,
      returnGraceMs: 0,
      pollMs: 2000,
      snapshot: async () => ({
        known: true,
        alerts: [
          {
            labels: { alertname: 'DiskFull', instance: 'worker-1:9100' },
            status: { state: 'active', silencedBy: [], inhibitedBy: [] },
          },
        ],
        racksideSilenceIds: new Set(),
      }),
    };
    c.create('m1', 'worker-1', 'cordon', {
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 60 },
    });
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { returnToService: flag });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Returning');
    c.clockOffsetMs = 61_000;
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Failed');
    expect(c.maintenances.get('m1')!.status?.message).toBe(
      'worker-1 is back in service but not healthy 60 s after it came back: alerts firing: DiskFull (worker-1:9100)',
    );
    expect(c.events.at(-1)).toMatchObject({
      type: 'Warning',
      reason: 'HealthyReturnFailed',
    });
    // The same alert, no healthyReturn asked: Complete as before.
    c.create('m2', 'worker-1', 'cordon', { returnToService: flag });
    await c.reconciler().reconcile('m2');
    expect(c.phase('m2')).toBe('Complete');
  });

  it.each([
    'New',
    'Requested',
    'Cordoned',
    'Draining',
    'Drained',
    'Rebooting',
    // PoweredOff holds the abandon until power-on: 'holds an abandon while PoweredOff'.
  ])(
    'abandon from %s -> Returning -> Complete (abandoned), schedulability restored',
    async phase => {
      const c = rack();
      const status: NodeMaintenanceStatus | undefined =
        phase === 'New'
          ? undefined
          : { phase: phase as any, wasUnschedulable: false, history: [] };
      if (phase !== 'New' && phase !== 'Requested') {
        c.nodes.set('worker-1', node('worker-1', { unschedulable: true }));
      }
      c.create('m1', 'worker-1', 'cordon', { abandon: flag }, status);
      await c.reconciler().reconcile('m1');
      const nm = c.maintenances.get('m1')!;
      expect(nm.status?.phase).toBe('Complete');
      expect(nm.status?.abandoned).toBe(true);
      expect(nm.status?.history?.map(h => h.phase)).toEqual([
        'Returning',
        'Complete',
      ]);
      expect(c.nodes.get('worker-1')!.spec?.unschedulable ?? false).toBe(false);
      expect(c.events.map(e => e.reason)).toEqual(['Abandoned', 'Complete']);
    },
  );

  it('abandon restores a node that was unschedulable before: it stays unschedulable', async () => {
    const c = rack();
    c.create('m1', 'worker-2');
    await c.reconciler().reconcile('m1');
    expect(c.maintenances.get('m1')!.status?.wasUnschedulable).toBe(true);
    c.setSpec('m1', { abandon: flag });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Complete');
    expect(c.nodes.get('worker-2')!.spec?.unschedulable).toBe(true);
  });

  it('abandon of a Returning or terminal maintenance changes nothing', async () => {
    const c = rack();
    c.create(
      'm1',
      'worker-1',
      'cordon',
      { abandon: flag },
      { phase: 'Refused' },
    );
    await c.reconciler().reconcile('m1');
    expect(c.statusWrites).toHaveLength(0);
  });

  it('refuses a maintenance without an author before touching the node', async () => {
    const c = rack();
    c.create('m1', 'worker-1', 'cordon', { requestedBy: '' });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Refused');
    expect(c.maintenances.get('m1')!.status?.refusal?.reason).toMatch(
      /spec\.requestedBy is empty/,
    );
    expect(c.nodePatches).toEqual([]);
  });

  it('refuses a virtual node', async () => {
    const c = rack();
    c.create('m1', 'virt-1');
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal?.reason).toMatch(/virtual/);
    expect(c.nodePatches).toEqual([]);
    expect(c.events[0]).toMatchObject({ type: 'Warning', reason: 'Refused' });
  });

  it('refuses a second maintenance of a busy node and names the first', async () => {
    const c = rack();
    c.create('m1', 'worker-1');
    await c.reconciler().reconcile('m1');
    c.create('m2', 'worker-1');
    await c.reconciler().reconcile('m2');
    const nm = c.maintenances.get('m2')!;
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal?.blockingMaintenance).toBe('m1');
    expect(nm.status?.refusal?.reason).toContain('m1');
  });

  it('of two not yet admitted maintenances of one node, the older wins', () => {
    const c = rack();
    const a = c.create('a', 'worker-1');
    const b = c.create('b', 'worker-1');
    expect(blockingMaintenance(b, [a])?.metadata.name).toBe('a');
    expect(blockingMaintenance(a, [b])).toBeUndefined();
  });

  it('guard: refuses a reboot that drops below quorum, with the numbers', async () => {
    const c = rack();
    c.nodes.set('cp-3', node('cp-3', { cp: true, ready: false }));
    c.create('m1', 'cp-1', 'reboot');
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal).toMatchObject({
      members: 3,
      quorum: 2,
      margin: 0,
    });
  });

  it('guard: two racing reboots for the last margin, exactly one wins', async () => {
    const c = rack();
    c.create('r1', 'cp-1', 'reboot');
    c.create('r2', 'cp-2', 'reboot');
    const reconciler = c.reconciler();
    await Promise.all([reconciler.reconcile('r1'), reconciler.reconcile('r2')]);
    const phases = [c.phase('r1'), c.phase('r2')].sort();
    expect(phases).toEqual(['Draining', 'Refused']);
  });

  it('drain: Cordoned -> Draining starts the drain, waits, then Drained with its progress', async () => {
    const c = rack();
    c.create('m1', 'worker-1', 'drain');
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Draining');
    expect(c.drainsStarted).toEqual(['m1']);
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(true);
    // Woken while the drain runs: nothing is written.
    const writes = c.statusWrites.length;
    await c.reconciler().reconcile('m1');
    expect(c.statusWrites).toHaveLength(writes);
    c.drainOutcome = {
      state: 'drained',
      progress: { total: 2, evicted: 2, pending: 0 },
    };
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Drained');
    expect(nm.status?.drain).toMatchObject({
      total: 2,
      evicted: 2,
      pending: 0,
    });
    expect(c.events.filter(e => e.type === 'Warning')).toEqual([]);
    // Parked in Drained until a return to service.
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Drained');
    c.setSpec('m1', { returnToService: flag });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Complete');
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(false);
  });

  function drainedAtOnce(c: FakeCluster) {
    c.drainOutcome = {
      state: 'drained',
      progress: { total: 0, evicted: 0, pending: 0 },
    };
  }

  function reboot(c: FakeCluster, name: string, bootID: string, ready = true) {
    const n = c.nodes.get(name)!;
    c.nodes.set(name, {
      ...n,
      status: {
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
        nodeInfo: { bootID },
      },
    });
  }

  it('reboot: Drained records the verb, sends it once, Rebooting parks until a new boot ID, then Complete', async () => {
    const c = rack();
    drainedAtOnce(c);
    c.create('m1', 'worker-1', 'reboot');
    await c.reconciler().reconcile('m1');
    let nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Rebooting');
    expect(c.sent).toEqual([{ verb: 'reboot', node: 'worker-1' }]);
    expect(nm.status?.bootIdBefore).toBe('boot-worker-1-1');
    expect(nm.status?.power?.reboot).toMatchObject({
      channel: 'talos',
      sentAt: ACCEPTED_AT,
      detail: 'actor a1',
    });
    expect(nm.status?.rebootSentAt).toBe(ACCEPTED_AT);
    // The record came first: one status write with recordedAt and no sentAt.
    const order = c.statusWrites.map(w => w.phase);
    expect(order).toEqual([
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
      'Drained',
      'Rebooting',
    ]);
    // Same boot ID, or NotReady: still Rebooting, nothing sent again.
    reboot(c, 'worker-1', 'boot-worker-1-1', false);
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Rebooting');
    reboot(c, 'worker-1', 'boot-worker-1-2');
    await c.reconciler().reconcile('m1');
    nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Complete');
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(false);
    expect(c.sent).toHaveLength(1);
  });

  it('never sends twice: a verb recorded without an answer is settled by watching the node', async () => {
    const c = rack();
    drainedAtOnce(c);
    c.create('m1', 'worker-1', 'reboot');
    c.crashBefore = 'Rebooting';
    await expect(c.reconciler().reconcile('m1')).rejects.toThrow('crash');
    expect(c.sent).toHaveLength(1);
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Drained');
    expect(nm.status?.power?.reboot?.recordedAt).toBeDefined();
    expect(nm.status?.power?.reboot?.sentAt).toBeUndefined();
    // A new process: no sign yet, so it waits (and does not send).
    const waited = await c.reconciler().reconcile('m1');
    expect(c.sent).toHaveLength(1);
    expect(c.phase('m1')).toBe('Drained');
    expect(waited.requeueAfterMs).toBeGreaterThan(0);
    // The node reboots: that is the answer.
    reboot(c, 'worker-1', 'boot-worker-1-2');
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Complete');
    expect(c.sent).toHaveLength(1);
    expect(c.maintenances.get('m1')!.status?.power?.reboot?.detail).toMatch(
      /no answer was recorded; the node came back with a new boot ID/,
    );
  });

  it("keeps the channel's answer when the drain's progress moved the maintenance while the verb was out", async () => {
    const c = rack();
    drainedAtOnce(c);
    c.create('m1', 'worker-1', 'reboot');
    const progress = { total: 2, evicted: 2, pending: 0 };
    c.whileSending = () => c.patchStatus('m1', { drain: progress });
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Rebooting');
    expect(nm.status?.power?.reboot).toMatchObject({
      sentAt: ACCEPTED_AT,
      detail: 'actor a1',
    });
    expect(nm.status?.rebootSentAt).toBe(ACCEPTED_AT);
    // The other writer's field is kept, and the verb went out once.
    expect(nm.status?.drain).toEqual(progress);
    expect(c.sent).toHaveLength(1);
  });

  it('does not overwrite an answer another writer recorded while the verb was out', async () => {
    const c = rack();
    drainedAtOnce(c);
    c.create('m1', 'worker-1', 'reboot');
    c.whileSending = () => {
      const recorded = c.maintenances.get('m1')!.status!.power!.reboot!;
      c.patchStatus('m1', {
        phase: 'Rebooting',
        power: {
          reboot: { ...recorded, sentAt: ACCEPTED_AT, detail: 'the successor' },
        },
      });
    };
    await c.reconciler().reconcile('m1');
    expect(c.maintenances.get('m1')!.status?.power?.reboot?.detail).toBe(
      'the successor',
    );
    expect(c.sent).toHaveLength(1);
  });

  it('a recorded verb with no sign of it fails at the deadline and is not resent', async () => {
    const c = rack();
    drainedAtOnce(c);
    c.deadlines.unansweredSeconds = 0;
    c.create('m1', 'worker-1', 'reboot');
    c.crashBefore = 'Rebooting';
    await expect(c.reconciler().reconcile('m1')).rejects.toThrow('crash');
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Failed');
    expect(c.maintenances.get('m1')!.status?.message).toMatch(/not sent again/);
    expect(c.sent).toHaveLength(1);
  });

  it('after a restart, a node that was already NotReady when the verb was recorded is no sign that it ran', async () => {
    const c = rack();
    drainedAtOnce(c);
    setNode(c, 'worker-1', { ready: false, bootID: 'boot-worker-1-1' });
    c.create('m1', 'worker-1', 'reboot');
    c.crashBefore = 'Rebooting';
    await expect(c.reconciler().reconcile('m1')).rejects.toThrow('crash');
    expect(c.maintenances.get('m1')!.status?.power?.reboot?.nodeBefore).toEqual(
      { ready: false, bootID: 'boot-worker-1-1' },
    );
    // Still NotReady, same boot ID: no change from the baseline, so it waits.
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Drained');
    c.deadlines.unansweredSeconds = 0;
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Failed');
    expect(c.maintenances.get('m1')!.status?.message).toMatch(
      /shows no sign of it/,
    );
    expect(c.sent).toHaveLength(1);
  });

  it('a refused verb fails at once; a lost answer is watched', async () => {
    const c = rack();
    drainedAtOnce(c);
    c.sendOutcome = {
      ok: false,
      outcome: 'refused',
      message: 'PERMISSION_DENIED',
    };
    c.create('m1', 'worker-1', 'reboot');
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Failed');
    expect(c.maintenances.get('m1')!.status?.power?.reboot?.error).toBe(
      'PERMISSION_DENIED',
    );
    c.sendOutcome = { ok: false, outcome: 'unknown', message: 'deadline' };
    c.create('m2', 'worker-2', 'reboot');
    await c.reconciler().reconcile('m2');
    expect(c.phase('m2')).toBe('Drained');
    expect(c.events.some(e => e.reason === 'PowerVerbUnanswered')).toBe(true);
    reboot(c, 'worker-2', 'boot-worker-2-9');
    await c.reconciler().reconcile('m2');
    expect(c.phase('m2')).toBe('Complete');
    expect(c.sent.map(s => s.node)).toEqual(['worker-1', 'worker-2']);
  });

  it('a reboot that does not come back fails at the reboot deadline', async () => {
    const c = rack();
    drainedAtOnce(c);
    c.deadlines.rebootSeconds = 0;
    c.sendOutcome = {
      ok: true,
      receipt: {
        acceptedAt: new Date(Date.now() - 1000).toISOString(),
        detail: 'ok',
      },
    };
    c.create('m1', 'worker-1', 'reboot');
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Failed');
    expect(c.maintenances.get('m1')!.status?.message).toMatch(
      /did not come back within 0s/,
    );
  });

  it('shutdown over redfish: PoweredOff on acceptance, PowerOffConfirmed False then True on an Off readback, power-on once, Complete', async () => {
    const c = rack();
    drainedAtOnce(c);
    c.channel = 'redfish';
    c.readbackWindow = { windowSeconds: 300, intervalSeconds: 5 };
    c.sendOutcome = {
      ok: true,
      receipt: {
        acceptedAt: ACCEPTED_AT,
        detail: 'ResetType GracefulShutdown (HTTP 204)',
      },
      confirmsPowerOff: true,
    };
    c.create('m1', 'worker-1', 'shutdown');
    const first = await c.reconciler().reconcile('m1');
    let nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('PoweredOff');
    expect(nm.status?.poweredOffAt).toBe(ACCEPTED_AT);
    expect(nm.status?.conditions).toEqual([
      expect.objectContaining({
        type: 'PowerOffConfirmed',
        status: 'False',
        reason: 'ReadbackRunning',
      }),
    ]);
    expect(first.requeueAfterMs).toBe(5000);
    // Readback while the BMC still says On: stays False.
    c.powerStateOf.set('worker-1', 'On');
    await c.reconciler().reconcile('m1');
    expect(c.maintenances.get('m1')!.status?.conditions?.[0].status).toBe(
      'False',
    );
    c.powerStateOf.set('worker-1', 'Off');
    const settled = await c.reconciler().reconcile('m1');
    nm = c.maintenances.get('m1')!;
    expect(nm.status?.conditions?.[0]).toMatchObject({
      status: 'True',
      reason: 'PowerStateOff',
    });
    // Settled: no more readback.
    expect(settled.requeueAfterMs).toBeUndefined();
    c.setSpec('m1', { powerOn: flag });
    await c.reconciler().reconcile('m1');
    expect(c.sent.map(s => s.verb)).toEqual(['shutdown', 'powerOn']);
    // Returning until the node is back: Ready with a new boot ID.
    expect(c.phase('m1')).toBe('Returning');
    expect(c.maintenances.get('m1')!.status?.powerOnSentAt).toBeDefined();
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(true);
    setNode(c, 'worker-1', { ready: true, bootID: 'boot-worker-1-2' });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Complete');
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(false);
  });

  it('a power-on asked while the graceful shutdown is still running waits until the BMC reports Off, then is sent once', async () => {
    const c = rack();
    drainedAtOnce(c);
    c.channel = 'redfish';
    c.readbackWindow = { windowSeconds: 300, intervalSeconds: 2 };
    c.sendOutcome = {
      ok: true,
      receipt: { acceptedAt: ACCEPTED_AT, detail: 'GracefulShutdown' },
      confirmsPowerOff: true,
    };
    c.powerStateOf.set('worker-1', 'On');
    c.create('m1', 'worker-1', 'shutdown');
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('PoweredOff');
    c.setSpec('m1', { powerOn: flag });
    const held = await c.reconciler().reconcile('m1');
    expect(c.sent.map(s => s.verb)).toEqual(['shutdown']);
    expect(c.phase('m1')).toBe('PoweredOff');
    expect(c.maintenances.get('m1')!.status?.message).toMatch(
      /^waiting for the shutdown to finish/,
    );
    expect(held.requeueAfterMs).toBe(2000);
    // Read again at the readback's cadence, without another write.
    const writes = c.statusWrites.length;
    await c.reconciler().reconcile('m1');
    expect(c.statusWrites.length).toBe(writes);
    expect(c.sent.map(s => s.verb)).toEqual(['shutdown']);
    // The shutdown finishes: confirmed, then the power-on goes out in the same pass.
    c.powerStateOf.set('worker-1', 'Off');
    setNode(c, 'worker-1', { ready: false, bootID: 'boot-worker-1-1' });
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(c.sent.map(s => s.verb)).toEqual(['shutdown', 'powerOn']);
    expect(
      nm.status?.conditions?.find(x => x.type === 'PowerOffConfirmed'),
    ).toMatchObject({ status: 'True' });
    expect(nm.status?.phase).toBe('Returning');
    expect(nm.status?.nodeSeenNotReadyAt).toBeDefined();
    setNode(c, 'worker-1', { ready: true, bootID: 'boot-worker-1-2' });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Complete');
  });

  it('a power-on is not sent when the BMC still reports On after the readback window: Failed with what was read', async () => {
    const c = rack();
    drainedAtOnce(c);
    c.channel = 'redfish';
    c.readbackWindow = { windowSeconds: 0.001, intervalSeconds: 2 };
    c.sendOutcome = {
      ok: true,
      receipt: {
        acceptedAt: new Date(Date.now() - 1000).toISOString(),
        detail: 'GracefulShutdown',
      },
      confirmsPowerOff: true,
    };
    c.powerStateOf.set('worker-1', 'On');
    c.create('m1', 'worker-1', 'shutdown', { powerOn: flag });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Failed');
    expect(c.sent.map(s => s.verb)).toEqual(['shutdown']);
    expect(c.maintenances.get('m1')!.status?.message).toMatch(
      /power-on of worker-1 was not sent: the machine was never seen off \(the BMC reports PowerState On/,
    );
  });

  it('without a readback the power-on goes out at once, and Returning waits for the node to be back: Failed with what was observed when it is not', async () => {
    const c = rack();
    drainedAtOnce(c);
    c.channel = 'redfish';
    c.readbackWindow = undefined;
    c.create('m1', 'worker-1', 'shutdown');
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { powerOn: flag });
    const waiting = await c.reconciler().reconcile('m1');
    expect(c.sent.map(s => s.verb)).toEqual(['shutdown', 'powerOn']);
    // Still Ready with the same boot ID: nothing says the machine went off and came back.
    expect(c.phase('m1')).toBe('Returning');
    expect(waiting.requeueAfterMs).toBeGreaterThan(0);
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(true);
    // The shutdown lands after the power-on: NotReady, and it stays so.
    setNode(c, 'worker-1', { ready: false, bootID: 'boot-worker-1-1' });
    await c.reconciler().reconcile('m1');
    expect(c.maintenances.get('m1')!.status?.nodeSeenNotReadyAt).toBeDefined();
    c.deadlines.rebootSeconds = 0;
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Failed');
    expect(nm.status?.message).toMatch(
      /did not come back within 0s of the power-on: the machine was not seen off by the channel; the node was seen NotReady at .*; it is not Ready now; its boot ID is the one from before the shutdown/,
    );
    expect(c.events.map(e => e.reason)).toContain('PowerOnTimedOut');
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(true);

    // Seen NotReady, then Ready again: back, even where the boot ID is not reported anew.
    const d = rack();
    drainedAtOnce(d);
    d.channel = 'redfish';
    d.create('m2', 'worker-1', 'shutdown');
    await d.reconciler().reconcile('m2');
    setNode(d, 'worker-1', { ready: false, bootID: 'boot-worker-1-1' });
    await d.reconciler().reconcile('m2');
    d.setSpec('m2', { powerOn: flag });
    await d.reconciler().reconcile('m2');
    expect(d.phase('m2')).toBe('Returning');
    setNode(d, 'worker-1', { ready: true, bootID: 'boot-worker-1-1' });
    await d.reconciler().reconcile('m2');
    expect(d.phase('m2')).toBe('Complete');
  });

  it('PowerOffConfirmed is Unknown when the window closes without Off, and over talos at once', async () => {
    const c = rack();
    drainedAtOnce(c);
    c.channel = 'redfish';
    c.readbackWindow = { windowSeconds: 0.001, intervalSeconds: 5 };
    c.sendOutcome = {
      ok: true,
      receipt: {
        acceptedAt: new Date(Date.now() - 1000).toISOString(),
        detail: 'ok',
      },
      confirmsPowerOff: true,
    };
    c.create('m1', 'worker-1', 'shutdown');
    await c.reconciler().reconcile('m1');
    expect(c.maintenances.get('m1')!.status?.conditions?.[0]).toMatchObject({
      status: 'Unknown',
      reason: 'ReadbackWindowClosed',
    });
    const t = rack();
    drainedAtOnce(t);
    t.attendedRack = true;
    t.create('m1', 'worker-1', 'shutdown');
    await t.reconciler().reconcile('m1');
    expect(t.phase('m1')).toBe('PoweredOff');
    expect(t.maintenances.get('m1')!.status?.conditions?.[0]).toMatchObject({
      status: 'Unknown',
      reason: 'ChannelCannotObserve',
    });
  });

  it('refuses what the capability rule does not offer, before touching the node', async () => {
    const c = rack();
    c.create('m1', 'worker-1', 'shutdown'); // talos, no attendedRack
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Refused');
    expect(c.maintenances.get('m1')!.status?.refusal?.reason).toMatch(
      /recoverable/,
    );
    c.channel = 'none';
    c.create('m2', 'worker-2', 'reboot');
    await c.reconciler().reconcile('m2');
    expect(c.phase('m2')).toBe('Refused');
    expect(c.nodePatches).toEqual([]);
    expect(c.sent).toEqual([]);
  });

  it('a failed drain ends Failed with the reason and leaves the node cordoned', async () => {
    const c = rack();
    c.drainOutcome = {
      state: 'failed',
      reason: 'the drain timed out after 5s with 1 pod(s) still on worker-1',
      progress: { total: 1, evicted: 0, pending: 1, pendingPods: ['shop/a'] },
    };
    c.create('m1', 'worker-1', 'drain');
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Failed');
    expect(nm.status?.message).toContain('timed out');
    expect(nm.status?.drain?.pendingPods).toEqual(['shop/a']);
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(true);
    expect(c.events.at(-1)).toMatchObject({
      type: 'Warning',
      reason: 'DrainFailed',
    });
  });

  it('return to service while draining stops waiting and returns the node', async () => {
    const c = rack();
    c.create('m1', 'worker-1', 'drain');
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Draining');
    c.setSpec('m1', { returnToService: flag });
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Complete');
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(false);
  });

  it('refuses a drain with unmanaged or emptyDir pods before touching the node, listing them', async () => {
    const c = rack();
    c.pods.set('worker-1', [
      {
        metadata: { name: 'debug-shell', namespace: 'ops' },
        status: { phase: 'Running' },
      },
    ]);
    c.create('m1', 'worker-1', 'drain');
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal?.reason).toContain('ops/debug-shell');
    expect(nm.status?.refusal?.reason).toContain('force');
    expect(c.nodePatches).toEqual([]);
    expect(c.drainsStarted).toEqual([]);
    // With force the same node drains.
    c.create('m2', 'worker-1', 'drain', {
      drain: {
        force: true,
        deleteEmptyDirData: false,
        allowNodeLocalData: false,
      },
    });
    await c.reconciler().reconcile('m2');
    expect(c.phase('m2')).toBe('Draining');
  });

  it('resumes after a crash between the cordon and the Cordoned record', async () => {
    const c = rack();
    c.create('m1', 'worker-1');
    c.crashBefore = 'Cordoned';
    await expect(c.reconciler().reconcile('m1')).rejects.toThrow('crash');
    expect(c.phase('m1')).toBe('Requested');
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(true);
    // A new process: re-cordon is a no-op on the node, wasUnschedulable stays false.
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Cordoned');
    expect(c.maintenances.get('m1')!.status?.wasUnschedulable).toBe(false);
    expect(c.statusWrites.map(w => w.phase)).toEqual(['Requested', 'Cordoned']);
  });

  it('resumes Returning after a crash before Complete', async () => {
    const c = rack();
    c.create('m1', 'worker-1');
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { returnToService: flag });
    c.crashBefore = 'Complete';
    await expect(c.reconciler().reconcile('m1')).rejects.toThrow('crash');
    expect(c.phase('m1')).toBe('Returning');
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Complete');
  });

  it('bounds the history to the CRD maximum', () => {
    const c = rack();
    const nm = c.create(
      'm1',
      'worker-1',
      'cordon',
      {},
      {
        phase: 'Cordoned',
        history: Array.from({ length: HISTORY_MAX }, () => ({
          phase: 'Cordoned' as const,
          at: '2026-01-01T00:00:00Z',
        })),
      },
    );
    const status = nextStatus(
      nm,
      { kind: 'transition', to: 'Returning', message: 'x' },
      '2026-01-02T00:00:00Z',
    );
    expect(status.history).toHaveLength(HISTORY_MAX);
    expect(status.history![HISTORY_MAX - 1]).toMatchObject({
      phase: 'Returning',
    });
    expect(phaseOf(nm)).toBe('Cordoned');
  });
});

describe('authoritative at the moment of acting', () => {
  const drained: DrainOutcome = {
    state: 'drained',
    progress: { total: 1, evicted: 1, pending: 0 },
  };
  const hazardAck = (ceremony: 'hazard' | 'typed-name') => ({
    preflight: { takenAt: '2026-01-01T00:00:00Z', ceremony },
  });

  function withRefusals(c: FakeCluster) {
    const causes: string[] = [];
    const ports = {
      ...c.ports(),
      onRefused: (cause: string) => causes.push(cause),
    };
    return { reconciler: new MaintenanceReconciler(ports), causes };
  }

  /** Five control-plane members: quorum 3, so one reboot is allowed, not a hazard. */
  function fiveMembers() {
    const c = rack();
    c.nodes.set('cp-4', node('cp-4', { cp: true }));
    c.nodes.set('cp-5', node('cp-5', { cp: true }));
    return c;
  }

  it('a reboot admitted at margin 1 is not sent once another member went NotReady during the drain', async () => {
    const c = rack();
    const { reconciler, causes } = withRefusals(c);
    c.create('m1', 'cp-1', 'reboot', hazardAck('hazard'));
    await reconciler.reconcile('m1');
    let nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Draining');
    expect(nm.status?.admission).toMatchObject({
      verdict: 'hazard',
      members: 3,
      quorum: 2,
      ready: 3,
      margin: 1,
    });
    c.nodes.set('cp-2', node('cp-2', { cp: true, ready: false }));
    c.drainOutcome = drained;
    await reconciler.reconcile('m1');
    nm = c.maintenances.get('m1')!;
    expect(c.sent).toEqual([]);
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.power?.reboot).toBeUndefined();
    expect(nm.status?.refusal).toMatchObject({
      members: 3,
      quorum: 2,
      ready: 2,
      margin: 0,
    });
    expect(nm.status?.refusal?.reason).toMatch(
      /At admission: 3 of 3 control-plane members ready \(margin 1\)/,
    );
    expect(nm.status?.refusal?.reason).toMatch(/NotReady now: cp-2/);
    expect(c.nodes.get('cp-1')!.spec?.unschedulable).toBe(true);
    expect(c.nodePatches).toEqual([{ node: 'cp-1', unschedulable: true }]);
    expect(c.events.filter(e => e.name === 'm1').pop()).toMatchObject({
      type: 'Warning',
      reason: 'Refused',
    });
    expect(causes).toEqual(['guard']);
  });

  it('a request acknowledged below the hazard rung (a plan step allowed in its pre-flight) is refused at admission when the verdict is now a hazard', async () => {
    const c = rack();
    const { reconciler, causes } = withRefusals(c);
    c.create('m1', 'cp-1', 'reboot', hazardAck('typed-name'));
    await reconciler.reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal).toMatchObject({
      members: 3,
      quorum: 2,
      ready: 3,
      margin: 1,
    });
    expect(nm.status?.refusal?.reason).toMatch(
      /needs the hazard ceremony .* acknowledged at the typed-name rung/,
    );
    expect(c.nodePatches).toEqual([]);
    expect(causes).toEqual(['guard']);
  });

  /** Admitted at allow (five members), then a member goes NotReady: a hazard at send. */
  async function hazardAtSend(ack: 'hazard' | 'typed-name') {
    const c = fiveMembers();
    c.create('m1', 'cp-1', 'reboot', hazardAck(ack));
    await c.reconciler().reconcile('m1');
    const admitted = c.phase('m1');
    c.nodes.set('cp-5', node('cp-5', { cp: true, ready: false }));
    c.drainOutcome = drained;
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    return { admitted, c, nm };
  }

  it('a hazard at send time is not sent when the request was acknowledged at a lighter rung', async () => {
    const { admitted, c, nm } = await hazardAtSend('typed-name');
    expect(admitted).toBe('Draining');
    expect(c.sent).toEqual([]);
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal).toMatchObject({
      members: 5,
      quorum: 3,
      ready: 4,
      margin: 1,
    });
    expect(nm.status?.refusal?.reason).toMatch(/typed-name rung/);
  });

  it('a hazard at send time is sent when the request was acknowledged at the hazard tier', async () => {
    const { c, nm } = await hazardAtSend('hazard');
    expect(c.sent).toEqual([{ verb: 'reboot', node: 'cp-1' }]);
    expect(nm.status?.phase).toBe('Rebooting');
    expect(nm.status?.refusal).toBeUndefined();
  });

  it('made with kubectl (no pre-flight): admitted at allow, a hazard at send time is refused; admitted at hazard, it is sent', async () => {
    const c = fiveMembers();
    c.create('m1', 'cp-1', 'reboot');
    await c.reconciler().reconcile('m1');
    expect(c.maintenances.get('m1')!.status?.admission?.verdict).toBe('allow');
    c.nodes.set('cp-5', node('cp-5', { cp: true, ready: false }));
    c.drainOutcome = drained;
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Refused');
    expect(c.sent).toEqual([]);

    const d = rack();
    d.drainOutcome = drained;
    d.create('m2', 'cp-1', 'reboot');
    await d.reconciler().reconcile('m2');
    expect(d.maintenances.get('m2')!.status?.admission?.verdict).toBe('hazard');
    expect(d.phase('m2')).toBe('Rebooting');
    expect(d.sent).toEqual([{ verb: 'reboot', node: 'cp-1' }]);
  });

  it('two reboots both drained at margin 1 at once: exactly one is sent, the first admitted', async () => {
    const c = rack();
    const status = (at: string): NodeMaintenanceStatus => ({
      phase: 'Drained',
      wasUnschedulable: false,
      admission: {
        verdict: 'hazard',
        at,
        members: 3,
        quorum: 2,
        ready: 3,
        margin: 1,
      },
      history: [{ phase: 'Drained', at }],
    });
    c.create(
      'late',
      'cp-1',
      'reboot',
      hazardAck('hazard'),
      status('2026-01-01T00:01:00Z'),
    );
    c.create(
      'early',
      'cp-3',
      'reboot',
      hazardAck('hazard'),
      status('2026-01-01T00:00:30Z'),
    );
    const reconciler = c.reconciler();
    await Promise.all([
      reconciler.reconcile('late'),
      reconciler.reconcile('early'),
    ]);
    expect(c.sent).toEqual([{ verb: 'reboot', node: 'cp-3' }]);
    expect(c.phase('early')).toBe('Rebooting');
    expect(c.phase('late')).toBe('Refused');
    expect(c.maintenances.get('late')!.status?.refusal).toMatchObject({
      members: 3,
      quorum: 2,
      ready: 2,
      margin: 0,
    });
    expect(c.maintenances.get('late')!.status?.refusal?.reason).toMatch(
      /going down: cp-3 \(early\)/,
    );
  });

  it('a capability that went away before the send: Refused, nothing sent, node left cordoned', async () => {
    const c = rack();
    const { reconciler, causes } = withRefusals(c);
    c.create('m1', 'worker-1', 'reboot');
    await reconciler.reconcile('m1');
    c.channel = 'none';
    c.drainOutcome = drained;
    await reconciler.reconcile('m1');
    expect(c.phase('m1')).toBe('Refused');
    expect(c.sent).toEqual([]);
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(true);
    expect(causes).toEqual(['capability']);
  });

  it('holds an abandon while PoweredOff (AbandonPending, one Warning), powers on once when asked, then restores the schedulability from before', async () => {
    const c = rack();
    c.drainOutcome = drained;
    c.channel = 'redfish';
    c.create('m1', 'worker-2', 'shutdown');
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('PoweredOff');
    c.setSpec('m1', { abandon: { by: 'kubernetes-admin', reason: 'oops' } });
    await c.reconciler().reconcile('m1');
    await c.reconciler().reconcile('m1');
    let nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('PoweredOff');
    expect(nm.status?.abandoned).toBeUndefined();
    const pending = nm.status?.conditions?.find(
      x => x.type === 'AbandonPending',
    );
    expect(pending).toMatchObject({ status: 'True', reason: 'MachineOff' });
    expect(pending?.message).toMatch(/kubernetes-admin \(oops\)/);
    expect(
      c.events.filter(e => e.reason === 'AbandonPending').map(e => e.type),
    ).toEqual(['Warning']);
    expect(c.sent.map(s => s.verb)).toEqual(['shutdown']);

    c.setSpec('m1', { powerOn: flag });
    await c.reconciler().reconcile('m1');
    setNode(c, 'worker-2', { ready: true, bootID: 'boot-worker-2-2' });
    await c.reconciler().reconcile('m1');
    nm = c.maintenances.get('m1')!;
    expect(c.sent.map(s => s.verb)).toEqual(['shutdown', 'powerOn']);
    expect(nm.status?.phase).toBe('Complete');
    expect(nm.status?.abandoned).toBe(true);
    expect(
      nm.status?.conditions?.find(x => x.type === 'AbandonPending')?.status,
    ).toBe('False');
    // worker-2 was unschedulable before: abandon leaves it so.
    expect(c.nodes.get('worker-2')!.spec?.unschedulable).toBe(true);
  });

  it('return to service while PoweredOff with a held abandon keeps its behaviour: Returning, no power verb', async () => {
    const c = rack();
    c.drainOutcome = drained;
    c.channel = 'redfish';
    c.create('m1', 'worker-1', 'shutdown');
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { abandon: { by: 'kubernetes-admin', reason: 'oops' } });
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { returnToService: flag });
    await c.reconciler().reconcile('m1');
    expect(c.sent.map(s => s.verb)).toEqual(['shutdown']);
    expect(['Returning', 'Complete']).toContain(c.phase('m1'));
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(false);
  });
});

describe('held for approval (docs/approvals.md)', () => {
  const drained: DrainOutcome = {
    state: 'drained',
    progress: { total: 1, evicted: 1, pending: 0 },
  };
  const HOUR = 3600_000;

  /** spec.approval as the backend holds a request: required, nobody decided yet. */
  function held(
    expiresInMs = HOUR,
    requestedRung: 'typed-name' | 'hazard' = 'typed-name',
  ): NonNullable<NodeMaintenance['spec']['approval']> {
    return {
      required: true,
      rule: 'big-reboots',
      approvers: ['group:default/platform-oncall'],
      expiresAt: new Date(Date.now() + expiresInMs).toISOString(),
      requestedRung,
    };
  }

  /** The decision as the backend writes it on approve. */
  function approve(
    c: FakeCluster,
    name: string,
    approvedRung: 'typed-name' | 'hazard' = 'typed-name',
  ) {
    const approval = c.maintenances.get(name)!.spec.approval!;
    c.setSpec(name, {
      approval: {
        ...approval,
        approvedBy: 'user:default/bob',
        approvedAt: new Date().toISOString(),
        approvedRung,
      },
    });
  }

  function reject(c: FakeCluster, name: string) {
    const approval = c.maintenances.get(name)!.spec.approval!;
    c.setSpec(name, {
      approval: {
        ...approval,
        rejectedBy: 'user:default/bob',
        rejectedAt: new Date().toISOString(),
        rejectReason: 'not during the audit',
      },
    });
  }

  /** A reconciler whose refusals are counted, on a clock the test may fix. */
  function reconcilerOf(c: FakeCluster, now?: () => number) {
    const causes: string[] = [];
    const ports: ReconcilerPorts = {
      ...c.ports(),
      onRefused: cause => causes.push(cause),
      ...(now ? { now } : {}),
    };
    return { reconciler: new MaintenanceReconciler(ports), causes };
  }

  /** Nothing of the node was touched: no cordon, no drain, no verb. */
  function untouched(c: FakeCluster) {
    expect(c.nodePatches).toEqual([]);
    expect(c.drainsStarted).toEqual([]);
    expect(c.sent).toEqual([]);
  }

  /** Five control-plane members: quorum 3, so one reboot is allowed, not a hazard. */
  function fiveMembers() {
    const c = rack();
    c.nodes.set('cp-4', node('cp-4', { cp: true }));
    c.nodes.set('cp-5', node('cp-5', { cp: true }));
    return c;
  }

  it('a required approval without a decision never cordons: (new) -> AwaitingApproval, the node untouched, looked at again at expiresAt', async () => {
    const c = rack();
    c.drainOutcome = drained;
    const approval = held(HOUR);
    const now = Date.now();
    const { reconciler } = reconcilerOf(c, () => now);
    c.create('m1', 'worker-1', 'reboot', { approval });
    const { requeueAfterMs } = await reconciler.reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('AwaitingApproval');
    expect(nm.status?.message).toMatch(
      /awaiting approval from group:default\/platform-oncall \(rule big-reboots\)/,
    );
    // Nothing recorded that admission writes: no verdict, no schedulability to restore.
    expect(nm.status?.admission).toBeUndefined();
    expect(nm.status?.wasUnschedulable).toBeUndefined();
    expect(nm.status?.cordonedAt).toBeUndefined();
    expect(c.events.map(e => e.reason)).toEqual(['AwaitingApproval']);
    untouched(c);
    // Woken at the expiry (a second past it, a timer may fire early), not before.
    expect(requeueAfterMs).toBe(Date.parse(approval.expiresAt) - now + 1000);
    // Woken by something else while nobody decided: it waits, writing nothing.
    await c.reconciler().reconcile('m1');
    expect(c.statusWrites).toHaveLength(1);
    untouched(c);
  });

  it('a far expiry is looked at again hourly: no timer overflows', async () => {
    const c = rack();
    c.create('m1', 'worker-1', 'reboot', { approval: held(30 * 24 * HOUR) });
    const { requeueAfterMs } = await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('AwaitingApproval');
    expect(requeueAfterMs).toBe(HOUR + 1000);
  });

  it('an operator restarted while a request awaits keeps holding it: the state is the object', async () => {
    const c = rack();
    c.create('m1', 'worker-1', 'drain', { approval: held() });
    await c.reconciler().reconcile('m1');
    // A new process: a fresh reconciler, its lock and no memory, over the same objects.
    const { reconciler } = reconcilerOf(c);
    await reconciler.reconcile('m1');
    expect(c.phase('m1')).toBe('AwaitingApproval');
    expect(c.statusWrites).toHaveLength(1);
    untouched(c);
  });

  it('approved: the whole admission from fresh state, the Requested entry naming the approver, then the verb', async () => {
    const c = rack();
    c.drainOutcome = drained;
    c.create('m1', 'worker-1', 'reboot', { approval: held() });
    await c.reconciler().reconcile('m1');
    approve(c, 'm1');
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Rebooting');
    expect(nm.status?.history?.map(h => h.phase)).toEqual([
      'AwaitingApproval',
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
      'Rebooting',
    ]);
    expect(nm.status?.history?.[1].message).toMatch(
      /^Approved by user:default\/bob at the typed-name rung; admitted: /,
    );
    expect(nm.status?.admission?.verdict).toBe('allow');
    expect(nm.status?.wasUnschedulable).toBe(false);
    expect(c.sent).toEqual([{ verb: 'reboot', node: 'worker-1' }]);
  });

  it('approved after the cluster changed while it waited: admission refuses from what is true now, nothing touched', async () => {
    const c = rack();
    const { reconciler, causes } = reconcilerOf(c);
    c.create('m1', 'cp-1', 'reboot', {
      approval: held(HOUR, 'hazard'),
      preflight: { takenAt: '2026-01-01T00:00:00Z', ceremony: 'hazard' },
    });
    await reconciler.reconcile('m1');
    expect(c.phase('m1')).toBe('AwaitingApproval');
    // While it waited a member went NotReady: the reboot would now break quorum.
    c.nodes.set('cp-2', node('cp-2', { cp: true, ready: false }));
    approve(c, 'm1', 'hazard');
    await reconciler.reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal).toMatchObject({ members: 3, ready: 2 });
    expect(causes).toEqual(['guard']);
    untouched(c);
  });

  it('approved at a lighter rung than the requester acknowledged, and a hazard now: refused at admission, nothing touched', async () => {
    const c = rack();
    const { reconciler, causes } = reconcilerOf(c);
    // The requester saw the hazard; the approver's fresh pre-flight was at typed-name.
    c.create('m1', 'cp-1', 'reboot', {
      approval: held(HOUR, 'hazard'),
      preflight: { takenAt: '2026-01-01T00:00:00Z', ceremony: 'hazard' },
    });
    await reconciler.reconcile('m1');
    approve(c, 'm1', 'typed-name');
    await reconciler.reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal?.reason).toMatch(
      /the rung now is hazard, above the typed-name rung user:default\/bob approved/,
    );
    expect(causes).toEqual(['approval']);
    untouched(c);
  });

  it('rejected: Refused, "rejected by X: reason", the node untouched', async () => {
    const c = rack();
    const { reconciler, causes } = reconcilerOf(c);
    c.create('m1', 'worker-1', 'reboot', { approval: held() });
    await reconciler.reconcile('m1');
    reject(c, 'm1');
    await reconciler.reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal?.reason).toMatch(
      /rejected by user:default\/bob: not during the audit/,
    );
    expect(c.events.pop()).toMatchObject({
      type: 'Warning',
      reason: 'Refused',
    });
    expect(causes).toEqual(['approval']);
    untouched(c);
  });

  it('a rejection beside an approval (never both, by schema) wins: Refused, never admitted', async () => {
    const c = rack();
    c.create('m1', 'worker-1', 'reboot', { approval: held() });
    await c.reconciler().reconcile('m1');
    approve(c, 'm1');
    reject(c, 'm1');
    // The schema refuses such an object; the operator does not rely on it.
    expect(
      approvalSchema.safeParse(c.maintenances.get('m1')!.spec.approval).success,
    ).toBe(false);
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Refused');
    untouched(c);
  });

  it('expiry edge: still held a millisecond before expiresAt, Refused "approval expired" at it, never cordoned', async () => {
    const c = rack();
    const approval = held(HOUR);
    const expiresAt = Date.parse(approval.expiresAt);
    let now = expiresAt - 1;
    const { reconciler, causes } = reconcilerOf(c, () => now);
    c.create('m1', 'worker-1', 'reboot', { approval });
    const first = await reconciler.reconcile('m1');
    expect(c.phase('m1')).toBe('AwaitingApproval');
    // A millisecond left: woken just after it.
    expect(first.requeueAfterMs).toBe(1 + 1000);
    now = expiresAt;
    await reconciler.reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal?.reason).toMatch(/approval expired/);
    expect(causes).toEqual(['approval']);
    untouched(c);
  });

  it('an approval expired before the operator saw it is Refused at once, never held', async () => {
    const c = rack();
    c.create('m1', 'worker-1', 'reboot', { approval: held(-1000) });
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.history?.map(h => h.phase)).toEqual(['Refused']);
    expect(nm.status?.refusal?.reason).toMatch(/approval expired/);
    untouched(c);
  });

  it('an approval given before expiresAt stands after it', async () => {
    const c = rack();
    const approval = held(HOUR);
    const later = Date.parse(approval.expiresAt) + HOUR;
    c.create('m1', 'worker-1', 'cordon', { approval });
    await c.reconciler().reconcile('m1');
    approve(c, 'm1', 'typed-name');
    const { reconciler } = reconcilerOf(c, () => later);
    await reconciler.reconcile('m1');
    expect(c.phase('m1')).toBe('Cordoned');
  });

  it('abandon while awaiting: Complete, abandoned, nothing restored or sent; return to service too', async () => {
    const c = rack();
    c.create('m1', 'worker-2', 'reboot', { approval: held() });
    await c.reconciler().reconcile('m1');
    c.setSpec('m1', { abandon: flag });
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.history?.map(h => h.phase)).toEqual([
      'AwaitingApproval',
      'Complete',
    ]);
    expect(nm.status?.abandoned).toBe(true);
    expect(nm.status?.message).toMatch(
      /Abandoned by user:default\/ops while awaiting approval: because; nothing was done to worker-2/,
    );
    // worker-2 was unschedulable before, and stays so: nobody touched it.
    expect(c.nodes.get('worker-2')!.spec?.unschedulable).toBe(true);
    untouched(c);

    c.create('m2', 'worker-1', 'drain', { approval: held() });
    await c.reconciler().reconcile('m2');
    c.setSpec('m2', { returnToService: flag });
    await c.reconciler().reconcile('m2');
    const back = c.maintenances.get('m2')!;
    expect(back.status?.phase).toBe('Complete');
    expect(back.status?.abandoned).toBeUndefined();
    untouched(c);
  });

  it('a held request keeps its node busy: a second one is refused naming it, and it claims no quorum margin', async () => {
    const c = rack();
    c.create('m1', 'cp-1', 'reboot', {
      approval: held(HOUR, 'hazard'),
      preflight: { takenAt: '2026-01-01T00:00:00Z', ceremony: 'hazard' },
    });
    await c.reconciler().reconcile('m1');
    c.create('m2', 'cp-1', 'cordon');
    await c.reconciler().reconcile('m2');
    expect(c.phase('m2')).toBe('Refused');
    expect(c.maintenances.get('m2')!.status?.refusal?.blockingMaintenance).toBe(
      'm1',
    );
    // Not admitted, it spends no margin: a reboot of another member at the hazard rung is
    // admitted at margin 1, as if the held one were not there.
    c.create('m3', 'cp-2', 'reboot', {
      preflight: { takenAt: '2026-01-01T00:00:00Z', ceremony: 'hazard' },
    });
    await c.reconciler().reconcile('m3');
    expect(c.maintenances.get('m3')!.status?.admission).toMatchObject({
      verdict: 'hazard',
      margin: 1,
    });
  });

  it('the rung grew at send: approved at typed-name, a hazard before the verb is Refused, nothing sent, node left cordoned', async () => {
    const c = fiveMembers();
    const { reconciler, causes } = reconcilerOf(c);
    // The requester acknowledged the hazard rung; the approver saw typed-name.
    c.create('m1', 'cp-1', 'reboot', {
      approval: held(HOUR, 'hazard'),
      preflight: { takenAt: '2026-01-01T00:00:00Z', ceremony: 'hazard' },
    });
    await reconciler.reconcile('m1');
    approve(c, 'm1', 'typed-name');
    await reconciler.reconcile('m1');
    expect(c.phase('m1')).toBe('Draining');
    c.nodes.set('cp-5', node('cp-5', { cp: true, ready: false }));
    c.drainOutcome = drained;
    await reconciler.reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.power?.reboot).toBeUndefined();
    expect(nm.status?.refusal).toMatchObject({
      members: 5,
      quorum: 3,
      ready: 4,
      margin: 1,
    });
    expect(nm.status?.refusal?.reason).toMatch(
      /^reboot of cp-1 was not sent: the rung now is hazard, above the typed-name rung user:default\/bob approved/,
    );
    expect(c.sent).toEqual([]);
    expect(c.nodes.get('cp-1')!.spec?.unschedulable).toBe(true);
    expect(causes).toEqual(['approval']);
  });

  it('approved at the hazard rung, a hazard at send is sent', async () => {
    const c = fiveMembers();
    c.create('m1', 'cp-1', 'reboot', {
      approval: held(HOUR, 'hazard'),
      preflight: { takenAt: '2026-01-01T00:00:00Z', ceremony: 'hazard' },
    });
    await c.reconciler().reconcile('m1');
    approve(c, 'm1', 'hazard');
    await c.reconciler().reconcile('m1');
    c.nodes.set('cp-5', node('cp-5', { cp: true, ready: false }));
    c.drainOutcome = drained;
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Rebooting');
    expect(c.sent).toEqual([{ verb: 'reboot', node: 'cp-1' }]);
  });

  it('at send, an approval that no longer reads approved is not sent (a rejection written beside it)', async () => {
    const c = rack();
    c.create('m1', 'worker-1', 'reboot', { approval: held() });
    await c.reconciler().reconcile('m1');
    approve(c, 'm1');
    await c.reconciler().reconcile('m1');
    expect(c.phase('m1')).toBe('Draining');
    reject(c, 'm1');
    c.drainOutcome = drained;
    await c.reconciler().reconcile('m1');
    const nm = c.maintenances.get('m1')!;
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal?.reason).toMatch(/its approval is rejected/);
    expect(c.sent).toEqual([]);
  });

  it('admission and the approved admission take the admission lock; a held wait does too, cheaply', () => {
    const c = rack();
    const nm = c.create(
      'm1',
      'worker-1',
      'reboot',
      { approval: held() },
      {
        phase: 'AwaitingApproval',
      },
    );
    expect(needsAdmissionLock(nm)).toBe(true);
  });
});
