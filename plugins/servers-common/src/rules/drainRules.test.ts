/*
 * The drain classification of docs/drain.md: node-local data, StatefulSets, grace
 * periods and the drain rules on pods. Each case is written from the side that would
 * break it: a PV that names the node only through its affinity, a label where the rule
 * is expected as an annotation, a hostile rule value.
 */
import {
  budgetsAffecting,
  DRAIN_ORDER_KEY,
  DRAIN_RULE_KEY,
  estimateDrain,
  planDrain,
  statefulSetsOf,
  type DrainContext,
  type PersistentVolumeClaimLike,
  type PersistentVolumeLike,
  type PodLike,
} from './drain';

interface PodOpts {
  ns?: string;
  owner?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  grace?: number;
  claims?: string[];
  hostPath?: string;
  ephemeral?: string;
  phase?: string;
  deleting?: boolean;
}

function pod(name: string, opts: PodOpts = {}): PodLike {
  const [kind, ownerName] = (opts.owner ?? 'ReplicaSet/rs').split('/');
  return {
    metadata: {
      name,
      namespace: opts.ns ?? 'shop',
      labels: opts.labels,
      annotations: opts.annotations,
      ownerReferences: [{ kind, name: ownerName, controller: true }],
      deletionTimestamp: opts.deleting ? '2026-12-01T00:00:00Z' : undefined,
    },
    spec: {
      nodeName: 'worker-1',
      terminationGracePeriodSeconds: opts.grace,
      volumes: [
        ...(opts.claims ?? []).map(c => ({
          name: c,
          persistentVolumeClaim: { claimName: c },
        })),
        ...(opts.hostPath
          ? [{ name: 'host', hostPath: { path: opts.hostPath } }]
          : []),
        ...(opts.ephemeral ? [{ name: opts.ephemeral, ephemeral: {} }] : []),
      ],
    },
    status: { phase: opts.phase ?? 'Running' },
  };
}

function claim(
  name: string,
  volumeName: string | undefined,
  ns = 'shop',
): PersistentVolumeClaimLike {
  return { metadata: { name, namespace: ns }, spec: { volumeName } };
}

function hostnameAffinity(host: string) {
  return {
    required: {
      nodeSelectorTerms: [
        {
          matchExpressions: [
            { key: 'kubernetes.io/hostname', operator: 'In', values: [host] },
          ],
        },
      ],
    },
  };
}

const volumes: PersistentVolumeLike[] = [
  {
    metadata: { name: 'pv-local' },
    spec: {
      local: { path: '/mnt/disk1' },
      nodeAffinity: hostnameAffinity('w1'),
    },
  },
  // Not `local`, but pinned to this node by affinity (e.g. a CSI driver for host disks).
  {
    metadata: { name: 'pv-pinned' },
    spec: { nodeAffinity: hostnameAffinity('w1') },
  },
  // Pinned by matchFields on the node's name.
  {
    metadata: { name: 'pv-fields' },
    spec: {
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            {
              matchFields: [
                { key: 'metadata.name', operator: 'In', values: ['worker-1'] },
              ],
            },
          ],
        },
      },
    },
  },
  // A zonal disk: its affinity holds on this node but does not name it.
  {
    metadata: { name: 'pv-zonal' },
    spec: {
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            {
              matchExpressions: [
                {
                  key: 'topology.kubernetes.io/zone',
                  operator: 'In',
                  values: ['a'],
                },
              ],
            },
          ],
        },
      },
    },
  },
  // Local, but on another node (the pod cannot be here; it must not be blamed on this one).
  {
    metadata: { name: 'pv-other' },
    spec: { local: { path: '/mnt' }, nodeAffinity: hostnameAffinity('w2') },
  },
  {
    metadata: { name: 'pv-nfs' },
    spec: { nfs: { server: 'nas', path: '/x' } },
  },
];

const context: DrainContext = {
  nodeName: 'worker-1',
  nodeLabels: {
    'kubernetes.io/hostname': 'w1',
    'topology.kubernetes.io/zone': 'a',
  },
  claims: [
    claim('data-db-0', 'pv-local'),
    claim('pinned', 'pv-pinned'),
    claim('fields', 'pv-fields'),
    claim('zonal', 'pv-zonal'),
    claim('other', 'pv-other'),
    claim('nfs', 'pv-nfs'),
    claim('unbound', undefined),
    claim('scratch-work', 'pv-local'),
    // Same name in another namespace: must not be confused with shop/nfs.
    claim('nfs', 'pv-local', 'elsewhere'),
  ],
  volumes,
};

