import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import LinearProgress from '@mui/material/LinearProgress';
import Paper from '@mui/material/Paper';
import Snackbar from '@mui/material/Snackbar';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import {
  ceremonyAt,
  type ServerAction,
  type ServerListItem,
} from '@rackside/plugin-servers-common';
import { describeError, serversApiRef } from '../api';
import { ActionDialog } from './ActionDialog';
import { QuorumBanner } from './QuorumBanner';
import { findServerRow, keepFocusInRow } from './rowFocus';
import {
  rowActions,
  ServerTable,
  type SortDirection,
  type SortKey,
} from './ServerTable';
import { AppLink, useServersLinks } from './links';
import { useLiveRefresh } from './useLiveRefresh';
import { useLoader } from './useLoader';

export { POLL_INTERVAL_MS, SERVERS_SIGNAL_CHANNEL } from './useLiveRefresh';

/** Whether a server matches the filter text (name, roles, labels). */
export function matchesFilter(server: ServerListItem, text: string): boolean {
  const needle = text.trim().toLowerCase();
  if (!needle) return true;
  if (server.name.toLowerCase().includes(needle)) return true;
  if (server.roles.some(r => r.toLowerCase().includes(needle))) return true;
  return Object.entries(server.labels ?? {}).some(([k, v]) =>
    `${k}=${v}`.toLowerCase().includes(needle),
  );
}

function sortValue(server: ServerListItem, key: SortKey): string {
  switch (key) {
    case 'role':
      return server.roles.join(',');
    case 'ready':
      return server.ready ? '1' : '0';
    case 'phase':
      return server.maintenance?.phase ?? '';
    default:
      return server.name;
  }
}

/** Sorts servers by a column; ties are broken by name. */
export function sortServers(
  servers: readonly ServerListItem[],
  key: SortKey,
  direction: SortDirection,
): ServerListItem[] {
  const sign = direction === 'asc' ? 1 : -1;
  return [...servers].sort((a, b) => {
    const c = sortValue(a, key).localeCompare(sortValue(b, key));
    return c !== 0 ? sign * c : a.name.localeCompare(b.name);
  });
}

/** One cluster: its quorum banner and its servers, kept live. */
export function ClusterSection(props: { cluster: string; title?: string }) {
  const { cluster, title } = props;
  const api = useApi(serversApiRef);
  const links = useServersLinks();
  const servers = useLoader(() => api.listServers(cluster), [api, cluster]);
  const { reload } = servers;

  useLiveRefresh(cluster, reload);

  const [filter, setFilter] = useState('');
  const [sortKey, setSortKey] = useState<SortKey>('name');
  const [sortDirection, setSortDirection] = useState<SortDirection>('asc');
  const [dialog, setDialog] = useState<
    { server: ServerListItem; action: ServerAction } | undefined
  >();
  const [done, setDone] = useState<string | undefined>();
  // The row whose dialog just closed: the focus goes back to the action that
  // opened it, or, if the row no longer offers it, to the row's replacement.
  const section = useRef<HTMLElement>(null);
  const [returnTo, setReturnTo] = useState<
    { server: ServerListItem; action: ServerAction } | undefined
  >();
  const closeDialog = () => {
    setReturnTo(dialog);
    setDialog(undefined);
  };
  useEffect(() => {
    // Runs after the dialog's own focus trap has restored what it could.
    if (!returnTo || !section.current) return;
    const row = findServerRow(section.current, returnTo.server.name);
    if (row) keepFocusInRow(row, rowActions(returnTo.server), returnTo.action);
    setReturnTo(undefined);
  }, [returnTo]);

  const onSort = useCallback(
    (key: SortKey) => {
      if (key === sortKey) {
        setSortDirection(d => (d === 'asc' ? 'desc' : 'asc'));
      } else {
        setSortKey(key);
        setSortDirection('asc');
      }
    },
    [sortKey],
  );
  const onAction = useCallback(
    (server: ServerListItem, action: ServerAction) =>
      setDialog({ server, action }),
    [],
  );

  // The list holds only the actions offered and allowed, each with its ceremony level.
  const dialogLevel = dialog && dialog.server.actions[dialog.action];
  const items = servers.value?.items;
  const rows = useMemo(
    () =>
      sortServers(
        (items ?? []).filter(s => matchesFilter(s, filter)),
        sortKey,
        sortDirection,
      ),
    [items, filter, sortKey, sortDirection],
  );

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
      {servers.value && (
        <QuorumBanner cluster={cluster} quorum={servers.value.quorum} />
      )}
      {servers.error !== undefined && (
        <Alert severity="error" sx={{ mb: 1 }}>
          {`Could not load the servers of ${cluster}: ${
            describeError(servers.error).message
          }`}
        </Alert>
      )}
      {servers.loading && !servers.value && <LinearProgress />}
      {servers.value && (
        <>
          <Box display="flex" alignItems="center" gap={2} mb={1}>
            <TextField
              size="small"
              label="Filter"
              placeholder="name, role or label"
              value={filter}
              onChange={e => setFilter(e.target.value)}
              inputProps={{ 'aria-label': `Filter servers of ${cluster}` }}
            />
            <Typography variant="body2" color="text.secondary">
              {`${rows.length} of ${servers.value.items.length} servers`}
            </Typography>
          </Box>
          <ServerTable
            cluster={cluster}
            servers={rows}
            sortKey={sortKey}
            sortDirection={sortDirection}
            onSort={onSort}
            onAction={onAction}
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
            ceremony: ceremonyAt(dialog.action, dialogLevel),
          }}
          powerVerbs={dialog.server.powerVerbs}
          quorum={servers.value?.quorum}
          onClose={closeDialog}
          onDone={name => {
            closeDialog();
            setDone(name);
            reload();
          }}
        />
      )}
      <Snackbar
        open={done !== undefined}
        autoHideDuration={8000}
        onClose={() => setDone(undefined)}
      >
        <Alert
          severity="success"
          onClose={() => setDone(undefined)}
          data-testid="action-success"
        >
          {`Requested: NodeMaintenance ${done ?? ''}`}
          {done && links.maintenance && (
            <>
              {' · '}
              <AppLink to={links.maintenance(cluster, done)}>follow it</AppLink>
            </>
          )}
        </Alert>
      </Snackbar>
    </Paper>
  );
}
