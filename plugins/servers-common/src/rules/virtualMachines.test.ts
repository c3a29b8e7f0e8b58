/*
 * KubeVirt VirtualMachineInstances in a drain (docs/drain.md): every eviction strategy
 * with and without migratability, the node filter, finished VMIs, and the plan that has
 * no VMI section where the API does not exist.
 */
import { planDrain, type PodLike } from './drain';
import {
  classifyVirtualMachines,
  type VirtualMachineInstanceLike,
} from './virtualMachines';

function vmi(
  name: string,
  opts: {
    strategy?: string;
    migratable?: 'True' | 'False' | 'absent';
    node?: string;
    phase?: string;
    message?: string;
    ns?: string;
  } = {},
): VirtualMachineInstanceLike {
  const conditions =
    opts.migratable === 'absent'
      ? [{ type: 'Ready', status: 'True' }]
      : [
          { type: 'Ready', status: 'True' },
          {
            type: 'LiveMigratable',
            status: opts.migratable ?? 'True',
            reason: opts.migratable === 'False' ? 'DisksNotLiveMigratable' : '',
            message: opts.message,
          },
        ];
  return {
    metadata: { name, namespace: opts.ns ?? 'lab' },
    spec: opts.strategy ? { evictionStrategy: opts.strategy } : {},
    status: {
      nodeName: opts.node ?? 'worker-5',
      phase: opts.phase ?? 'Running',
      conditions,
    },
  };
}

const actionsOf = (vmis: VirtualMachineInstanceLike[]) =>
  classifyVirtualMachines(vmis, 'worker-5').map(v => [v.name, v.action]);

describe('classifyVirtualMachines', () => {
  it('live-migrates LiveMigrate and LiveMigrateIfPossible VMIs that are migratable', () => {
    const [a, b] = classifyVirtualMachines(
      [
        vmi('a', { strategy: 'LiveMigrate' }),
        vmi('b', { strategy: 'LiveMigrateIfPossible' }),
      ],
      'worker-5',
    );
    expect(a).toEqual({
      namespace: 'lab',
      name: 'a',
      evictionStrategy: 'LiveMigrate',
      migratable: true,
      action: 'migrate',
      reason:
        'its eviction strategy is LiveMigrate and it is migratable: it is live-migrated off worker-5',
    });
    expect(b).toMatchObject({ action: 'migrate', migratable: true });
    expect(b.reason).toMatch(/LiveMigrateIfPossible and it is migratable/);
  });

  it('shuts down a LiveMigrateIfPossible VMI that cannot migrate, saying why', () => {
    const [v] = classifyVirtualMachines(
      [
        vmi('build', {
          strategy: 'LiveMigrateIfPossible',
          migratable: 'False',
          message: 'PVC build-disk is not shared',
        }),
      ],
      'worker-5',
    );
    expect(v).toMatchObject({ action: 'shutdown', migratable: false });
    expect(v.reason).toBe(
      'its eviction strategy is LiveMigrateIfPossible but it cannot be live-migrated: PVC build-disk is not shared: it is shut down',
    );
  });

  it('says a LiveMigrate VMI that cannot migrate blocks the drain, with the way out', () => {
    const [v] = classifyVirtualMachines(
      [vmi('gpu', { strategy: 'LiveMigrate', migratable: 'False' })],
      'worker-5',
    );
    expect(v).toMatchObject({ action: 'blocks', migratable: false });
    // Without a message, the condition's reason is shown.
    expect(v.reason).toMatch(
      /LiveMigrate but it cannot be live-migrated: DisksNotLiveMigratable; KubeVirt refuses to evict it, so the drain waits for it until its timeout/,
    );
    expect(v.reason).toMatch(/LiveMigrateIfPossible or None/);
  });

  it('counts a VMI without a LiveMigratable condition as not migratable', () => {
    expect(
      actionsOf([
        vmi('lm', { strategy: 'LiveMigrate', migratable: 'absent' }),
        vmi('lmip', {
          strategy: 'LiveMigrateIfPossible',
          migratable: 'absent',
        }),
      ]),
    ).toEqual([
      ['lm', 'blocks'],
      ['lmip', 'shutdown'],
    ]);
    expect(
      classifyVirtualMachines(
        [vmi('lm', { strategy: 'LiveMigrate', migratable: 'absent' })],
        'worker-5',
      )[0].reason,
    ).toMatch(/KubeVirt has not found it migratable/);
  });

  it('shuts down None and strategy-less VMIs even when they could migrate', () => {
    const [none, unset] = classifyVirtualMachines(
      [vmi('none', { strategy: 'None' }), vmi('unset')],
      'worker-5',
    );
    expect(none).toMatchObject({
      action: 'shutdown',
      evictionStrategy: 'None',
      migratable: true,
      reason: 'its eviction strategy is None: it is shut down',
    });
    expect(unset.evictionStrategy).toBeUndefined();
    expect(unset.action).toBe('shutdown');
    expect(unset.reason).toMatch(
      /sets no eviction strategy: the cluster's default applies/,
    );
  });

  it('says External and unknown strategies block the drain', () => {
    const [external, odd] = classifyVirtualMachines(
      [
        vmi('external', { strategy: 'External' }),
        vmi('odd', { strategy: 'Teleport' }),
      ],
      'worker-5',
    );
    expect(external.action).toBe('blocks');
    expect(external.reason).toMatch(/External: KubeVirt refuses to evict it/);
    expect(odd.action).toBe('blocks');
    expect(odd.reason).toMatch(/"Teleport" is not one this drain knows/);
  });

  it('keeps only running VMIs of this node, sorted by namespace and name', () => {
    expect(
      classifyVirtualMachines(
        [
          vmi('z', { ns: 'a' }),
          vmi('elsewhere', { node: 'worker-4' }),
          vmi('done', { phase: 'Succeeded' }),
          vmi('crashed', { phase: 'Failed' }),
          vmi('b', { ns: 'lab' }),
          vmi('a', { ns: 'lab' }),
          { metadata: { name: 'unscheduled', namespace: 'lab' }, status: {} },
        ],
        'worker-5',
      ).map(v => `${v.namespace}/${v.name}`),
    ).toEqual(['a/z', 'lab/a', 'lab/b']);
  });
});

describe('planDrain with VirtualMachineInstances', () => {
  const pods: PodLike[] = [
    {
      metadata: {
        name: 'web-1',
        namespace: 'shop',
        ownerReferences: [
          { kind: 'ReplicaSet', name: 'web', controller: true },
        ],
      },
      spec: { nodeName: 'worker-5' },
      status: { phase: 'Running' },
    },
  ];

  it('has no VMI section where the cluster has no VirtualMachineInstance API', () => {
    expect(planDrain(pods).virtualMachines).toBeUndefined();
    expect(
      planDrain(pods, {}, { nodeName: 'worker-5' }).virtualMachines,
    ).toBeUndefined();
  });

  it('classifies the VMIs of the drained node, and an empty list where there are none', () => {
    const plan = planDrain(
      pods,
      {},
      {
        nodeName: 'worker-5',
        virtualMachines: [
          vmi('web', { strategy: 'LiveMigrate' }),
          vmi('other', { strategy: 'LiveMigrate', node: 'worker-1' }),
        ],
      },
    );
    expect(plan.virtualMachines?.map(v => [v.name, v.action])).toEqual([
      ['web', 'migrate'],
    ]);
    expect(plan.evict.map(p => p.name)).toEqual(['web-1']);
    expect(
      planDrain(pods, {}, { nodeName: 'worker-5', virtualMachines: [] })
        .virtualMachines,
    ).toEqual([]);
  });
});
