import { useEffect, useRef, useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import { usePermission } from '@backstage/plugin-permission-react';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import LinearProgress from '@mui/material/LinearProgress';
import MenuItem from '@mui/material/MenuItem';
import Paper from '@mui/material/Paper';
import Snackbar from '@mui/material/Snackbar';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import {
  machinesAddPermission,
  type TalosMachineResponse,
} from '@rackside/plugin-servers-common';
import { describeError, machinesApiRef, type DescribedError } from '../../api';
import { focusedRow, returnFocusToRow } from '../ui/FocusKeepingRow';
import { useLiveRefresh } from '../hooks/useLiveRefresh';
import { useLoader } from '../hooks/useLoader';
import { JoinDialog } from './JoinDialog';
import { DiscoveryTable } from './DiscoveryTable';
import { MachineTable } from './MachineTable';
import { ReclaimTable } from './ReclaimTable';
import { ReclaimDialog } from './ReclaimDialog';

/** The address field: appends a discovery address to a TalosCluster. */
function AddAddressForm(props: {
  cluster: string;
  talosClusters: string[];
  onAdded(address: string): void;
}) {
  const { cluster, talosClusters, onAdded } = props;
  const api = useApi(machinesApiRef);
  const [address, setAddress] = useState('');
  const [reason, setReason] = useState('');
  const [target, setTarget] = useState(talosClusters[0] ?? '');
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<DescribedError | undefined>();

  const submit = async () => {
    setSubmitting(true);
    setError(undefined);
    try {
      const added = await api.addDiscoveryAddress(cluster, {
        address: address.trim(),
        reason,
        ...(talosClusters.length > 1 ? { talosCluster: target } : {}),
      });
      setAddress('');
      setReason('');
      onAdded(added.address);
    } catch (e) {
      setError(describeError(e));
    }
    setSubmitting(false);
  };

  return (
    <Box
      component="form"
      mb={3}
      onSubmit={e => {
        e.preventDefault();
        submit();
      }}
      aria-label={`Add a discovery address to ${cluster}`}
    >
      <Typography variant="h6" component="h3" gutterBottom>
        Add an address
      </Typography>
      <Box display="flex" gap={2} alignItems="flex-start" flexWrap="wrap">
        <TextField
          size="small"
          label="Address"
          placeholder="10.0.0.5 or host:50000"
          value={address}
          onChange={e => setAddress(e.target.value)}
          inputProps={{ 'data-testid': 'discovery-address' }}
        />
        {talosClusters.length > 1 && (
          <TextField
            select
            size="small"
            label="TalosCluster"
            value={target}
            onChange={e => setTarget(e.target.value)}
            sx={{ minWidth: 160 }}
          >
            {talosClusters.map(c => (
              <MenuItem key={c} value={c}>
                {c}
              </MenuItem>
            ))}
          </TextField>
        )}
        <TextField
          size="small"
          label="Reason"
          value={reason}
          onChange={e => setReason(e.target.value)}
          sx={{ flex: 1, minWidth: 280 }}
          inputProps={{ 'data-testid': 'discovery-reason' }}
        />
        <Button
          type="submit"
          variant="contained"
          disabled={submitting || !address.trim() || reason.trim().length === 0}
        >
          Add address
        </Button>
      </Box>
      {error && (
        <Alert
          severity="error"
          role="alert"
          sx={{ mt: 1 }}
          data-testid="discovery-error"
        >
          {error.message}
        </Alert>
      )}
    </Box>
  );
}

type OpenDialog =
  | { kind: 'reclaim'; address?: string; reclaim?: string }
  | { kind: 'join'; machine: TalosMachineResponse };

/** One cluster on the Add node page: its discovery, its machines, its requests; kept live. */
export function ClusterMachines(props: { cluster: string; title?: string }) {
  const { cluster, title } = props;
  const api = useApi(machinesApiRef);
  const data = useLoader(
    () =>
      Promise.all([api.listMachines(cluster), api.listReclaims(cluster)]).then(
        ([machines, reclaims]) => ({ machines, reclaims }),
      ),
    [api, cluster],
  );
  useLiveRefresh(cluster, data.reload);
  const can = useLoader(() => api.canReclaim(cluster), [api, cluster]);
  // Asking failed: Add is offered and the backend's 403 decides.
  const add = usePermission({ permission: machinesAddPermission });
  const canAdd = add.allowed || add.error !== undefined;
  const [dialog, setDialogState] = useState<OpenDialog | undefined>();
  // The row whose button opened the dialog: the focus goes back there when it
  // closes, also if that button is gone by then (Add once the join runs).
  const opener = useRef<HTMLElement | undefined>();
  const [closed, setClosed] = useState(0);
  const setDialog = (next: OpenDialog | undefined) => {
    if (next && !dialog) opener.current = focusedRow();
    if (!next && dialog) setClosed(n => n + 1);
    setDialogState(next);
  };
  useEffect(() => {
    // After the dialog's focus trap has restored what it could.
    if (closed > 0) returnFocusToRow(opener.current);
  }, [closed]);
  const [notice, setNotice] = useState<string | undefined>();

  const machines = data.value?.machines;
  const reclaims = data.value?.reclaims ?? [];
  const talosClusterNames = machines?.talosClusters.map(c => c.name) ?? [];

  return (
    <Paper
      component="section"
      sx={{ p: 2, mb: 3 }}
      aria-label={`Machines of ${cluster}`}
      data-testid={`machines-${cluster}`}
    >
      <Typography variant="h5" component="h2" gutterBottom>
        {title && title !== cluster ? `${title} (${cluster})` : cluster}
      </Typography>
      {data.error !== undefined && (
        <Alert severity="error" sx={{ mb: 1 }}>
          {`Could not load the machines of ${cluster}: ${
            describeError(data.error).message
          }`}
        </Alert>
      )}
      {data.loading && !data.value && <LinearProgress />}
      {machines && machines.talosClusters.length === 0 && (
        <Alert severity="info" sx={{ mb: 2 }}>
          {`No TalosCluster in namespace ${machines.namespace}: Rackside has nowhere to add machines in ${cluster}. Create one (see docs/install.md) to discover machines.`}
        </Alert>
      )}
      {machines?.talosClusters.map(tc => (
        <DiscoveryTable
          key={tc.name}
          talosCluster={tc}
          reclaims={reclaims}
          can={can.value}
          onResetAndAdd={address => setDialog({ kind: 'reclaim', address })}
          onFollow={name => setDialog({ kind: 'reclaim', reclaim: name })}
        />
      ))}
      {machines && canAdd && talosClusterNames.length > 0 && (
        <AddAddressForm
          cluster={cluster}
          talosClusters={talosClusterNames}
          onAdded={address => {
            setNotice(`${address} added; discovery probes it next.`);
            data.reload();
          }}
        />
      )}
      {machines && (
        <MachineTable
          machines={machines.machines}
          canAdd={canAdd}
          can={talosClusterNames.length > 0 ? can.value : undefined}
          onAdd={machine => setDialog({ kind: 'join', machine })}
          onResetAndAdd={() => setDialog({ kind: 'reclaim' })}
        />
      )}
      <ReclaimTable
        reclaims={reclaims}
        onOpen={name => setDialog({ kind: 'reclaim', reclaim: name })}
      />
      {dialog?.kind === 'reclaim' && machines && (
        <ReclaimDialog
          cluster={cluster}
          namespace={machines.namespace}
          talosClusters={talosClusterNames}
          address={dialog.address}
          reclaim={dialog.reclaim}
          onClose={() => setDialog(undefined)}
          onChanged={data.reload}
        />
      )}
      {dialog?.kind === 'join' && (
        <JoinDialog
          cluster={cluster}
          machine={dialog.machine}
          onClose={() => setDialog(undefined)}
          onDone={() => {
            setDialog(undefined);
            setNotice(
              `Adding ${dialog.machine.uuid}: the operator applies the join config.`,
            );
            data.reload();
          }}
        />
      )}
      <Snackbar
        open={notice !== undefined}
        autoHideDuration={8000}
        onClose={() => setNotice(undefined)}
      >
        <Alert
          severity="success"
          onClose={() => setNotice(undefined)}
          data-testid="machines-notice"
        >
          {notice}
        </Alert>
      </Snackbar>
    </Paper>
  );
}
