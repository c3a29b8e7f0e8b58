import type { ObjectGate } from '@rackside/plugin-servers-common';
import { evaluateObjectGate, fieldAt } from './objectGates';

const ceph = (name: string, health: string, labels = {}) =>
  ({
    metadata: { name, namespace: 'rook-ceph', labels },
    status: {
      ceph: { health },
      conditions: [
        {
          type: 'Ready',
          status: health === 'HEALTH_OK' ? 'True' : 'False',
          message: 'osd down',
        },
      ],
    },
  } as any);

const gate = (extra: Partial<ObjectGate>): ObjectGate => ({
  name: 'storage',
  apiVersion: 'ceph.rook.io/v1',
  kind: 'CephCluster',
  namespace: 'rook-ceph',
  ...extra,
});

describe('evaluateObjectGate', () => {
  it('checks a field of the named object', () => {
    const g = gate({
      objectName: 'rook',
      field: { path: '.status.ceph.health', value: 'HEALTH_OK' },
    });
    expect(evaluateObjectGate(g, [ceph('rook', 'HEALTH_OK')]).holds).toBe(true);
    expect(evaluateObjectGate(g, [ceph('rook', 'HEALTH_WARN')])).toEqual({
      holds: false,
      message:
        'CephCluster rook-ceph/rook: .status.ceph.health is HEALTH_WARN, not HEALTH_OK',
    });
    expect(evaluateObjectGate(g, [ceph('other', 'HEALTH_OK')])).toEqual({
      holds: false,
      message: 'no CephCluster rook-ceph/rook',
    });
  });

  it('checks a condition on every object the selector matches', () => {
    const g = gate({
      selector: { matchLabels: { tier: 'storage' } },
      condition: { type: 'Ready', status: 'True' },
    });
    const ok = ceph('a', 'HEALTH_OK', { tier: 'storage' });
    const bad = ceph('b', 'HEALTH_WARN', { tier: 'storage' });
    const ignored = ceph('c', 'HEALTH_WARN');
    expect(evaluateObjectGate(g, [ok, ignored]).holds).toBe(true);
    expect(evaluateObjectGate(g, [ok, bad])).toEqual({
      holds: false,
      message: 'CephCluster rook-ceph/b: Ready is False (osd down), not True',
    });
    expect(evaluateObjectGate(g, [ignored]).holds).toBe(false);
  });
});

describe('fieldAt', () => {
  it('reads a dotted path as a string, absent as undefined', () => {
    const obj = { status: { replicas: 3, ok: true, nested: { a: 1 } } };
    expect(fieldAt(obj, '.status.replicas')).toBe('3');
    expect(fieldAt(obj, '.status.ok')).toBe('true');
    expect(fieldAt(obj, '.status.nested')).toBe('{"a":1}');
    expect(fieldAt(obj, '.status.missing.deeper')).toBeUndefined();
  });
});
