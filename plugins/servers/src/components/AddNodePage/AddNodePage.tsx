import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import LinearProgress from '@mui/material/LinearProgress';
import Typography from '@mui/material/Typography';
import { usePermission } from '@backstage/plugin-permission-react';
import { machinesReadPermission } from '@rackside/plugin-servers-common';
import { AppLink, useServersLinks } from '../ui/links';
import { ConfiguredClusters } from '../ui/ConfiguredClusters';
import { ClusterMachines } from './ClusterMachines';

function Header() {
  const links = useServersLinks();
  return (
    <>
      <Typography variant="h4" component="h1" gutterBottom>
        Add node
      </Typography>
      <Typography variant="body1" color="text.secondary" gutterBottom>
        Machines in maintenance mode at a discovery address show up as pending:
        add them to their cluster. A machine another Talos cluster still holds
        can be reset and added.
        {links.servers && (
          <>
            {' '}
            <AppLink to={links.servers()}>Back to Servers</AppLink>
          </>
        )}
      </Typography>
    </>
  );
}

/**
 * The Add node page (`/servers/add-node`): per cluster, the discovery addresses
 * with what the probes found, the discovered machines ("Add" for pending ones),
 * an address field, and "Reset and add" for a machine another cluster holds.
 */
export function AddNodePage() {
  // When the permission framework cannot be asked, the page opens and the
  // backend's own 403 says what is missing.
  const { loading, allowed, error } = usePermission({
    permission: machinesReadPermission,
  });
  const open = allowed || error !== undefined;
  return (
    <Box component="main" p={3} data-testid="rackside-add-node-page">
      <Header />
      {loading && <LinearProgress />}
      {!loading && !open && (
        <Alert severity="warning">
          You are not allowed to see machines (machines:read).
        </Alert>
      )}
      {open && <ClusterList />}
    </Box>
  );
}

function ClusterList() {
  return (
    <ConfiguredClusters
      empty={
        <Typography variant="body1">
          No clusters are configured yet. Add one under{' '}
          <code>servers.clusters</code> in app-config.
        </Typography>
      }
      renderCluster={c => <ClusterMachines cluster={c.name} title={c.title} />}
    />
  );
}
