import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import LinearProgress from '@mui/material/LinearProgress';
import Typography from '@mui/material/Typography';
import { describeError, serversApiRef } from '../api';
import { ClusterSection } from './ClusterSection';
import { AppLink, useServersLinks } from './links';
import { useLoader } from './useLoader';
import { useReadDecision } from './useReadDecision';

/**
 * The Servers page: one table per configured cluster, with its quorum banner
 * and the actions the user may take on each server.
 */
export function ServersPage() {
  const decision = useReadDecision();
  if (decision === 'deny') {
    return (
      <Box p={3} data-testid="rackside-servers-page">
        <Typography variant="h4" component="h1" gutterBottom>
          Servers
        </Typography>
        <Alert severity="warning">
          You are not allowed to see servers (servers:read).
        </Alert>
      </Box>
    );
  }
  if (decision === 'loading') {
    return (
      <Box p={3} data-testid="rackside-servers-page">
        <Typography variant="h4" component="h1" gutterBottom>
          Servers
        </Typography>
        <LinearProgress />
      </Box>
    );
  }
  return <ClusterList />;
}

function ClusterList() {
  const api = useApi(serversApiRef);
  const links = useServersLinks();
  const clusters = useLoader(() => api.listClusters(), [api]);
  return (
    <Box p={3} data-testid="rackside-servers-page">
      <Typography variant="h4" component="h1" gutterBottom>
        Servers
      </Typography>
      {links.addNode && (
        <Typography variant="body2" gutterBottom>
          <AppLink to={links.addNode()}>Add node</AppLink>: machines waiting to
          join, and Reset and add.
        </Typography>
      )}
      {clusters.loading && !clusters.value && <LinearProgress />}
      {clusters.error !== undefined && !clusters.value && (
        <Alert severity="error">
          {`Could not load clusters: ${describeError(clusters.error).message}`}
        </Alert>
      )}
      {clusters.value && clusters.value.length === 0 && (
        <Typography variant="body1">
          No clusters are configured yet. Add one under{' '}
          <code>servers.clusters</code> in app-config to see its servers here.
        </Typography>
      )}
      {clusters.value?.map(c =>
        c.available ? (
          <ClusterSection key={c.name} cluster={c.name} title={c.title} />
        ) : (
          <Alert key={c.name} severity="warning" sx={{ mb: 2 }}>
            {`Cluster ${c.title || c.name} is unavailable: ${c.error}`}
          </Alert>
        ),
      )}
    </Box>
  );
}
