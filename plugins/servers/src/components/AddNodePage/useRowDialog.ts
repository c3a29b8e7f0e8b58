import { useEffect, useRef, useState } from 'react';
import { focusedRow, returnFocusToRow } from '../ui/FocusKeepingRow';

/**
 * Which dialog a page has open, set from a row's button. The row whose button opened the
 * dialog gets the focus back when it closes, also if that button is gone by then (Add
 * once the join runs).
 */
export function useRowDialog<D>(): [
  dialog: D | undefined,
  setDialog: (next: D | undefined) => void,
] {
  const [dialog, setDialogState] = useState<D | undefined>();
  const opener = useRef<HTMLElement | undefined>();
  const [closed, setClosed] = useState(0);
  const setDialog = (next: D | undefined) => {
    if (next && !dialog) opener.current = focusedRow();
    if (!next && dialog) setClosed(n => n + 1);
    setDialogState(next);
  };
  useEffect(() => {
    // After the dialog's focus trap has restored what it could.
    if (closed > 0) returnFocusToRow(opener.current);
  }, [closed]);
  return [dialog, setDialog];
}
