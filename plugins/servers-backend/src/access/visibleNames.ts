/*
 * What an answer may say of servers its reader cannot see (docs/permissions.md, what a
 * conditional `servers:read` shows). The operator writes its messages for everyone (a
 * plan's alert gate names alerts of every node, a label names a peer), and the backend
 * reads Alertmanager for the whole cluster; every answer that carries such words passes
 * them through this one filter, so a server the reader may not read is never named:
 * the alerts of hidden servers are counted ("and 2 servers you cannot see"), and a
 * hidden name anywhere else reads "a server you cannot see".
 */
import type { ServerAlert } from '@rackside/plugin-servers-common';
import type { ServerReadScope } from './serverGrant';
import { serverResourceOf } from './visibleNodes';
import { type ClusterSnapshot } from '../cluster/types';

/** What stands for a hidden server's name in a text. */
export const HIDDEN_SERVER = 'a server you cannot see';

/** "and 2 servers you cannot see": the count of what an answer left out. */
export function hiddenServersText(count: number): string {
  return `and ${count} ${count === 1 ? 'server' : 'servers'} you cannot see`;
}

/** A text with the hidden servers taken out, and which ones were. */
export interface FilteredText {
  text: string;
  hidden: ReadonlySet<string>;
}

/** What one reader may be told of the servers of one cluster. */
export interface VisibleNames {
  /** Whether the reader may not read this server (a name that is no server: false). */
  hides(name: string): boolean;
  /** A text as this reader may read it. */
  text(text: string): FilteredText;
  /** An alert as this reader may read it: its labels and summary name no hidden server. */
  alert<A extends ServerAlert>(alert: A): A;
}

/** A label value or a message's word as a server name: `worker-3:9100` is worker-3. */
function serverNameOf(word: string): string {
  const colon = word.indexOf(':');
  return colon < 0 ? word : word.slice(0, colon);
}

/** Everything visible: the filter for a reader who may read every server. */
export const visibleNamesOfEveryServer: VisibleNames = {
  hides: () => false,
  text: text => ({ text, hidden: new Set() }),
  alert: alert => alert,
};

/** The names of the snapshot's servers this reader may not read, and the filter over them. */
export function visibleNames(
  scope: ServerReadScope,
  cluster: string,
  snap: ClusterSnapshot,
): VisibleNames {
  if (scope.unconditional) return visibleNamesOfEveryServer;
  const hidden = new Set(
    snap.nodes
      .filter(n => !scope.filter(serverResourceOf(cluster, n)))
      .map(n => n.metadata?.name ?? '')
      .filter(Boolean),
  );
  if (hidden.size === 0) return visibleNamesOfEveryServer;
  const hides = (name: string) => hidden.has(serverNameOf(name.trim()));
  const text = (value: string) => filterText(value, hides);
  return {
    hides,
    text,
    alert: alert => {
      const labels = Object.fromEntries(
        Object.entries(alert.labels).map(([k, v]) => [
          k,
          hides(v) ? HIDDEN_SERVER : text(v).text,
        ]),
      );
      return {
        ...alert,
        labels,
        ...(alert.summary !== undefined
          ? { summary: text(alert.summary).text }
          : {}),
      };
    },
  };
}

/** One part of a message: plain words, or a list item "Head (inner, ...)". */
type Part =
  | { kind: 'words'; text: string }
  | { kind: 'item'; text: string; names: string[] };

const ITEM_STARTS = [', ', ': ', '; '];

/**
 * The parts of a message: every "Head (first, ...)" is an item, the way the operator
 * lists alerts ("NodeDown (worker-3, critical)") and steps ("worker-1 (Draining)");
 * its head and its first inner word are what may name a server. Linear: each scan
 * starts where the last ended.
 */
function partsOf(text: string): Part[] {
  const parts: Part[] = [];
  let at = 0;
  for (;;) {
    const open = text.indexOf(' (', at);
    if (open < 0) break;
    const close = text.indexOf(')', open);
    if (close < 0) break;
    // Searched within this part only: a search back from `open` over the whole text
    // would make a long text of many items quadratic.
    const since = text.slice(at, open);
    let start = at;
    for (const sep of ITEM_STARTS) {
      const k = since.lastIndexOf(sep);
      if (k >= 0 && at + k + sep.length > start) start = at + k + sep.length;
    }
    if (start > at) parts.push({ kind: 'words', text: text.slice(at, start) });
    const inner = text.slice(open + 2, close);
    parts.push({
      kind: 'item',
      text: text.slice(start, close + 1),
      names: [text.slice(start, open), inner.split(', ')[0]],
    });
    at = close + 1;
  }
  if (at < text.length) parts.push({ kind: 'words', text: text.slice(at) });
  return parts;
}

/** Words that may be a server's name: DNS labels and dots. */
const WORD = /[A-Za-z0-9][A-Za-z0-9._-]*/g;

/** `text` with every hidden server taken out (list items) or replaced (other words). */
function filterText(
  text: string,
  hides: (name: string) => boolean,
): FilteredText {
  const hidden = new Set<string>();
  const parts = partsOf(text);
  let out = '';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part.kind === 'words') {
      out += part.text;
      continue;
    }
    // A list: items joined by ", ". The hidden ones go; the list says how many.
    const kept: string[] = [];
    const gone = new Set<string>();
    let j = i;
    for (;;) {
      const item = parts[j] as Extract<Part, { kind: 'item' }>;
      const hiddenName = item.names.find(hides);
      if (hiddenName) gone.add(serverNameOf(hiddenName.trim()));
      else kept.push(item.text);
      const sep = parts[j + 1];
      const next = parts[j + 2];
      if (sep?.kind === 'words' && sep.text === ', ' && next?.kind === 'item') {
        j += 2;
      } else break;
    }
    i = j;
    gone.forEach(n => hidden.add(n));
    if (gone.size === 0) out += kept.join(', ');
    else if (kept.length === 0)
      out += `on ${gone.size} ${
        gone.size === 1 ? 'server' : 'servers'
      } you cannot see`;
    else out += `${kept.join(', ')}, ${hiddenServersText(gone.size)}`;
  }
  // Any other word that is a hidden server's name.
  const replaced = out.replace(WORD, word => {
    const name = withoutTrailingPunctuation(word);
    if (!hides(name)) return word;
    hidden.add(name);
    return HIDDEN_SERVER + word.slice(name.length);
  });
  return { text: replaced, hidden };
}

/**
 * The word without the dots, dashes and underscores that end it ("worker-3." is worker-3).
 * A loop, not `/[._-]+$/`: backtracking makes that regex quadratic on a long run of dots
 * inside a word, and the words come from Alertmanager's labels, which anyone may post.
 */
function withoutTrailingPunctuation(word: string): string {
  let end = word.length;
  while (end > 0 && '._-'.includes(word[end - 1])) end -= 1;
  return word.slice(0, end);
}
