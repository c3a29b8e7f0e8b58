import type { ServerAction } from '@rackside/plugin-servers-common';

/**
 * Keeping the keyboard focus on a server row when its actions change (issue
 * 23). A row's buttons come and go with its state: once a drain is requested
 * the row offers Return to service instead of Drain, and the browser drops
 * the focus of a button it removes onto <body>, so a keyboard user would
 * start again from the top of the page. The row's action buttons carry
 * `data-action`; the row itself is focusable by script (tabIndex -1) as the
 * last resort.
 */

/** The attribute that names a row button's action. */
export const ACTION_ATTRIBUTE = 'data-action';

/**
 * Which action should have the focus now: the one that had it, if the row
 * still offers it; otherwise the action that took its place (the first one
 * the row did not offer before, such as Return to service after Drain);
 * otherwise the row's first action. Undefined when the row offers none.
 */
export function focusTarget(
  previous: readonly string[],
  now: readonly string[],
  focused: string | undefined,
): string | undefined {
  if (focused !== undefined && now.includes(focused)) return focused;
  return now.find(a => !previous.includes(a)) ?? now[0];
}

/** The actions a rendered row offers, in its order. */
export function actionsInRow(row: HTMLElement): ServerAction[] {
  return Array.from(
    row.querySelectorAll<HTMLElement>(`button[${ACTION_ATTRIBUTE}]`),
  ).map(b => b.getAttribute(ACTION_ATTRIBUTE) as ServerAction);
}

/**
 * Where the focus is in the row now, read before React commits a change:
 * undefined when it is not in the row, else the action of the focused button
 * (undefined `action` for another element of the row).
 */
export function focusInRow(
  row: HTMLElement | null,
): { action?: string } | undefined {
  if (!row || typeof document === 'undefined') return undefined;
  const active = document.activeElement;
  if (!active || !row.contains(active)) return undefined;
  return { action: active.getAttribute(ACTION_ATTRIBUTE) ?? undefined };
}

/** Whether nothing has the focus: the browser's <body> fallback. */
function focusIsLost(): boolean {
  const active = document.activeElement;
  return !active || active === document.body || !active.isConnected;
}

/**
 * Puts the focus back in `row` if it fell out of it (onto <body>): on the
 * action `focusTarget` picks, else on the row's first link or button, else
 * on the row. Leaves it alone when it is in the row or somewhere else on
 * purpose. Answers whether the focus is in the row afterwards.
 */
export function keepFocusInRow(
  row: HTMLElement,
  previous: readonly string[],
  focused: string | undefined,
): boolean {
  if (row.contains(document.activeElement)) return true;
  if (!focusIsLost()) return false;
  const action = focusTarget(previous, actionsInRow(row), focused);
  const button =
    action !== undefined
      ? Array.from(
          row.querySelectorAll<HTMLElement>(`button[${ACTION_ATTRIBUTE}]`),
        ).find(b => b.getAttribute(ACTION_ATTRIBUTE) === action)
      : undefined;
  const target =
    button ?? row.querySelector<HTMLElement>('a[href], button') ?? row;
  target.focus();
  return row.contains(document.activeElement);
}

/** The rendered row of `node` inside `root`, if it is in the DOM. */
export function findServerRow(
  root: ParentNode,
  node: string,
): HTMLElement | undefined {
  return Array.from(
    root.querySelectorAll<HTMLElement>('[data-testid="server-row"]'),
  ).find(r => r.dataset.node === node);
}
