import type { ReactNode } from 'react';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import LinearProgress from '@mui/material/LinearProgress';
import Typography from '@mui/material/Typography';
import { AppLink, useServersLinks } from './links';
import { useReadDecision } from './useReadDecision';

/**
 * The frame of a page under the Servers page (one maintenance, one plan): the page's
 * main landmark, the way back to Servers, the heading, and the content only for users
 * who may read servers.
 */
export function ServerDetailPage(props: {
  title: string;
  testId: string;
  children: ReactNode;
}) {
  const decision = useReadDecision();
  const links = useServersLinks();
  return (
    <Box component="main" p={3} data-testid={props.testId}>
      {links.servers && (
        <Typography variant="body2" mb={1}>
          <AppLink to={links.servers()}>← Servers</AppLink>
        </Typography>
      )}
      <Typography variant="h4" component="h1" gutterBottom>
        {props.title}
      </Typography>
      {decision === 'deny' && (
        <Alert severity="warning">
          You are not allowed to see servers (servers:read).
        </Alert>
      )}
      {decision === 'loading' && <LinearProgress />}
      {decision === 'allow' && props.children}
    </Box>
  );
}
