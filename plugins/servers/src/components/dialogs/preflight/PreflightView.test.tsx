import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { screen, within } from '@testing-library/react';
import { preflightResponse } from '../../../testing/drain';
import {
  nodeLocalAllowedPreflight,
  nodeLocalRefusedPreflight,
} from '../../../testing/drainRules';
import { durationText } from '../../ui/maintenanceText';
import { PreflightView } from './PreflightView';
import {
  nodeLocalPods,
  statefulSetBudgetText,
  virtualMachinesSummary,
} from './preflightText';

/** The visible text of each item of a list section, in order. */
function items(section: HTMLElement): string[] {
  return within(section)
    .getAllByRole('listitem')
    .map(li => li.textContent ?? '');
}

describe('PreflightView, the classes of docs/drain.md', () => {
  it('lists pods with data on the node as refused, with why, until allowed', async () => {
    await renderInTestApp(
      <PreflightView preflight={nodeLocalRefusedPreflight()} />,
    );
    const local = screen.getByTestId('preflight-node-local');
    expect(
      within(local).getByRole('heading', {
        name: 'Pods with data on this node (2)',
      }),
    ).toBeInTheDocument();
    expect(local).toHaveTextContent(
      'A pod whose data is on worker-5 cannot run anywhere else until worker-5 is back.',
    );
    const [collector, db] = within(local).getAllByRole('listitem');
    expect(collector).toHaveAttribute('data-allowed', 'false');
    expect(collector).toHaveTextContent('lab/collector-1');
    expect(collector).toHaveTextContent('refused unless allowed');
    expect(collector).toHaveTextContent('hostPath volume logs (/var/log/lab)');
    expect(db).toHaveTextContent('lab/db-0');
    expect(db).toHaveTextContent(
      'PersistentVolumeClaim data-db-0 is bound to local PersistentVolume lab-db-worker-5',
    );
    // Refused, they are not counted among the pods to evict.
    expect(screen.getByTestId('preflight-evict')).not.toHaveTextContent(
      'lab/db-0',
    );
    // The StatefulSet list names only what the drain evicts: none yet.
    expect(screen.queryByTestId('preflight-statefulsets')).toBeNull();
  });

  it('lists them as evicted and unavailable once allowed, and the StatefulSet with its budget', async () => {
    await renderInTestApp(
      <PreflightView preflight={nodeLocalAllowedPreflight()} />,
    );
    const local = screen.getByTestId('preflight-node-local');
    const rows = within(local).getAllByRole('listitem');
    expect(rows.map(r => r.getAttribute('data-allowed'))).toEqual([
      'true',
      'true',
    ]);
    expect(rows[1]).toHaveTextContent(
      'lab/db-0evicted: unavailable until the node is back',
    );

    const sets = screen.getByTestId('preflight-statefulsets');
    expect(
      within(sets).getByRole('heading', {
        name: 'StatefulSets and their budgets (1)',
      }),
    ).toBeInTheDocument();
    const [db] = within(sets).getAllByRole('listitem');
    expect(db).toHaveAttribute('data-blocks-now', 'true');
    expect(db).toHaveTextContent(
      'StatefulSet lab/db: budget db allows 0 disruptions (blocks evictions now)',
    );
    expect(db).toHaveTextContent('pods lab/db-0');
  });

  it('shows the drain-order groups in their order, each with its time', async () => {
    await renderInTestApp(
      <PreflightView preflight={nodeLocalAllowedPreflight()} />,
    );
    const order = screen.getByTestId('preflight-order');
    expect(within(order).getByRole('list').tagName).toBe('OL');
    expect(items(order)).toEqual([
      '1. Order 0: 2 pods, about 30 minlab/archiver-6f-bbbbb, lab/collector-1',
      '2. Order 1: 1 pod, about 30 slab/frontend-5d-aaaaa',
      '3. Order 10: 1 pod, about 1 minlab/db-0',
    ]);
    expect(order).toHaveTextContent(
      'a group is evicted only once every pod of the group before it is gone',
    );
  });

  it('hides the order when every pod is in the one default group', async () => {
    await renderInTestApp(
      <PreflightView
        preflight={preflightResponse({
          orderGroups: [
            { order: 0, pods: ['shop/web-7d9f-abcde', 'shop/web-7d9f-fghij'] },
          ],
        })}
      />,
    );
    expect(screen.queryByTestId('preflight-order')).toBeNull();
  });

  it('lists skipped and wait-completed pods apart from the evictions', async () => {
    await renderInTestApp(
      <PreflightView preflight={nodeLocalRefusedPreflight()} />,
    );
    const skipped = screen.getByTestId('preflight-skipped');
    expect(
      within(skipped).getByRole('heading', {
        name: 'Left in place (rackside.dev/drain: skip) (1)',
      }),
    ).toBeInTheDocument();
    expect(items(skipped)).toEqual([
      'lab/local-agent-7c-cccccowned by ReplicaSet/local-agent-7c',
    ]);
    const waited = screen.getByTestId('preflight-wait-completed');
    expect(
      within(waited).getByRole('heading', {
        name: 'Waited for, not evicted (rackside.dev/drain: wait-completed) (1)',
      }),
    ).toBeInTheDocument();
    expect(waited).toHaveTextContent('lab/nightly-report-ddddd');
    expect(waited).toHaveTextContent('however long they run');
    const evict = screen.getByTestId('preflight-evict');
    expect(evict).not.toHaveTextContent('local-agent');
    expect(evict).not.toHaveTextContent('nightly-report');
  });

  it('states the expected duration and names the slowest pod', async () => {
    await renderInTestApp(
      <PreflightView preflight={nodeLocalRefusedPreflight()} />,
    );
    const estimate = screen.getByTestId('preflight-estimate');
    expect(estimate).toHaveAttribute('data-seconds', '1830');
    expect(estimate).toHaveTextContent(
      "About 30 min 30 s, from the pods' grace periods",
    );
    expect(estimate).toHaveTextContent(
      'It also waits for 1 pod to finish (wait-completed)',
    );
    expect(screen.getByTestId('preflight-slowest')).toHaveTextContent(
      'Slowest pod: lab/archiver-6f-bbbbb (grace period 30 min).',
    );
  });

  it('says there is nothing to wait for when nothing is evicted', async () => {
    await renderInTestApp(
      <PreflightView
        preflight={preflightResponse({
          evict: [],
          budgets: [],
          estimate: { seconds: 0, groups: [], waitsForCompletion: [] },
        })}
      />,
    );
    expect(screen.getByTestId('preflight-estimate')).toHaveTextContent(
      'Nothing to evict, so no grace period to wait for.',
    );
    expect(screen.queryByTestId('preflight-slowest')).toBeNull();
  });

  it('shows the virtual machines with what the drain does to each, and why', async () => {
    await renderInTestApp(
      <PreflightView
        preflight={nodeLocalAllowedPreflight({
          virtualMachines: [
            {
              namespace: 'lab',
              name: 'vm-build',
              evictionStrategy: 'LiveMigrateIfPossible',
              migratable: false,
              action: 'shutdown',
              reason:
                'its eviction strategy is LiveMigrateIfPossible but it cannot be live-migrated: PVC build-disk is not shared: it is shut down',
            },
            {
              namespace: 'lab',
              name: 'vm-gpu',
              evictionStrategy: 'LiveMigrate',
              migratable: false,
              action: 'blocks',
              reason:
                'its eviction strategy is LiveMigrate but it cannot be live-migrated: cannot migrate VMI with host devices; KubeVirt refuses to evict it, so the drain waits for it until its timeout',
            },
            {
              namespace: 'lab',
              name: 'vm-web',
              evictionStrategy: 'LiveMigrate',
              migratable: true,
              action: 'migrate',
              reason:
                'its eviction strategy is LiveMigrate and it is migratable: it is live-migrated off worker-5',
            },
          ],
        })}
      />,
    );
    const vms = screen.getByTestId('preflight-virtual-machines');
    expect(
      within(vms).getByRole('heading', {
        name: 'Virtual machines (KubeVirt) (3)',
      }),
    ).toBeInTheDocument();
    expect(vms).toHaveTextContent(
      '1 live-migrated, 1 shut down, 1 blocks the drain.',
    );
    const rows = within(vms).getAllByRole('listitem');
    expect(rows.map(r => r.getAttribute('data-action'))).toEqual([
      'shutdown',
      'blocks',
      'migrate',
    ]);
    expect(rows[0]).toHaveTextContent('lab/vm-buildshut down');
    expect(rows[0]).toHaveTextContent('PVC build-disk is not shared');
    expect(rows[1]).toHaveTextContent('lab/vm-gpublocks the drain');
    expect(rows[1]).toHaveTextContent(
      'the drain waits for it until its timeout',
    );
    expect(rows[2]).toHaveTextContent('lab/vm-weblive-migrated');
  });

  it('says no virtual machine runs there where the KubeVirt API exists, and nothing where it does not', async () => {
    const { unmount } = await renderInTestApp(
      <PreflightView
        preflight={nodeLocalAllowedPreflight({ virtualMachines: [] })}
      />,
    );
    expect(screen.getByTestId('preflight-virtual-machines')).toHaveTextContent(
      'Virtual machines (KubeVirt) (0)No VirtualMachineInstance runs on worker-5.',
    );
    unmount();
    await renderInTestApp(
      <PreflightView preflight={nodeLocalAllowedPreflight()} />,
    );
    expect(screen.queryByTestId('preflight-virtual-machines')).toBeNull();
  });

  it('shows no section 16 list for an answer without them (older backend)', async () => {
    await renderInTestApp(<PreflightView preflight={preflightResponse()} />);
    for (const id of [
      'preflight-estimate',
      'preflight-node-local',
      'preflight-statefulsets',
      'preflight-order',
      'preflight-skipped',
      'preflight-wait-completed',
      'preflight-virtual-machines',
    ]) {
      expect(screen.queryByTestId(id)).toBeNull();
    }
    expect(screen.getByTestId('preflight-evict')).toBeInTheDocument();
  });
});

