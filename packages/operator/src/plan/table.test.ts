import type {
  MaintenancePlan,
  MaintenancePlanStatus,
  MaintenancePlanInput,
  NodeMaintenance,
  ObjectGate,
} from '@rackside/plugin-servers-common';
import {
  DEFAULT_NODE_ALERT_MATCHERS,
  maintenancePlanSchema,
  maintenancePlanStatusSchema,
  type AlertSnapshot,
  type HardwareHealthFacts,
  type AlertState,
} from '@rackside/plugin-servers-common';
import type { NodeView } from '../runtime/nodeView';
import { PlanReconciler, stepObject, type PlanPorts } from './reconciler';
import { canonical, MAX_WAIT_MS, stepName } from './table';

const T0 = Date.parse('2026-08-04T10:00:00Z');
const CP = { 'node-role.kubernetes.io/control-plane': '' };

/** The record of a maintenance that did its verb: the history, the reboot accepted. */
function verbDone(
  intent: string,
  now: number,
): Partial<NonNullable<NodeMaintenance['status']>> {
  const at = new Date(now).toISOString();
  const phases =
    intent === 'reboot'
      ? ([
          'Requested',
          'Cordoned',
          'Draining',
          'Drained',
          'Rebooting',
          'Returning',
        ] as const)
      : ([
          'Requested',
          'Cordoned',
          'Draining',
          'Drained',
          'Returning',
        ] as const);
  return {
    history: phases.map(phase => ({ phase, at })),
    ...(intent === 'reboot'
      ? {
          rebootSentAt: at,
          power: { reboot: { recordedAt: at, sentAt: at } },
        }
      : {}),
  };
}

/** The cluster a plan runs in: caches, writes, Events, a settable clock. */
class World {
  now = T0;
  plans = new Map<string, MaintenancePlan>();
  nms = new Map<string, NodeMaintenance>();
  nodes = new Map<string, NodeView>();
  unhealthy: string[] = [];
  gates = new Map<
    string,
    { holds: boolean; message: string; refused?: boolean }
  >();
  creates: string[] = [];
  abandons: Array<{ name: string; by: string }> = [];
  events: string[] = [];
  writes = 0;
  /** A status write this answers fails with its message (a webhook refusing it). */
  failWrites?: (status: MaintenancePlanStatus) => string | undefined;
  statusWriteFailures = 0;
  private rv = 1;

  constructor(workers: number, controlPlane = 0) {
    for (let i = 1; i <= workers; i++) this.node(`worker-${i}`);
    for (let i = 1; i <= controlPlane; i++) this.node(`cp-${i}`, CP);
  }

  node(name: string, labels: Record<string, string> = {}, ready = true) {
    this.nodes.set(name, {
      metadata: { name, labels },
      status: {
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      },
    } as NodeView);
  }

  plan(name: string, spec: Partial<MaintenancePlanInput['spec']> = {}) {
    const plan = maintenancePlanSchema.parse({
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'MaintenancePlan',
      metadata: { name, uid: `uid-${name}`, generation: 1 },
      spec: {
        intent: 'reboot',
        reason: 'kernel update',
        requestedBy: 'user:default/jane',
        ...(spec.selector ? {} : { nodes: [...this.nodes.keys()] }),
        // The healthy return is its own test below; elsewhere a step is Done at once.
        healthyReturn: { healthyForSeconds: 0 },
        ...spec,
      },
    });
    this.plans.set(name, plan);
    return plan;
  }

  get(name: string): MaintenancePlan {
    return this.plans.get(name)!;
  }

  spec(name: string, patch: Partial<MaintenancePlan['spec']>) {
    const plan = this.get(name);
    this.plans.set(name, { ...plan, spec: { ...plan.spec, ...patch } });
  }

  /** Moves a step's NodeMaintenance to a phase, as the maintenance lifecycle would. */
  step(
    node: string,
    phase: NonNullable<NodeMaintenance['status']>['phase'],
    status: Partial<NonNullable<NodeMaintenance['status']>> = {},
    plan = 'p',
  ) {
    const name = stepName(plan, node);
    const nm = this.nms.get(name)!;
    // Unless the test says otherwise, a step that ends Complete did its verb on the way.
    const truthful =
      phase === 'Complete' && !status.history && !status.abandoned
        ? verbDone(nm.spec.intent, this.now)
        : {};
    this.nms.set(name, {
      ...nm,
      status: { ...nm.status, ...truthful, phase, ...status },
    });
  }

  steps(name = 'p') {
    return Object.fromEntries(
      (this.get(name).status?.nodes ?? []).map(s => [s.name, s.phase]),
    );
  }

  /** What the fake Alertmanager answers; undefined: none configured. */
  alerting?: { snapshot: AlertSnapshot; reads: number };
  /** The BMC health readings by node (ServerBMC status.health). */
  hardware = new Map<string, HardwareHealthFacts>();
  /** The BMC firmware by node, as the last health reading listed it. */
  firmware = new Map<
    string,
    Array<{ id?: string; name: string; version: string }>
  >();

  ports(): PlanPorts {
    const alerting = this.alerting;
    return {
      view: {
        alerting: alerting && {
          matchers: DEFAULT_NODE_ALERT_MATCHERS,
          returnGraceMs: 30_000,
          pollMs: 5_000,
          snapshot: async () => {
            alerting.reads++;
            return alerting.snapshot;
          },
        },
        now: () => this.now,
        plan: name => this.plans.get(name),
        node: name => this.nodes.get(name),
        nodes: () => [...this.nodes.values()],
        maintenance: name => this.nms.get(name),
        unhealthyBudgets: () => this.unhealthy,
        objectGate: (gate: ObjectGate) =>
          this.gates.get(gate.name) ?? { holds: false, message: 'unknown' },
        hardware: name => this.hardware.get(name),
        firmwareReading: name => this.firmware.get(name),
      },
      writeStatus: async (plan, status, options) => {
        // What the apiserver checks: the status schema (maxLength, maxItems), 422 if not.
        const checked = maintenancePlanStatusSchema.safeParse(status);
        if (!checked.success) {
          throw new Error(`422 Invalid: ${checked.error.issues[0].message}`);
        }
        const refused = this.failWrites?.(status);
        if (refused) throw new Error(refused);
        if (options?.dryRun) return plan;
        this.writes++;
        // What the apiserver answers: its own key order.
        const written = JSON.parse(canonical({ ...plan, status }));
        written.metadata.resourceVersion = String(++this.rv);
        this.plans.set(plan.metadata.name, written);
        return written;
      },
      createStep: async (plan, step, maintenance) => {
        if (this.nms.has(maintenance)) return false;
        this.creates.push(maintenance);
        this.nms.set(maintenance, {
          ...stepObject(plan, step, maintenance),
          metadata: {
            ...stepObject(plan, step, maintenance).metadata,
            creationTimestamp: new Date(this.now).toISOString(),
          },
        });
        return true;
      },
      statusWriteFailed: () => {
        this.statusWriteFailures++;
      },
      abandonStep: async (name, flag) => {
        this.abandons.push({ name, by: flag.by });
        const nm = this.nms.get(name)!;
        this.nms.set(name, { ...nm, spec: { ...nm.spec, abandon: flag } });
      },
      events: {
        record: async (_plan, type, reason, message) => {
          this.events.push(`${type} ${reason}: ${message}`);
        },
      },
    };
  }

  async reconcile(name = 'p') {
    return new PlanReconciler(this.ports()).reconcile(name);
  }
}

