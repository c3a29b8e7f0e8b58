import { useLayoutEffect, useRef } from 'react';
import TableRow, { type TableRowProps } from '@mui/material/TableRow';
import { focusInRow, keepFocusInRow } from './rowFocus';

/**
 * A table row that keeps the keyboard focus when a re-render removes the
 * focused element (an Add button once the machine is being added, Reset and
 * add once its request runs): the focus goes to the row's first link or
 * button, else to the row itself (focusable by script only), not to <body>.
 */
export function FocusKeepingRow(props: TableRowProps) {
  const ref = useRef<HTMLTableRowElement>(null);
  // Read before this render is committed: whether the focus is in the row.
  const held = focusInRow(ref.current);
  useLayoutEffect(() => {
    if (held && ref.current) keepFocusInRow(ref.current, [], held.action);
  });
  return <TableRow tabIndex={-1} {...props} ref={ref} />;
}

/**
 * The row around the element that has the focus now, to give the focus back
 * to when a dialog it opened closes (see {@link returnFocusToRow}).
 */
export function focusedRow(): HTMLElement | undefined {
  if (typeof document === 'undefined') return undefined;
  return document.activeElement?.closest<HTMLElement>('tr') ?? undefined;
}

/**
 * After a dialog closed: if the focus fell to <body> (the button that opened
 * it is gone), puts it back in the row that button was in.
 */
export function returnFocusToRow(row: HTMLElement | undefined): void {
  if (row?.isConnected) keepFocusInRow(row, [], undefined);
}
