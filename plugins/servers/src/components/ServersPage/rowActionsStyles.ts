import { alpha, type Theme } from '@mui/material/styles';

/** Space between two buttons of a row, in px (MUI spacing 1). */
export const GAP = 8;
/** The class of a row's actions box; the table styles it (rowActionsStyles). */
export const ROW_ACTIONS_CLASS = 'rackside-row-actions';
/** The class of an action's button. */
export const ACTION_BUTTON_CLASS = 'rackside-row-action';
/** The class of the "More actions" button. */
export const MORE_BUTTON_CLASS = 'rackside-row-more';

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
