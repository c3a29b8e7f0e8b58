import { alpha, type Theme } from '@mui/material/styles';
import { hasBlackLabel } from '../ui/chips';

/** The palette colours a table chip takes, as MUI's Chip names them. */
export type CellChipTone =
  | 'default'
  | 'primary'
  | 'success'
  | 'error'
  | 'warning';

/** The class of a chip in a server row; the table styles it (cellChipStyles). */
export const CELL_CHIP_CLASS = 'rackside-chip';

/**
 * A chip in a server row: a span the table styles with one rule
 * ({@link cellChipStyles}), where MUI's Chip resolved its styles for each chip
 * of each row on every render (bench README, session 14: a row's MUI
 * components were most of the first rows' render). It looks like a small MUI
 * Chip; the entity page, which draws a few, keeps MUI's (ServerStateChips).
 */
export function CellChip(props: {
  label: string;
  /** Named as MUI's Chip and chips.ts name it, so a chip of chips.ts spreads in. */
  color?: CellChipTone;
  variant?: 'filled' | 'outlined';
  testId?: string;
}) {
  const { label, color = 'default', variant = 'filled', testId } = props;
  return (
    <span
      className={CELL_CHIP_CLASS}
      data-tone={color}
      data-variant={variant}
      data-testid={testId}
    >
      {label}
    </span>
  );
}

/**
 * The table's rule for its chips: a small MUI chip's shape, the palette
 * colour's main for an outlined chip's border and label, and for a filled one
 * its background with the label MUI would write, black on the light warning
 * colour (chips.ts: white there falls below WCAG AA contrast).
 */
export function cellChipStyles(theme: Theme) {
  const tones = ['primary', 'success', 'error', 'warning'] as const;
  const toneRules = Object.fromEntries(
    tones.flatMap(tone => {
      const color = theme.palette[tone];
      return [
        [
          `&[data-tone="${tone}"][data-variant="filled"]`,
          {
            backgroundColor: color.main,
            color: hasBlackLabel(tone)
              ? theme.palette.common.black
              : color.contrastText,
          },
        ],
        [
          `&[data-tone="${tone}"][data-variant="outlined"]`,
          {
            border: `1px solid ${alpha(color.main, 0.7)}`,
            color: color.main,
          },
        ],
      ];
    }),
  );
  return {
    [`& .${CELL_CHIP_CLASS}`]: {
      display: 'inline-flex',
      alignItems: 'center',
      boxSizing: 'border-box',
      height: 24,
      padding: '0 8px',
      marginRight: theme.spacing(1),
      borderRadius: '12px',
      border: '1px solid transparent',
      fontFamily: theme.typography.fontFamily,
      fontSize: theme.typography.pxToRem(12),
      fontWeight: theme.typography.fontWeightMedium,
      lineHeight: theme.spacing(2.5),
      whiteSpace: 'nowrap',
      verticalAlign: 'middle',
      '&[data-variant="filled"]': {
        backgroundColor: theme.palette.action.selected,
        color: theme.palette.text.primary,
      },
      '&[data-variant="outlined"]': {
        borderColor: theme.palette.divider,
        color: theme.palette.text.primary,
      },
      ...toneRules,
    },
  };
}
