import { useCallback } from 'react';

/**
 * A ref for a dialog's Paper (the element with role="dialog" and its
 * aria-labelledby) that moves the keyboard focus onto it when it mounts, so a
 * screen reader announces the dialog's title and Tab goes on to its first
 * field. MUI's focus trap would otherwise focus the backdrop's container,
 * which has no name; it leaves focus alone once it is inside. Stable, so it
 * runs once per opening, not on every render.
 */
export function useFocusOnOpen(): (element: HTMLElement | null) => void {
  return useCallback((element: HTMLElement | null) => {
    element?.focus();
  }, []);
}

/** The Paper props that go with useFocusOnOpen: focusable by script only. */
export const FOCUSABLE_PAPER = { tabIndex: -1 } as const;
