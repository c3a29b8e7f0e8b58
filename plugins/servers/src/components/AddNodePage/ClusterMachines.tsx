import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import { usePermission } from '@backstage/plugin-permission-react';
import Alert from '@mui/material/Alert';
import LinearProgress from '@mui/material/LinearProgress';
import Paper from '@mui/material/Paper';
import Snackbar from '@mui/material/Snackbar';
import Typography from '@mui/material/Typography';
import {
  machinesAddPermission,
  type TalosMachineResponse,
} from '@rackside/plugin-servers-common';
import { describeError, machinesApiRef } from '../../api';
import { useLiveRefresh } from '../hooks/useLiveRefresh';
import { useLoader } from '../hooks/useLoader';
import { AddAddressForm } from './AddAddressForm';
import { JoinDialog } from './JoinDialog';
import { DiscoveryTable } from './DiscoveryTable';
import { MachineTable } from './MachineTable';
import { ReclaimTable } from './ReclaimTable';
import { ReclaimDialog } from './ReclaimDialog';
import { useRowDialog } from './useRowDialog';

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
  const [dialog, setDialog] = useRowDialog<OpenDialog>();
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
