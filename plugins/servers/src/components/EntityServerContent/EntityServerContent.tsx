import { useEntity } from '@backstage/plugin-catalog-react';
import {
  SERVER_ACTIONS,
  type ServerResponse,
} from '@rackside/plugin-servers-common';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Card from '@mui/material/Card';
import CardContent from '@mui/material/CardContent';
import Chip from '@mui/material/Chip';
import LinearProgress from '@mui/material/LinearProgress';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import { useMemo } from 'react';
import { ACTION_LABELS } from '../ui/labels';
import { ReadyChip, SchedulableChip } from './ServerStateChips';
import { serverTargetOf } from './annotations';
import { useEntityServer, type EntityServer } from './useEntityServer';

function Fact(props: { label: string; children: React.ReactNode }) {
  return (
    <Box minWidth={160}>
      <Typography variant="caption" color="text.secondary" component="div">
        {props.label}
      </Typography>
      <Box>{props.children}</Box>
    </Box>
  );
}

function StateCard({ cluster, server }: EntityServer) {
  return (
    <Card variant="outlined" data-testid="entity-server-state">
      <CardContent>
        <Typography variant="h6" component="h2" gutterBottom>
          {server.name}
        </Typography>
        <Stack direction="row" flexWrap="wrap" gap={3}>
          <Fact label="Cluster">{cluster.title}</Fact>
          <Fact label="Ready">
            <ReadyChip ready={server.ready} />
          </Fact>
          <Fact label="Schedulable">
            <SchedulableChip unschedulable={server.unschedulable} />
          </Fact>
          <Fact label="Roles">
            <Typography variant="body2">
              {server.roles.join(', ') || '—'}
              {server.controlPlane ? ' (control plane)' : ''}
              {server.virtual ? ' (virtual)' : ''}
            </Typography>
          </Fact>
          {server.systemUUID && (
            <Fact label="System UUID">
              <Typography variant="body2">{server.systemUUID}</Typography>
            </Fact>
          )}
        </Stack>
      </CardContent>
    </Card>
  );
}

function MaintenanceCard({ server }: { server: ServerResponse }) {
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

function ActionsCard({
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

/**
 * The Server tab of a catalog entity annotated `rackside.dev/node` (and
 * `rackside.dev/cluster`): the server's state, its maintenance and the
 * actions the signed-in user may request. Requests are made on the Servers
 * page, where their ceremony lives.
 */
export function EntityServerContent(props: {
  /** Where the Servers page is mounted; default `/servers`. */
  serversPath?: string;
}) {
  const { entity } = useEntity();
  const target = useMemo(() => serverTargetOf(entity), [entity]);
  const { value, error, loading, reload } = useEntityServer(target);
  return (
    <Stack gap={2} data-testid="entity-server-content">
      {loading && !value && <LinearProgress aria-label="loading the server" />}
      {error !== undefined && (
        <Alert
          severity="error"
          action={
            <Button color="inherit" size="small" onClick={reload}>
              Retry
            </Button>
          }
        >
          {error instanceof Error ? error.message : String(error)}
        </Alert>
      )}
      {value && (
        <>
          <StateCard {...value} />
          <MaintenanceCard server={value.server} />
          <ActionsCard
            server={value.server}
            serversPath={props.serversPath ?? '/servers'}
          />
        </>
      )}
    </Stack>
  );
}