describe('the plan table', () => {
  it('resolves its nodes once, workers first, and keeps maxParallel steps open', async () => {
    const w = new World(3, 2);
    w.plan('p', { maxParallel: 2 });
    await w.reconcile();
    expect(w.get('p').status?.nodes?.map(n => n.name)).toEqual([
      'worker-1',
      'worker-2',
      'worker-3',
      'cp-1',
      'cp-2',
    ]);
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-2']);
    expect(w.get('p').status).toMatchObject({
      phase: 'Running',
      counts: { total: 5, running: 2, pending: 3 },
      waiting: { on: 'step' },
    });
    // Every step carries the plan's request and is owned by it.
    expect(w.nms.get('p-worker-1')).toMatchObject({
      metadata: {
        ownerReferences: [
          { kind: 'MaintenancePlan', uid: 'uid-p', controller: true },
        ],
      },
      spec: {
        nodeName: 'worker-1',
        intent: 'reboot',
        reason: 'kernel update',
        requestedBy: 'user:default/jane',
      },
    });
    // Reconciling again with nothing changed writes nothing.
    const writes = w.writes;
    await w.reconcile();
    expect(w.writes).toBe(writes);

    w.now += 60_000;
    w.step('worker-1', 'Complete', {
      completedAt: new Date(w.now).toISOString(),
    });
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-2', 'p-worker-3']);
    expect(w.get('p').status?.estimate).toMatchObject({ stepSeconds: 60 });

    // A control-plane member waits until no step is open, then goes alone.
    w.step('worker-2', 'Complete');
    await w.reconcile();
    expect(w.creates).toHaveLength(3);
    expect(w.get('p').status?.message).toMatch(
      /control-plane nodes go one at a time: cp-1 waits for worker-3/,
    );
    w.step('worker-3', 'Complete');
    await w.reconcile();
    expect(w.creates).toEqual([
      'p-worker-1',
      'p-worker-2',
      'p-worker-3',
      'p-cp-1',
    ]);
    w.step('cp-1', 'Complete');
    await w.reconcile();
    w.step('cp-2', 'Complete');
    await w.reconcile();
    expect(w.get('p').status).toMatchObject({
      phase: 'Complete',
      message: '5 of 5 rebooted',
      counts: { done: 5 },
    });
    expect(w.events).toContainEqual(
      expect.stringMatching(/Complete: 5 of 5 rebooted/),
    );
  });

  it('stops at a refused step with the numbers; tolerate goes on past it', async () => {
    const w = new World(0, 3);
    w.plan('p');
    await w.reconcile();
    w.step('cp-1', 'Refused', {
      refusal: {
        reason: 'would drop ready control-plane members below quorum',
        members: 3,
        quorum: 2,
        ready: 2,
        margin: 0,
      },
    });
    await w.reconcile();
    expect(w.creates).toEqual(['p-cp-1']);
    expect(w.get('p').status).toMatchObject({
      phase: 'Failed',
      counts: { refused: 1, skipped: 2 },
    });
    expect(w.get('p').status?.message).toMatch(
      /1 step\(s\) failed or were refused \(tolerated: 0\): cp-1 refused: would drop ready control-plane members below quorum \(members 3, quorum 2, ready 2, margin 0\)/,
    );

    const t = new World(3);
    t.plan('p', { failurePolicy: { tolerate: 1 } });
    await t.reconcile();
    t.step('worker-1', 'Failed', { message: 'drain timed out' });
    await t.reconcile();
    expect(t.creates).toEqual(['p-worker-1', 'p-worker-2']);
    t.step('worker-2', 'Failed', { message: 'drain timed out' });
    await t.reconcile();
    expect(t.creates).toHaveLength(2);
    expect(t.get('p').status?.phase).toBe('Failed');
  });

  it('a failure with steps still open stops starting and fails once they end', async () => {
    const w = new World(3);
    w.plan('p', { maxParallel: 2 });
    await w.reconcile();
    w.step('worker-1', 'Failed', { message: 'no' });
    await w.reconcile();
    expect(w.creates).toHaveLength(2);
    expect(w.get('p').status?.phase).toBe('Running');
    expect(w.get('p').status?.message).toMatch(/nothing new starts/);
    w.step('worker-2', 'Complete');
    await w.reconcile();
    expect(w.steps()).toEqual({
      'worker-1': 'Failed',
      'worker-2': 'Done',
      'worker-3': 'Skipped',
    });
    expect(w.get('p').status?.phase).toBe('Failed');
  });

  it('waits on a gate with why, goes on when it holds, and fails at its timeout', async () => {
    const w = new World(3);
    w.plan('p', {
      gates: {
        objects: [
          {
            name: 'storage',
            apiVersion: 'ceph.rook.io/v1',
            kind: 'CephCluster',
            objectName: 'rook',
            field: { path: '.status.ceph.health', value: 'HEALTH_OK' },
            timeoutSeconds: 600,
          },
        ],
      },
    });
    w.unhealthy = ['shop/web'];
    await w.reconcile();
    expect(w.creates).toEqual([]);
    expect(w.get('p').status).toMatchObject({
      phase: 'Waiting',
      waiting: {
        on: 'gate',
        gate: 'podDisruptionBudgetsHealthy',
        message:
          'PodDisruptionBudgets below their desired healthy pods: shop/web',
      },
    });
    w.unhealthy = [];
    w.gates.set('storage', { holds: false, message: 'HEALTH_WARN' });
    const wait = await w.reconcile();
    expect(w.get('p').status?.waiting).toMatchObject({
      gate: 'storage',
      message: 'HEALTH_WARN',
      until: '2026-08-04T10:10:00.000Z',
    });
    expect(wait.requeueAfterMs).toBe(600_000);
    w.gates.set('storage', { holds: true, message: 'HEALTH_OK' });
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);

    // The previous node is not Ready (it went NotReady after its healthy return): the
    // gate holds the next step; the timeout fails.
    w.step('worker-1', 'Complete');
    w.gates.set('storage', { holds: false, message: 'HEALTH_WARN' });
    await w.reconcile();
    expect(w.steps()).toMatchObject({ 'worker-1': 'Done' });
    w.node('worker-1', {}, false);
    await w.reconcile();
    expect(w.get('p').status?.waiting).toMatchObject({
      gate: 'previousNodeReady',
      message: 'not Ready: worker-1',
    });
    w.node('worker-1');
    await w.reconcile();
    const since = Date.parse(w.get('p').status!.waiting!.since);
    w.now = since + 600_000;
    await w.reconcile();
    expect(w.get('p').status).toMatchObject({
      phase: 'Failed',
      message: 'gate storage did not hold within 600s: HEALTH_WARN',
    });
    expect(w.creates).toEqual(['p-worker-1']);
  });

  it('a gate refused as written (a kind not allowed, no namespace, too many objects) stops the plan, starting nothing', async () => {
    const w = new World(1);
    w.plan('p', {
      gates: {
        objects: [
          {
            name: 'secrets',
            apiVersion: 'v1',
            kind: 'Secret',
            namespace: 'default',
            objectName: 'db',
            field: { path: '.data.password', value: 'x' },
          },
        ],
      },
    });
    w.gates.set('secrets', {
      holds: false,
      refused: true,
      message:
        "secrets is not among the kinds plan gates may read (the chart's operator.planGateReads)",
    });
    await w.reconcile();
    expect(w.creates).toEqual([]);
    expect(w.get('p').status).toMatchObject({
      phase: 'Failed',
      message:
        "gate secrets refused: secrets is not among the kinds plan gates may read (the chart's operator.planGateReads)",
    });
  });

  it('starts nothing outside its window and looks again when it opens', async () => {
    const w = new World(2);
    w.plan('p', {
      maxParallel: 2,
      window: {
        notBefore: '2026-08-04T10:00:05Z',
        notAfter: '2026-08-04T11:00:00Z',
      },
    });
    const wait = await w.reconcile();
    expect(wait.requeueAfterMs).toBe(5000);
    expect(w.creates).toEqual([]);
    expect(w.get('p').status).toMatchObject({
      phase: 'Waiting',
      waiting: {
        on: 'window',
        message: 'the window opens at 2026-08-04T10:00:05Z',
      },
    });
    w.now += 5000;
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-2']);
  });

  it('a window weeks away is looked at again within the hour, not by an overflowing timer', async () => {
    const w = new World(1);
    w.plan('p', { window: { notBefore: '2026-10-01T00:00:00Z' } });
    const wait = await w.reconcile();
    expect(wait.requeueAfterMs).toBe(MAX_WAIT_MS);
    expect(w.get('p').status?.waiting?.until).toBe('2026-10-01T00:00:00.000Z');
    expect(w.creates).toEqual([]);
  });

  it('past notAfter running steps finish, nothing starts, and the plan fails', async () => {
    const w = new World(2);
    w.plan('p', { window: { notAfter: '2026-08-04T10:30:00Z' } });
    await w.reconcile();
    w.now = Date.parse('2026-08-04T10:30:00Z');
    await w.reconcile();
    expect(w.get('p').status?.phase).toBe('Running');
    w.step('worker-1', 'Complete');
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);
    expect(w.get('p').status).toMatchObject({
      phase: 'Failed',
      message: expect.stringMatching(
        /the window closed at 2026-08-04T10:30:00Z.*1 step\(s\) not started/,
      ),
    });
  });

  it('pauses (running steps go on) and resumes', async () => {
    const w = new World(3);
    w.plan('p');
    await w.reconcile();
    w.spec('p', {
      pause: {
        by: 'user:default/ops',
        reason: 'shift change',
        at: '2026-08-04T10:01:00Z',
      },
    });
    w.step('worker-1', 'Complete');
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);
    expect(w.get('p').status).toMatchObject({
      phase: 'Paused',
      message: 'paused by user:default/ops: shift change',
      waiting: { on: 'pause' },
    });
    expect(w.steps()['worker-1']).toBe('Done');
    w.spec('p', {
      resume: {
        by: 'user:default/ops',
        reason: 'back',
        at: '2026-08-04T10:02:00Z',
      },
    });
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-2']);
    expect(w.get('p').status?.phase).toBe('Running');
  });

  it('cancel lets running steps finish, then ends Cancelled with the rest skipped', async () => {
    const w = new World(3);
    w.plan('p');
    await w.reconcile();
    w.spec('p', { cancel: { by: 'user:default/ops', reason: 'wrong pool' } });
    await w.reconcile();
    expect(w.get('p').status?.phase).toBe('Running');
    expect(w.abandons).toEqual([]);
    w.step('worker-1', 'Complete');
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);
    expect(w.get('p').status).toMatchObject({
      phase: 'Cancelled',
      message: 'cancelled by user:default/ops: wrong pool',
    });
    expect(w.steps()).toEqual({
      'worker-1': 'Done',
      'worker-2': 'Skipped',
      'worker-3': 'Skipped',
    });
  });

  it("cancel with onCancel abandon abandons the open steps in the canceller's name", async () => {
    const w = new World(3);
    w.plan('p', { maxParallel: 2, onCancel: 'abandon' });
    await w.reconcile();
    w.spec('p', { cancel: { by: 'user:default/ops', reason: 'stop' } });
    await w.reconcile();
    await w.reconcile();
    expect(w.abandons).toEqual([
      { name: 'p-worker-1', by: 'user:default/ops' },
      { name: 'p-worker-2', by: 'user:default/ops' },
    ]);
    w.step('worker-1', 'Complete', { abandoned: true });
    w.step('worker-2', 'Complete', { abandoned: true });
    await w.reconcile();
    expect(w.steps()).toEqual({
      'worker-1': 'Skipped',
      'worker-2': 'Skipped',
      'worker-3': 'Skipped',
    });
    expect(w.get('p').status?.phase).toBe('Cancelled');
  });

  it('resumes after a restart from status: a step created but not recorded is adopted, never created twice', async () => {
    const w = new World(3);
    w.plan('p', { maxParallel: 2 });
    const ports = w.ports();
    // The operator created worker-2's step, then stopped before recording it.
    let crash = true;
    const reconciler = new PlanReconciler({
      ...ports,
      writeStatus: async (plan, status, options) => {
        if (
          crash &&
          !options?.dryRun &&
          status.nodes?.some(
            n => n.name === 'worker-2' && n.phase === 'Running',
          )
        ) {
          throw new Error('operator killed');
        }
        return ports.writeStatus(plan, status, options);
      },
    });
    await expect(reconciler.reconcile('p')).rejects.toThrow('operator killed');
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-2']);
    expect(w.steps()['worker-2']).toBe('Pending');
    crash = false;
    // A new operator process: a new reconciler over the same cluster.
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-2']);
    expect(w.steps()).toEqual({
      'worker-1': 'Running',
      'worker-2': 'Running',
      'worker-3': 'Pending',
    });
    expect(w.get('p').status?.nodes?.[1].maintenance).toBe('p-worker-2');
  });

  it('a drain step is done when its node is Drained; a blocked drain says which budget', async () => {
    const w = new World(2);
    w.plan('p', { intent: 'drain' });
    await w.reconcile();
    w.step('worker-1', 'Draining', {
      drain: {
        total: 1,
        evicted: 0,
        pending: 1,
        blockedBy: [{ pod: 'shop/web-0', pdb: 'web', message: 'Cannot evict' }],
      },
    });
    await w.reconcile();
    expect(w.get('p').status?.nodes?.[0].message).toBe(
      'drain blocked: eviction of shop/web-0 refused by PodDisruptionBudget web',
    );
    expect(w.get('p').status?.message).toMatch(/worker-1: drain blocked/);
    w.step('worker-1', 'Drained');
    await w.reconcile();
    expect(w.steps()).toEqual({ 'worker-1': 'Done', 'worker-2': 'Running' });
  });

  it('fails a plan whose selector matches nothing and skips a named node that does not exist', async () => {
    const w = new World(1);
    w.plan('p', { selector: { matchLabels: { pool: 'none' } } });
    await w.reconcile();
    expect(w.get('p').status).toMatchObject({
      phase: 'Failed',
      message: 'no node matches the selector',
    });
    w.plan('q', { nodes: ['worker-1', 'worker-9'] });
    await w.reconcile('q');
    expect(w.steps('q')).toEqual({
      'worker-1': 'Running',
      'worker-9': 'Skipped',
    });
  });

  it('a step is Done only when its verb happened: a node returned to service before its reboot or drain is Skipped and the plan says so', async () => {
    const w = new World(3);
    w.plan('p', { maxParallel: 3 });
    await w.reconcile();
    const returned = () => ({
      history: (
        ['Requested', 'Cordoned', 'Draining', 'Returning'] as const
      ).map(phase => ({ phase, at: new Date(w.now).toISOString() })),
    });
    const flag = { by: 'user:default/ops', reason: 'needed back', at: 'x' };
    // worker-2 is returned to service while Draining: its maintenance ends Complete,
    // and no reboot was ever sent.
    for (const name of ['p-worker-2']) {
      const nm = w.nms.get(name)!;
      w.nms.set(name, { ...nm, spec: { ...nm.spec, returnToService: flag } });
    }
    w.step('worker-1', 'Complete');
    w.step('worker-2', 'Complete', returned());
    w.step('worker-3', 'Complete');
    await w.reconcile();
    expect(w.get('p').status?.nodes?.[1]).toMatchObject({
      name: 'worker-2',
      phase: 'Skipped',
      message: 'returned to service before the reboot',
    });
    expect(w.get('p').status).toMatchObject({
      phase: 'Complete',
      counts: { done: 2, skipped: 1 },
      message: '2 of 3 rebooted, 1 returned to service before the reboot',
    });
    expect(w.events).toContainEqual(
      'Normal Complete: 2 of 3 rebooted, 1 returned to service before the reboot',
    );

    // A drain step returned before its node reached Drained did not drain it.
    const d = new World(1);
    d.plan('p', { intent: 'drain' });
    await d.reconcile();
    const nm = d.nms.get('p-worker-1')!;
    d.nms.set('p-worker-1', {
      ...nm,
      spec: { ...nm.spec, returnToService: flag },
    });
    d.step('worker-1', 'Complete', returned());
    await d.reconcile();
    expect(d.get('p').status).toMatchObject({
      phase: 'Complete',
      message: '0 of 1 drained, 1 returned to service before the drain',
      nodes: [
        expect.objectContaining({
          phase: 'Skipped',
          message: 'returned to service before the drain',
        }),
      ],
    });
  });

  it("adopts a NodeMaintenance owned by the plan only if its node, intent and requester are the plan's", async () => {
    const w = new World(2);
    w.plan('p');
    // Someone who may create NodeMaintenances writes one under the step's name, with the
    // plan as its controller owner, for another node, intent and requester.
    const forged = stepObject(
      w.get('p'),
      w.get('p').spec.nodes!.map(n => ({
        name: n,
        controlPlane: false,
        phase: 'Pending' as const,
      }))[0],
      'p-worker-1',
    );
    w.nms.set('p-worker-1', {
      ...forged,
      spec: {
        ...forged.spec,
        nodeName: 'worker-2',
        intent: 'shutdown',
        requestedBy: 'mallory',
      },
    });
    await w.reconcile();
    expect(w.get('p').status?.nodes?.[0]).toMatchObject({
      name: 'worker-1',
      phase: 'Failed',
      message:
        'NodeMaintenance p-worker-1 names this plan as its owner but is for node worker-2, not worker-1, has intent shutdown, not reboot, was requested by mallory, not user:default/jane: not adopted, nothing is done on worker-1',
    });
    expect(w.creates).toEqual([]);
    expect(w.get('p').status?.phase).toBe('Failed');
  });

  it('a step NodeMaintenance deleted mid-plan fails the step', async () => {
    const w = new World(1);
    w.plan('p');
    await w.reconcile();
    w.nms.delete('p-worker-1');
    await w.reconcile();
    expect(w.get('p').status?.nodes?.[0]).toMatchObject({
      phase: 'Failed',
      message: 'its NodeMaintenance p-worker-1 is gone',
    });
  });
});

