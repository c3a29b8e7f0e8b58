import {
  alertFiltersForNode,
  alertMatcherHolds,
  alertMatcherText,
  alertMatchesNode,
  DEFAULT_NODE_ALERT_MATCHERS,
  parseAlertMatcherTemplate,
  renderAlertMatchers,
  validateAlertMatcherTemplates,
} from './alertMatchers';

describe('alert matcher templates', () => {
  it('renders the defaults for a node: node equal, instance by regex with an optional port', () => {
    expect(
      renderAlertMatchers(DEFAULT_NODE_ALERT_MATCHERS, { name: 'w1' }),
    ).toEqual([
      { name: 'node', value: 'w1', isRegex: false, isEqual: true },
      { name: 'instance', value: 'w1(:[0-9]+)?', isRegex: true, isEqual: true },
    ]);
  });

  it('escapes regex metacharacters of the node name: a.b never matches axb', () => {
    const matchers = renderAlertMatchers(DEFAULT_NODE_ALERT_MATCHERS, {
      name: 'a.b',
    });
    expect(matchers[1].value).toBe('a\\.b(:[0-9]+)?');
    expect(alertMatchesNode(matchers, { instance: 'a.b:9100' })).toBe(true);
    expect(alertMatchesNode(matchers, { instance: 'axb:9100' })).toBe(false);
    expect(alertMatchesNode(matchers, { instance: 'axb' })).toBe(false);
    // Anchored as Alertmanager anchors: a longer name holding this one is another node.
    expect(alertMatchesNode(matchers, { instance: 'a.b.c' })).toBe(false);
    expect(alertMatchesNode(matchers, { node: 'xa.b' })).toBe(false);
  });

  it('escapes every RE2 metacharacter a label value can carry', () => {
    const [matcher] = renderAlertMatchers(['rack=~"{{labels.rack}}"'], {
      name: 'n',
      labels: { rack: 'r(1)|*+?[x]{2}^$\\' },
    });
    expect(alertMatcherHolds(matcher, { rack: 'r(1)|*+?[x]{2}^$\\' })).toBe(
      true,
    );
    expect(alertMatcherHolds(matcher, { rack: 'r1' })).toBe(false);
  });

  it('a {{labels.KEY}} the node lacks renders empty, and an equality on it then matches only the label absent', () => {
    const [matcher] = renderAlertMatchers(['rack="{{labels.rack}}"'], {
      name: 'n',
    });
    expect(matcher.value).toBe('');
    expect(alertMatcherHolds(matcher, {})).toBe(true);
    expect(alertMatcherHolds(matcher, { rack: 'r1' })).toBe(false);
  });

  it('refuses an unknown placeholder, a malformed template and an empty list, naming the template', () => {
    expect(() => parseAlertMatcherTemplate('node="{{hostname}}"')).toThrow(
      /\{\{hostname\}\}.*only \{\{node\}\} and \{\{labels.KEY\}\}/,
    );
    expect(() => parseAlertMatcherTemplate('node="{{node}"')).toThrow(
      /only \{\{node\}\}/,
    );
    expect(() => parseAlertMatcherTemplate('node=w1')).toThrow(
      /must be label="value"/,
    );
    expect(() => parseAlertMatcherTemplate('1node="x"')).toThrow();
    expect(() => parseAlertMatcherTemplate('node=="x"')).toThrow();
    expect(() => validateAlertMatcherTemplates([])).toThrow(/at least one/);
    expect(() =>
      validateAlertMatcherTemplates(['node="{{node}}"', 'x="{{labels}}"']),
    ).toThrow(/x=.*\{\{labels\}\}/);
  });

  it('negative operators hold when the value differs', () => {
    const [ne, nre] = renderAlertMatchers(
      ['severity!="info"', 'alertname!~"Watchdog|Info.*"'],
      { name: 'n' },
    );
    expect(alertMatcherHolds(ne, { severity: 'critical' })).toBe(true);
    expect(alertMatcherHolds(ne, { severity: 'info' })).toBe(false);
    expect(alertMatcherHolds(nre, { alertname: 'InfoInhibitor' })).toBe(false);
    expect(alertMatcherHolds(nre, { alertname: 'NodeDown' })).toBe(true);
  });

  it('the templates are alternatives: one filter per template, text as Alertmanager reads it', () => {
    const matchers = renderAlertMatchers(DEFAULT_NODE_ALERT_MATCHERS, {
      name: 'w"1',
    });
    expect(alertMatchesNode(matchers, { node: 'w"1' })).toBe(true);
    expect(alertMatchesNode(matchers, { instance: 'w"1:9100' })).toBe(true);
    expect(alertFiltersForNode(matchers)).toEqual([
      ['node="w\\"1"'],
      ['instance=~"w\\"1(:[0-9]+)?"'],
    ]);
    expect(
      alertMatcherText({
        name: 'a',
        value: 'b',
        isRegex: true,
        isEqual: false,
      }),
    ).toBe('a!~"b"');
  });
});
