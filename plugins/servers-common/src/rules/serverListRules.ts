/**
 * The Servers table's filter and sort. The backend applies them to answer a window of
 * the list (`GET /clusters/:cluster/servers?filter=&sort=&direction=`), the page to
 * the rows it holds: one function each, so a window and the table cannot disagree on
 * which servers match or in which order they come.
 */
import { compareTalosVersions } from './talosVersionOrder';

/** The columns the Servers table sorts by (as its headers name them). */
export const SERVER_SORT_KEYS = [
  'name',
  'role',
  'ready',
  'phase',
  'health',
  'talos',
] as const;
/** A column the Servers table sorts by. */
export type ServerSortKey = (typeof SERVER_SORT_KEYS)[number];
/** Ascending or descending. */
export type ServerSortDirection = 'asc' | 'desc';

/** What the filter and the sort read of a server (a list item has all of it). */
export interface ServerOrderFields {
  name: string;
  /** Sorted, from `node-role.kubernetes.io/<role>` labels. */
  roles: readonly string[];
  labels?: Readonly<Record<string, string>>;
  ready: boolean;
  /** The open maintenance, if any. */
  maintenance?: { phase: string };
  /** The BMC's health reading, if the node has a ServerBMC that was read. */
  health?: { rollup: string };
  /** The Talos version the Node reports (`v1.12.0`), if it names one. */
  talosVersion?: string;
}

/** The order of the Health column, ascending: the worst first, no reading last. */
const HEALTH_ORDER: Record<string, string> = {
  Critical: '0',
  Warning: '1',
  Unknown: '2',
  OK: '3',
};

/** The filter text as it is compared: trimmed, lower case. */
export function normalizeServerFilter(text: string): string {
  return text.trim().toLowerCase();
}

/**
 * Whether a server matches the table's filter text: a case-insensitive part of its
 * name, of one of its roles, of one of its labels written `key=value`, of its health
 * written `health=<rollup>` (so "critical" or "health=warning" filter the Health
 * column), or of its open maintenance's phase written `phase=<phase>` (the Servers
 * page's "Awaiting approval" filter is `phase=AwaitingApproval`). An empty filter
 * matches every server.
 */
export function matchesServerFilter(
  server: ServerOrderFields,
  filter: string,
): boolean {
  const needle = normalizeServerFilter(filter);
  if (!needle) return true;
  if (server.name.toLowerCase().includes(needle)) return true;
  if (server.roles.some(r => r.toLowerCase().includes(needle))) return true;
  const labels = server.labels ?? {};
  for (const key of Object.keys(labels)) {
    if (`${key}=${labels[key]}`.toLowerCase().includes(needle)) return true;
  }
  if (
    server.health &&
    `health=${server.health.rollup}`.toLowerCase().includes(needle)
  ) {
    return true;
  }
  if (
    server.maintenance &&
    `phase=${server.maintenance.phase}`.toLowerCase().includes(needle)
  ) {
    return true;
  }
  return false;
}

// One collation on every side (a browser's default locale is not the server's).
const collate = new Intl.Collator('en').compare;

function sortValue(server: ServerOrderFields, key: ServerSortKey): string {
  switch (key) {
    case 'role':
      return server.roles.join(',');
    case 'ready':
      return server.ready ? '1' : '0';
    case 'phase':
      return server.maintenance?.phase ?? '';
    case 'health':
      return server.health ? HEALTH_ORDER[server.health.rollup] ?? '2' : '4';
    default:
      return server.name;
  }
}

/**
 * The table's order of two servers by a column (`ready`: not ready first, ascending;
 * `phase`: servers without a maintenance first; `health`: Critical, Warning, Unknown,
 * OK, then servers without a reading, ascending; `talos`: by version, v1.9.0 before
 * v1.12.0 (compareTalosVersions), servers without one last in either direction), ties
 * broken by name, ascending whatever the direction. For `Array.prototype.sort`.
 */
export function compareServers(
  a: ServerOrderFields,
  b: ServerOrderFields,
  key: ServerSortKey,
  direction: ServerSortDirection,
): number {
  if (key === 'talos') {
    // Servers without a version last, in either direction: they are not on the scale.
    const [va, vb] = [a.talosVersion, b.talosVersion];
    if (va === undefined || vb === undefined) {
      if (va !== vb) return va === undefined ? 1 : -1;
      return collate(a.name, b.name);
    }
    const c = compareTalosVersions(va, vb);
    if (c !== 0) return direction === 'asc' ? c : -c;
    return collate(a.name, b.name);
  }
  if (key !== 'name') {
    const c = collate(sortValue(a, key), sortValue(b, key));
    if (c !== 0) return direction === 'asc' ? c : -c;
    return collate(a.name, b.name);
  }
  const c = collate(a.name, b.name);
  return direction === 'asc' ? c : -c;
}
