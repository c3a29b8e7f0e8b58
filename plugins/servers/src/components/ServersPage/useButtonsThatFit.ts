import { useLayoutEffect, useRef, useState } from 'react';
import type { ServerAction } from '@rackside/plugin-servers-common';
import { ACTION_ATTRIBUTE } from '../ui/rowFocus';
import { GAP } from './rowActionsStyles';

/** Width assumed for the "More actions" button before it was ever drawn. */
const MORE_WIDTH = 34;

/**
 * How many of a row's actions are buttons, in their order, when the buttons
 * are `widths` wide and the cell has `space`: all of them when they fit (or
 * when a width is unknown: nothing has been laid out yet, or no layout at
 * all), else as many as fit beside the "More actions" button, which holds
 * the rest. Never fewer than none.
 */
export function buttonsThatFit(
  widths: readonly (number | undefined)[],
  space: number,
  moreWidth: number = MORE_WIDTH,
): number {
  if (space <= 0 || widths.some(w => w === undefined || w <= 0)) {
    return widths.length;
  }
  const known = widths as readonly number[];
  const all = known.reduce((sum, w) => sum + w, 0) + GAP * (known.length - 1);
  if (all <= space) return known.length;
  let used = moreWidth;
  let count = 0;
  for (const w of known) {
    if (used + GAP + w > space) break;
    used += GAP + w;
    count += 1;
  }
  return count;
}

/**
 * How many of a row's `actions` are drawn as buttons: measured after each layout of the
 * box (the ref to put on it) and again whenever the box is resized.
 */
export function useButtonsThatFit(actions: readonly ServerAction[]) {
  const box = useRef<HTMLDivElement>(null);
  // Widths of the buttons as last drawn: a button moved into the menu keeps
  // its width, so the row knows when it fits again.
  const widths = useRef(new Map<ServerAction | 'more', number>());
  const [count, setCount] = useState(actions.length);
  const [space, setSpace] = useState(0);

  useLayoutEffect(() => {
    const element = box.current;
    if (!element || typeof ResizeObserver === 'undefined') return undefined;
    const observer = new ResizeObserver(() => setSpace(element.clientWidth));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  useLayoutEffect(() => {
    const element = box.current;
    if (!element) return;
    element.querySelectorAll<HTMLElement>('button').forEach(b => {
      const key = (b.getAttribute(ACTION_ATTRIBUTE) ?? 'more') as
        | ServerAction
        | 'more';
      const width = b.getBoundingClientRect().width;
      if (width > 0) widths.current.set(key, width);
    });
    const next = buttonsThatFit(
      actions.map(a => widths.current.get(a)),
      element.clientWidth,
      widths.current.get('more'),
    );
    if (next !== count) setCount(next);
    // `space` only triggers: the width is read from the element itself.
  }, [actions, count, space]);

  return { box, count };
}
