import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Card from '@mui/material/Card';
import CardContent from '@mui/material/CardContent';
import Chip from '@mui/material/Chip';
import Typography from '@mui/material/Typography';
import {
  SERVER_ACTIONS,
  type ServerResponse,
} from '@rackside/plugin-servers-common';
import { ACTION_LABELS } from '../ui/labels';

/**
 * The actions the signed-in user may request now, those offered but not theirs, and the
 * way to the Servers page where requests are made.
 */
export function ActionsCard({
  server,
  serversPath,
}: {
  server: ServerResponse;
  serversPath: string;
}) {
  const allowed = SERVER_ACTIONS.filter(
    a => server.actions[a].offered && server.actions[a].allowed,
  );
  const notYours = SERVER_ACTIONS.filter(
    a => server.actions[a].offered && !server.actions[a].allowed,
  );
  return (
    <Card variant="outlined" data-testid="entity-server-actions">
      <CardContent>
        <Typography variant="h6" component="h2" gutterBottom>
          Actions you may request now
        </Typography>
        {allowed.length === 0 ? (
          <Typography variant="body2" color="text.secondary">
            None.
          </Typography>
        ) : (
          <Box display="flex" gap={1} flexWrap="wrap" role="list">
            {allowed.map(action => (
              <Chip
                key={action}
                role="listitem"
                label={ACTION_LABELS[action]}
                color="primary"
                variant="outlined"
              />
            ))}
          </Box>
        )}
        {notYours.length > 0 && (
          <Typography variant="body2" color="text.secondary" mt={1}>
            Offered but not permitted for you:{' '}
            {notYours.map(a => ACTION_LABELS[a]).join(', ')}.
          </Typography>
        )}
        <Box mt={2}>
          <Button variant="contained" size="small" href={serversPath}>
            Open in Servers
          </Button>
        </Box>
      </CardContent>
    </Card>
  );
}
