import Tooltip, { type TooltipProps } from '@mui/material/Tooltip';

/**
 * Where a tooltip's popup goes: into the page's main landmark, not at the end
 * of <body> where MUI puts it by default. There it would be content outside
 * every landmark (axe `region`), and a screen reader's landmark navigation
 * would not find it with the row it describes. Outside a page with a <main>
 * (say, a card embedded elsewhere) it stays at the end of <body>.
 */
export function tooltipContainer(): HTMLElement {
  return document.querySelector<HTMLElement>('main') ?? document.body;
}

/** MUI's Tooltip, with its popup inside the page's main landmark. */
export function PageTooltip(props: TooltipProps) {
  const { PopperProps, ...rest } = props;
  return (
    <Tooltip
      {...rest}
      PopperProps={{ container: tooltipContainer, ...PopperProps }}
    />
  );
}
