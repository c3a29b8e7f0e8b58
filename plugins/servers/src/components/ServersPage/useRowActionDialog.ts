import { useCallback, useEffect, useState, type RefObject } from 'react';
import type {
  ServerAction,
  ServerListItem,
} from '@rackside/plugin-servers-common';
import { findServerRow, keepFocusInRow } from '../ui/rowFocus';
import { rowActions } from './ServerRow';

/** The action a row's button asked for, on that row's server. */
export interface RowAction {
  server: ServerListItem;
  action: ServerAction;
}

/**
 * The action dialog a row opened. When it closes, the focus goes back to the action that
 * opened it, or, if the row no longer offers it, to the row's replacement (looked up in
 * `section`).
 */
export function useRowActionDialog(section: RefObject<HTMLElement>) {
  const [dialog, setDialog] = useState<RowAction | undefined>();
  // The row whose dialog just closed.
  const [returnTo, setReturnTo] = useState<RowAction | undefined>();
  const closeDialog = () => {
    setReturnTo(dialog);
    setDialog(undefined);
  };
  useEffect(() => {
    // Runs after the dialog's own focus trap has restored what it could.
    if (!returnTo || !section.current) return;
    const row = findServerRow(section.current, returnTo.server.name);
    if (row) keepFocusInRow(row, rowActions(returnTo.server), returnTo.action);
    setReturnTo(undefined);
  }, [returnTo, section]);
  const onAction = useCallback(
    (server: ServerListItem, action: ServerAction) =>
      setDialog({ server, action }),
    [],
  );
  return { dialog, onAction, closeDialog };
}
