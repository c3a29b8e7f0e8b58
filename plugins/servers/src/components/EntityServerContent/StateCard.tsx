import Box from '@mui/material/Box';
import Card from '@mui/material/Card';
import CardContent from '@mui/material/CardContent';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import type { ReactNode } from 'react';
import { ReadyChip, SchedulableChip } from './ServerStateChips';
import type { EntityServer } from './useEntityServer';

function Fact(props: { label: string; children: ReactNode }) {
  return (
    <Box minWidth={160}>
      <Typography variant="caption" color="text.secondary" component="div">
        {props.label}
      </Typography>
      <Box>{props.children}</Box>
    </Box>
  );
}

/** The server as the cluster sees it: readiness, schedulability, roles. */
export function StateCard({ cluster, server }: EntityServer) {
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
