import { useEffect, useState } from 'react';

/** Height of one body row; rows are fixed height so the window is arithmetic. */
export const ROW_HEIGHT = 56;
/** Height of the scrolling viewport. */
export const VIEWPORT_HEIGHT = 560;
/**
 * Rows rendered above and below the visible ones, once the first rows are on
 * screen (`useOverscanAfterFirstPaint`).
 */
export const OVERSCAN = 6;

/** The rows [start, end) to render for a scroll position. */
export function visibleRange(
  count: number,
  scrollTop: number,
  viewportHeight: number = VIEWPORT_HEIGHT,
  rowHeight: number = ROW_HEIGHT,
  overscan: number = OVERSCAN,
): { start: number; end: number } {
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const visible = Math.ceil(viewportHeight / rowHeight) + 1;
  const start = Math.min(count, Math.max(0, first - overscan));
  const end = Math.min(count, first + visible + overscan);
  return { start, end: Math.max(start, end) };
}

/**
 * Runs `run` once the browser has painted the frame after this call: its
 * animation frame, then a task (a callback of the frame itself would run before
 * that paint). Returns the cancel.
 */
function afterNextPaint(run: () => void): () => void {
  if (typeof requestAnimationFrame !== 'function') {
    const timer = setTimeout(run, 0);
    return () => clearTimeout(timer);
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const frame = requestAnimationFrame(() => {
    timer = setTimeout(run, 0);
  });
  return () => {
    cancelAnimationFrame(frame);
    if (timer !== undefined) clearTimeout(timer);
  };
}

/**
 * The overscan of a table: none until its first rows have been painted, then
 * OVERSCAN. The first rows' render is most of the time between the first
 * window's answer and what the user sees, and the overscan rows are out of
 * view: drawn alone, the rows in view appear sooner (bench/README.md, session
 * 13: about 20 ms less from the answer to the first row), and the rows around
 * them follow a frame later, before anyone scrolls.
 */
export function useOverscanAfterFirstPaint(hasRows: boolean): number {
  const [overscan, setOverscan] = useState(0);
  useEffect(() => {
    if (!hasRows || overscan > 0) return undefined;
    return afterNextPaint(() => setOverscan(OVERSCAN));
  }, [hasRows, overscan]);
  return overscan;
}
