import type { SxProps, Theme } from '@mui/material/styles';

type ChipColor =
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
 */
export function chipLabelSx(color: ChipColor): SxProps<Theme> | undefined {
  return color === 'warning' || color === 'info'
    ? { color: 'common.black' }
    : undefined;
}
