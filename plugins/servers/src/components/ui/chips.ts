import type { SxProps, Theme } from '@mui/material/styles';

export type ChipColor =
  | 'default'
  | 'primary'
  | 'secondary'
  | 'error'
  | 'info'
  | 'success'
  | 'warning';

/**
 * The label colour of a filled chip. MUI writes a white label on every palette
 * colour, which on the light warning and info colours falls below the 4.5:1
 * contrast of WCAG AA (axe color-contrast, serious); those get a black label.
 * The chip's text says the state either way: the colour only repeats it.
 *
 * No colour transition: a status chip that changes (Running to Done) switches its
 * label colour at once, and MUI's 300 ms background fade would show the new label on
 * the old colour meanwhile (white on light blue), below the contrast for that time.
 */
export function chipLabelSx(color: ChipColor): SxProps<Theme> {
  return hasBlackLabel(color)
    ? { color: 'common.black', transition: 'none' }
    : { transition: 'none' };
}

/** Whether a filled chip of `color` takes a black label (see chipLabelSx). */
export function hasBlackLabel(color: ChipColor): boolean {
  return color === 'warning' || color === 'info';
}

/** A server's readiness as a chip: its label and colour (table and entity page). */
export function readyChip(ready: boolean) {
  return ready
    ? { label: 'Ready', color: 'success' as const }
    : { label: 'NotReady', color: 'error' as const };
}

/** A cordoned server's chip (table and entity page). */
export const CORDONED_CHIP = { label: 'Cordoned', color: 'warning' as const };