describe('a step is never lighter than a single maintenance', () => {
  it("carries the rung its node was acknowledged at; a node the plan does not name gets the intent's own rung, never hazard", async () => {
    const w = new World(1, 2);
    w.plan('p', {
      acknowledged: { 'cp-1': 'hazard', 'worker-1': 'typed-name' },
    });
    await w.reconcile();
    expect(w.nms.get('p-worker-1')?.spec.preflight).toMatchObject({
      ceremony: 'typed-name',
    });
    w.step('worker-1', 'Complete');
    await w.reconcile();
    expect(w.nms.get('p-cp-1')?.spec.preflight?.ceremony).toBe('hazard');
    w.step('cp-1', 'Complete');
    await w.reconcile();
    // cp-2 was not acknowledged at the hazard rung (a plan made with kubectl, or a
    // node that was allowed in the pre-flight): its admission holds it to typed-name.
    expect(w.nms.get('p-cp-2')?.spec.preflight?.ceremony).toBe('typed-name');
  });

  it('starts no step once its authorization ended, waits on it with why, and goes on when renewed', async () => {
    const w = new World(3);
    const at = new Date(T0 - 9 * 3_600_000).toISOString();
    const until = new Date(T0 - 3_600_000).toISOString();
    w.plan('p', { authorization: { by: 'user:default/jane', at, until } });
    await w.reconcile();
    expect(w.creates).toEqual([]);
    expect(w.get('p').status).toMatchObject({
      phase: 'Waiting',
      waiting: { on: 'authorization' },
    });
    expect(w.get('p').status?.waiting?.message).toContain(
      `the plan's authorization ended at ${until}`,
    );
    expect(w.events).toContainEqual(
      expect.stringMatching(/^Warning AuthorizationExpired: /),
    );
    // Renewed by someone who may reboot worker-1 and worker-3, not worker-2.
    w.spec('p', {
      authorization: {
        by: 'user:default/sam',
        at: new Date(T0).toISOString(),
        until: new Date(T0 + 8 * 3_600_000).toISOString(),
        excluded: ['worker-2'],
      },
    });
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);
    expect(w.get('p').status?.nodes?.[1]).toMatchObject({
      name: 'worker-2',
      phase: 'Skipped',
      message: expect.stringContaining(
        "left out when user:default/sam renewed the plan's authorization",
      ),
    });
    // The lease ends while worker-1 runs: it finishes, nothing new starts.
    w.now = T0 + 9 * 3_600_000;
    w.step('worker-1', 'Complete');
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);
    expect(w.get('p').status?.waiting?.on).toBe('authorization');
  });
});

