import {
  budgetOfRefusal,
  budgetsAffecting,
  planDrain,
  selectorMatches,
  type PodLike,
} from './drain';

function pod(
  name: string,
  opts: {
    ns?: string;
    owner?: string;
    labels?: Record<string, string>;
    emptyDir?: boolean;
    phase?: string;
    mirror?: boolean;
    deleting?: boolean;
  } = {},
): PodLike {
  const [kind, ownerName] = (opts.owner ?? '').split('/');
  return {
    metadata: {
      name,
      namespace: opts.ns ?? 'shop',
      labels: opts.labels,
      annotations: opts.mirror
        ? { 'kubernetes.io/config.mirror': 'abc' }
        : undefined,
      ownerReferences: opts.owner
        ? [{ kind, name: ownerName, controller: true }]
        : undefined,
      deletionTimestamp: opts.deleting ? '2026-12-01T00:00:00Z' : undefined,
    },
    spec: {
      terminationGracePeriodSeconds: 30,
      volumes: opts.emptyDir ? [{ name: 'scratch', emptyDir: {} }] : [],
    },
    status: { phase: opts.phase ?? 'Running' },
  };
}

describe('planDrain', () => {
  const pods = [
    pod('web-1', { owner: 'ReplicaSet/web-abc', labels: { app: 'web' } }),
    pod('exporter-x', { ns: 'monitoring', owner: 'DaemonSet/node-exporter' }),
    pod('kube-apiserver-cp-1', { ns: 'kube-system', mirror: true }),
    pod('job-done', { owner: 'Job/backup', phase: 'Succeeded' }),
    pod('job-failed', { owner: 'Job/backup', phase: 'Failed' }),
    pod('cache-1', { owner: 'ReplicaSet/cache-1', emptyDir: true }),
    pod('debug-shell', { ns: 'ops' }),
    pod('scratch-shell', { ns: 'ops', emptyDir: true }),
  ];

  it('evicts managed pods and sets aside DaemonSet, mirror and finished pods', () => {
    const plan = planDrain(pods, {});
    expect(plan.evict.map(p => p.name)).toEqual(['web-1']);
    expect(plan.evict[0].controller).toBe('ReplicaSet/web-abc');
    expect(plan.daemonSet.map(p => p.name)).toEqual(['exporter-x']);
    expect(plan.mirror.map(p => p.name)).toEqual(['kube-apiserver-cp-1']);
    expect(plan.finished.map(p => p.name)).toEqual(['job-done', 'job-failed']);
  });

  it('refuses emptyDir and unmanaged pods, naming every cause', () => {
    const plan = planDrain(pods, {});
    expect(
      plan.refused.map(r => [`${r.pod.namespace}/${r.pod.name}`, r.causes]),
    ).toEqual([
      ['ops/debug-shell', ['unmanaged']],
      ['ops/scratch-shell', ['unmanaged', 'emptyDir']],
      ['shop/cache-1', ['emptyDir']],
    ]);
    expect(plan.refused[0].message).toMatch(/force/);
    expect(plan.refused[2].message).toMatch(/deleteEmptyDirData/);
  });

  it('evicts them when the options allow each cause', () => {
    expect(
      planDrain(pods, { force: true }).refused.map(r => r.pod.name),
    ).toEqual(['scratch-shell', 'cache-1']);
    expect(
      planDrain(pods, { deleteEmptyDirData: true }).refused.map(
        r => r.pod.name,
      ),
    ).toEqual(['debug-shell', 'scratch-shell']);
    const all = planDrain(pods, { force: true, deleteEmptyDirData: true });
    expect(all.refused).toEqual([]);
    expect(all.evict.map(p => p.name).sort()).toEqual(
      ['cache-1', 'debug-shell', 'scratch-shell', 'web-1'].sort(),
    );
  });

  it('only waits for a pod already being deleted, whatever it is', () => {
    const plan = planDrain([pod('leaving', { ns: 'ops', deleting: true })]);
    expect(plan.refused).toEqual([]);
    expect(plan.evict).toEqual([
      expect.objectContaining({ name: 'leaving', terminating: true }),
    ]);
  });
});

describe('selectorMatches', () => {
  it('applies matchLabels and every operator', () => {
    const labels = { app: 'web', tier: 'front' };
    expect(selectorMatches({ matchLabels: { app: 'web' } }, labels)).toBe(true);
    expect(selectorMatches({ matchLabels: { app: 'db' } }, labels)).toBe(false);
    expect(
      selectorMatches(
        {
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['front', 'back'] },
            { key: 'app', operator: 'NotIn', values: ['db'] },
            { key: 'app', operator: 'Exists' },
            { key: 'canary', operator: 'DoesNotExist' },
          ],
        },
        labels,
      ),
    ).toBe(true);
    expect(
      selectorMatches(
        {
          matchExpressions: [
            { key: 'tier', operator: 'NotIn', values: ['front'] },
          ],
        },
        labels,
      ),
    ).toBe(false);
    expect(
      selectorMatches(
        { matchExpressions: [{ key: 'x', operator: 'Gt' }] },
        labels,
      ),
    ).toBe(false);
  });

  it('selects everything with an empty selector and nothing with none', () => {
    expect(selectorMatches({}, { app: 'web' })).toBe(true);
    expect(selectorMatches(null, { app: 'web' })).toBe(false);
    expect(selectorMatches(undefined, { app: 'web' })).toBe(false);
  });
});

describe('budgetsAffecting', () => {
  const pods = [
    pod('web-1', { owner: 'ReplicaSet/w', labels: { app: 'web' } }),
    pod('pay-1', { owner: 'ReplicaSet/p', labels: { app: 'payments' } }),
    pod('other', { ns: 'ops', owner: 'ReplicaSet/o', labels: { app: 'web' } }),
  ];
  const evict = planDrain(pods).evict;
  const budgets = [
    {
      metadata: { name: 'web', namespace: 'shop' },
      spec: { selector: { matchLabels: { app: 'web' } } },
      status: { disruptionsAllowed: 1 },
    },
    {
      metadata: { name: 'payments', namespace: 'shop' },
      spec: { selector: { matchLabels: { app: 'payments' } } },
      status: { disruptionsAllowed: 0 },
    },
    {
      metadata: { name: 'unrelated', namespace: 'shop' },
      spec: { selector: { matchLabels: { app: 'none' } } },
      status: { disruptionsAllowed: 0 },
    },
  ];

  it('lists the budgets of pods to evict, per namespace, with whether they block now', () => {
    expect(budgetsAffecting(pods, evict, budgets)).toEqual([
      {
        namespace: 'shop',
        name: 'payments',
        disruptionsAllowed: 0,
        pods: ['shop/pay-1'],
        blocksNow: true,
      },
      {
        namespace: 'shop',
        name: 'web',
        disruptionsAllowed: 1,
        pods: ['shop/web-1'],
        blocksNow: false,
      },
    ]);
  });

  it('names the budget of a 429 from its cause, else by selector', () => {
    expect(
      budgetOfRefusal(
        [
          'The disruption budget payments needs 2 healthy pods and has 2 currently',
        ],
        pods[1],
        [],
      ),
    ).toBe('payments');
    expect(budgetOfRefusal([], pods[1], budgets)).toBe('payments');
    expect(budgetOfRefusal([], pods[2], budgets)).toBeUndefined();
  });
});
