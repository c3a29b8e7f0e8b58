import {
  alertMatchesNode,
  compileNodeAlertMatchers,
  DEFAULT_NODE_ALERT_MATCHERS,
  renderAlertMatchers,
} from './alertMatchers';

// Beside alertMatchers.test.ts (issue-39-silences): the compiled form must answer exactly
// as alertMatchesNode, the rule every side applies.
describe('compileNodeAlertMatchers', () => {
  const templates = [
    ...DEFAULT_NODE_ALERT_MATCHERS,
    'rack!="{{labels.rack}}"',
    'host!~"{{node}}-bmc"',
  ];
  const node = { name: 'worker.1', labels: { rack: 'r1' } };
  const matchers = renderAlertMatchers(templates, node);
  const compiled = compileNodeAlertMatchers(matchers);

  it.each([
    [{ node: 'worker.1' }],
    [{ node: 'workerx1', rack: 'r1', host: 'worker.1-bmc' }],
    [{ instance: 'worker.1:9100', rack: 'r1', host: 'worker.1-bmc' }],
    [{ instance: 'worker.1x', rack: 'r1', host: 'worker.1-bmc' }],
    [{ rack: 'r2', host: 'worker.1-bmc' }],
    [{ rack: 'r1', host: 'other' }],
    [{ rack: 'r1', host: 'worker.1-bmc' }],
  ])('answers as alertMatchesNode for %j', labels => {
    expect(compiled(labels)).toBe(alertMatchesNode(matchers, labels));
  });

  it('matches a node by name or instance, never a look-alike', () => {
    const only = compileNodeAlertMatchers(
      renderAlertMatchers(DEFAULT_NODE_ALERT_MATCHERS, node),
    );
    expect(only({ node: 'worker.1' })).toBe(true);
    expect(only({ instance: 'worker.1:9100' })).toBe(true);
    expect(only({ instance: 'workerx1' })).toBe(false);
    expect(only({ instance: 'worker.10' })).toBe(false);
  });
});
