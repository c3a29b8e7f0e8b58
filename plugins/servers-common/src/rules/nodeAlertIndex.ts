/*
 * Which nodes an alert belongs to, for many alerts and many nodes at once: the backend maps
 * every alert of a cluster to its nodes every 30 s, on its event loop, and Alertmanager's
 * answer is outside content (anyone who may post alerts decides how many there are). Asking
 * every node of every alert is alerts × nodes: 100,000 alerts on a 1,000-node cluster took
 * seconds a refresh. The index asks only the nodes an alert can belong to, and answers
 * exactly as `alertMatchesNode` (rules/alertMatchers.ts) does.
 */
import {
  compileNodeAlertMatchers,
  renderAlertMatchers,
  type AlertMatcher,
  type AlertNode,
} from './alertMatchers';

/** Characters that end a regex's literal start (RE2 syntax). */
const REGEX_SPECIAL = '\\^$.*+?()[]{}|';

/**
 * The text every value a rendered regex matcher accepts starts with: its characters up to
 * the first special one (an escaped character counts as itself). A quantifier right after
 * the last literal makes that literal optional, so it is dropped.
 */
function literalStart(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1];
      // An escaped special character is itself; any other escape (\d, \b) is a class.
      if (next === undefined || !REGEX_SPECIAL.includes(next)) break;
      out += next;
      i += 1;
      continue;
    }
    if (REGEX_SPECIAL.includes(c)) {
      if ('*?{'.includes(c)) out = out.slice(0, -1);
      break;
    }
    out += c;
  }
  // A top-level alternation means the start is not shared by every alternative.
  return hasTopLevelAlternation(pattern) ? '' : out;
}

/** Whether `|` appears outside every group and character class. */
function hasTopLevelAlternation(pattern: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i += 1;
    } else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
    } else if (c === '(') {
      depth += 1;
    } else if (c === ')') {
      depth = Math.max(0, depth - 1);
    } else if (c === '|' && depth === 0) {
      return true;
    }
  }
  return false;
}

/** One template's lookup: the nodes whose rendered matcher may hold for these labels. */
interface TemplateIndex {
  candidates(labels: Record<string, string>): Iterable<number>;
}

function exactIndex(label: string, values: string[]): TemplateIndex {
  const byValue = new Map<string, number[]>();
  values.forEach((value, node) => {
    const list = byValue.get(value);
    if (list) list.push(node);
    else byValue.set(value, [node]);
  });
  return { candidates: labels => byValue.get(labels[label] ?? '') ?? [] };
}

function prefixIndex(label: string, starts: string[]): TemplateIndex {
  const byStart = new Map<string, number[]>();
  starts.forEach((start, node) => {
    const list = byStart.get(start);
    if (list) list.push(node);
    else byStart.set(start, [node]);
  });
  // Only the lengths some node's start has: a long value costs one look-up per length.
  const lengths = [...new Set(starts.map(s => s.length))];
  return {
    *candidates(labels) {
      const value = labels[label] ?? '';
      for (const length of lengths) {
        if (length > value.length) continue;
        yield* byStart.get(value.slice(0, length)) ?? [];
      }
    },
  };
}

function everyNode(count: number): TemplateIndex {
  const all = Array.from({ length: count }, (_, i) => i);
  return { candidates: () => all };
}

/**
 * The nodes each alert belongs to, by the cluster's matcher templates: a function from an
 * alert's labels to the names of its nodes, in the order the nodes were given. An `=`
 * template is looked up by value, a regex one by the literal text its rendered pattern
 * starts with; a negative one (`!=`, `!~`) or a regex without such a start asks every node.
 * Each candidate is then checked with the node's own compiled matchers.
 */
export function indexNodeAlerts(
  templates: readonly string[],
  nodes: readonly AlertNode[],
): (labels: Record<string, string>) => string[] {
  const rendered: AlertMatcher[][] = nodes.map(node =>
    renderAlertMatchers(templates, node),
  );
  const matches = rendered.map(compileNodeAlertMatchers);
  const indexes: TemplateIndex[] = templates.map((_t, k) => {
    const forNodes = rendered.map(matchers => matchers[k]);
    const { name, isRegex, isEqual } = forNodes[0] ?? {
      name: '',
      isRegex: false,
      isEqual: false,
    };
    if (!isEqual) return everyNode(nodes.length);
    if (!isRegex)
      return exactIndex(
        name,
        forNodes.map(m => m.value),
      );
    const starts = forNodes.map(m => literalStart(m.value));
    return starts.every(s => s !== '')
      ? prefixIndex(name, starts)
      : everyNode(nodes.length);
  });
  return labels => {
    const seen = new Set<number>();
    for (const index of indexes) {
      for (const node of index.candidates(labels)) {
        if (!seen.has(node) && matches[node](labels)) seen.add(node);
      }
    }
    return [...seen].sort((a, b) => a - b).map(node => nodes[node].name);
  };
}