describe('the words of the pre-flight', () => {
  it('virtualMachinesSummary', () => {
    const vm = (action: 'migrate' | 'shutdown' | 'blocks') => ({
      namespace: 'lab',
      name: `vm-${action}`,
      migratable: action === 'migrate',
      action,
      reason: '',
    });
    expect(virtualMachinesSummary([vm('shutdown'), vm('shutdown')])).toBe(
      '2 shut down',
    );
    expect(
      virtualMachinesSummary([vm('blocks'), vm('migrate'), vm('shutdown')]),
    ).toBe('1 live-migrated, 1 shut down, 1 blocks the drain');
  });

  it('durationText', () => {
    expect(durationText(0)).toBe('0 s');
    expect(durationText(45)).toBe('45 s');
    expect(durationText(60)).toBe('1 min');
    expect(durationText(150)).toBe('2 min 30 s');
    expect(durationText(3600)).toBe('1 h');
    expect(durationText(3900)).toBe('1 h 5 min');
    expect(durationText(7170)).toBe('2 h');
    expect(durationText(3629)).toBe('1 h');
  });

  it('statefulSetBudgetText', () => {
    expect(
      statefulSetBudgetText({
        namespace: 'lab',
        name: 'db',
        pods: ['lab/db-0'],
        budgets: [],
      }),
    ).toBe('no disruption budget covers these pods');
    expect(
      statefulSetBudgetText({
        namespace: 'lab',
        name: 'db',
        pods: ['lab/db-0', 'lab/db-1'],
        budgets: [{ name: 'db', disruptionsAllowed: 1, blocksNow: false }],
      }),
    ).toBe('budget db allows 1 disruption');
  });

  it('nodeLocalPods: refused for node-local data, or evicted with the option', () => {
    expect(nodeLocalPods(preflightResponse())).toEqual([]);
    expect(
      nodeLocalPods(nodeLocalRefusedPreflight()).map(p => [
        p.pod.name,
        p.allowed,
      ]),
    ).toEqual([
      ['collector-1', false],
      ['db-0', false],
    ]);
    expect(
      nodeLocalPods(nodeLocalAllowedPreflight()).map(p => [
        p.pod.name,
        p.allowed,
      ]),
    ).toEqual([
      ['collector-1', true],
      ['db-0', true],
    ]);
    // A pod refused for emptyDir only is not node-local.
    expect(
      nodeLocalPods(
        preflightResponse({
          refused: [
            {
              pod: {
                namespace: 'shop',
                name: 'cache',
                terminating: false,
              },
              causes: ['emptyDir'],
              message: 'shop/cache: emptyDir',
            },
          ],
        }),
      ),
    ).toEqual([]);
  });
});
