import type {
  ServerListWindowQuery,
  ServerSortDirection,
  ServerSortKey,
} from '@rackside/plugin-servers-common';

/*
 * The shape of the windowed list's requests (useServerWindows), apart from the
 * hook: the Servers page's loader asks the first window before the page's code
 * has arrived (pageStart.ts), so what it asks must not pull the page in.
 */

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

/** What one walk over the servers asks: its filter and sort. */
export interface WalkQuery {
  filter: string;
  sort: ServerSortKey;
  direction: ServerSortDirection;
}

/** The request of one window of a walk. */
export function windowRequest(
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

/** A window's size for `rows` rows: whole windows, within the backend's limit. */
export function roundUp(rows: number): number {
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