describe('a plan status within its schema', () => {
  const long = (i: number) => `${'rack-07-chassis-'.repeat(14)}node-${i}`;

  it('a plan of 24 long node names gets a status, its message cut with "and N more"', async () => {
    const w = new World(0);
    for (let i = 1; i <= 24; i++) w.node(long(i));
    w.plan('p');
    await w.reconcile();
    const status = w.get('p').status!;
    expect(status.phase).toBe('Running');
    expect(status.nodes).toHaveLength(24);
    expect(w.events[0]).toMatch(
      /^Normal Resolved: 24 node\(s\): .* and 14 more$/,
    );
    expect(w.creates).toEqual([stepName('p', long(1))]);
  });

  it('a step refused with a long pod list does not break later status writes', async () => {
    const w = new World(3);
    w.plan('p', { maxParallel: 2, failurePolicy: { tolerate: 1 } });
    await w.reconcile();
    const pods = Array.from(
      { length: 120 },
      (_, i) => `shop/payments-7d9f8c6b5-${i}`,
    );
    w.step('worker-1', 'Refused', {
      refusal: {
        reason: `node-local data the pre-flight did not list: ${pods.join(
          ', ',
        )}`.slice(0, 4096),
      },
      message: 'refused',
    });
    await w.reconcile();
    const step = w.get('p').status!.nodes![0];
    expect(step.phase).toBe('Refused');
    expect(step.message!.length).toBeLessThanOrEqual(1024);
    expect(step.message).toMatch(/\.\.\. and \d+ more$/);
    // The plan goes on: the next step starts and is recorded.
    expect(w.steps()).toEqual({
      'worker-1': 'Refused',
      'worker-2': 'Running',
      'worker-3': 'Running',
    });
    w.step('worker-2', 'Complete');
    w.step('worker-3', 'Complete');
    await w.reconcile();
    expect(w.get('p').status).toMatchObject({
      phase: 'Complete',
      message: '2 of 3 rebooted, 1 refused',
    });
  });

  it('creates no step while the status cannot be written, and says so with a Warning Event and the metric', async () => {
    const w = new World(2);
    w.plan('p');
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);
    w.step('worker-1', 'Complete');
    // The status that would record worker-2's step is refused.
    w.failWrites = status =>
      status.nodes?.[1].phase === 'Running'
        ? 'admission webhook "quota" denied the request'
        : undefined;
    await expect(w.reconcile()).rejects.toThrow(/quota/);
    expect(w.steps()).toEqual({ 'worker-1': 'Running', 'worker-2': 'Pending' });
    expect(w.creates).toEqual(['p-worker-1']);
    expect(w.statusWriteFailures).toBe(1);
    expect(w.events.at(-1)).toMatch(
      /^Warning StatusWriteFailed: status of MaintenancePlan p not written.*quota/,
    );
    w.failWrites = undefined;
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-2']);
  });
});

/** An alert as Alertmanager lists it. */
function firing(
  alertname: string,
  labels: Record<string, string>,
  silencedBy: string[] = [],
): AlertState {
  return {
    labels: { alertname, severity: 'critical', ...labels },
    status: {
      state: silencedBy.length ? 'suppressed' : 'active',
      silencedBy,
      inhibitedBy: [],
    },
  };
}
const known = (
  alerts: AlertState[],
  rackside: string[] = [],
): AlertSnapshot => ({
  known: true,
  alerts,
  racksideSilenceIds: new Set(rackside),
});

