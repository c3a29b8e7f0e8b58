import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemText from '@mui/material/ListItemText';
import Typography from '@mui/material/Typography';
import type { MaintenanceResponse } from '@rackside/plugin-servers-common';
import {
  formatTime,
  powerOffState,
  powerRecords,
  powerRecordText,
  powerWaitText,
  type PowerOffTone,
} from '../ui/maintenanceText';
import { Section } from './MaintenanceSection';

const TONE_SEVERITIES: Record<PowerOffTone, 'success' | 'info' | 'warning'> = {
  confirmed: 'success',
  pending: 'info',
  unconfirmed: 'warning',
};

/** The status timestamps of the power verbs, each beside its record. */
const ACCEPTED_AT = [
  { verb: 'reboot', at: 'rebootSentAt', label: 'Reboot' },
  { verb: 'shutdown', at: 'poweredOffAt', label: 'Shutdown' },
  { verb: 'powerOn', at: 'powerOnSentAt', label: 'Power-on' },
] as const;

/**
 * The power part of a maintenance: what it waits for now, whether a shut-down
 * machine is known to be off, and each verb as the operator recorded it (when
 * it was sent, over which channel, what the channel was asked or answered,
 * and its error).
 */
export function PowerSection(props: { maintenance: MaintenanceResponse }) {
  const m = props.maintenance;
  const records = powerRecords(m);
  const waiting = powerWaitText(m);
  const offState = powerOffState(m);
  if (!waiting && !offState && records.length === 0) return null;
  return (
    <Section title="Power" testId="maintenance-power">
      {waiting && (
        <Typography
          variant="body1"
          data-testid="maintenance-power-waiting"
          gutterBottom
        >
          {waiting}
        </Typography>
      )}
      {ACCEPTED_AT.filter(
        // The record says it already, with the channel; this is for objects without one.
        ({ verb, at }) => m[at] && !m.power?.[verb]?.sentAt,
      ).map(({ at, label }) => (
        <Typography
          key={at}
          variant="body2"
          color="text.secondary"
          data-testid="maintenance-power-accepted"
        >
          {`${label} accepted at ${formatTime(m[at])}`}
        </Typography>
      ))}
      {offState && (
        <Alert
          severity={TONE_SEVERITIES[offState.tone]}
          sx={{ my: 1 }}
          data-testid="maintenance-power-off"
          data-tone={offState.tone}
        >
          {offState.text}
        </Alert>
      )}
      {records.length > 0 && (
        <List dense disablePadding>
          {records.map(({ verb, record }) => (
            <ListItem
              key={verb}
              disableGutters
              data-testid="maintenance-power-record"
              data-verb={verb}
            >
              <ListItemText
                primary={powerRecordText(verb, record)}
                secondary={
                  <>
                    {record.detail && (
                      <Box component="span" display="block">
                        {record.detail}
                      </Box>
                    )}
                    {record.error && (
                      <Box
                        component="span"
                        display="block"
                        color="error.main"
                        sx={{ whiteSpace: 'pre-wrap' }}
                        data-testid="maintenance-power-record-error"
                      >
                        {record.error}
                      </Box>
                    )}
                  </>
                }
              />
            </ListItem>
          ))}
        </List>
      )}
    </Section>
  );
}
