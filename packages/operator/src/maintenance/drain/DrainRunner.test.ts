import type {
  DrainContext,
  NodeMaintenance,
  NodeMaintenanceDrainProgress,
  PodLike,
  VirtualMachineInstanceLike,
} from '@rackside/plugin-servers-common';
import {
  DrainRunner,
  type DrainPorts,
  type EvictionOutcome,
  type NodePodWatch,
} from './DrainRunner';

function pod(
  name: string,
  opts: {
    ns?: string;
    owner?: string;
    app?: string;
    annotations?: Record<string, string>;
    claim?: string;
  } = {},
): PodLike {
  return {
    metadata: {
      name,
      namespace: opts.ns ?? 'shop',
      labels: { app: opts.app ?? name },
      annotations: opts.annotations,
      ownerReferences: [
        { kind: opts.owner ?? 'ReplicaSet', name: 'rs', controller: true },
      ],
    },
    spec: opts.claim
      ? {
          volumes: [
            { name: 'data', persistentVolumeClaim: { claimName: opts.claim } },
          ],
        }
      : undefined,
    status: { phase: 'Running' },
  };
}

/** One node's pods in memory; evictions mark a pod terminating, `gone()` removes it. */
class FakeNode {
  pods = new Map<string, PodLike>();
  listeners = new Set<() => void>();
  evictions: string[] = [];
  /** Evicted pods vanish before the eviction call returns (a fast kubelet). */
  instant = false;
  /** Pods whose eviction answers 429 while listed here. */
  guarded = new Set<string>();
  failNext = new Map<string, string>();
  progress: NodeMaintenanceDrainProgress[] = [];
  woken: string[] = [];
  watches = 0;
  stopped = 0;
  storageReads = 0;
  /** The node's storage, as the storage port reads it. */
  storage: Omit<DrainContext, 'nodeName'> = { claims: [], volumes: [] };
  /** While set, every storage read fails with it. */
  storageError: string | undefined;
  /** The VMI port: absent (no such port), or what it answers (undefined: no API). */
  vmis:
    | { answer: VirtualMachineInstanceLike[] | undefined; error?: string }
    | undefined;
  logs: string[] = [];

  add(p: PodLike) {
    this.pods.set(`${p.metadata!.namespace}/${p.metadata!.name}`, p);
    this.emit();
  }

  gone(key: string) {
    this.pods.delete(key);
    this.emit();
  }

  emit() {
    for (const l of [...this.listeners]) l();
  }

  ports(): DrainPorts {
    return {
      watchPods: (): NodePodWatch => {
        this.watches++;
        return {
          synced: Promise.resolve(),
          pods: () => [...this.pods.values()],
          onChange: l => {
            this.listeners.add(l);
            return () => this.listeners.delete(l);
          },
          stop: async () => {
            this.stopped++;
          },
        };
      },
      evict: async (namespace, name): Promise<EvictionOutcome> => {
        const key = `${namespace}/${name}`;
        this.evictions.push(key);
        const failure = this.failNext.get(key);
        if (failure) {
          this.failNext.delete(key);
          throw new Error(failure);
        }
        if (this.guarded.has(key)) {
          return {
            outcome: 'blocked',
            message:
              "Cannot evict pod as it would violate the pod's disruption budget.",
            causes: [
              'The disruption budget payments needs 2 healthy pods and has 2 currently',
            ],
          };
        }
        const p = this.pods.get(key);
        if (!p) return { outcome: 'gone' };
        if (this.instant) {
          this.gone(key);
          return { outcome: 'evicted' };
        }
        this.pods.set(key, {
          ...p,
          metadata: {
            ...p.metadata,
            deletionTimestamp: '2026-12-01T00:00:00Z',
          },
        });
        this.emit();
        return { outcome: 'evicted' };
      },
      budgets: async () => [],
      storage: async () => {
        this.storageReads++;
        if (this.storageError) throw new Error(this.storageError);
        return this.storage;
      },
      ...(this.vmis
        ? {
            virtualMachines: async () => {
              if (this.vmis?.error) throw new Error(this.vmis.error);
              return this.vmis?.answer;
            },
          }
        : {}),
      log: message => this.logs.push(message),
      writeProgress: async (_name, progress) => {
        this.progress.push(progress);
      },
      wake: name => this.woken.push(name),
    };
  }
}