describe('the alert gate', () => {
  it('waits while a matching alert fires, naming it, polls, and goes on when it resolves', async () => {
    const w = new World(2);
    w.alerting = {
      snapshot: known([firing('DiskFull', { node: 'worker-9' })]),
      reads: 0,
    };
    w.plan('p', { gates: { alerts: { severities: ['critical'] } } });
    const { requeueAfterMs } = await w.reconcile();
    expect(w.creates).toEqual([]);
    expect(w.get('p').status).toMatchObject({
      phase: 'Waiting',
      waiting: {
        on: 'gate',
        gate: 'alerts',
        message: 'alerts firing: DiskFull (worker-9, critical)',
      },
      conditions: [{ type: 'AlertsKnown', status: 'True' }],
    });
    expect(requeueAfterMs).toBe(5_000);
    // A warning does not match the gate's severities.
    w.alerting.snapshot = known([
      firing('DiskFull', { node: 'worker-9', severity: 'warning' }),
    ]);
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);
  });

  it("does not hold on an alert silenced only by Rackside unless ignoreSilencedByRackside is false; a person's silence never holds", async () => {
    const w = new World(1);
    const alerts = known(
      [
        firing('NodeDown', { node: 'worker-7' }, ['rs-1']),
        firing('Flaky', { node: 'worker-8' }, ['person-1']),
      ],
      ['rs-1'],
    );
    w.alerting = { snapshot: alerts, reads: 0 };
    w.plan('p', { gates: { alerts: { ignoreSilencedByRackside: false } } });
    await w.reconcile();
    expect(w.get('p').status?.waiting?.message).toBe(
      'alerts firing: NodeDown (worker-7, critical)',
    );
    w.plan('q', { gates: { alerts: {} } });
    await w.reconcile('q');
    expect(w.creates).toEqual(['q-worker-1']);
  });

  it('unknown holds: Alertmanager unreachable or not configured starts no step, waits saying why, polls, and goes on once it answers', async () => {
    const w = new World(1);
    w.alerting = {
      snapshot: {
        known: false,
        reason: 'Alertmanager unreachable: ECONNREFUSED',
      },
      reads: 0,
    };
    w.plan('p', { gates: { alerts: {} } });
    const { requeueAfterMs } = await w.reconcile();
    expect(w.creates).toEqual([]);
    expect(w.get('p').status).toMatchObject({
      phase: 'Waiting',
      waiting: {
        on: 'gate',
        gate: 'alerts',
        message: 'alert state unknown: Alertmanager unreachable: ECONNREFUSED',
      },
    });
    expect(requeueAfterMs).toBe(5_000);
    expect(w.get('p').status?.conditions).toEqual([
      expect.objectContaining({
        type: 'AlertsKnown',
        status: 'False',
        message:
          'alert state unknown: Alertmanager unreachable: ECONNREFUSED; the alert gate holds',
      }),
    ]);
    // Answering again, nothing firing: the step starts.
    w.alerting.snapshot = known([]);
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);

    // No Alertmanager configured on the operator: the same.
    const none = new World(1);
    none.plan('p', { gates: { alerts: {} } });
    await none.reconcile();
    expect(none.creates).toEqual([]);
    expect(none.get('p').status?.waiting?.message).toMatch(
      /^alert state unknown: no Alertmanager is configured/,
    );
  });

  it('unknown past the gate timeout stops the plan, starting nothing', async () => {
    const w = new World(1);
    w.alerting = {
      snapshot: { known: false, reason: 'Alertmanager unreachable: stalled' },
      reads: 0,
    };
    w.plan('p', { gates: { timeoutSeconds: 60, alerts: {} } });
    await w.reconcile();
    w.now += 61_000;
    await w.reconcile();
    await w.reconcile();
    expect(w.creates).toEqual([]);
    expect(w.get('p').status?.message).toMatch(
      /gate alerts did not hold within 60s: alert state unknown: Alertmanager unreachable: stalled/,
    );
  });

  it('whenUnknown: Proceed goes on without the alerts, and the condition says it did', async () => {
    const w = new World(1);
    w.alerting = {
      snapshot: { known: false, reason: 'Alertmanager unreachable: timeout' },
      reads: 0,
    };
    w.plan('p', { gates: { alerts: { whenUnknown: 'Proceed' } } });
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);
    expect(w.get('p').status?.conditions?.[0]).toMatchObject({
      type: 'AlertsKnown',
      status: 'False',
      message:
        'alert state unknown: Alertmanager unreachable: timeout; the gate proceeds (whenUnknown: Proceed)',
    });
  });

  it("an inhibited alert that matches holds, whatever inhibits it; a person's silence holds only with includeSilenced", async () => {
    const inhibited: AlertState = {
      labels: { alertname: 'DiskSlow', node: 'worker-9', severity: 'warning' },
      status: {
        state: 'suppressed',
        silencedBy: [],
        inhibitedBy: ['fp-critical'],
      },
    };
    const w = new World(1);
    w.alerting = {
      snapshot: known([inhibited, firing('NodeOnFire', { node: 'worker-9' })]),
      reads: 0,
    };
    w.plan('p', { gates: { alerts: { severities: ['warning'] } } });
    await w.reconcile();
    expect(w.creates).toEqual([]);
    expect(w.get('p').status?.waiting?.message).toBe(
      'alerts firing: DiskSlow (worker-9, warning)',
    );

    const s = new World(1);
    s.alerting = {
      snapshot: known([firing('Flaky', { node: 'worker-8' }, ['person-1'])]),
      reads: 0,
    };
    s.plan('q', { gates: { alerts: { includeSilenced: true } } });
    await s.reconcile('q');
    expect(s.creates).toEqual([]);
    expect(s.get('q').status?.waiting?.message).toBe(
      'alerts firing: Flaky (worker-8, critical)',
    );
  });

  it('a gate whose pattern escapes its anchors (written with kubectl) stops the plan', async () => {
    const w = new World(1);
    w.alerting = { snapshot: known([]), reads: 0 };
    w.plan('p', { gates: { alerts: {} } });
    // Past the schema, as an object written straight to the apiserver would be.
    w.spec('p', {
      gates: {
        ...w.get('p').spec.gates!,
        alerts: {
          alertnames: 'x)|(.*',
          ignoreSilencedByRackside: true,
          includeSilenced: false,
          whenUnknown: 'Hold',
        },
      },
    });
    await w.reconcile();
    expect(w.creates).toEqual([]);
    expect(w.get('p').status?.phase).toBe('Failed');
    expect(w.get('p').status?.message).toMatch(
      /gate alerts refused: alertnames "x\)\|\(\.\*": not a valid (RE2 )?regular expression/,
    );
  });

  it('a plan without the gate and no step returning never reads Alertmanager', async () => {
    const w = new World(1);
    w.alerting = { snapshot: known([]), reads: 0 };
    w.plan('p');
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);
    expect(w.alerting.reads).toBe(0);
  });
});

