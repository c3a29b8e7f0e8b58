import type { ClusterSummaryResponse } from '@rackside/plugin-servers-common';
import type { ServersApi } from '../../api';
import { createFirstWindows, type FirstWindows } from '../hooks/firstWindows';
import { FIRST_WINDOW_REQUEST } from '../hooks/windowRequests';

/**
 * How long the requests a page's loader started stay good for the page that
 * mounts: past it (the page's code took that long to arrive, or the user went
 * elsewhere first) the page asks afresh rather than show an old answer.
 */
export const PAGE_START_FRESH_MS = 10_000;

/** What the Servers page's loader asked before the page's code arrived. */
export interface ServersPageStart {
  /** The clusters' answer (the page's read decision). */
  clusters: Promise<ClusterSummaryResponse[]>;
  /** Each available cluster's first window, asked as the clusters answer. */
  firstWindows: FirstWindows;
}

/** The requests one page load started, handed to the page that mounts. */
export interface PageStart {
  /** The requests, to the first caller only and only while fresh; then undefined. */
  take(): ServersPageStart | undefined;
}

/**
 * Starts the Servers page's first requests: the clusters and, as they answer,
 * each available cluster's first window. The page's loader calls it as it asks
 * for the page's code, so on a first visit the answers travel while that code
 * downloads and evaluates, instead of after the page has rendered (bench
 * README, session 14). The page takes them once: a later visit, or a page that
 * mounts after {@link PAGE_START_FRESH_MS}, asks the API again.
 */
export function startServersPage(
  api: ServersApi,
  now: () => number = Date.now,
): PageStart {
  const startedAt = now();
  const firstWindows = createFirstWindows(api);
  const clusters = api.listClusters().then(items => {
    firstWindows.start(
      items.filter(c => c.available).map(c => c.name),
      FIRST_WINDOW_REQUEST,
    );
    return items;
  });
  // Its rejection (a 403 is the page's read decision) is the page's to show.
  clusters.catch(() => {});
  let taken = false;
  return {
    take() {
      const fresh = !taken && now() - startedAt <= PAGE_START_FRESH_MS;
      taken = true;
      return fresh ? { clusters, firstWindows } : undefined;
    },
  };
}
