import type { ReactNode } from 'react';
import Paper from '@mui/material/Paper';
import Typography from '@mui/material/Typography';
import type { MaintenancePhase } from '@rackside/plugin-servers-common';

/** The colour of a maintenance's phase chip (and of its timeline dot). */
export function phaseColor(
  phase: MaintenancePhase,
): 'default' | 'error' | 'success' | 'warning' | 'info' {
  switch (phase) {
    case 'Failed':
    case 'Refused':
      return 'error';
    case 'Drained':
    case 'Complete':
      return 'success';
    case 'PoweredOff':
    case 'Rebooting':
      return 'warning';
    default:
      return 'info';
  }
}

/** One titled section of the maintenance page, named by its heading. */
export function Section(props: {
  title: string;
  testId: string;
  children: ReactNode;
}) {
  const headingId = `rackside-maintenance-${props.testId}`;
  return (
    <Paper
      component="section"
      aria-labelledby={headingId}
      data-testid={props.testId}
      sx={{ p: 2, mb: 2 }}
    >
      <Typography variant="h6" component="h2" id={headingId} gutterBottom>
        {props.title}
      </Typography>
      {props.children}
    </Paper>
  );
}
