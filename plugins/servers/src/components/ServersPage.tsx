import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import LinearProgress from '@mui/material/LinearProgress';
import Typography from '@mui/material/Typography';
import { ClusterSection } from './ClusterSection';
import { ConfiguredClusters } from './ConfiguredClusters';
import { AppLink, useServersLinks } from './links';
import { useReadDecision } from './useReadDecision';

/**
 * The Servers page: one table per configured cluster, with its quorum banner
 * and the actions the user may take on each server.
 */
export function ServersPage() {
  const decision = useReadDecision();
  const links = useServersLinks();
  return (
    <Box p={3} data-testid="rackside-servers-page">
      <Typography variant="h4" component="h1" gutterBottom>
        Servers
      </Typography>
      {decision === 'deny' && (
        <Alert severity="warning">
          You are not allowed to see servers (servers:read).
        </Alert>
      )}
      {decision === 'loading' && <LinearProgress />}
      {decision === 'allow' && (
        <>
          {links.addNode && (
            <Typography variant="body2" gutterBottom>
              <AppLink to={links.addNode()}>Add node</AppLink>: machines waiting
              to join, and Reset and add.
            </Typography>
          )}
          <ConfiguredClusters
            empty={
              <Typography variant="body1">
                No clusters are configured yet. Add one under{' '}
                <code>servers.clusters</code> in app-config to see its servers
                here.
              </Typography>
            }
            renderCluster={c => (
              <ClusterSection cluster={c.name} title={c.title} />
            )}
          />
        </>
      )}
    </Box>
  );
}
