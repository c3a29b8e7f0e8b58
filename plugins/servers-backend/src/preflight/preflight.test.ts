/*
 * The node's firing alerts and the pods with node-local data in a pre-flight and in the
 * snapshot kept of an acknowledged one (docs/approvals.md): an approver compares them
 * with the impact now. Alerts are shown, never acknowledged: they leave the digest alone.
 */
import {
  preflightSchema,
  type ServerAlert,
} from '@rackside/plugin-servers-common';
import { snapshotOf } from '../cluster/snapshot';
import type { ClusterAlerts } from '../cluster/nodeAlerts';
import { fakeNode, fakePod } from '../testing/fakeCluster';
import {
  computePreflight,
  digestOf,
  preflightRecord,
  type PreflightInput,
} from './preflight';

function alert(
  alertname: string,
  state: ServerAlert['state'],
  severity?: string,
): ServerAlert {
  return {
    fingerprint: `fp-${alertname}`,
    alertname,
    ...(severity ? { severity } : {}),
    state,
    silencedBy: state === 'silenced' ? ['s-1'] : [],
    startsAt: '2026-01-01T00:00:00Z',
    labels: { alertname },
  };
}

function alertsOf(byNode: Record<string, ServerAlert[]>): ClusterAlerts {
  return {
    byNode: new Map(Object.entries(byNode)),
    alerts: [],
    readAt: '2026-01-01T00:00:00Z',
  };
}

const NODES = [
  fakeNode('cp-1', { controlPlane: true }),
  fakeNode('cp-2', { controlPlane: true }),
  fakeNode('cp-3', { controlPlane: true }),
  fakeNode('worker-1'),
];

/** A drain of worker-1 with db-0 on a local volume and web-1 elsewhere-able. */
function input(
  alerts: ClusterAlerts | undefined,
  allowNodeLocalData = true,
): PreflightInput {
  const db = fakePod('db-0', 'worker-1', { owner: 'StatefulSet/db' });
  db.spec!.volumes = [
    { name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } },
  ];
  return {
    cluster: 'plant-a',
    node: 'worker-1',
    action: 'drain',
    options: { deleteEmptyDirData: false, force: false, allowNodeLocalData },
    snapshot: snapshotOf(NODES, [], undefined, [], [], alerts),
    pods: [db, fakePod('web-1', 'worker-1')],
    budgets: [],
    storage: {
      nodeLabels: { 'kubernetes.io/hostname': 'worker-1' },
      claims: [
        {
          metadata: { name: 'data-db-0', namespace: 'shop' },
          spec: { volumeName: 'pv-db' },
        } as any,
      ],
      volumes: [
        {
          metadata: { name: 'pv-db' },
          spec: { local: { path: '/mnt/db' } },
        } as any,
      ],
    },
    now: new Date('2026-01-01T10:00:00Z'),
  };
}

describe('computePreflight', () => {
  it("lists the node's firing alerts, not the silenced or inhibited ones nor another node's", () => {
    const impact = computePreflight(
      input(
        alertsOf({
          'worker-1': [
            alert('DiskFailing', 'firing', 'critical'),
            alert('NodeNoisy', 'firing'),
            alert('Planned', 'silenced', 'warning'),
            alert('Covered', 'inhibited', 'warning'),
          ],
          'cp-1': [alert('Elsewhere', 'firing', 'critical')],
        }),
      ),
    );
    expect(impact.alerts).toEqual([
      { alertname: 'DiskFailing', severity: 'critical' },
      { alertname: 'NodeNoisy' },
    ]);
  });

  it('says none fire on a node without alerts, and leaves them out without an Alertmanager', () => {
    expect(computePreflight(input(alertsOf({}))).alerts).toEqual([]);
    expect(computePreflight(input(undefined))).not.toHaveProperty('alerts');
  });

  it('keeps alerts out of what is acknowledged: a new alert does not change the digest', () => {
    const quiet = computePreflight(input(alertsOf({})));
    const loud = computePreflight(
      input(alertsOf({ 'worker-1': [alert('DiskFailing', 'firing')] })),
    );
    expect(digestOf(loud)).toBe(digestOf(quiet));
  });
});

describe('preflightRecord', () => {
  it('keeps the firing alerts and the pods with node-local data, and the resource schema accepts it', () => {
    const impact = computePreflight(
      input(
        alertsOf({
          'worker-1': [alert('DiskFailing', 'firing', 'critical')],
        }),
      ),
    );
    const record = preflightRecord(impact, 'tok');
    expect(record.alerts).toEqual([
      { alertname: 'DiskFailing', severity: 'critical' },
    ]);
    expect(record.nodeLocalData).toEqual([{ namespace: 'shop', name: 'db-0' }]);
    expect(record.pods).toEqual(
      expect.arrayContaining([
        { namespace: 'shop', name: 'db-0' },
        { namespace: 'shop', name: 'web-1' },
      ]),
    );
    expect(preflightSchema.parse(record)).toEqual(
      JSON.parse(JSON.stringify(record)),
    );
  });

  it('records no alerts where the pre-flight had none to read, and an empty list where none fired', () => {
    expect(
      preflightRecord(computePreflight(input(undefined)), 'tok'),
    ).not.toHaveProperty('alerts');
    expect(
      preflightRecord(computePreflight(input(alertsOf({}))), 'tok').alerts,
    ).toEqual([]);
  });

  it('records an empty node-local list when no pod to evict has its data on the node', () => {
    const impact = computePreflight(input(alertsOf({})));
    const record = preflightRecord({ ...impact, nodeLocal: [] }, 'tok');
    expect(record.nodeLocalData).toEqual([]);
  });

  it('keeps within the resource limits: 100 alerts, 500 pods, names the schema accepts', () => {
    const impact = computePreflight(input(alertsOf({})));
    const many = {
      ...impact,
      alerts: Array.from({ length: 150 }, (_, i) => ({
        alertname: `${'A'.repeat(300)}${i}`,
        severity: 's'.repeat(100),
      })),
      nodeLocal: Array.from({ length: 600 }, (_, i) => ({
        ...impact.evict[0],
        name: `db-${i}`,
      })),
    };
    const record = preflightRecord(many, 'tok');
    expect(record.alerts).toHaveLength(100);
    expect(record.nodeLocalData).toHaveLength(500);
    expect(() => preflightSchema.parse(record)).not.toThrow();
  });
});
