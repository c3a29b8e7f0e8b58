import type { ObjectGate } from '../resources/maintenancePlan';
import { apiGroupOf, gateReadsAllow, objectGateRefusal } from './planGates';

const gate = (extra: Partial<ObjectGate> = {}): ObjectGate => ({
  name: 'g',
  apiVersion: 'v1',
  kind: 'Pod',
  namespace: 'shop',
  objectName: 'api-0',
  condition: { type: 'Ready', status: 'True' },
  ...extra,
});

describe('plan gate reads', () => {
  it('allows only the kinds the allow-list names, as resource.group', () => {
    const reads = ['cephclusters.ceph.rook.io', 'configmaps', '*.example.com'];
    expect(gateReadsAllow(reads, 'ceph.rook.io', 'cephclusters')).toBe(true);
    expect(gateReadsAllow(reads, '', 'configmaps')).toBe(true);
    expect(gateReadsAllow(reads, 'example.com', 'widgets')).toBe(true);
    expect(gateReadsAllow(reads, '', 'secrets')).toBe(false);
    expect(gateReadsAllow(reads, 'rook.io', 'cephclusters')).toBe(false);
    expect(gateReadsAllow([], '', 'configmaps')).toBe(false);
    expect(apiGroupOf('ceph.rook.io/v1')).toBe('ceph.rook.io');
    expect(apiGroupOf('v1')).toBe('');
  });

  it('refuses a kind not allowed, and a namespaced kind without a namespace', () => {
    const pods = { name: 'pods', namespaced: true };
    expect(objectGateRefusal(gate(), pods, ['pods'])).toBeUndefined();
    expect(objectGateRefusal(gate(), pods, ['configmaps'])).toBe(
      "pods is not among the kinds plan gates may read (the chart's operator.planGateReads)",
    );
    expect(
      objectGateRefusal(gate({ namespace: undefined }), pods, ['pods']),
    ).toBe(
      'pods is namespaced: the gate names its namespace (a gate never reads a kind cluster-wide)',
    );
    expect(
      objectGateRefusal(
        gate({ apiVersion: 'v1', kind: 'Node', namespace: undefined }),
        { name: 'nodes', namespaced: false },
        ['nodes'],
      ),
    ).toBeUndefined();
  });
});
