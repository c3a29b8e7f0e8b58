import { useId, useLayoutEffect, useRef, useState } from 'react';
import Menu from '@mui/material/Menu';
import MenuItem from '@mui/material/MenuItem';
import { alpha, type Theme } from '@mui/material/styles';
import MoreVertIcon from '@mui/icons-material/MoreVert';
import type {
  ServerAction,
  ServerListItem,
} from '@rackside/plugin-servers-common';
import { ACTION_LABELS } from '../ui/labels';
import { tooltipContainer } from './PageTooltip';
import { ACTION_ATTRIBUTE } from '../ui/rowFocus';

/** The start of the accessible name of a row's "More actions" button. */
export const MORE_ACTIONS = 'More actions';

/** Space between two buttons of a row, in px (MUI spacing 1). */
const GAP = 8;
/** The class of a row's actions box; the table styles it (rowActionsStyles). */
const ROW_ACTIONS_CLASS = 'rackside-row-actions';
/** The class of an action's button. */
const ACTION_BUTTON_CLASS = 'rackside-row-action';
/** The class of the "More actions" button. */
const MORE_BUTTON_CLASS = 'rackside-row-more';

/**
 * The table's rule for its rows' actions: buttons side by side, never shrunk
 * or wrapped, that look like MUI's small outlined buttons (primary, or error
 * for a hazard) and show the keyboard focus with an outline. Plain buttons
 * styled once for the table: MUI's Button resolved its styles, and mounted a
 * ripple, for each button of each row (bench README, session 14).
 */
export function rowActionsStyles(theme: Theme) {
  const outlined = (color: string) => ({
    border: `1px solid ${alpha(color, 0.5)}`,
    color,
    '&:hover': {
      backgroundColor: alpha(color, theme.palette.action.hoverOpacity),
      borderColor: color,
    },
    '&:focus-visible': { outline: `2px solid ${color}`, outlineOffset: 2 },
  });
  const { button } = theme.typography;
  return {
    [`& .${ROW_ACTIONS_CLASS}`]: {
      display: 'flex',
      gap: `${GAP}px`,
      flexWrap: 'nowrap',
      alignItems: 'center',
    },
    [`& .${ACTION_BUTTON_CLASS}`]: {
      display: 'inline-flex',
      alignItems: 'center',
      justifyContent: 'center',
      boxSizing: 'border-box',
      flexShrink: 0,
      whiteSpace: 'nowrap',
      minWidth: 64,
      margin: 0,
      padding: '3px 9px',
      borderRadius: `${theme.shape.borderRadius}px`,
      backgroundColor: 'transparent',
      cursor: 'pointer',
      fontFamily: button.fontFamily,
      fontWeight: button.fontWeight,
      fontSize: theme.typography.pxToRem(13),
      lineHeight: 1.75,
      letterSpacing: button.letterSpacing,
      textTransform: button.textTransform,
      ...outlined(theme.palette.primary.main),
      '&[data-tone="hazard"]': outlined(theme.palette.error.main),
    },
    [`& .${MORE_BUTTON_CLASS}`]: {
      display: 'inline-flex',
      alignItems: 'center',
      justifyContent: 'center',
      flexShrink: 0,
      margin: 0,
      padding: '5px',
      border: 0,
      borderRadius: '50%',
      backgroundColor: 'transparent',
      color: theme.palette.action.active,
      cursor: 'pointer',
      '&:hover': { backgroundColor: theme.palette.action.hover },
      '&:focus-visible': {
        outline: `2px solid ${theme.palette.primary.main}`,
        outlineOffset: 2,
      },
    },
  };
}

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
  const box = useRef<HTMLDivElement>(null);
  // Widths of the buttons as last drawn: a button moved into the menu keeps
  // its width, so the row knows when it fits again.
  const widths = useRef(new Map<ServerAction | 'more', number>());
  const [count, setCount] = useState(actions.length);
  const [space, setSpace] = useState(0);
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const menuId = useId();
  const buttonId = useId();

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
