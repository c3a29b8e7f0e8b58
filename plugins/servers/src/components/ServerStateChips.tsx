import Chip from '@mui/material/Chip';
import Typography from '@mui/material/Typography';
import { chipLabelSx } from './chips';

/** A server's readiness, as the table and the entity page show it. */
export function ReadyChip(props: { ready: boolean }) {
  const { ready } = props;
  return (
    <Chip
      size="small"
      variant="outlined"
      label={ready ? 'Ready' : 'NotReady'}
      color={ready ? 'success' : 'error'}
    />
  );
}

/** Whether a server is cordoned, as the table and the entity page show it. */
export function SchedulableChip(props: { unschedulable: boolean }) {
  return props.unschedulable ? (
    <Chip
      size="small"
      label="Cordoned"
      color="warning"
      sx={chipLabelSx('warning')}
    />
  ) : (
    <Typography variant="body2">Schedulable</Typography>
  );
}