describe('a healthy return', () => {
  it('keeps a step Running until its node has been Ready for healthyForSeconds, waiting on healthyReturn', async () => {
    const w = new World(2);
    w.plan('p', { healthyReturn: { healthyForSeconds: 60 } });
    await w.reconcile();
    w.step('worker-1', 'Complete', {
      completedAt: new Date(w.now).toISOString(),
    });
    const { requeueAfterMs } = await w.reconcile();
    expect(w.steps()).toEqual({ 'worker-1': 'Running', 'worker-2': 'Pending' });
    expect(w.get('p').status?.waiting).toMatchObject({
      on: 'healthyReturn',
      message:
        'worker-1: healthy return: Ready since 2026-08-04T10:00:00.000Z, 60 s needed',
    });
    expect(requeueAfterMs).toBe(60_000);
    expect(w.creates).toEqual(['p-worker-1']);
    w.now += 60_000;
    await w.reconcile();
    expect(w.steps()).toMatchObject({ 'worker-1': 'Done' });
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-2']);
  });

  it("fails the step past its timeout while the node's alert keeps firing, naming it; Rackside's silence does not hide it", async () => {
    const w = new World(2);
    w.alerting = {
      snapshot: known(
        [firing('NodeDown', { instance: 'worker-1:9100' }, ['rs-1'])],
        ['rs-1'],
      ),
      reads: 0,
    };
    w.plan('p', {
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 120 },
    });
    await w.reconcile();
    w.step('worker-1', 'Complete', {
      completedAt: new Date(w.now).toISOString(),
    });
    await w.reconcile();
    // Within the return grace the alert is waited on, never failed on.
    expect(w.get('p').status?.waiting?.message).toBe(
      'worker-1: healthy return: alerts firing: NodeDown (worker-1:9100, critical)',
    );
    expect(w.steps()).toMatchObject({ 'worker-1': 'Running' });
    w.now += 31_000;
    const { requeueAfterMs } = await w.reconcile();
    expect(w.get('p').status?.waiting?.message).toBe(
      'worker-1: healthy return: alerts firing: NodeDown (worker-1:9100, critical)',
    );
    expect(requeueAfterMs).toBe(5_000);
    w.now += 90_000;
    await w.reconcile();
    expect(w.steps()).toEqual({ 'worker-1': 'Failed', 'worker-2': 'Skipped' });
    expect(w.get('p').status).toMatchObject({
      phase: 'Failed',
      message: expect.stringContaining(
        'worker-1 failed: not healthy 120 s after it came back: alerts firing: NodeDown (worker-1:9100, critical)',
      ),
    });
  });

  it('alerts that cannot be read hold the step Running, then Fail it at the timeout saying the alert state was unknown', async () => {
    const w = new World(2);
    w.alerting = { snapshot: known([]), reads: 0 };
    w.plan('p', {
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 120 },
    });
    await w.reconcile();
    w.alerting.snapshot = {
      known: false,
      reason: 'Alertmanager unreachable: the answer did not arrive in time',
    };
    w.step('worker-1', 'Complete', {
      completedAt: new Date(w.now).toISOString(),
    });
    await w.reconcile();
    expect(w.steps()).toMatchObject({ 'worker-1': 'Running' });
    expect(w.get('p').status?.waiting).toMatchObject({
      on: 'healthyReturn',
      message:
        'worker-1: healthy return: alert state unknown: Alertmanager unreachable: the answer did not arrive in time',
    });
    expect(w.creates).toEqual(['p-worker-1']);
    w.now += 121_000;
    await w.reconcile();
    expect(w.steps()).toEqual({ 'worker-1': 'Failed', 'worker-2': 'Skipped' });
    expect(w.get('p').status?.message).toContain(
      'worker-1 failed: not healthy 120 s after it came back: alert state unknown: Alertmanager unreachable',
    );
  });

  it('a node whose BMC reports Critical keeps its step Running, then Failed naming the part', async () => {
    const w = new World(2);
    w.hardware.set('worker-1', {
      rollup: 'Critical',
      parts: [{ name: 'PSU 2', health: 'Critical' }],
    });
    w.plan('p', {
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 120 },
    });
    await w.reconcile();
    w.step('worker-1', 'Complete', {
      completedAt: new Date(w.now).toISOString(),
    });
    await w.reconcile();
    expect(w.steps()).toMatchObject({ 'worker-1': 'Running' });
    expect(w.get('p').status?.waiting).toMatchObject({
      on: 'healthyReturn',
      message: 'worker-1: healthy return: the BMC reports Critical: PSU 2',
    });
    w.now += 121_000;
    await w.reconcile();
    expect(w.steps()).toEqual({ 'worker-1': 'Failed', 'worker-2': 'Skipped' });
  });

  it('a node whose BMC reading is unknown (too old, or the last read failed) keeps its step Running, then Failed saying so; a fresh reading lets it through', async () => {
    const w = new World(2);
    // Read OK three hours ago by an operator sweeping every 15 min: nobody knows now.
    w.hardware.set('worker-1', {
      rollup: 'OK',
      parts: [],
      readAt: new Date(w.now - 3 * 3600_000).toISOString(),
      sweepIntervalSeconds: 900,
    });
    w.plan('p', {
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 120 },
    });
    await w.reconcile();
    w.step('worker-1', 'Complete', {
      completedAt: new Date(w.now).toISOString(),
    });
    await w.reconcile();
    expect(w.steps()).toMatchObject({ 'worker-1': 'Running' });
    expect(w.get('p').status?.waiting).toMatchObject({
      on: 'healthyReturn',
      message:
        'worker-1: healthy return: hardware state unknown: last reading 3 h ago (the sweep reads every 15 min)',
    });
    // The last reading failed instead: still held, and the error is the reason.
    w.hardware.set('worker-1', {
      rollup: 'OK',
      parts: [],
      readAt: new Date(w.now).toISOString(),
      error: 'GET /redfish/v1/Systems/1: timeout after 60 s',
      sweepIntervalSeconds: 900,
    });
    w.now += 121_000;
    await w.reconcile();
    expect(w.steps()).toEqual({ 'worker-1': 'Failed', 'worker-2': 'Skipped' });
    expect(w.get('p').status?.message).toContain(
      'worker-1 failed: not healthy 120 s after it came back: hardware state unknown: the last reading failed: GET /redfish/v1/Systems/1: timeout after 60 s',
    );
  });

  it('a fresh reading after an unknown one lets the step be Done before its timeout', async () => {
    const w = new World(1);
    w.hardware.set('worker-1', {
      rollup: 'OK',
      parts: [],
      readAt: new Date(w.now).toISOString(),
      error: 'connect ECONNREFUSED',
      sweepIntervalSeconds: 900,
    });
    w.plan('p', {
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 600 },
    });
    await w.reconcile();
    w.step('worker-1', 'Complete', {
      completedAt: new Date(w.now).toISOString(),
    });
    await w.reconcile();
    expect(w.steps()).toEqual({ 'worker-1': 'Running' });
    w.hardware.set('worker-1', {
      rollup: 'OK',
      parts: [],
      readAt: new Date(w.now).toISOString(),
      sweepIntervalSeconds: 900,
    });
    w.now += 10_000;
    await w.reconcile();
    expect(w.steps()).toEqual({ 'worker-1': 'Done' });
  });

  it('an alert of another node does not hold the return; a NotReady node does', async () => {
    const w = new World(1);
    w.alerting = {
      snapshot: known([firing('NodeDown', { node: 'worker-10' })]),
      reads: 0,
    };
    w.plan('p');
    await w.reconcile();
    w.step('worker-1', 'Complete', {
      completedAt: new Date(w.now).toISOString(),
    });
    w.node('worker-1', {}, false);
    w.now += 31_000;
    await w.reconcile();
    expect(w.steps()).toEqual({ 'worker-1': 'Running' });
    expect(w.get('p').status?.waiting?.message).toBe(
      'worker-1: healthy return: not Ready',
    );
    w.node('worker-1');
    await w.reconcile();
    expect(w.steps()).toEqual({ 'worker-1': 'Done' });
    expect(w.get('p').status?.phase).toBe('Complete');
  });
});

describe('stepName', () => {
  it('is <plan>-<node>, shortened with a hash past 253 characters', () => {
    expect(stepName('p', 'worker-1')).toBe('p-worker-1');
    const long = stepName('p'.repeat(200), 'n'.repeat(100));
    expect(long.length).toBeLessThanOrEqual(253);
    expect(long).not.toBe(stepName('p'.repeat(200), `${'n'.repeat(99)}m`));
  });
});

describe('a plan held for approval (docs/approvals.md)', () => {
  const HOUR = 3600_000;

  /** spec.approval as the backend holds a plan: required, nobody decided yet. */
  function held(w: World, expiresInMs = HOUR) {
    return {
      required: true,
      rule: 'big-plans',
      approvers: ['group:default/platform-oncall'],
      expiresAt: new Date(w.now + expiresInMs).toISOString(),
      requestedRung: 'typed-name' as const,
    };
  }

  /** The decision as the backend writes it on approve. */
  function approve(
    w: World,
    approvedRung: 'typed-name' | 'hazard' | 'preflight' = 'typed-name',
  ) {
    const approval = w.get('p').spec.approval!;
    w.spec('p', {
      approval: {
        ...approval,
        approvedBy: 'user:default/bob',
        approvedAt: new Date(w.now).toISOString(),
        approvedRung,
      },
    });
  }

  it('starts no step while awaiting: AwaitingApproval with who and until when, one Event, looked at again at the expiry; a restart keeps waiting', async () => {
    const w = new World(2);
    const approval = held(w);
    w.plan('p', { approval });
    const { requeueAfterMs } = await w.reconcile();
    expect(w.creates).toEqual([]);
    expect(w.get('p').status).toMatchObject({
      phase: 'AwaitingApproval',
      counts: { total: 2, pending: 2, running: 0 },
    });
    expect(w.get('p').status?.message).toBe(
      `awaiting approval from group:default/platform-oncall (rule big-plans) until ${approval.expiresAt}; no step starts before`,
    );
    expect(requeueAfterMs).toBe(HOUR + 1000);
    expect(
      w.events.filter(e => e.startsWith('Normal AwaitingApproval')),
    ).toHaveLength(1);
    // Each reconcile is a new reconciler (a restart): still held, nothing written again.
    const writes = w.writes;
    w.now += 10 * 60_000;
    await w.reconcile();
    expect(w.writes).toBe(writes);
    expect(w.creates).toEqual([]);
    expect(
      w.events.filter(e => e.startsWith('Normal AwaitingApproval')),
    ).toHaveLength(1);
  });

  it('approved: an Approved Event naming the approver, then steps start; a step carries no approval and never a rung above the approved one', async () => {
    const w = new World(1, 1);
    w.plan('p', {
      approval: held(w),
      // The requester acknowledged cp-1 at the hazard rung; the approver saw typed-name.
      acknowledged: { 'cp-1': 'hazard', 'worker-1': 'typed-name' },
    });
    await w.reconcile();
    expect(w.creates).toEqual([]);
    approve(w, 'typed-name');
    await w.reconcile();
    expect(w.events).toContainEqual(
      'Normal Approved: approved by user:default/bob at the typed-name rung',
    );
    expect(w.creates).toEqual(['p-worker-1']);
    expect(w.get('p').status?.phase).toBe('Running');
    const step = w.nms.get('p-worker-1')!;
    expect(step.spec.approval).toBeUndefined();
    expect(step.spec.preflight?.ceremony).toBe('typed-name');
    w.step('worker-1', 'Complete');
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1', 'p-cp-1']);
    // Held to the approved rung: a hazard at its start or its send is refused.
    expect(w.nms.get('p-cp-1')!.spec.preflight?.ceremony).toBe('typed-name');
  });

  it('rejected: Failed with "approval rejected by X: reason", no step started, the rest Skipped', async () => {
    const w = new World(2);
    w.plan('p', { approval: held(w) });
    await w.reconcile();
    const approval = w.get('p').spec.approval!;
    w.spec('p', {
      approval: {
        ...approval,
        rejectedBy: 'user:default/bob',
        rejectedAt: new Date(w.now).toISOString(),
        rejectReason: 'not this week',
      },
    });
    await w.reconcile();
    expect(w.creates).toEqual([]);
    expect(w.get('p').status).toMatchObject({
      phase: 'Failed',
      message: 'approval rejected by user:default/bob: not this week',
      counts: { skipped: 2 },
    });
  });

  it('expiry edge: held a millisecond before expiresAt, Failed "approval expired" at it; expired already at creation: Failed at once', async () => {
    const w = new World(2);
    const approval = held(w);
    w.plan('p', { approval });
    w.now = Date.parse(approval.expiresAt) - 1;
    await w.reconcile();
    expect(w.get('p').status?.phase).toBe('AwaitingApproval');
    w.now += 1;
    await w.reconcile();
    expect(w.creates).toEqual([]);
    expect(w.get('p').status?.phase).toBe('Failed');
    expect(w.get('p').status?.message).toMatch(/^approval expired at /);

    const late = new World(1);
    late.plan('p', { approval: held(late, -1) });
    await late.reconcile();
    expect(late.creates).toEqual([]);
    expect(late.get('p').status?.phase).toBe('Failed');
    expect(late.get('p').status?.message).toMatch(/^approval expired/);
  });

  it('a renewal that replaced the approval with an undecided one: nothing new starts, the running step goes on; approved again, the next starts', async () => {
    const w = new World(3);
    w.plan('p', { approval: held(w) });
    approve(w);
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);
    // The backend's renewal raised a rung: a new approval, nobody decided.
    w.spec('p', { approval: held(w, 2 * HOUR) });
    await w.reconcile();
    expect(w.get('p').status?.phase).toBe('AwaitingApproval');
    expect(w.get('p').status?.message).toMatch(
      /nothing new starts, running: worker-1/,
    );
    w.step('worker-1', 'Complete');
    await w.reconcile();
    expect(w.steps()).toMatchObject({ 'worker-1': 'Done' });
    expect(w.creates).toEqual(['p-worker-1']);
    expect(w.get('p').status?.phase).toBe('AwaitingApproval');
    approve(w);
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-2']);
  });

  it('a cancel while awaiting ends the plan Cancelled, no step started', async () => {
    const w = new World(2);
    w.plan('p', { approval: held(w) });
    await w.reconcile();
    w.spec('p', { cancel: { by: 'user:default/ops', reason: 'not needed' } });
    await w.reconcile();
    expect(w.creates).toEqual([]);
    expect(w.get('p').status?.phase).toBe('Cancelled');
  });
});

