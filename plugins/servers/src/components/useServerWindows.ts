import {
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
} from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import {
  compareServers,
  matchesServerFilter,
  normalizeServerFilter,
  type QuorumSummaryResponse,
  type ServerListItem,
  type ServerListWindowQuery,
  type ServerSortDirection,
  type ServerSortKey,
} from '@rackside/plugin-servers-common';
import { serversApiRef } from '../api';
import { FirstWindowsContext } from './firstWindows';

/** Rows a window asks for (the table shows about a dozen at a time). */
export const WINDOW_ROWS = 100;
/** The most rows one request asks for (the backend's limit). */
export const MAX_WINDOW_ROWS = 1000;
/** Rows fetched ahead of the last one in view, so scrolling rarely waits. */
export const PREFETCH_ROWS = 50;
/** How long the filter text must rest before it is sent to the server. */
export const FILTER_DELAY_MS = 300;

/** What the table shows: its filter text and sort. */
export interface ServerView {
  filter: string;
  sortKey: ServerSortKey;
  sortDirection: ServerSortDirection;
}

/** The table's view until the user changes it: every server, by name. */
export const FIRST_VIEW: ServerView = {
  filter: '',
  sortKey: 'name',
  sortDirection: 'asc',
};

interface WalkQuery {
  filter: string;
  sort: ServerSortKey;
  direction: ServerSortDirection;
}

/** The request of one window of a walk. */
function windowRequest(
  query: WalkQuery,
  limit: number,
  token?: string,
): ServerListWindowQuery {
  return {
    limit,
    continue: token,
    filter: query.filter || undefined,
    sort: query.sort,
    direction: query.direction,
  };
}

/** The windows of one walk received so far: always a prefix of its rows. */
interface Walk {
  key: string;
  query: WalkQuery;
  rows: ServerListItem[];
  total: number;
  next?: string;
  quorum: QuorumSummaryResponse;
}

/** The servers of one cluster as the table shows them, window by window. */
export interface ServerWindows {
  /** The rows received, in the table's order; undefined until the first window. */
  rows?: ServerListItem[];
  /** How many servers match the filter: the table is this tall. */
  total: number;
  /** How many servers the cluster has (its last answer without a filter). */
  all?: number;
  quorum?: QuorumSummaryResponse;
  error?: unknown;
  loading: boolean;
  /** Starts a new walk (a change signal, an action done), keeping the rows in view. */
  reload(): void;
  /** The table shows rows up to `end` (exclusive): fetch them if they are missing. */
  show(end: number): void;
}

/** A 410: the backend no longer holds the walk a `continue` names. */
function isGone(error: unknown): boolean {
  const e = error as {
    statusCode?: number;
    response?: { status?: number };
  } | null;
  return (e?.statusCode ?? e?.response?.status) === 410;
}

function roundUp(rows: number): number {
  return Math.min(
    MAX_WINDOW_ROWS,
    Math.max(WINDOW_ROWS, Math.ceil(rows / WINDOW_ROWS) * WINDOW_ROWS),
  );
}

/**
 * The request a section makes first, in {@link FIRST_VIEW} with nothing in view
 * yet: what the Servers page asks for each cluster before the sections render
 * (firstWindows.ts).
 */
export const FIRST_WINDOW_REQUEST: ServerListWindowQuery = windowRequest(
  {
    filter: FIRST_VIEW.filter,
    sort: FIRST_VIEW.sortKey,
    direction: FIRST_VIEW.sortDirection,
  },
  roundUp(PREFETCH_ROWS),
);

/** Whether a walk holds the whole cluster: filter and sort can then be the page's. */
function isWhole(walk: Walk | undefined): boolean {
  return (
    walk !== undefined &&
    walk.query.filter === '' &&
    walk.next === undefined &&
    walk.rows.length === walk.total
  );
}

