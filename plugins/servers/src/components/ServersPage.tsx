import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';

/**
 * The Servers page: one table per configured cluster. Until the backend
 * serves clusters this page explains that none are configured.
 */
export function ServersPage() {
  return (
    <Box p={3} data-testid="rackside-servers-page">
      <Typography variant="h4" component="h1" gutterBottom>
        Servers
      </Typography>
      <Typography variant="body1">
        No clusters are configured yet. Add one under{' '}
        <code>servers.clusters</code> in app-config to see its servers here.
      </Typography>
    </Box>
  );
}
