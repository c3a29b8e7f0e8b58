import { createContext } from 'react';
import type {
  ServerListWindowQuery,
  ServerListWindowResponse,
} from '@rackside/plugin-servers-common';
import type { ServersApi } from '../../api';

/**
 * The first window of each cluster, asked the moment the page knows its
 * clusters rather than once each cluster's section has rendered and run its
 * effects: on a first visit that takes a render off the path to the first row.
 * A window is taken once, by the first request that asks exactly it; any other
 * request (a later walk, a reload after a change signal, another filter or
 * sort) goes to the API as always, so a prefetched answer is never shown twice.
 */
export interface FirstWindows {
  /** Asks each cluster's `request` now (a cluster at most once per page). */
  start(clusters: readonly string[], request: ServerListWindowQuery): void;
  /** The answer started for exactly this request, once; otherwise undefined. */
  take(
    cluster: string,
    request: ServerListWindowQuery,
  ): Promise<ServerListWindowResponse> | undefined;
}

const requestKey = (cluster: string, request: ServerListWindowQuery) =>
  JSON.stringify([
    cluster,
    request.limit,
    request.continue,
    request.filter,
    request.sort,
    request.direction,
  ]);

/** First windows of one page, asked through `api`. */
export function createFirstWindows(api: ServersApi): FirstWindows {
  const started = new Set<string>();
  const waiting = new Map<string, Promise<ServerListWindowResponse>>();
  return {
    start(clusters, request) {
      for (const cluster of clusters) {
        if (started.has(cluster)) continue;
        started.add(cluster);
        const answer = api.listServerWindow(cluster, request);
        // Its rejection is reported by the request that takes it.
        answer.catch(() => {});
        waiting.set(requestKey(cluster, request), answer);
      }
    },
    take(cluster, request) {
      const key = requestKey(cluster, request);
      const answer = waiting.get(key);
      waiting.delete(key);
      return answer;
    },
  };
}

/** The page's first windows; absent outside the Servers page (nothing is prefetched). */
export const FirstWindowsContext = createContext<FirstWindows | undefined>(
  undefined,
);
