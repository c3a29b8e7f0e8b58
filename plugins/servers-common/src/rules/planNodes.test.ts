import { matchesLabelSelector, resolvePlanNodes } from './planNodes';

const CP = { 'node-role.kubernetes.io/control-plane': '' };
const nodes = [
  { name: 'cp-2', labels: CP },
  { name: 'worker-2', labels: { pool: 'a' } },
  { name: 'cp-1', labels: { ...CP, pool: 'a' } },
  { name: 'worker-1', labels: { pool: 'a' } },
  { name: 'worker-3', labels: { pool: 'b' } },
];

describe('resolvePlanNodes', () => {
  it('puts workers first, then control-plane members, each by name', () => {
    expect(
      resolvePlanNodes(
        { nodes: ['cp-2', 'worker-2', 'cp-1', 'worker-1'] },
        nodes,
      ),
    ).toEqual([
      { name: 'worker-1', controlPlane: false },
      { name: 'worker-2', controlPlane: false },
      { name: 'cp-1', controlPlane: true },
      { name: 'cp-2', controlPlane: true },
    ]);
  });

  it('keeps a named node that does not exist, marked missing', () => {
    expect(
      resolvePlanNodes({ nodes: ['worker-9', 'worker-1'] }, nodes),
    ).toEqual([
      { name: 'worker-1', controlPlane: false },
      { name: 'worker-9', controlPlane: false, missing: true },
    ]);
  });

  it('resolves a selector over the nodes there are', () => {
    expect(
      resolvePlanNodes({ selector: { matchLabels: { pool: 'a' } } }, nodes).map(
        n => n.name,
      ),
    ).toEqual(['worker-1', 'worker-2', 'cp-1']);
    expect(
      resolvePlanNodes(
        {
          selector: {
            matchExpressions: [
              {
                key: 'node-role.kubernetes.io/control-plane',
                operator: 'DoesNotExist',
              },
            ],
          },
        },
        nodes,
      ).map(n => n.name),
    ).toEqual(['worker-1', 'worker-2', 'worker-3']);
  });
});

describe('matchesLabelSelector', () => {
  it('applies In, NotIn, Exists, DoesNotExist and matchLabels together', () => {
    const labels = { pool: 'a', zone: 'z1' };
    const m = (selector: Parameters<typeof matchesLabelSelector>[0]) =>
      matchesLabelSelector(selector, labels);
    expect(m({ matchLabels: { pool: 'a' } })).toBe(true);
    expect(m({ matchLabels: { pool: 'b' } })).toBe(false);
    expect(
      m({
        matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }],
      }),
    ).toBe(true);
    expect(
      m({
        matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['z1'] }],
      }),
    ).toBe(false);
    expect(
      m({
        matchExpressions: [{ key: 'rack', operator: 'NotIn', values: ['r'] }],
      }),
    ).toBe(true);
    expect(m({ matchExpressions: [{ key: 'rack', operator: 'Exists' }] })).toBe(
      false,
    );
    expect(
      m({
        matchLabels: { pool: 'a' },
        matchExpressions: [{ key: 'rack', operator: 'DoesNotExist' }],
      }),
    ).toBe(true);
  });
});
