import { useCallback, useRef, useState } from 'react';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import LinearProgress from '@mui/material/LinearProgress';
import Paper from '@mui/material/Paper';
import TextField from '@mui/material/TextField';
import ToggleButton from '@mui/material/ToggleButton';
import Typography from '@mui/material/Typography';
import { usePermission } from '@backstage/plugin-permission-react';
import {
  ceremonyAt,
  hardwareHealthRaise,
  serversPlanPermission,
  type HeldApprovalResponse,
  type ServerListItem,
} from '@rackside/plugin-servers-common';
import { describeError } from '../../api';
import { ActionDialog } from '../dialogs/ActionDialog';
import { ClusterPlans } from './ClusterPlans';
import { PlanToolbar } from './PlanToolbar';
import { QuorumBanner } from '../ui/QuorumBanner';
import { RequestedNotice } from './RequestedNotice';
import { ServerTable } from './ServerTable';
import { useRowActionDialog } from './useRowActionDialog';
import { useServerSort } from './useServerSort';
import { useLiveRefresh } from '../hooks/useLiveRefresh';
import { useServerWindows } from '../hooks/useServerWindows';
import { FIRST_VIEW } from '../hooks/windowRequests';
import {
  AWAITING_APPROVAL_FILTER,
  AWAITING_APPROVAL_LABEL,
} from '../ApprovalPanel/approvalText';

export {
  POLL_INTERVAL_MS,
  SERVERS_SIGNAL_CHANNEL,
} from '../hooks/useLiveRefresh';

/** One cluster: its quorum banner and its servers, kept live. */
export function ClusterSection(props: { cluster: string; title?: string }) {
  const { cluster, title } = props;
  const [filter, setFilter] = useState(FIRST_VIEW.filter);
  const { sortKey, sortDirection, onSort } = useServerSort();
  // A window at a time, filtered and sorted on the server (useServerWindows).
  const servers = useServerWindows(cluster, {
    filter,
    sortKey,
    sortDirection,
  });
  const { reload } = servers;

  useLiveRefresh(cluster, reload);

  // Servers selected for a maintenance plan, offered to users holding servers:plan.
  const planning = usePermission({ permission: serversPlanPermission });
  const canPlan = planning.allowed || planning.error !== undefined;
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const onSelect = useCallback(
    (server: ServerListItem, on: boolean) =>
      setSelected(current => {
        const next = new Set(current);
        if (on) next.add(server.name);
        else next.delete(server.name);
        return next;
      }),
    [],
  );

  const [done, setDone] = useState<
    { maintenance: string; approval?: HeldApprovalResponse } | undefined
  >();
  const section = useRef<HTMLElement>(null);
  const { dialog, onAction, closeDialog } = useRowActionDialog(section);

  // The list holds only the actions offered and allowed, each with its ceremony level.
  const dialogLevel = dialog && dialog.server.actions[dialog.action];
  const rows = servers.rows;

  return (
    <Paper
      component="section"
      ref={section}
      sx={{ p: 2, mb: 3 }}
      aria-label={`Cluster ${cluster}`}
      data-testid={`cluster-${cluster}`}
    >
      <Typography variant="h5" component="h2" gutterBottom>
        {title && title !== cluster ? `${title} (${cluster})` : cluster}
      </Typography>
      {servers.quorum && (
        <QuorumBanner cluster={cluster} quorum={servers.quorum} />
      )}
      {servers.error !== undefined && (
        <Alert severity="error" sx={{ mb: 1 }}>
          {`Could not load the servers of ${cluster}: ${
            describeError(servers.error).message
          }`}
        </Alert>
      )}
      <ClusterPlans cluster={cluster} />
      {servers.loading && !rows && <LinearProgress />}
      {rows && (
        <>
          <Box display="flex" alignItems="center" gap={2} mb={1}>
            <TextField
              size="small"
              label="Filter"
              placeholder="name, role, label or health"
              value={filter}
              onChange={e => setFilter(e.target.value)}
              inputProps={{ 'aria-label': `Filter servers of ${cluster}` }}
            />
            {/* The shared filter's phase=<phase> term, so every window agrees. */}
            <ToggleButton
              size="small"
              value={AWAITING_APPROVAL_FILTER}
              selected={filter === AWAITING_APPROVAL_FILTER}
              onChange={() =>
                setFilter(f =>
                  f === AWAITING_APPROVAL_FILTER
                    ? ''
                    : AWAITING_APPROVAL_FILTER,
                )
              }
              aria-label={`${AWAITING_APPROVAL_LABEL} (filter servers of ${cluster})`}
              data-testid="awaiting-approval-filter"
            >
              {AWAITING_APPROVAL_LABEL}
            </ToggleButton>
            <Typography variant="body2" color="text.secondary">
              {`${servers.total} of ${servers.all ?? servers.total} servers`}
            </Typography>
          </Box>
          {canPlan && (
            <PlanToolbar
              cluster={cluster}
              filter={filter}
              selected={selected}
              onSelectedChange={setSelected}
              onPlanned={reload}
            />
          )}
          <ServerTable
            cluster={cluster}
            servers={rows}
            total={servers.total}
            sortKey={sortKey}
            sortDirection={sortDirection}
            onSort={onSort}
            onAction={onAction}
            onShow={servers.show}
            selected={canPlan ? selected : undefined}
            onSelect={canPlan ? onSelect : undefined}
          />
        </>
      )}
      {dialog && dialogLevel && (
        <ActionDialog
          cluster={cluster}
          node={dialog.server.name}
          action={dialog.action}
          offer={{
            offered: true,
            allowed: true,
            // The list sends the level; the raise's why is rebuilt from the row's
            // health by the same rule (the parts are named on the server's page).
            ceremony: ceremonyAt(
              dialog.action,
              dialogLevel,
              hardwareHealthRaise(
                dialog.action,
                dialog.server.health,
                Date.now(),
              )?.why,
            ),
          }}
          powerVerbs={dialog.server.powerVerbs}
          talosVersion={dialog.server.talosVersion}
          quorum={servers.quorum}
          onClose={closeDialog}
          onDone={(name, approval) => {
            closeDialog();
            setDone({ maintenance: name, approval });
            reload();
          }}
        />
      )}
      <RequestedNotice
        cluster={cluster}
        maintenance={done?.maintenance}
        approval={done?.approval}
        onClose={() => setDone(undefined)}
      />
    </Paper>
  );
}
