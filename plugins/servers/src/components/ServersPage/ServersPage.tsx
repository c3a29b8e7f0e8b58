import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Box from '@mui/material/Box';
import Link from '@mui/material/Link';
import Typography from '@mui/material/Typography';
import { serversApiRef } from '../../api';
import { ClusterSection } from './ClusterSection';
import { ConfiguredClusters } from '../ui/ConfiguredClusters';
import { createFirstWindows, FirstWindowsContext } from '../hooks/firstWindows';
import { AppLink, useServersLinks } from '../ui/links';
import { ReadDenied } from '../ui/ReadGate';
import type { PageStart, ServersPageStart } from './pageStart';
import { FIRST_WINDOW_REQUEST } from '../hooks/windowRequests';
import { APPROVALS_FOR_ME } from '../ApprovalPanel/approvalText';

/** The text of the Servers page's skip link. */
export const SKIP_TO_ACTIONS = 'Skip to the first server action';

/**
 * A skip link, the page's first tab stop: hidden until it has the focus, it
 * moves the focus to the first row's first action, past the filter fields and
 * the sortable column headers (a keyboard user otherwise tabs through them on
 * every visit).
 */
function SkipToActions() {
  return (
    <Link
      component="button"
      underline="always"
      data-testid="skip-to-actions"
      onClick={(e: { currentTarget: HTMLElement }) => {
        const page = e.currentTarget.closest('main') ?? document;
        page
          .querySelector<HTMLElement>('[data-testid="server-row"] button')
          ?.focus();
      }}
      sx={{
        position: 'absolute',
        left: -10000,
        '&:focus': { position: 'static', left: 'auto' },
      }}
    >
      {SKIP_TO_ACTIONS}
    </Link>
  );
}

/**
 * The Servers page: one table per configured cluster, with its quorum banner
 * and the actions the user may take on each server. The clusters request is
 * its read decision: the backend answers 403 when `servers:read` is denied
 * outright, and the page then shows only that (asking the permission API
 * first would put one more round trip before the first row). Each available
 * cluster's first window is asked as soon as the clusters answer, while its
 * section is still to render (firstWindows.ts). With `start` (the page's
 * loader, pageStart.ts) both were asked while the page's code was on its way,
 * and a first visit takes those answers.
 */
export function ServersPage(props: { start?: PageStart }) {
  const links = useServersLinks();
  const api = useApi(serversApiRef);
  // What the loader asked, taken once; otherwise the page's own first windows.
  const [{ clusters: first, firstWindows }] = useState(
    (): Partial<ServersPageStart> & Pick<ServersPageStart, 'firstWindows'> =>
      props.start?.take() ?? { firstWindows: createFirstWindows(api) },
  );
  return (
    <FirstWindowsContext.Provider value={firstWindows}>
      <Box component="main" p={3} data-testid="rackside-servers-page">
        <Typography variant="h4" component="h1" gutterBottom>
          Servers
        </Typography>
        <ConfiguredClusters
          denied={<ReadDenied />}
          header={
            <>
              <SkipToActions />
              {links.approvals && (
                <Typography variant="body2" gutterBottom>
                  <AppLink to={links.approvals()}>{APPROVALS_FOR_ME}</AppLink>:
                  requests held until you, or another approver, approve them.
                </Typography>
              )}
              {links.addNode && (
                <Typography variant="body2" gutterBottom>
                  <AppLink to={links.addNode()}>Add node</AppLink>: machines
                  waiting to join, and Reset and add.
                </Typography>
              )}
            </>
          }
          empty={
            <Typography variant="body1">
              No clusters are configured yet. Add one under{' '}
              <code>servers.clusters</code> in app-config to see its servers
              here.
            </Typography>
          }
          first={first}
          onLoad={clusters =>
            firstWindows.start(
              clusters.filter(c => c.available).map(c => c.name),
              FIRST_WINDOW_REQUEST,
            )
          }
          renderCluster={c => (
            <ClusterSection cluster={c.name} title={c.title} />
          )}
        />
      </Box>
    </FirstWindowsContext.Provider>
  );
}
