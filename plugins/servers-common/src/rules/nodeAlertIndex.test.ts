/*
 * The index answers exactly as the rule it speeds up (alertMatchesNode over every node),
 * for every kind of template, and stays fast when Alertmanager answers with many alerts
 * for a large cluster.
 */
import {
  alertMatchesNode,
  DEFAULT_NODE_ALERT_MATCHERS,
  renderAlertMatchers,
  type AlertNode,
} from './alertMatchers';
import { indexNodeAlerts } from './nodeAlertIndex';

const nodes: AlertNode[] = [
  { name: 'worker-1', labels: { rack: 'r1' } },
  { name: 'worker-10', labels: { rack: 'r2' } },
  { name: 'worker.1', labels: {} },
  { name: 'cp-1', labels: { rack: 'r1' } },
];

const alerts: Array<Record<string, string>> = [
  { node: 'worker-1' },
  { node: 'worker-10' },
  { node: 'workerx1' },
  { instance: 'worker-1:9100' },
  { instance: 'worker-10' },
  { instance: 'worker-1x' },
  { instance: 'worker.1:1' },
  { instance: 'workerx1:1' },
  { instance: '' },
  { rack: 'r1' },
  { rack: '' },
  {},
  { host: 'cp-1-bmc', rack: 'r2' },
  { host: 'cp-1', instance: 'cp-1:22' },
];

const templateSets: Array<[string, string[]]> = [
  ['the defaults', [...DEFAULT_NODE_ALERT_MATCHERS]],
  ['a label of the node', ['rack="{{labels.rack}}"']],
  ['a negative one', ['rack!="{{labels.rack}}"', 'node="{{node}}"']],
  ['a negative regex', ['host!~"{{node}}-bmc"']],
  ['an optional last letter', ['host=~"{{node}}x?"']],
  ['a top-level alternation', ['host=~"{{node}}|cp-.*"']],
  ['an alternation in a group', ['instance=~"{{node}}(:22|:9100)"']],
  ['a start that is a class', ['instance=~"[a-z]+-1(:[0-9]+)?"']],
  ['a case-insensitive flag', ['node=~"(?i){{node}}"']],
];

describe('indexNodeAlerts', () => {
  it.each(templateSets)(
    'answers as alertMatchesNode over every node, with %s',
    (_what, templates) => {
      const index = indexNodeAlerts(templates, nodes);
      for (const labels of alerts) {
        const expected = nodes
          .filter(node =>
            alertMatchesNode(renderAlertMatchers(templates, node), labels),
          )
          .map(node => node.name);
        expect({ labels, nodes: index(labels) }).toEqual({
          labels,
          nodes: expected,
        });
      }
    },
  );

  it('maps 50,000 alerts to 1,000 nodes in well under a second', () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({
      name: `node-${i}`,
    }));
    const index = indexNodeAlerts(DEFAULT_NODE_ALERT_MATCHERS, many);
    // CPU time, not wall-clock: the bound is against a pathological path (seconds to
    // minutes), and a busy machine stretches the wall clock but not the work done.
    const started = process.cpuUsage();
    let mapped = 0;
    for (let i = 0; i < 50_000; i++) {
      mapped += index(
        i % 2
          ? { node: `node-${i % 1000}` }
          : { instance: `node-${i % 1000}:9100` },
      ).length;
    }
    const { user, system } = process.cpuUsage(started);
    const ms = (user + system) / 1000;
    expect(mapped).toBe(50_000);
    // Asking every node of every alert took 20 s here.
    expect(ms).toBeLessThan(1000);
  });
});
