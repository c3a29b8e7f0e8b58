import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import type { ReclaimResponse } from '@rackside/plugin-servers-common';
import { RECLAIM_PHASE_TEXT } from './texts';
import { FocusKeepingRow } from '../ui/FocusKeepingRow';

/** The Reset and add requests of the cluster, newest first. */
export function ReclaimTable(props: {
  reclaims: readonly ReclaimResponse[];
  onOpen(name: string): void;
}) {
  const { reclaims, onOpen } = props;
  if (reclaims.length === 0) return null;
  return (
    <Box mb={1}>
      <Typography variant="h6" component="h3">
        Reset and add requests
      </Typography>
      <Table size="small" aria-label="Reset and add requests">
        <TableHead>
          <TableRow>
            <TableCell>Request</TableCell>
            <TableCell>Address</TableCell>
            <TableCell>Phase</TableCell>
            <TableCell>Result</TableCell>
            <TableCell>Asked by</TableCell>
            <TableCell>Actions</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {reclaims.map(r => (
            <FocusKeepingRow
              key={r.name}
              data-testid="reclaim-row"
              data-name={r.name}
              data-phase={r.phase}
            >
              <TableCell>{r.name}</TableCell>
              <TableCell>{r.address}</TableCell>
              <TableCell>{RECLAIM_PHASE_TEXT[r.phase]}</TableCell>
              <TableCell>{r.result ?? ''}</TableCell>
              <TableCell>
                {r.requestedBy ? `${r.requestedBy}: ${r.reason ?? ''}` : ''}
              </TableCell>
              <TableCell>
                <Button size="small" onClick={() => onOpen(r.name)}>
                  {r.terminal ? 'Details' : 'Open'}
                </Button>
              </TableCell>
            </FocusKeepingRow>
          ))}
        </TableBody>
      </Table>
    </Box>
  );
}
