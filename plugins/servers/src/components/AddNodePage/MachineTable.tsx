import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import type {
  CanReclaimResponse,
  TalosMachineResponse,
} from '@rackside/plugin-servers-common';
import { MACHINE_PHASE_TEXT, RESET_AND_ADD } from './texts';
import { FocusKeepingRow } from '../ui/FocusKeepingRow';

/** The machines discovery found; Pending ones can be added. */
export function MachineTable(props: {
  machines: readonly TalosMachineResponse[];
  canAdd: boolean;
  can?: CanReclaimResponse;
  onAdd(machine: TalosMachineResponse): void;
  onResetAndAdd(): void;
}) {
  const { machines, canAdd, can, onAdd, onResetAndAdd } = props;
  return (
    <Box mb={3}>
      <Box display="flex" alignItems="center" gap={2}>
        <Typography variant="h6" component="h3">
          Machines
        </Typography>
        {can?.allowed && (
          <Button
            size="small"
            variant="outlined"
            color="warning"
            onClick={onResetAndAdd}
          >
            {RESET_AND_ADD}
          </Button>
        )}
      </Box>
      {machines.length === 0 ? (
        <Typography variant="body2">
          No machines found yet. A machine in maintenance mode at a discovery
          address shows up here.
        </Typography>
      ) : (
        <Table size="small" aria-label="Machines">
          <TableHead>
            <TableRow>
              <TableCell>UUID</TableCell>
              <TableCell>Address</TableCell>
              <TableCell>Phase</TableCell>
              <TableCell>Node</TableCell>
              <TableCell>Added by</TableCell>
              <TableCell>Actions</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {machines.map(m => (
              <FocusKeepingRow
                key={m.uuid}
                data-testid="machine-row"
                data-uuid={m.uuid}
                data-phase={m.phase}
              >
                <TableCell>{m.uuid}</TableCell>
                <TableCell>{m.address ?? ''}</TableCell>
                <TableCell>
                  {MACHINE_PHASE_TEXT[m.phase]}
                  {m.message && (
                    <Typography
                      variant="caption"
                      component="div"
                      color="text.secondary"
                    >
                      {m.message}
                    </Typography>
                  )}
                </TableCell>
                <TableCell>{m.nodeName ?? ''}</TableCell>
                <TableCell>
                  {m.join ? `${m.join.by}: ${m.join.reason}` : ''}
                </TableCell>
                <TableCell>
                  {canAdd && m.phase === 'Pending' && !m.join && (
                    <Button
                      size="small"
                      variant="contained"
                      onClick={() => onAdd(m)}
                      aria-label={`Add ${m.uuid}`}
                    >
                      Add
                    </Button>
                  )}
                </TableCell>
              </FocusKeepingRow>
            ))}
          </TableBody>
        </Table>
      )}
    </Box>
  );
}
