import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import type { MaintenanceResponse } from '@rackside/plugin-servers-common';
import { LogEntriesTable } from '../ui/LogEntriesTable';
import { formatTime } from '../ui/maintenanceText';
import { Section } from './MaintenanceSection';

type Reading = NonNullable<MaintenanceResponse['hardware']>['before'];

function readingText(reading: Reading, when: string): string {
  return reading
    ? `${when}: ${reading.rollup} (read ${formatTime(reading.readAt)})`
    : `${when}: not read`;
}

/**
 * What the server's BMC said during the maintenance (status.hardware, written by the
 * operator, which reads the BMC at its start and its end): the health before and after,
 * and the log entries written in between. Absent on a maintenance without a BMC reading.
 */
export function HardwareSection(props: { maintenance: MaintenanceResponse }) {
  const hardware = props.maintenance.hardware;
  if (!hardware) return null;
  const changed =
    hardware.before &&
    hardware.after &&
    hardware.before.rollup !== hardware.after.rollup;
  return (
    <Section title="Hardware" testId="maintenance-hardware">
      <Stack gap={1}>
        <Typography variant="body2" data-testid="maintenance-hardware-before">
          {readingText(hardware.before, 'Before')}
        </Typography>
        <Typography variant="body2" data-testid="maintenance-hardware-after">
          {readingText(hardware.after, 'After')}
          {changed ? ` (was ${hardware.before!.rollup})` : ''}
        </Typography>
        {hardware.logEntries.length === 0 ? (
          <Typography variant="body2" color="text.secondary">
            The BMC logged nothing during this maintenance.
          </Typography>
        ) : (
          <LogEntriesTable
            entries={hardware.logEntries}
            label="Log entries written during the maintenance"
          />
        )}
      </Stack>
    </Section>
  );
}
