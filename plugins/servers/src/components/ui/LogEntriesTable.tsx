import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import type { BmcLogEntry } from '@rackside/plugin-servers-common';

/** The BMC's log entries as a table (the server's card and the maintenance page). */
export function LogEntriesTable(props: {
  entries: readonly BmcLogEntry[];
  label: string;
}) {
  return (
    <Table size="small" aria-label={props.label}>
      <TableHead>
        <TableRow>
          <TableCell>Time</TableCell>
          <TableCell>Severity</TableCell>
          <TableCell>Log</TableCell>
          <TableCell>Message</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>
        {props.entries.map(entry => (
          <TableRow key={`${entry.service}-${entry.id}`}>
            <TableCell>{new Date(entry.created).toLocaleString()}</TableCell>
            <TableCell>{entry.severity}</TableCell>
            <TableCell>{entry.service}</TableCell>
            <TableCell>{entry.message}</TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}
