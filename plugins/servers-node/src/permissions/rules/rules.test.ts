import type { ServerResource } from '../serverResource';
import { hasLabel, isControlPlane, isInCluster, isVirtual } from '.';

const worker: ServerResource = {
  cluster: 'plant-a',
  node: 'worker-1',
  controlPlane: false,
  virtual: false,
  labels: { zone: 'hall-1', empty: '' },
};
const cp: ServerResource = {
  ...worker,
  node: 'cp-1',
  controlPlane: true,
  labels: {},
};
const virtual: ServerResource = { ...worker, node: 'virt-1', virtual: true };

describe('server permission rules', () => {
  it('apply and toQuery agree for every rule', () => {
    const cases: Array<[any, any, ServerResource, boolean]> = [
      [isControlPlane, {}, cp, true],
      [isControlPlane, {}, worker, false],
      [isVirtual, {}, virtual, true],
      [isVirtual, {}, worker, false],
      [hasLabel, { label: 'zone' }, worker, true],
      [hasLabel, { label: 'zone', value: 'hall-1' }, worker, true],
      [hasLabel, { label: 'zone', value: 'hall-2' }, worker, false],
      [hasLabel, { label: 'empty', value: '' }, worker, true],
      [hasLabel, { label: 'toString' }, worker, false],
      [isInCluster, { clusters: ['plant-a'] }, worker, true],
      [isInCluster, { clusters: ['plant-b'] }, worker, false],
    ];
    for (const [rule, params, server, expected] of cases) {
      expect([rule.name, server.node, rule.apply(server, params)]).toEqual([
        rule.name,
        server.node,
        expected,
      ]);
      expect(rule.toQuery(params)(server)).toBe(expected);
    }
  });
});
