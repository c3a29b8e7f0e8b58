import { useEffect } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import { useSignal } from '@backstage/plugin-signals-react';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import LinearProgress from '@mui/material/LinearProgress';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import type { ApprovalItem } from '@rackside/plugin-servers-common';
import { describeError, serversApiRef } from '../../api';
import { useLoader } from '../hooks/useLoader';
import {
  POLL_INTERVAL_MS,
  SERVERS_SIGNAL_CHANNEL,
} from '../hooks/useLiveRefresh';
import { ServerDetailPage } from '../LiveDetail/ServerDetailPage';
import { AppLink, useServersLinks } from '../ui/links';
import { formatTime } from '../ui/maintenanceText';
import {
  APPROVALS_FOR_ME,
  approversText,
  refName,
  rungText,
} from '../ApprovalPanel/approvalText';

const HEADING_ID = 'rackside-approvals-for-me';

/**
 * Reads the list again whenever the backend signals a change of any cluster (a request
 * held, approved, expired), or every {@link POLL_INTERVAL_MS} where signals are not
 * installed.
 */
function useAnyClusterRefresh(reload: () => void) {
  const { lastSignal, isSignalsAvailable } = useSignal(SERVERS_SIGNAL_CHANNEL);
  useEffect(() => {
    if (lastSignal) reload();
  }, [lastSignal, reload]);
  useEffect(() => {
    if (isSignalsAvailable) return undefined;
    const timer = setInterval(reload, POLL_INTERVAL_MS);
    return () => clearInterval(timer);
  }, [isSignalsAvailable, reload]);
}

/** What a request does, in a few words: "reboot of worker-1", "plan: reboot of 12 servers". */
export function requestText(item: ApprovalItem): string {
  const nodes =
    item.nodes.length === 1 ? item.nodes[0] : `${item.nodes.length} servers`;
  return item.kind === 'plan'
    ? `Plan: ${item.intent} of ${nodes}`
    : `${item.intent[0]?.toUpperCase() ?? ''}${item.intent.slice(
        1,
      )} of ${nodes}`;
}

function RequestLink(props: { item: ApprovalItem }) {
  const { item } = props;
  const links = useServersLinks();
  const href =
    item.kind === 'plan'
      ? links.plan?.(item.cluster, item.name)
      : links.maintenance?.(item.cluster, item.name);
  return href ? (
    <AppLink to={href} aria-label={`Open ${item.name} to decide`}>
      {item.name}
    </AppLink>
  ) : (
    <>{item.name}</>
  );
}

/**
 * The requests awaiting an approval the signed-in user may give (docs/approvals.md), at
 * `/servers/approvals`: what each asks, who asked and why, the rule that holds it, the
 * approvers and until when; each links to its page, where the approval panel decides.
 */
export function ApprovalsPage() {
  const api = useApi(serversApiRef);
  const loaded = useLoader(() => api.listApprovalsForMe(), [api]);
  useAnyClusterRefresh(loaded.reload);
  const items = loaded.value;
  return (
    <ServerDetailPage title={APPROVALS_FOR_ME} testId="rackside-approvals-page">
      <Typography variant="body2" gutterBottom>
        Requests held until someone other than the requester approves them. Open
        one to see the impact its requester acknowledged beside the impact now,
        and approve or reject it.
      </Typography>
      <Button
        size="small"
        variant="outlined"
        onClick={loaded.reload}
        disabled={loaded.loading}
        sx={{ mb: 2 }}
      >
        Refresh
      </Button>
      {loaded.loading && !items && (
        <LinearProgress aria-label="reading the approvals" />
      )}
      {loaded.error !== undefined && (
        <Alert severity={items ? 'warning' : 'error'} sx={{ mb: 2 }}>
          {`Could not read the approvals: ${
            describeError(loaded.error).message
          }`}
        </Alert>
      )}
      {items && items.length === 0 && (
        <Typography
          variant="body1"
          color="text.secondary"
          data-testid="approvals-empty"
        >
          Nothing awaits your approval.
        </Typography>
      )}
      {items && items.length > 0 && (
        <TableContainer>
          <Typography variant="h6" component="h2" id={HEADING_ID} gutterBottom>
            {`Awaiting your approval (${items.length})`}
          </Typography>
          <Table size="small" aria-labelledby={HEADING_ID}>
            <TableHead>
              <TableRow>
                <TableCell>Request</TableCell>
                <TableCell>What</TableCell>
                <TableCell>Cluster</TableCell>
                <TableCell>Requested by</TableCell>
                <TableCell>Reason</TableCell>
                <TableCell>Rule</TableCell>
                <TableCell>Approvers</TableCell>
                <TableCell>Expires</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {items.map(item => (
                <TableRow
                  key={`${item.cluster}/${item.kind}/${item.name}`}
                  data-testid="approval-item"
                  data-name={item.name}
                >
                  <TableCell>
                    <RequestLink item={item} />
                  </TableCell>
                  <TableCell>
                    {requestText(item)}
                    <Typography
                      variant="caption"
                      component="div"
                      color="text.secondary"
                    >
                      {`acknowledged at the ${rungText(
                        item.requestedRung,
                      )} rung`}
                    </Typography>
                  </TableCell>
                  <TableCell>{item.cluster}</TableCell>
                  <TableCell>
                    {item.requestedBy ? refName(item.requestedBy) : '—'}
                    {item.createdAt && (
                      <Typography
                        variant="caption"
                        component="div"
                        color="text.secondary"
                      >
                        {formatTime(item.createdAt)}
                      </Typography>
                    )}
                  </TableCell>
                  <TableCell>{item.reason || '—'}</TableCell>
                  <TableCell>{item.rule}</TableCell>
                  <TableCell>{approversText(item.approvers)}</TableCell>
                  <TableCell>{formatTime(item.expiresAt)}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </TableContainer>
      )}
    </ServerDetailPage>
  );
}
