import Box from '@mui/material/Box';
import Chip from '@mui/material/Chip';
import Typography from '@mui/material/Typography';
import type { MaintenanceResponse } from '@rackside/plugin-servers-common';
import {
  formatTime,
  timelineOf,
  type TimelineEntry,
} from '../ui/maintenanceText';
import { phaseColor, Section } from './MaintenanceSection';

/** The colour of a timeline dot: requests apart from phases, failures in red. */
function dotColor(entry: TimelineEntry): string {
  if (entry.kind === 'request' || !entry.phase) return 'secondary.main';
  const color = phaseColor(entry.phase);
  return color === 'default' ? 'grey.500' : `${color}.main`;
}

export function Timeline(props: { maintenance: MaintenanceResponse }) {
  const m = props.maintenance;
  const entries = timelineOf(m);
  const lastPhase = [...entries].reverse().find(e => e.kind === 'phase');
  return (
    <Section title="Timeline" testId="maintenance-timeline">
      {entries.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          Nothing recorded yet: the operator has not picked this maintenance up.
        </Typography>
      ) : (
        <Box component="ol" aria-label="Phase timeline" m={0} p={0}>
          {entries.map((e, i) => {
            const current = e === lastPhase && !m.terminal;
            return (
              <Box
                component="li"
                key={`${i}-${e.label}`}
                data-testid="timeline-entry"
                data-kind={e.kind}
                data-phase={e.phase}
                sx={{
                  listStyle: 'none',
                  position: 'relative',
                  pl: 3,
                  pb: 2,
                  borderLeft: 2,
                  borderColor:
                    i === entries.length - 1 ? 'transparent' : 'divider',
                  ml: 1,
                  '&::before': {
                    content: '""',
                    position: 'absolute',
                    left: -7,
                    top: 4,
                    width: 12,
                    height: 12,
                    borderRadius: '50%',
                    bgcolor: dotColor(e),
                  },
                }}
              >
                <Typography variant="body2" color="text.secondary">
                  {formatTime(e.at)}
                </Typography>
                <Typography variant="subtitle1" component="div">
                  <strong>{e.label}</strong>
                  {current && <Chip size="small" label="now" sx={{ ml: 1 }} />}
                </Typography>
                {e.message && (
                  <Typography variant="body2">{e.message}</Typography>
                )}
                {(e.by || e.reason) && (
                  <Typography variant="body2" color="text.secondary">
                    {`${e.by ? `by ${e.by}` : 'by someone unrecorded'}${
                      e.reason ? `: ${e.reason}` : ''
                    }`}
                  </Typography>
                )}
              </Box>
            );
          })}
        </Box>
      )}
    </Section>
  );
}
