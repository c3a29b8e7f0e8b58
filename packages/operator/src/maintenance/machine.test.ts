import type {
  MaintenanceIntent,
  NodeMaintenance,
  NodeMaintenanceStatus,
  PodLike,
} from '@rackside/plugin-servers-common';
import type { DrainOutcome } from '../drain/DrainRunner';
import {
  blockingMaintenance,
  type NodeView,
  phaseOf,
  transitions,
} from './machine';
import {
  HISTORY_MAX,
  MaintenanceReconciler,
  Mutex,
  nextStatus,
  type ReconcilerPorts,
} from './reconciler';

function node(
  name: string,
  opts: {
    cp?: boolean;
    virtual?: boolean;
    ready?: boolean;
    unschedulable?: boolean;
  } = {},
): NodeView {
  const labels: Record<string, string> = {};
  if (opts.cp) labels['node-role.kubernetes.io/control-plane'] = '';
  if (opts.virtual) labels['rackside.dev/virtual-node'] = 'true';
  return {
    metadata: { name, labels },
    spec: { unschedulable: opts.unschedulable },
    status: {
      conditions: [
        { type: 'Ready', status: opts.ready === false ? 'False' : 'True' },
      ],
    },
  };
}

const flag = { by: 'user:default/ops', reason: 'because' };

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
  /** Throws once before writing a transition to this phase (a crash). */
  crashBefore?: string;

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
      spec: { nodeName, intent, reason: 'disk swap', ...extra },
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

  ports(): ReconcilerPorts {
    return {
      view: {
        maintenance: name => this.maintenances.get(name),
        maintenances: () => [...this.maintenances.values()],
        node: name => this.nodes.get(name),
        nodes: () => [...this.nodes.values()],
      },
      nodes: {
        setUnschedulable: async (name, unschedulable) => {
          const n = this.nodes.get(name)!;
          this.nodePatches.push({ node: name, unschedulable });
          this.nodes.set(name, { ...n, spec: { unschedulable } });
        },
      },
      pods: { onNode: async name => this.pods.get(name) ?? [] },
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
            throw new Error('conflict');
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
      },
      events: {
        record: async (nm, type, reason, message) => {
          this.events.push({ name: nm.metadata.name, type, reason, message });
        },
      },
      admissionLock: new Mutex(),
    };
  }

  reconciler() {
    return new MaintenanceReconciler(this.ports());
  }
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

  it.each([
    'New',
    'Requested',
    'Cordoned',
    'Draining',
    'Drained',
    'Rebooting',
    'PoweredOff',
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

  it.each(['reboot', 'shutdown'] as const)(
    'intent %s drains, then parks in Drained with a warning that it is not executed',
    async intent => {
      const c = rack();
      c.drainOutcome = {
        state: 'drained',
        progress: { total: 0, evicted: 0, pending: 0 },
      };
      c.create('m1', 'worker-1', intent);
      await c.reconciler().reconcile('m1');
      expect(c.phase('m1')).toBe('Drained');
      const warning = c.events.find(e => e.type === 'Warning')!;
      expect(warning.reason).toBe('IntentNotExecuted');
      expect(c.maintenances.get('m1')!.status?.message).toContain(
        'not executed',
      );
    },
  );

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
      drain: { force: true, deleteEmptyDirData: false },
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