function maintenance(
  drain: NodeMaintenance['spec']['drain'] = undefined,
  status?: NodeMaintenance['status'],
): NodeMaintenance {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'NodeMaintenance',
    metadata: { name: 'm1' },
    spec: { nodeName: 'worker-1', intent: 'drain', reason: 'disk swap', drain },
    status,
  };
}

async function until(check: () => boolean, ms = 3000) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise(r => setTimeout(r, 5));
  }
}

const fast = { initialBackoffMs: 10, maxBackoffMs: 40, progressIntervalMs: 0 };

describe('DrainRunner', () => {
  it('evicts every evictable pod once, leaves DaemonSet pods, and is drained when they are gone', async () => {
    const n = new FakeNode();
    n.add(pod('web-1'));
    n.add(pod('web-2'));
    n.add(pod('exporter', { ns: 'monitoring', owner: 'DaemonSet' }));
    const runner = new DrainRunner(n.ports(), fast);
    const nm = maintenance();
    expect(runner.ensure(nm).state).toBe('running');
    await until(() => n.evictions.length === 2);
    expect(n.evictions.sort()).toEqual(['shop/web-1', 'shop/web-2']);
    // Evicted but still terminating: still running, progress says 0 of 2 gone.
    expect(runner.ensure(nm)).toMatchObject({
      state: 'running',
      progress: { total: 2, evicted: 0, pending: 2 },
    });
    n.gone('shop/web-1');
    await until(() => n.progress.some(p => p.evicted === 1));
    n.gone('shop/web-2');
    await until(() => runner.ensure(nm).state === 'drained');
    expect(runner.ensure(nm).progress).toMatchObject({
      total: 2,
      evicted: 2,
      pending: 0,
      pendingPods: [],
    });
    expect(n.woken).toEqual(['m1']);
    expect(n.evictions).toHaveLength(2);
    await until(() => n.stopped === 1);
  });

  it('retries a 429 with backoff, shows the budget, and finishes once it allows', async () => {
    const n = new FakeNode();
    n.add(pod('payments-1', { app: 'payments' }));
    n.guarded.add('shop/payments-1');
    const runner = new DrainRunner(n.ports(), fast);
    const nm = maintenance();
    runner.ensure(nm);
    await until(() => n.evictions.length >= 3);
    const blocked = runner.ensure(nm);
    expect(blocked.state).toBe('running');
    expect(blocked.progress.blockedBy).toEqual([
      {
        pod: 'shop/payments-1',
        pdb: 'payments',
        message: expect.stringContaining('disruption budget'),
      },
    ]);
    expect(n.progress.at(-1)?.blockedBy?.[0]?.pdb).toBe('payments');
    n.guarded.delete('shop/payments-1');
    await until(() => runner.ensure(nm).progress.blockedBy?.length === 0);
    n.gone('shop/payments-1');
    await until(() => runner.ensure(nm).state === 'drained');
  });

  it('shows other eviction errors as lastError and retries', async () => {
    const n = new FakeNode();
    n.add(pod('web-1'));
    n.failNext.set('shop/web-1', 'etcdserver: request timed out');
    const runner = new DrainRunner(n.ports(), fast);
    const nm = maintenance();
    runner.ensure(nm);
    await until(() => n.evictions.length === 2);
    expect(
      n.progress.some(p => /request timed out/.test(p.lastError ?? '')),
    ).toBe(true);
    n.gone('shop/web-1');
    await until(() => runner.ensure(nm).state === 'drained');
  });

  it('fails at the timeout with the pending pods listed', async () => {
    const n = new FakeNode();
    n.add(pod('payments-1', { app: 'payments' }));
    n.guarded.add('shop/payments-1');
    const runner = new DrainRunner(n.ports(), fast);
    const nm = maintenance(
      {
        timeoutSeconds: 1,
        deleteEmptyDirData: false,
        force: false,
        allowNodeLocalData: false,
      },
      undefined,
    );
    const started = Date.now();
    runner.ensure(nm);
    await until(() => runner.ensure(nm).state === 'failed', 4000);
    const outcome = runner.ensure(nm);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(outcome.state === 'failed' && outcome.reason).toMatch(
      /timed out after 1s .*shop\/payments-1.*left cordoned/,
    );
    expect(outcome.progress.pendingPods).toEqual(['shop/payments-1']);
  });

  it('fails when a pod it may not evict shows up mid-drain', async () => {
    const n = new FakeNode();
    n.add(pod('payments-1'));
    n.guarded.add('shop/payments-1');
    const runner = new DrainRunner(n.ports(), fast);
    const nm = maintenance();
    runner.ensure(nm);
    await until(() => n.evictions.length >= 1);
    n.add({
      metadata: { name: 'debug-shell', namespace: 'ops' },
      status: { phase: 'Running' },
    });
    await until(() => runner.ensure(nm).state === 'failed');
    const outcome = runner.ensure(nm);
    expect(outcome.state === 'failed' && outcome.reason).toContain(
      'ops/debug-shell',
    );
  });

  it('resumes from recorded progress: counts the earlier evictions and waits for the recorded pending pods', async () => {
    const n = new FakeNode();
    n.add(pod('web-3'));
    const runner = new DrainRunner(n.ports(), fast);
    const nm = maintenance(undefined, {
      phase: 'Draining',
      drain: {
        startedAt: '2026-12-01T00:00:00Z',
        total: 3,
        evicted: 2,
        pending: 1,
        pendingPods: ['shop/web-3'],
      },
    });
    expect(runner.ensure(nm).progress).toMatchObject({
      startedAt: '2026-12-01T00:00:00Z',
      total: 3,
      evicted: 2,
    });
    await until(() => n.evictions.length === 1);
    n.gone('shop/web-3');
    await until(() => runner.ensure(nm).state === 'drained');
    expect(runner.ensure(nm).progress).toMatchObject({
      total: 3,
      evicted: 3,
      pending: 0,
    });
  });

  it('cancel stops the drain: no more evictions, no wake-up, the watch closed', async () => {
    const n = new FakeNode();
    n.add(pod('payments-1'));
    n.guarded.add('shop/payments-1');
    const runner = new DrainRunner(n.ports(), fast);
    runner.ensure(maintenance());
    await until(() => n.evictions.length >= 1);
    runner.cancel('m1');
    await until(() => n.stopped === 1);
    const count = n.evictions.length;
    await new Promise(r => setTimeout(r, 100));
    expect(n.evictions.length).toBe(count);
    expect(n.woken).toEqual([]);
    expect(runner.running()).toEqual([]);
  });

  it('is drained when pods vanish while their evictions are still in flight (no lost wake-up)', async () => {
    const n = new FakeNode();
    n.instant = true;
    n.add(pod('web-1'));
    n.add(pod('web-2'));
    const runner = new DrainRunner(n.ports(), {
      ...fast,
      progressIntervalMs: 10_000,
    });
    runner.ensure(maintenance());
    await until(() => runner.ensure(maintenance()).state === 'drained', 1000);
    expect(n.evictions.sort()).toEqual(['shop/web-1', 'shop/web-2']);
  });

  it('runs many drains side by side', async () => {
    const nodes = Array.from({ length: 20 }, () => new FakeNode());
    const runners = nodes.map(n => {
      n.add(pod('web-1'));
      return new DrainRunner(n.ports(), fast);
    });
    runners.forEach(r => r.ensure(maintenance()));
    await until(() => nodes.every(n => n.evictions.length === 1));
    nodes.forEach(n => n.gone('shop/web-1'));
    await until(() =>
      runners.every(r => r.ensure(maintenance()).state === 'drained'),
    );
    expect(nodes.every(n => n.evictions.length === 1)).toBe(true);
  });

  describe('drain rules and node-local data (docs/drain.md)', () => {
    const order = (n: number) => ({ 'rackside.dev/drain-order': String(n) });

    it('evicts order groups in ascending order, each only once the one before is gone', async () => {
      const n = new FakeNode();
      n.add(pod('db', { annotations: order(10) }));
      n.add(pod('api', { annotations: order(5) }));
      n.add(pod('web-1'));
      n.add(pod('web-2'));
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance();
      runner.ensure(nm);
      await until(() => n.evictions.length === 2);
      expect(n.evictions.sort()).toEqual(['shop/web-1', 'shop/web-2']);
      await until(() => n.progress.some(p => p.order === 0));
      n.gone('shop/web-1');
      await until(() => n.progress.some(p => p.evicted === 1));
      // One pod of group 0 is still terminating: group 5 waits.
      expect(n.evictions).toHaveLength(2);
      n.gone('shop/web-2');
      await until(() => n.evictions.length === 3);
      expect(n.evictions[2]).toBe('shop/api');
      await until(() => runner.ensure(nm).progress.order === 5);
      n.gone('shop/api');
      await until(() => n.evictions.length === 4);
      expect(n.evictions[3]).toBe('shop/db');
      n.gone('shop/db');
      await until(() => runner.ensure(nm).state === 'drained');
      expect(n.evictions).toHaveLength(4);
    });

    it('leaves skip pods in place and is drained with them still there', async () => {
      const n = new FakeNode();
      n.add(pod('keeper', { annotations: { 'rackside.dev/drain': 'skip' } }));
      n.add(pod('web-1'));
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance();
      runner.ensure(nm);
      await until(() => n.evictions.length === 1);
      n.gone('shop/web-1');
      await until(() => runner.ensure(nm).state === 'drained');
      expect(n.evictions).toEqual(['shop/web-1']);
      expect(n.pods.has('shop/keeper')).toBe(true);
      expect(runner.ensure(nm).progress).toMatchObject({
        total: 1,
        evicted: 1,
      });
    });

    it('waits for wait-completed pods without evicting them, drained once they finish', async () => {
      const n = new FakeNode();
      const job = pod('batch', {
        owner: 'Job',
        annotations: { 'rackside.dev/drain': 'wait-completed' },
      });
      n.add(job);
      n.add(pod('web-1'));
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance();
      runner.ensure(nm);
      await until(() => n.evictions.length === 1);
      n.gone('shop/web-1');
      await until(() => n.progress.some(p => p.evicted === 1));
      expect(runner.ensure(nm)).toMatchObject({
        state: 'running',
        progress: {
          pending: 1,
          pendingPods: ['shop/batch'],
          waitingFor: ['shop/batch'],
        },
      });
      n.add({ ...job, status: { phase: 'Succeeded' } });
      await until(() => runner.ensure(nm).state === 'drained');
      expect(n.evictions).toEqual(['shop/web-1']);
    });

    it('names a wait-completed pod still running at the timeout', async () => {
      const n = new FakeNode();
      n.add(
        pod('batch', {
          owner: 'Job',
          annotations: { 'rackside.dev/drain': 'wait-completed' },
        }),
      );
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance({
        timeoutSeconds: 1,
        deleteEmptyDirData: false,
        force: false,
        allowNodeLocalData: false,
      });
      runner.ensure(nm);
      await until(() => runner.ensure(nm).state === 'failed', 4000);
      const outcome = runner.ensure(nm);
      expect(outcome.state === 'failed' && outcome.reason).toMatch(
        /timed out after 1s .*shop\/batch.*left cordoned/,
      );
      expect(n.evictions).toEqual([]);
    });

    const localStorage = {
      nodeLabels: { 'kubernetes.io/hostname': 'worker-1' },
      claims: [
        {
          metadata: { name: 'data-db-0', namespace: 'shop' },
          spec: { volumeName: 'pv-1' },
        },
      ],
      volumes: [
        { metadata: { name: 'pv-1' }, spec: { local: { path: '/mnt' } } },
      ],
    };

    it('fails before any eviction when a pod has node-local data', async () => {
      const n = new FakeNode();
      n.storage = localStorage;
      n.add(pod('web-1'));
      n.add(pod('db-0', { owner: 'StatefulSet', claim: 'data-db-0' }));
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance();
      runner.ensure(nm);
      await until(() => runner.ensure(nm).state === 'failed');
      const outcome = runner.ensure(nm);
      expect(outcome.state === 'failed' && outcome.reason).toMatch(
        /shop\/db-0: its data is on this node .*local PersistentVolume pv-1.*cannot run elsewhere until worker-1 is back.*allowNodeLocalData/,
      );
      expect(n.evictions).toEqual([]);
    });

    it('evicts it with allowNodeLocalData', async () => {
      const n = new FakeNode();
      n.storage = localStorage;
      n.instant = true;
      n.add(pod('db-0', { owner: 'StatefulSet', claim: 'data-db-0' }));
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance({
        allowNodeLocalData: true,
        deleteEmptyDirData: false,
        force: false,
      });
      runner.ensure(nm);
      await until(() => runner.ensure(nm).state === 'drained');
      expect(n.evictions).toEqual(['shop/db-0']);
    });

    it('reads the storage again when a pod with a claim it has not seen arrives', async () => {
      const n = new FakeNode();
      n.add(pod('web-1'));
      n.guarded.add('shop/web-1');
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance();
      runner.ensure(nm);
      await until(() => n.evictions.length >= 1);
      const reads = n.storageReads;
      n.storage = localStorage;
      n.add(pod('db-0', { owner: 'StatefulSet', claim: 'data-db-0' }));
      await until(() => runner.ensure(nm).state === 'failed');
      expect(n.storageReads).toBeGreaterThan(reads);
      expect(n.evictions).not.toContain('shop/db-0');
    });
  });
  describe('when the storage cannot be read (docs/drain.md)', () => {
    const timeout = {
      timeoutSeconds: 1,
      deleteEmptyDirData: false,
      force: false,
      allowNodeLocalData: false,
    };

    it('evicts nothing, and at the timeout fails naming the pods still there and why', async () => {
      const n = new FakeNode();
      n.storageError = 'persistentvolumes is forbidden';
      n.add(pod('web-1'));
      n.add(
        pod('batch', {
          owner: 'Job',
          annotations: { 'rackside.dev/drain': 'wait-completed' },
        }),
      );
      n.add(pod('exporter', { ns: 'monitoring', owner: 'DaemonSet' }));
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance(timeout);
      const started = Date.now();
      runner.ensure(nm);
      await until(() => runner.ensure(nm).state === 'failed', 4000);
      const outcome = runner.ensure(nm);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(outcome.state === 'failed' && outcome.reason).toBe(
        "the drain timed out after 1s with 2 pod(s) still on worker-1: shop/batch, shop/web-1. Evictions waited for the node's volumes, which could not be read (reading the node's volumes: persistentvolumes is forbidden). The node is left cordoned.",
      );
      expect(outcome.progress).toMatchObject({
        total: 2,
        evicted: 0,
        pending: 2,
        pendingPods: ['shop/batch', 'shop/web-1'],
      });
      expect(n.evictions).toEqual([]);
      // Retried with backoff meanwhile, not once and given up.
      expect(n.storageReads).toBeGreaterThan(2);
      expect(n.woken).toEqual(['m1']);
    });

    it('names the pods it had evicted and still waits for when a later read fails', async () => {
      const n = new FakeNode();
      n.add(pod('web-1'));
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance(timeout);
      runner.ensure(nm);
      await until(() => n.evictions.length === 1);
      // web-1 is terminating; a pod with a claim the drain has not read arrives.
      n.storageError = 'etcdserver: request timed out';
      n.add(pod('db-0', { owner: 'StatefulSet', claim: 'data-db-0' }));
      await until(() => runner.ensure(nm).state === 'failed', 4000);
      const outcome = runner.ensure(nm);
      expect(outcome.state === 'failed' && outcome.reason).toMatch(
        /^the drain timed out after 1s with 2 pod\(s\) still on worker-1: shop\/db-0, shop\/web-1\. Evictions waited for the node's volumes, which could not be read \(reading the node's volumes: etcdserver: request timed out\)\. The node is left cordoned\.$/,
      );
      expect(n.evictions).toEqual(['shop/web-1']);
    });

    it('goes on once a read succeeds again', async () => {
      const n = new FakeNode();
      n.instant = true;
      n.storageError = 'connection reset';
      n.add(pod('web-1'));
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance();
      runner.ensure(nm);
      await until(() => n.storageReads >= 2);
      expect(n.evictions).toEqual([]);
      expect(runner.ensure(nm).progress.lastError).toMatch(
        /reading the node's volumes: connection reset/,
      );
      n.storageError = undefined;
      await until(() => runner.ensure(nm).state === 'drained');
      expect(n.evictions).toEqual(['shop/web-1']);
    });
  });

  it('keeps a timeout message within what status.message holds, ending with the verdict', async () => {
    const n = new FakeNode();
    const long = 'a'.repeat(60);
    for (let i = 0; i < 80; i++) {
      const key = `${long}-${i}`;
      n.add(pod(key, { ns: long }));
      n.guarded.add(`${long}/${key}`);
    }
    const runner = new DrainRunner(n.ports(), fast);
    const nm = maintenance({
      timeoutSeconds: 1,
      deleteEmptyDirData: false,
      force: false,
      allowNodeLocalData: false,
    });
    runner.ensure(nm);
    await until(() => runner.ensure(nm).state === 'failed', 4000);
    const outcome = runner.ensure(nm);
    const reason = outcome.state === 'failed' ? outcome.reason : '';
    expect(reason.length).toBeLessThanOrEqual(4096);
    expect(reason).toMatch(
      /^the drain timed out after 1s with 80 pod\(s\) still on worker-1: /,
    );
    expect(reason).toMatch(/\.\.\. The node is left cordoned\.$/);
  });

  describe('KubeVirt VirtualMachineInstances (docs/drain.md)', () => {
    function vmi(
      name: string,
      strategy: string,
      migratable: boolean,
    ): VirtualMachineInstanceLike {
      return {
        metadata: { name, namespace: 'vms' },
        spec: { evictionStrategy: strategy },
        status: {
          nodeName: 'worker-1',
          phase: 'Running',
          conditions: [
            { type: 'LiveMigratable', status: migratable ? 'True' : 'False' },
          ],
        },
      };
    }

    it('records what the drain does to each VMI of the node in its progress', async () => {
      const n = new FakeNode();
      n.instant = true;
      n.vmis = {
        answer: [
          vmi('web', 'LiveMigrate', true),
          vmi('build', 'LiveMigrateIfPossible', false),
          {
            ...vmi('elsewhere', 'LiveMigrate', true),
            status: { nodeName: 'worker-2' },
          },
        ],
      };
      n.add(
        pod('virt-launcher-web-x7k2p', { owner: 'VirtualMachineInstance' }),
      );
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance();
      runner.ensure(nm);
      await until(() => runner.ensure(nm).state === 'drained');
      expect(runner.ensure(nm).progress.virtualMachines).toEqual([
        { vmi: 'vms/build', action: 'shutdown' },
        { vmi: 'vms/web', action: 'migrate' },
      ]);
      // Their pods are evicted like any other; KubeVirt decides what that means.
      expect(n.evictions).toEqual(['shop/virt-launcher-web-x7k2p']);
    });

    it('has no VMI list where the cluster has no such API, and drains all the same', async () => {
      const n = new FakeNode();
      n.instant = true;
      n.vmis = { answer: undefined };
      n.add(pod('web-1'));
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance();
      runner.ensure(nm);
      await until(() => runner.ensure(nm).state === 'drained');
      expect(runner.ensure(nm).progress.virtualMachines).toBeUndefined();
    });

    it('drains when the VMIs cannot be read, and logs it', async () => {
      const n = new FakeNode();
      n.instant = true;
      n.vmis = { answer: [], error: 'virtualmachineinstances is forbidden' };
      n.add(pod('web-1'));
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance();
      runner.ensure(nm);
      await until(() => runner.ensure(nm).state === 'drained');
      expect(n.logs.join('\n')).toMatch(
        /reading the node's VirtualMachineInstances: virtualmachineinstances is forbidden/,
      );
    });

    it('names a VMI that keeps its pod from being evicted at the timeout', async () => {
      const n = new FakeNode();
      n.vmis = { answer: [vmi('gpu', 'LiveMigrate', false)] };
      n.add(
        pod('virt-launcher-gpu-q9z8w', { owner: 'VirtualMachineInstance' }),
      );
      // KubeVirt answers the eviction of a non-migratable LiveMigrate VMI's pod with a 429.
      n.guarded.add('shop/virt-launcher-gpu-q9z8w');
      const runner = new DrainRunner(n.ports(), fast);
      const nm = maintenance({
        timeoutSeconds: 1,
        deleteEmptyDirData: false,
        force: false,
        allowNodeLocalData: false,
      });
      runner.ensure(nm);
      await until(() => runner.ensure(nm).state === 'failed', 4000);
      const outcome = runner.ensure(nm);
      expect(outcome.state === 'failed' && outcome.reason).toMatch(
        /timed out after 1s with 1 pod\(s\) still on worker-1: shop\/virt-launcher-gpu-q9z8w\. VirtualMachineInstances that keep their pods from being evicted: vms\/gpu \(its eviction strategy is LiveMigrate but it cannot be live-migrated.*\)\. The node is left cordoned\.$/,
      );
      expect(outcome.progress.virtualMachines).toEqual([
        { vmi: 'vms/gpu', action: 'blocks' },
      ]);
    });
  });
});
