import { useId, useState } from 'react';
import Menu from '@mui/material/Menu';
import MenuItem from '@mui/material/MenuItem';
import MoreVertIcon from '@mui/icons-material/MoreVert';
import type {
  ServerAction,
  ServerListItem,
} from '@rackside/plugin-servers-common';
import { ACTION_LABELS } from '../ui/labels';
import { tooltipContainer } from './PageTooltip';
import { ACTION_ATTRIBUTE } from '../ui/rowFocus';
import {
  ACTION_BUTTON_CLASS,
  MORE_BUTTON_CLASS,
  ROW_ACTIONS_CLASS,
} from './rowActionsStyles';
import { useButtonsThatFit } from './useButtonsThatFit';

// The fitting rule is part of what a row's actions are (RowActions.test.tsx reads it here).
export { buttonsThatFit } from './useButtonsThatFit';

/** The start of the accessible name of a row's "More actions" button. */
export const MORE_ACTIONS = 'More actions';

/**
 * A row's actions: buttons while they fit in the cell, the rest behind a
 * "More actions" menu (aria-haspopup, arrow keys, Escape; the focus goes back
 * to the button when the menu closes). The buttons carry `data-action` for
 * rowFocus; the menu's items do not, they live outside the row.
 */
export function RowActions(props: {
  server: ServerListItem;
  actions: readonly ServerAction[];
  onAction(server: ServerListItem, action: ServerAction): void;
}) {
  const { server, actions, onAction } = props;
  const { box, count } = useButtonsThatFit(actions);
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const menuId = useId();
  const buttonId = useId();

  const shown = actions.slice(0, Math.min(count, actions.length));
  const hidden = actions.slice(shown.length);
  const open = anchor !== null && hidden.length > 0;
  return (
    <div ref={box} className={ROW_ACTIONS_CLASS} data-testid="row-actions">
      {shown.map(action => (
        <button
          key={action}
          type="button"
          className={ACTION_BUTTON_CLASS}
          data-tone={server.actions[action] === 'hazard' ? 'hazard' : undefined}
          onClick={() => onAction(server, action)}
          {...{ [ACTION_ATTRIBUTE]: action }}
          aria-label={`${ACTION_LABELS[action]} ${server.name}`}
        >
          {ACTION_LABELS[action]}
        </button>
      ))}
      {hidden.length > 0 && (
        <>
          <button
            type="button"
            className={MORE_BUTTON_CLASS}
            id={buttonId}
            aria-label={`${MORE_ACTIONS} ${server.name}`}
            aria-haspopup="menu"
            aria-expanded={open ? 'true' : 'false'}
            aria-controls={open ? menuId : undefined}
            onClick={e => setAnchor(e.currentTarget)}
            data-testid="more-actions"
          >
            <MoreVertIcon fontSize="small" />
          </button>
          <Menu
            anchorEl={anchor}
            // In the page's main landmark, as the tooltips (axe region).
            container={tooltipContainer}
            open={open}
            onClose={() => setAnchor(null)}
            MenuListProps={{ id: menuId, 'aria-labelledby': buttonId }}
          >
            {hidden.map(action => (
              <MenuItem
                key={action}
                data-menu-action={action}
                aria-label={`${ACTION_LABELS[action]} ${server.name}`}
                sx={
                  server.actions[action] === 'hazard'
                    ? { color: 'error.main' }
                    : undefined
                }
                onClick={() => {
                  setAnchor(null);
                  onAction(server, action);
                }}
              >
                {ACTION_LABELS[action]}
              </MenuItem>
            ))}
          </Menu>
        </>
      )}
    </div>
  );
}
