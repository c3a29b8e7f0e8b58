import Box from '@mui/material/Box';
import Card from '@mui/material/Card';
import CardContent from '@mui/material/CardContent';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import type { ReactNode } from 'react';
import { ReadyChip, SchedulableChip } from './ServerStateChips';
import type { EntityServer } from './useEntityServer';
import { biosAndBmcOf } from '../ui/versionsText';

function Fact(props: { label: string; children: ReactNode; testId?: string }) {
  return (
    <Box minWidth={160} data-testid={props.testId}>
      <Typography variant="caption" color="text.secondary" component="div">
        {props.label}
      </Typography>
      <Box>{props.children}</Box>
    </Box>
  );
}

/**
 * The server as the cluster sees it: readiness, schedulability, roles, and what it runs
 * (the Talos version its Node reports; the BIOS and BMC firmware of the BMC's last
 * reading, whose whole inventory is on the Hardware card).
 */
export function StateCard({ cluster, server }: EntityServer) {
  const { bios, bmc } = biosAndBmcOf(server.health?.firmware ?? []);
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
          <Fact label="Talos" testId="entity-server-talos">
            <Typography variant="body2">
              {server.talosVersion ?? '—'}
            </Typography>
          </Fact>
          {bios !== undefined && (
            <Fact label="BIOS" testId="entity-server-bios">
              <Typography variant="body2">{bios}</Typography>
            </Fact>
          )}
          {bmc !== undefined && (
            <Fact label="BMC firmware" testId="entity-server-bmc">
              <Typography variant="body2">{bmc}</Typography>
            </Fact>
          )}
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