describe('a rolling Talos upgrade (intent upgrade, docs/plans.md)', () => {
  const IMAGE = 'factory.talos.dev/installer/abc:v1.12.0';
  /** A world whose nodes run v1.11.3, but for those named, which run the target. */
  function upgradeWorld(workers: number, atTarget: string[] = []) {
    const w = new World(workers);
    for (const [name, node] of w.nodes) {
      const version = atTarget.includes(name) ? 'v1.12.0' : 'v1.11.3';
      w.nodes.set(name, {
        ...node,
        status: { ...node.status, nodeInfo: { osImage: `Talos (${version})` } },
      } as NodeView);
    }
    return w;
  }
  /** The record of an upgrade Talos accepted and the node came back from. */
  const upgraded = (w: World, cameBackOn = 'v1.12.0') => {
    const at = new Date(w.now).toISOString();
    return {
      history: (
        [
          'Requested',
          'Cordoned',
          'Draining',
          'Drained',
          'Rebooting',
          'Returning',
        ] as const
      ).map(phase => ({ phase, at })),
      rebootSentAt: at,
      power: { upgrade: { recordedAt: at, sentAt: at } },
      upgrade: {
        image: IMAGE,
        toVersion: 'v1.12.0',
        fromVersion: 'v1.11.3',
        sentAt: at,
        cameBackOn,
      },
    };
  };

  it('skips the nodes already at the target up front, copies the upgrade into each step and counts the nodes at the target', async () => {
    const w = upgradeWorld(4, ['worker-2']);
    w.plan('p', {
      intent: 'upgrade',
      upgrade: { image: IMAGE },
      maxParallel: 2,
    });
    await w.reconcile();
    const status = w.get('p').status!;
    expect(status.nodes?.[1]).toMatchObject({
      name: 'worker-2',
      phase: 'Skipped',
      message: 'already at v1.12.0',
      talosVersion: { before: 'v1.12.0', after: 'v1.12.0' },
    });
    expect(status.nodes?.[0].talosVersion).toEqual({ before: 'v1.11.3' });
    // The skipped node takes no place among the maxParallel steps.
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-3']);
    expect(w.nms.get('p-worker-1')?.spec).toMatchObject({
      nodeName: 'worker-1',
      intent: 'upgrade',
      upgrade: { image: IMAGE },
    });
    expect(status.upgrade).toEqual({
      target: 'v1.12.0',
      atTarget: 1,
      total: 4,
      summary: '1 of 4 at v1.12.0',
    });
    expect(w.events).toContainEqual(
      expect.stringMatching(
        /Resolved: 4 node\(s\): .*; 1 already at the target, skipped/,
      ),
    );

    w.step('worker-1', 'Complete', upgraded(w));
    await w.reconcile();
    expect(w.get('p').status?.nodes?.[0]).toMatchObject({
      phase: 'Done',
      message: expect.stringMatching(
        /^upgraded from v1\.11\.3 to v1\.12\.0 and returned; healthy: /,
      ),
      talosVersion: { before: 'v1.11.3', after: 'v1.12.0' },
    });
    expect(w.get('p').status?.upgrade?.summary).toBe('2 of 4 at v1.12.0');
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-3', 'p-worker-4']);

    w.step('worker-3', 'Complete', upgraded(w));
    w.step('worker-4', 'Complete', upgraded(w));
    await w.reconcile();
    expect(w.get('p').status).toMatchObject({
      phase: 'Complete',
      message: '3 of 4 upgraded, 1 skipped (already at v1.12.0)',
      upgrade: { atTarget: 4, total: 4, summary: '4 of 4 at v1.12.0' },
    });
  });

  it('a node that reached the target after the plan resolved it is Skipped, not a refusal that stops the plan', async () => {
    const w = upgradeWorld(2);
    w.plan('p', { intent: 'upgrade', upgrade: { image: IMAGE } });
    await w.reconcile();
    expect(w.creates).toEqual(['p-worker-1']);
    // Someone upgraded worker-1 by hand: its maintenance refuses, nothing sent.
    const node = w.nodes.get('worker-1')!;
    w.nodes.set('worker-1', {
      ...node,
      status: { ...node.status, nodeInfo: { osImage: 'Talos (v1.12.0)' } },
    } as NodeView);
    w.step('worker-1', 'Refused', {
      refusal: {
        reason: 'upgrade of worker-1 was not sent: already at v1.12.0.',
      },
    });
    await w.reconcile();
    expect(w.get('p').status?.nodes?.[0]).toMatchObject({
      phase: 'Skipped',
      message: 'already at v1.12.0',
      talosVersion: { before: 'v1.11.3', after: 'v1.12.0' },
    });
    expect(w.get('p').status?.phase).toBe('Running');
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-2']);
  });

  it('any other refusal of an upgrade step stays a refusal: a node not at the target is never counted as skipped', async () => {
    const w = upgradeWorld(2);
    w.plan('p', { intent: 'upgrade', upgrade: { image: IMAGE } });
    await w.reconcile();
    // The refusal's words say "already at", but the Node does not: the Node decides.
    w.step('worker-1', 'Refused', {
      refusal: {
        reason: 'upgrade of worker-1 was not sent: already at v1.12.0.',
      },
    });
    await w.reconcile();
    expect(w.get('p').status?.nodes?.[0].phase).toBe('Refused');
    expect(w.get('p').status?.phase).toBe('Failed');
    expect(w.get('p').status?.upgrade?.summary).toBe('0 of 2 at v1.12.0');
  });

  it('a step back on the old version (a rollback) is Failed with both versions and is not counted at the target', async () => {
    const w = upgradeWorld(2);
    w.plan('p', { intent: 'upgrade', upgrade: { image: IMAGE } });
    await w.reconcile();
    w.step('worker-1', 'Failed', {
      ...upgraded(w, 'v1.11.3'),
      message:
        'worker-1 came back on v1.11.3, not v1.12.0 (Talos rolled the upgrade back). The node is left cordoned.',
    });
    await w.reconcile();
    expect(w.get('p').status?.nodes?.[0]).toMatchObject({
      phase: 'Failed',
      message: expect.stringMatching(/Talos rolled the upgrade back/),
      talosVersion: { before: 'v1.11.3', after: 'v1.11.3' },
    });
    expect(w.get('p').status?.upgrade?.summary).toBe('0 of 2 at v1.12.0');
    expect(w.creates).toEqual(['p-worker-1']);
  });

  it.each([
    ['another image', { image: 'factory.talos.dev/installer/evil:v1.12.0' }],
    ['force the plan did not ask', { image: IMAGE, force: true }],
    ['no upgrade at all', undefined],
  ])(
    'does not adopt a step written under its name with %s',
    async (_what, upgrade) => {
      const w = upgradeWorld(1);
      w.plan('p', { intent: 'upgrade', upgrade: { image: IMAGE } });
      const forged = stepObject(
        w.get('p'),
        { name: 'worker-1', controlPlane: false, phase: 'Pending' },
        'p-worker-1',
      );
      const { upgrade: _own, ...spec } = forged.spec;
      w.nms.set('p-worker-1', {
        ...forged,
        spec: { ...spec, ...(upgrade ? { upgrade } : {}) },
      });
      await w.reconcile();
      expect(w.get('p').status?.nodes?.[0]).toMatchObject({
        phase: 'Failed',
        message: expect.stringMatching(
          /^NodeMaintenance p-worker-1 names this plan as its owner but (asks the upgrade .*, not the plan's|lacks the plan's upgrade): not adopted, nothing is done on worker-1$/,
        ),
      });
      expect(w.creates).toEqual([]);
    },
  );

  it('adopts a step that carries exactly the plan’s upgrade, whatever its key order', async () => {
    const w = upgradeWorld(1);
    w.plan('p', {
      intent: 'upgrade',
      upgrade: { image: IMAGE, stage: true },
    });
    const own = stepObject(
      w.get('p'),
      { name: 'worker-1', controlPlane: false, phase: 'Pending' },
      'p-worker-1',
    );
    w.nms.set('p-worker-1', {
      ...own,
      spec: { ...own.spec, upgrade: { stage: true, image: IMAGE } },
    });
    await w.reconcile();
    expect(w.get('p').status?.nodes?.[0]).toMatchObject({
      phase: 'Running',
      maintenance: 'p-worker-1',
    });
    expect(w.creates).toEqual([]);
  });
});

