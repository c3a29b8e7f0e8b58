import type { ObjectGate } from '@rackside/plugin-servers-common';
import {
  evaluateObjectGate,
  fieldAt,
  labelSelectorText,
  MAX_GATE_OBJECTS,
  slimForGate,
} from './objectGates';

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

/** The gate over these objects as its watch keeps them. */
const evaluate = (g: ObjectGate, objects: any[]) =>
  evaluateObjectGate(g, objects.map(slimForGate(g)));

describe('evaluateObjectGate', () => {
  it('checks a field of the named object, saying what it expects and never what it read', () => {
    const g = gate({
      objectName: 'rook',
      field: { path: '.status.ceph.health', value: 'HEALTH_OK' },
    });
    expect(evaluate(g, [ceph('rook', 'HEALTH_OK')])).toEqual({
      holds: true,
      message:
        'CephCluster rook-ceph/rook passes (.status.ceph.health is HEALTH_OK)',
    });
    expect(evaluate(g, [ceph('rook', 'HEALTH_WARN')])).toEqual({
      holds: false,
      message:
        'CephCluster rook-ceph/rook: .status.ceph.health is not HEALTH_OK',
    });
    expect(evaluate(g, [])).toEqual({
      holds: false,
      message: 'no CephCluster rook-ceph/rook',
    });
  });

  it('checks a condition on every object the watch holds, without its message or status', () => {
    const g = gate({
      selector: { matchLabels: { tier: 'storage' } },
      condition: { type: 'Ready', status: 'True' },
    });
    const ok = ceph('a', 'HEALTH_OK', { tier: 'storage' });
    const bad = ceph('b', 'HEALTH_WARN', { tier: 'storage' });
    expect(evaluate(g, [ok]).holds).toBe(true);
    expect(evaluate(g, [ok, bad])).toEqual({
      holds: false,
      message: 'CephCluster rook-ceph/b: Ready is not True',
    });
  });

  it("a field holding a pod's environment is kept as pass or fail only, and never said", () => {
    const pod = {
      metadata: { name: 'api-0', namespace: 'shop', resourceVersion: '7' },
      spec: {
        containers: [
          { name: 'api', env: [{ name: 'TOKEN', value: 'hunter2-secret' }] },
        ],
      },
    } as any;
    const g: ObjectGate = {
      name: 'pods',
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: 'shop',
      objectName: 'api-0',
      field: { path: '.spec.containers', value: '[]' },
    };
    const kept = slimForGate(g)(pod);
    expect(JSON.stringify(kept)).not.toContain('hunter2');
    expect(kept).toEqual({
      metadata: { name: 'api-0', namespace: 'shop', resourceVersion: '7' },
      gate: 'fails',
    });
    const verdict = evaluateObjectGate(g, [kept]);
    expect(verdict.message).toBe('Pod shop/api-0: .spec.containers is not []');
  });

  it(`refuses a gate over more than ${MAX_GATE_OBJECTS} objects`, () => {
    const g = gate({
      selector: {},
      condition: { type: 'Ready', status: 'True' },
    });
    const many = Array.from({ length: MAX_GATE_OBJECTS + 1 }, (_, i) =>
      ceph(`c-${i}`, 'HEALTH_OK'),
    );
    expect(evaluate(g, many)).toMatchObject({
      holds: false,
      refused: true,
      message: expect.stringMatching(/101 objects, more than the 100/),
    });
    expect(evaluate(g, many.slice(1)).holds).toBe(true);
  });
});

describe('gate reads', () => {
  it('sends the label selector to the apiserver', () => {
    expect(
      labelSelectorText({
        matchLabels: { app: 'ceph' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['a', 'b'] },
          { key: 'zone', operator: 'NotIn', values: ['x'] },
          { key: 'ready', operator: 'Exists' },
          { key: 'old', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('app=ceph,tier in (a,b),zone notin (x),ready,!old');
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
