/**
 * Which Alertmanager alerts belong to a node (docs/alerts.md): the operator silences them
 * during a maintenance, a plan's alert gate and healthy return read them, and the backend
 * shows them per row. One set of matcher templates per cluster, rendered here for every side.
 * Regex values are matched with RE2's semantics (rules/pattern.ts), anchored at both ends as
 * Alertmanager anchors them.
 */
import { compilePattern, patternError, quotePattern } from './pattern';

/** An Alertmanager matcher (API v2 field names). */
export interface AlertMatcher {
  name: string;
  value: string;
  isRegex: boolean;
  /** false for `!=` and `!~`. */
  isEqual: boolean;
}

/** A node as the templates see it: `{{node}}` and `{{labels.<key>}}`. */
export interface AlertNode {
  name: string;
  labels?: Record<string, string>;
}

/** Selects a node's alerts by its name in `node` or in `instance` (with or without a port). */
export const DEFAULT_NODE_ALERT_MATCHERS: readonly string[] = [
  'node="{{node}}"',
  'instance=~"{{node}}(:[0-9]+)?"',
];

const MATCHER_PATTERN =
  /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*$/;
const PLACEHOLDER = /\{\{\s*(node|labels\.([A-Za-z0-9_./-]+))\s*\}\}/g;

/** One matcher template, parsed: its label, operator and value with placeholders. */
export interface ParsedAlertMatcherTemplate {
  name: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

/**
 * Parses one template like `node="{{node}}"`. Throws an Error naming the template when it is
 * not `label op "value"` (op one of = != =~ !~) or names a placeholder other than `{{node}}`
 * and `{{labels.KEY}}`.
 */
export function parseAlertMatcherTemplate(
  template: string,
): ParsedAlertMatcherTemplate {
  const match = MATCHER_PATTERN.exec(template);
  if (!match) {
    throw new Error(
      `alert matcher ${JSON.stringify(
        template,
      )} must be label="value", label!="value", label=~"regex" or label!~"regex"`,
    );
  }
  const value = match[3].replace(/\\(.)/g, '$1');
  const leftover = value.replace(PLACEHOLDER, '');
  if (/\{\{|\}\}/.test(leftover)) {
    throw new Error(
      `alert matcher ${JSON.stringify(
        template,
      )}: only {{node}} and {{labels.KEY}} may be used`,
    );
  }
  return {
    name: match[1],
    op: match[2] as ParsedAlertMatcherTemplate['op'],
    value,
  };
}

/**
 * Checks every template (a configuration's start-up check); returns them unchanged. A regex
 * template must be RE2 with its placeholders filled (with a quoted sample name), so a
 * pattern Alertmanager would refuse, or one past the length cap, stops the start.
 */
export function validateAlertMatcherTemplates(
  templates: readonly string[],
): readonly string[] {
  if (templates.length === 0) {
    throw new Error('alert matchers: give at least one');
  }
  for (const template of templates) {
    const { op, value } = parseAlertMatcherTemplate(template);
    if (op !== '=~' && op !== '!~') continue;
    const error = patternError(
      value.replace(PLACEHOLDER, quotePattern('node-1')),
      `alert matcher ${JSON.stringify(template)}`,
    );
    if (error) throw new Error(error);
  }
  return templates;
}

/**
 * Renders the templates for one node. In a regex matcher the node's values are escaped, so a
 * name with a dot matches only itself. A `{{labels.KEY}}` the node does not have renders as
 * the empty string. Each template's alternatives are separate matchers: Alertmanager ANDs
 * matchers, so a node's alerts are those that match ANY template, which {@link alertMatchesNode}
 * and {@link alertFiltersForNode} respect.
 */
export function renderAlertMatchers(
  templates: readonly string[],
  node: AlertNode,
): AlertMatcher[] {
  return templates.map(template => {
    const { name, op, value } = parseAlertMatcherTemplate(template);
    const isRegex = op === '=~' || op === '!~';
    const rendered = value.replace(PLACEHOLDER, (_all, _which, key) => {
      const raw = key === undefined ? node.name : node.labels?.[key] ?? '';
      return isRegex ? quotePattern(raw) : raw;
    });
    return {
      name,
      value: rendered,
      isRegex,
      isEqual: op === '=' || op === '=~',
    };
  });
}

const OPERATORS: Record<string, ParsedAlertMatcherTemplate['op']> = {
  'false:true': '=',
  'false:false': '!=',
  'true:true': '=~',
  'true:false': '!~',
};

/** One matcher in Alertmanager's filter syntax (`name="value"`). */
export function alertMatcherText(matcher: AlertMatcher): string {
  const op = OPERATORS[`${matcher.isRegex}:${matcher.isEqual}`];
  return `${matcher.name}${op}${JSON.stringify(matcher.value)}`;
}

/** Whether one matcher holds for an alert's labels (RE2 anchored, as Alertmanager does). */
export function alertMatcherHolds(
  matcher: AlertMatcher,
  labels: Record<string, string>,
): boolean {
  const value = labels[matcher.name] ?? '';
  const equal = matcher.isRegex
    ? compilePattern(matcher.value).matchesWhole(value)
    : value === matcher.value;
  return matcher.isEqual ? equal : !equal;
}

/**
 * Whether an alert belongs to the node: at least one of the rendered templates holds (the
 * templates are alternatives: `node="x"` or `instance=~"x(:port)?"`).
 */
export function alertMatchesNode(
  matchers: readonly AlertMatcher[],
  labels: Record<string, string>,
): boolean {
  return matchers.some(m => alertMatcherHolds(m, labels));
}

/**
 * {@link alertMatchesNode} with its regular expressions compiled once: for matching many
 * alerts against many nodes (the backend maps a cluster's alerts to its nodes every 30 s),
 * where compiling per test would dominate.
 */
export function compileNodeAlertMatchers(
  matchers: readonly AlertMatcher[],
): (labels: Record<string, string>) => boolean {
  const tests = matchers.map(m => {
    const regex = m.isRegex ? compilePattern(m.value) : undefined;
    return (labels: Record<string, string>) => {
      const value = labels[m.name] ?? '';
      const equal = regex ? regex.matchesWhole(value) : value === m.value;
      return m.isEqual ? equal : !equal;
    };
  });
  return labels => tests.some(t => t(labels));
}

/**
 * The filters to ask Alertmanager for a node's alerts: one filter per alternative (its
 * `filter` parameters AND, so alternatives need separate requests or a local match).
 */
export function alertFiltersForNode(
  matchers: readonly AlertMatcher[],
): string[][] {
  return matchers.map(m => [alertMatcherText(m)]);
}