/**
 * The windowed list of one cluster (`GET .../servers?limit=&continue=&filter=&sort=`):
 * the first {@link WINDOW_ROWS} rows in the table's filter and sort, then the next
 * windows (following `continue`) as the table scrolls towards them, never the whole
 * list at once. A cluster that arrives whole in its windows (no filter, no `continue`
 * left) is filtered and sorted in the page with the same rules the backend applies
 * (`matchesServerFilter`, `compareServers`), with no request; otherwise a new filter
 * (once typing rests) or sort starts a new walk on the server. `reload` starts a new
 * walk that covers the rows in view; nothing is fetched between reloads and scrolls.
 */
export function useServerWindows(
  cluster: string,
  view: ServerView,
): ServerWindows {
  const api = useApi(serversApiRef);
  const firstWindows = useContext(FirstWindowsContext);
  const [walk, setWalk] = useState<Walk>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [wanted, setWanted] = useState(0);
  const [epoch, setEpoch] = useState(0);
  // The step that failed last: not tried again until something changes.
  const [failed, setFailed] = useState<string>();
  const filterNow = normalizeServerFilter(view.filter);
  const [filterSent, setFilterSent] = useState(filterNow);
  useEffect(() => {
    if (filterNow === filterSent) return undefined;
    const timer = setTimeout(() => setFilterSent(filterNow), FILTER_DELAY_MS);
    return () => clearTimeout(timer);
  }, [filterNow, filterSent]);

  const whole = isWhole(walk);
  // A whole cluster keeps its walk whatever the table's filter and sort.
  const query: WalkQuery =
    walk && whole
      ? walk.query
      : {
          filter: filterSent,
          sort: view.sortKey,
          direction: view.sortDirection,
        };
  const key = JSON.stringify([
    cluster,
    query.filter,
    query.sort,
    query.direction,
    epoch,
  ]);
  const current = useRef(key);
  current.current = key;

  useEffect(() => {
    if (busy) return;
    const need = wanted + PREFETCH_ROWS;
    let limit: number;
    let token: string | undefined;
    let previous: Walk | undefined;
    if (walk?.key !== key) {
      // A new walk: as many rows as are in view, or the whole cluster it held.
      limit = roundUp(whole && walk ? Math.max(need, walk.rows.length) : need);
    } else if (walk.next !== undefined && walk.rows.length < need) {
      limit = roundUp(need - walk.rows.length);
      token = walk.next;
      previous = walk;
    } else {
      return;
    }
    const step = `${key}\n${token ?? ''}`;
    if (failed === step) return;
    setBusy(true);
    const request = windowRequest(query, limit, token);
    (
      firstWindows?.take(cluster, request) ??
      api.listServerWindow(cluster, request)
    )
      .then(
        answer => {
          if (current.current !== key) return;
          setWalk({
            key,
            query,
            rows: previous ? [...previous.rows, ...answer.items] : answer.items,
            total: answer.total,
            next: answer.continue,
            quorum: answer.quorum,
          });
          setError(undefined);
          setFailed(undefined);
        },
        reason => {
          if (current.current !== key) return;
          if (token !== undefined && isGone(reason)) {
            // The backend no longer holds this walk: start over.
            setEpoch(e => e + 1);
            return;
          }
          setError(reason);
          setFailed(step);
        },
      )
      .finally(() => setBusy(false));
    // `query` is part of `key`; `whole` follows `walk`.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api, firstWindows, cluster, key, walk, wanted, busy, failed]);

  // The last count of the whole cluster, for "N of M servers".
  const [all, setAll] = useState<number>();
  useEffect(() => {
    if (walk && walk.query.filter === '') setAll(walk.total);
  }, [walk]);

  const rows = useMemo(() => {
    if (!walk) return undefined;
    if (!isWhole(walk)) return walk.rows;
    const shown = filterNow
      ? walk.rows.filter(s => matchesServerFilter(s, filterNow))
      : walk.rows.slice();
    return shown.sort((a, b) =>
      compareServers(a, b, view.sortKey, view.sortDirection),
    );
  }, [walk, filterNow, view.sortKey, view.sortDirection]);

  const reload = useCallback(() => setEpoch(e => e + 1), []);
  const show = useCallback((end: number) => setWanted(end), []);
  return {
    rows,
    total: whole ? rows?.length ?? 0 : walk?.total ?? 0,
    all,
    quorum: walk?.quorum,
    error,
    loading: busy,
    reload,
    show,
  };
}
