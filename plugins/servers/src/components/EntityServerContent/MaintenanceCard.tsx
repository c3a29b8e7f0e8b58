import Box from '@mui/material/Box';
import Card from '@mui/material/Card';
import CardContent from '@mui/material/CardContent';
import LinearProgress from '@mui/material/LinearProgress';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import type { ServerResponse } from '@rackside/plugin-servers-common';

/** The server's maintenance in progress, if any: phase, reason, requester, drain progress. */
export function MaintenanceCard({ server }: { server: ServerResponse }) {
  const m = server.maintenance;
  const progress = m?.progress;
  const percent =
    progress && progress.total > 0
      ? Math.round((100 * progress.evicted) / progress.total)
      : undefined;
  return (
    <Card variant="outlined" data-testid="entity-server-maintenance">
      <CardContent>
        <Typography variant="h6" component="h2" gutterBottom>
          Maintenance
        </Typography>
        {!m ? (
          <Typography variant="body2" color="text.secondary">
            No maintenance in progress.
          </Typography>
        ) : (
          <Stack gap={1}>
            <Typography variant="body2">
              <strong>{m.phase}</strong> · {m.intent} · {m.name}
            </Typography>
            <Typography variant="body2">Reason: {m.reason}</Typography>
            {m.requestedBy && (
              <Typography variant="body2">
                Requested by {m.requestedBy}
                {m.createdAt
                  ? ` at ${new Date(m.createdAt).toLocaleString()}`
                  : ''}
              </Typography>
            )}
            {progress && (
              <Box>
                <Typography variant="body2">
                  {progress.evicted}/{progress.total} pods evicted
                </Typography>
                {percent !== undefined && (
                  <LinearProgress
                    variant="determinate"
                    value={percent}
                    aria-label={`drain progress of ${server.name}`}
                  />
                )}
              </Box>
            )}
          </Stack>
        )}
      </CardContent>
    </Card>
  );
}