describe('node-local data', () => {
  it('refuses pods whose claim is bound to a local PV or a PV whose affinity names the node, and hostPath pods', () => {
    const plan = planDrain(
      [
        pod('db-0', { owner: 'StatefulSet/db', claims: ['data-db-0'] }),
        pod('pinned', { claims: ['pinned'] }),
        pod('fields', { claims: ['fields'] }),
        pod('logs', { hostPath: '/var/log' }),
        pod('scratch', { ephemeral: 'work', owner: 'Job/scratch-job' }),
      ],
      {},
      context,
    );
    expect(plan.evict).toEqual([]);
    expect(
      plan.refused.map(r => [r.pod.name, r.causes, r.pod.nodeLocalData]),
    ).toEqual([
      [
        'db-0',
        ['nodeLocalData'],
        [
          'PersistentVolumeClaim data-db-0 is bound to local PersistentVolume pv-local',
        ],
      ],
      [
        'fields',
        ['nodeLocalData'],
        [
          'PersistentVolumeClaim fields is bound to PersistentVolume pv-fields, whose node affinity names worker-1',
        ],
      ],
      ['logs', ['nodeLocalData'], ['hostPath volume host (/var/log)']],
      [
        'pinned',
        ['nodeLocalData'],
        [
          'PersistentVolumeClaim pinned is bound to PersistentVolume pv-pinned, whose node affinity names worker-1',
        ],
      ],
      [
        'scratch',
        ['nodeLocalData'],
        [
          'PersistentVolumeClaim scratch-work is bound to local PersistentVolume pv-local',
        ],
      ],
    ]);
    const db = plan.refused[0];
    expect(db.message).toMatch(/^shop\/db-0: /);
    expect(db.message).toMatch(/cannot run elsewhere until worker-1 is back/);
    expect(db.message).toMatch(/allowNodeLocalData/);
  });

  it('does not count zonal, network, unbound, missing or other-node volumes as node-local', () => {
    const plan = planDrain(
      [
        pod('zonal', { claims: ['zonal'] }),
        pod('nfs', { claims: ['nfs'] }),
        pod('unbound', { claims: ['unbound'] }),
        pod('missing', { claims: ['no-such-claim'] }),
        pod('other', { claims: ['other'] }),
      ],
      {},
      context,
    );
    expect(plan.refused).toEqual([]);
    expect(plan.nodeLocal).toEqual([]);
    expect(plan.evict.map(p => p.name)).toEqual([
      'missing',
      'nfs',
      'other',
      'unbound',
      'zonal',
    ]);
  });

  it('evicts them with allowNodeLocalData and still lists them as node-local', () => {
    const plan = planDrain(
      [
        pod('db-0', { owner: 'StatefulSet/db', claims: ['data-db-0'] }),
        pod('logs', { hostPath: '/var/log' }),
      ],
      { allowNodeLocalData: true },
      context,
    );
    expect(plan.refused).toEqual([]);
    expect(plan.evict.map(p => p.name)).toEqual(['db-0', 'logs']);
    expect(plan.nodeLocal.map(p => p.name)).toEqual(['db-0', 'logs']);
  });

  it('names every cause of a pod refused for several', () => {
    const p = pod('both', { hostPath: '/data' });
    p.metadata!.ownerReferences = [];
    p.spec!.volumes!.push({ name: 'tmp', emptyDir: {} });
    const plan = planDrain([p], {}, context);
    expect(plan.refused[0].causes).toEqual([
      'unmanaged',
      'emptyDir',
      'nodeLocalData',
    ]);
    expect(
      planDrain([p], { force: true, deleteEmptyDirData: true }, context)
        .refused[0].causes,
    ).toEqual(['nodeLocalData']);
  });

  it('still sees hostPath without a storage context', () => {
    expect(
      planDrain([pod('logs', { hostPath: '/var/log' })]).refused[0].causes,
    ).toEqual(['nodeLocalData']);
  });
});

describe('StatefulSets and their budgets', () => {
  it('marks StatefulSet pods and names the budgets that cover them', () => {
    const pods = [
      pod('db-0', { owner: 'StatefulSet/db', labels: { app: 'db' } }),
      pod('db-1', { owner: 'StatefulSet/db', labels: { app: 'db' } }),
      pod('web-1', { labels: { app: 'web' } }),
    ];
    const plan = planDrain(pods, {}, context);
    expect(plan.evict.map(p => [p.name, p.statefulSet])).toEqual([
      ['db-0', 'db'],
      ['db-1', 'db'],
      ['web-1', undefined],
    ]);
    const budgets = budgetsAffecting(pods, plan.evict, [
      {
        metadata: { name: 'db-pdb', namespace: 'shop' },
        spec: { selector: { matchLabels: { app: 'db' } } },
        status: { disruptionsAllowed: 0 },
      },
    ]);
    expect(statefulSetsOf(plan, budgets)).toEqual([
      {
        namespace: 'shop',
        name: 'db',
        pods: ['shop/db-0', 'shop/db-1'],
        budgets: [{ name: 'db-pdb', disruptionsAllowed: 0, blocksNow: true }],
      },
    ]);
  });
});