describe('a rolling firmware update (intent firmware)', () => {
  it("copies the plan's firmware update into each step, skips nothing up front and says updated", async () => {
    const firmware = {
      imageURI: 'https://firmware.plant.example/bios-2.5.0.bin',
      applyTime: 'OnReset' as const,
    };
    const w = new World(2);
    w.plan('p', { intent: 'firmware', firmware, maxParallel: 2 });
    await w.reconcile();
    expect(w.steps()).toEqual({ 'worker-1': 'Running', 'worker-2': 'Running' });
    expect(w.nms.get('p-worker-1')?.spec).toMatchObject({
      intent: 'firmware',
      firmware,
    });
    expect(w.nms.get('p-worker-1')?.spec.upgrade).toBeUndefined();
    expect(w.get('p').status?.upgrade).toBeUndefined();
    const at = new Date(w.now).toISOString();
    const updated = {
      history: (
        ['Requested', 'Cordoned', 'Draining', 'Drained', 'Returning'] as const
      ).map(phase => ({ phase, at })),
      power: { firmware: { recordedAt: at, sentAt: at } },
    };
    w.step('worker-1', 'Complete', updated);
    w.step('worker-2', 'Complete', updated);
    await w.reconcile();
    expect(w.get('p').status?.nodes?.[0].message).toMatch(
      /^firmware updated and returned/,
    );
    expect(w.get('p').status).toMatchObject({
      phase: 'Complete',
      message: '2 of 2 updated',
    });
  });
});

describe('a rolling firmware update to a version', () => {
  const BIOS = '/redfish/v1/UpdateService/FirmwareInventory/BIOS';
  const firmware = {
    imageURI: 'https://firmware.plant.example/bios-2.5.0.bin',
    targets: [BIOS],
    version: '2.5.0',
  };
  const reading = (version: string) => [
    { id: BIOS, name: 'Rack BIOS', version },
    {
      id: '/redfish/v1/UpdateService/FirmwareInventory/BMC',
      name: 'Rack BMC',
      version: '1.12.0',
    },
  ];

  it('skips up front the nodes whose BMC already reports the version, and counts N of M at it', async () => {
    const w = new World(3);
    w.firmware.set('worker-1', reading('2.4.1'));
    w.firmware.set('worker-2', reading('2.5.0'));
    // worker-3: never read: not known to be there, so it is updated.
    w.plan('p', { intent: 'firmware', firmware, maxParallel: 3 });
    await w.reconcile();
    expect(w.steps()).toEqual({
      'worker-1': 'Running',
      'worker-2': 'Skipped',
      'worker-3': 'Running',
    });
    expect(w.get('p').status?.nodes?.[1]).toMatchObject({
      message: 'already at 2.5.0',
      firmwareVersion: { before: '2.5.0', after: '2.5.0' },
    });
    expect(w.get('p').status?.upgrade).toMatchObject({
      target: '2.5.0',
      atTarget: 1,
      total: 3,
      summary: '1 of 3 at 2.5.0',
    });
    expect(w.creates).toEqual(['p-worker-1', 'p-worker-3']);
    const at = new Date(w.now).toISOString();
    const updated = {
      history: (
        ['Requested', 'Cordoned', 'Draining', 'Drained', 'Returning'] as const
      ).map(phase => ({ phase, at })),
      power: { firmware: { recordedAt: at, sentAt: at } },
      firmware: {
        before: [{ id: BIOS, name: 'Rack BIOS', version: '2.4.1' }],
        after: [{ id: BIOS, name: 'Rack BIOS', version: '2.5.0' }],
      },
    };
    w.step('worker-1', 'Complete', updated);
    // worker-3 was found at the version by its maintenance, right before sending.
    w.step('worker-3', 'Refused', {
      refusal: {
        reason:
          "firmware update of worker-3 refused: already at 2.5.0 (the BMC's FirmwareInventory reports it for the targeted components); nothing was sent.",
      },
    });
    await w.reconcile();
    expect(w.get('p').status?.nodes?.[0]).toMatchObject({
      phase: 'Done',
      firmwareVersion: { before: '2.4.1', after: '2.5.0' },
    });
    expect(w.get('p').status?.nodes?.[2]).toMatchObject({
      phase: 'Skipped',
      message: 'already at 2.5.0',
    });
    expect(w.get('p').status?.upgrade?.summary).toBe('3 of 3 at 2.5.0');
    expect(w.get('p').status?.phase).toBe('Complete');
  });

  it('another refusal of a firmware step stays a refusal, and a plan without a version skips nothing', async () => {
    const w = new World(2);
    w.firmware.set('worker-1', reading('2.5.0'));
    const { version: _v, ...noVersion } = firmware;
    w.plan('p', { intent: 'firmware', firmware: noVersion, maxParallel: 2 });
    await w.reconcile();
    expect(w.steps()).toEqual({ 'worker-1': 'Running', 'worker-2': 'Running' });
    expect(w.get('p').status?.upgrade).toBeUndefined();

    const v = new World(1);
    v.plan('p', { intent: 'firmware', firmware, maxParallel: 1 });
    await v.reconcile();
    v.step('worker-1', 'Refused', {
      refusal: {
        reason:
          'firmware update of worker-1 was not sent: the checksum of https://firmware.plant.example/bios-2.5.0.bin is sha256:aa, not sha256:bb (already at 2.5.0 (fake)).',
      },
    });
    await v.reconcile();
    expect(v.get('p').status?.nodes?.[0].phase).toBe('Refused');
  });
});
