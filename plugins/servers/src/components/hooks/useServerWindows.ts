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
} from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import { FirstWindowsContext } from './firstWindows';
import {
  FILTER_DELAY_MS,
  PREFETCH_ROWS,
  roundUp,
  windowRequest,
  type ServerView,
  type WalkQuery,
} from './windowRequests';

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
 * the first `WINDOW_ROWS` rows (windowRequests.ts) in the table's filter and sort, then the next
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