describe('drain rules on pods', () => {
  it('leaves skip pods in place like DaemonSet pods, annotation or label', () => {
    const plan = planDrain(
      [
        pod('a', { annotations: { [DRAIN_RULE_KEY]: 'skip' } }),
        pod('b', { labels: { [DRAIN_RULE_KEY]: 'skip' } }),
        // Skipped pods are not evicted, so their node-local data is not at risk of a move.
        pod('c', {
          annotations: { [DRAIN_RULE_KEY]: 'skip' },
          hostPath: '/x',
        }),
      ],
      {},
      context,
    );
    expect(plan.skipped.map(p => p.name)).toEqual(['a', 'b', 'c']);
    expect(plan.evict).toEqual([]);
    expect(plan.refused).toEqual([]);
  });

  it('waits for wait-completed pods without evicting them; finished ones count as gone', () => {
    const plan = planDrain(
      [
        pod('batch', {
          owner: 'Job/batch',
          annotations: { [DRAIN_RULE_KEY]: 'wait-completed' },
          grace: 600,
        }),
        pod('done', {
          owner: 'Job/batch',
          labels: { [DRAIN_RULE_KEY]: 'wait-completed' },
          phase: 'Succeeded',
        }),
      ],
      {},
      context,
    );
    expect(plan.waitCompleted.map(p => p.name)).toEqual(['batch']);
    expect(plan.finished.map(p => p.name)).toEqual(['done']);
    expect(plan.evict).toEqual([]);
  });

  it('the annotation wins over a label that says otherwise', () => {
    const plan = planDrain(
      [
        pod('a', {
          annotations: { [DRAIN_RULE_KEY]: 'wait-completed' },
          labels: { [DRAIN_RULE_KEY]: 'skip' },
        }),
        pod('b', {
          annotations: { [DRAIN_ORDER_KEY]: '2' },
          labels: { [DRAIN_ORDER_KEY]: '9' },
        }),
      ],
      {},
      context,
    );
    expect(plan.waitCompleted.map(p => p.name)).toEqual(['a']);
    expect(plan.evict[0].order).toBe(2);
  });

  it('groups evictions by drain-order, ascending, unordered pods at 0', () => {
    const plan = planDrain(
      [
        pod('db', { annotations: { [DRAIN_ORDER_KEY]: '10' } }),
        pod('web', {}),
        pod('proxy', { labels: { [DRAIN_ORDER_KEY]: '-1' } }),
        pod('cache', { annotations: { [DRAIN_ORDER_KEY]: '10' } }),
        pod('api', { annotations: { [DRAIN_ORDER_KEY]: '5' } }),
      ],
      {},
      context,
    );
    expect(plan.orderGroups).toEqual([
      { order: -1, pods: ['shop/proxy'] },
      { order: 0, pods: ['shop/web'] },
      { order: 5, pods: ['shop/api'] },
      { order: 10, pods: ['shop/cache', 'shop/db'] },
    ]);
  });

  it('refuses a pod with a rule it does not understand, whatever the options', () => {
    const pods = [
      pod('typo', { annotations: { [DRAIN_RULE_KEY]: 'skipp' } }),
      pod('float', { annotations: { [DRAIN_ORDER_KEY]: '1.5' } }),
      pod('huge', { annotations: { [DRAIN_ORDER_KEY]: '99999999999' } }),
      pod('script', { annotations: { [DRAIN_ORDER_KEY]: '<b>1</b>' } }),
    ];
    const plan = planDrain(
      pods,
      { force: true, deleteEmptyDirData: true, allowNodeLocalData: true },
      context,
    );
    expect(plan.evict).toEqual([]);
    expect(plan.refused.map(r => [r.pod.name, r.causes])).toEqual([
      ['float', ['invalidRule']],
      ['huge', ['invalidRule']],
      ['script', ['invalidRule']],
      ['typo', ['invalidRule']],
    ]);
    expect(plan.refused[3].message).toContain(
      `${DRAIN_RULE_KEY} is "skipp"; it must be skip or wait-completed`,
    );
  });
});

describe('estimateDrain', () => {
  it('adds up the slowest pod of each order group and names the slowest pod', () => {
    const plan = planDrain(
      [
        pod('a', { grace: 10 }),
        pod('b', { grace: 120 }),
        pod('c', { grace: 40, annotations: { [DRAIN_ORDER_KEY]: '1' } }),
        // Unset: the Kubernetes default of 30 s.
        pod('d', { annotations: { [DRAIN_ORDER_KEY]: '1' } }),
        pod('job', {
          grace: 3600,
          annotations: { [DRAIN_RULE_KEY]: 'wait-completed' },
        }),
        pod('kept', { grace: 9999, annotations: { [DRAIN_RULE_KEY]: 'skip' } }),
      ],
      {},
      context,
    );
    expect(estimateDrain(plan, {})).toEqual({
      seconds: 160,
      slowest: { pod: 'shop/b', seconds: 120 },
      groups: [
        { order: 0, seconds: 120 },
        { order: 1, seconds: 40 },
      ],
      waitsForCompletion: ['shop/job'],
    });
  });

  it('uses the drain gracePeriodSeconds override when given', () => {
    const plan = planDrain([pod('b', { grace: 120 })], {}, context);
    expect(estimateDrain(plan, { gracePeriodSeconds: 5 })).toMatchObject({
      seconds: 5,
      slowest: { pod: 'shop/b', seconds: 5 },
    });
  });

  it('is zero with nothing to evict', () => {
    expect(estimateDrain(planDrain([]), {})).toEqual({
      seconds: 0,
      groups: [],
      waitsForCompletion: [],
    });
  });
});
