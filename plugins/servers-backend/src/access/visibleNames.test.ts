import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { ReadScope } from './readScope';
import type { ServerReadScope } from './serverGrant';
import { clusterSnapshot } from '../cluster/snapshot';
import { visibleNames } from './visibleNames';
import { FakeCluster, fakeNode } from '../testing/fakeCluster';

async function namesFor(readable: string[]) {
  const cluster = new FakeCluster('plant-a', [
    fakeNode('worker-1'),
    fakeNode('worker-3'),
    fakeNode('worker-4'),
  ]);
  const scope = Object.assign(
    new ReadScope({ result: AuthorizeResult.CONDITIONAL } as any, (_c, n) =>
      readable.includes(n.metadata?.name ?? ''),
    ),
    {
      filter: (s: { node: string }) => readable.includes(s.node),
    },
  ) as unknown as ServerReadScope;
  return visibleNames(scope, 'plant-a', await clusterSnapshot(cluster));
}

describe('visibleNames', () => {
  it('takes hidden servers out of lists, by their alerts or their steps, and counts them', async () => {
    const names = await namesFor(['worker-1']);
    const said = (text: string) => names.text(text).text;
    expect(
      said('alerts firing: A (worker-3), B (worker-4:9100, critical)'),
    ).toBe('alerts firing: on 2 servers you cannot see');
    expect(
      said(
        'running: worker-1 (Draining), worker-3 (Rebooting); next: worker-4.',
      ),
    ).toBe(
      'running: worker-1 (Draining), and 1 server you cannot see; next: a server you cannot see.',
    );
    // Names that are no server of the cluster, and readable ones, stay.
    expect(said('NodeDown (worker-1, critical) on rack worker-9')).toBe(
      'NodeDown (worker-1, critical) on rack worker-9',
    );
    expect(names.text('worker-3 and worker-3-old').hidden).toEqual(
      new Set(['worker-3']),
    );
    expect(said('worker-3 and worker-3-old')).toBe(
      'a server you cannot see and worker-3-old',
    );
  });

  it('leaves every word to a reader who reads every server', async () => {
    const names = await namesFor(['worker-1', 'worker-3', 'worker-4']);
    expect(names.text('A (worker-3)').text).toBe('A (worker-3)');
  });

  it('filters a hostile label value in time linear in its length', async () => {
    const names = await namesFor(['worker-1']);
    // An Alertmanager label of 200,000 dots between two letters: a trailing-punctuation
    // regex took V8 some 40 s on it (quadratic backtracking).
    const value = `a${'.'.repeat(200_000)}b worker-3.`;
    // CPU time, not wall-clock: the bound is against a pathological path (seconds to
    // minutes), and a busy machine stretches the wall clock but not the work done.
    const started = process.cpuUsage();
    const filtered = names.alert({
      alertname: 'Odd',
      state: 'firing',
      labels: { alertname: 'Odd', note: value },
    } as any);
    expect(cpuMsSince(started)).toBeLessThan(1000);
    expect(filtered.labels.note.endsWith('b a server you cannot see.')).toBe(
      true,
    );
    // Many list-like items and no separator to find between them.
    const items = `${'x (y)'.repeat(100_000)} worker-3 (z)`;
    const again = process.cpuUsage();
    expect(names.text(items).hidden).toEqual(new Set(['worker-3']));
    expect(cpuMsSince(again)).toBeLessThan(1000);
  });
});

function cpuMsSince(started: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(started);
  return (user + system) / 1000;
}
