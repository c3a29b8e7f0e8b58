import type { ReactNode } from 'react';
import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';
import { AppLink, useServersLinks } from '../ui/links';
import { ReadGate } from '../ui/ReadGate';
import { useReadDecision } from '../hooks/useReadDecision';

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
      <ReadGate decision={decision}>{props.children}</ReadGate>
    </Box>
  );
}
