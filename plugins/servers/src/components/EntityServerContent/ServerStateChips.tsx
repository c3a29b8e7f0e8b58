import Chip from '@mui/material/Chip';
import Typography from '@mui/material/Typography';
import { chipLabelSx, CORDONED_CHIP, readyChip } from '../ui/chips';

/** A server's readiness, as the table and the entity page show it. */
export function ReadyChip(props: { ready: boolean }) {
  return <Chip size="small" variant="outlined" {...readyChip(props.ready)} />;
}

/** Whether a server is cordoned, as the table and the entity page show it. */
export function SchedulableChip(props: { unschedulable: boolean }) {
  return props.unschedulable ? (
    <Chip
      size="small"
      {...CORDONED_CHIP}
      sx={chipLabelSx(CORDONED_CHIP.color)}
    />
  ) : (
    <Typography variant="body2">Schedulable</Typography>
  );
}
