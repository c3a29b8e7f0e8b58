import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Chip from '@mui/material/Chip';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import type {
  CanReclaimResponse,
  DiscoveryAddressResponse,
  ReclaimResponse,
  TalosClusterResponse,
  TalosMachineResponse,
} from '@rackside/plugin-servers-common';
import {
  ADDRESS_STATE_TEXT,
  MACHINE_PHASE_TEXT,
  RECLAIM_PHASE_TEXT,
  RESET_AND_ADD,
  resetCommand,
  when,
} from './texts';
import { chipLabelSx } from '../shared/chips';
import { FocusKeepingRow } from '../shared/FocusKeepingRow';

const STATE_COLOR = {
  Maintenance: 'success',
  AlreadyConfigured: 'warning',
  Member: 'primary',
  Unreachable: 'default',
  NotTalos: 'default',
  NotAllowed: 'error',
} as const;

/** The request still running for an address, if any. */
function runningFor(
  reclaims: readonly ReclaimResponse[],
  address: string,
): ReclaimResponse | undefined {
  return reclaims.find(r => !r.terminal && r.address === address);
}

/** What the user can do about one address: Reset and add, the CLI hint, or follow a request. */
function AddressAction(props: {
  address: DiscoveryAddressResponse;
  can?: CanReclaimResponse;
  running?: ReclaimResponse;
  onResetAndAdd(address: string): void;
  onFollow(name: string): void;
}) {
  const { address, can, running, onResetAndAdd, onFollow } = props;
  if (running) {
    return (
      <Button size="small" onClick={() => onFollow(running.name)}>
        {`Follow ${running.name} (${running.phase})`}
      </Button>
    );
  }
  if (address.state !== 'AlreadyConfigured') return null;
  if (can?.allowed) {
    return (
      <Button
        size="small"
        variant="outlined"
        color="warning"
        onClick={() => onResetAndAdd(address.address)}
        aria-label={`${RESET_AND_ADD} ${address.address}`}
      >
        {RESET_AND_ADD}
      </Button>
    );
  }
  return (
    <Box data-testid={`reset-hint-${address.address}`}>
      <Typography variant="body2">
        To add it, reset it with the other cluster&apos;s talosconfig; it then
        shows up here in maintenance mode:
      </Typography>
      <Typography
        variant="body2"
        component="code"
        sx={{ display: 'block', wordBreak: 'break-all', my: 0.5 }}
      >
        {resetCommand(address.address)}
      </Typography>
      {can?.reason && (
        <Typography variant="caption" color="text.secondary">
          {`Reset and add is not offered: ${can.reason}.`}
        </Typography>
      )}
    </Box>
  );
}

/** The discovery addresses of one TalosCluster, with what the last probe found. */
export function DiscoveryTable(props: {
  talosCluster: TalosClusterResponse;
  reclaims: readonly ReclaimResponse[];
  can?: CanReclaimResponse;
  onResetAndAdd(address: string): void;
  onFollow(name: string): void;
}) {
  const { talosCluster, reclaims, can, onResetAndAdd, onFollow } = props;
  return (
    <Box mb={3}>
      <Typography variant="h6" component="h3">
        {`Discovery addresses of ${talosCluster.name}`}
      </Typography>
      <Typography variant="body2" color="text.secondary" gutterBottom>
        {`Probed every ${talosCluster.intervalSeconds} s${
          talosCluster.lastDiscoveryTime
            ? `, last at ${when(talosCluster.lastDiscoveryTime)}`
            : ''
        }. ${
          talosCluster.allowedNetworks.length > 0
            ? `Only addresses in ${talosCluster.allowedNetworks.join(
                ', ',
              )} on port ${talosCluster.talosPort} are probed.`
            : 'No address is probed: this TalosCluster lists no allowed networks.'
        }`}
      </Typography>
      {talosCluster.addresses.length === 0 ? (
        <Typography variant="body2">No discovery addresses yet.</Typography>
      ) : (
        <Table
          size="small"
          aria-label={`Discovery addresses of ${talosCluster.name}`}
        >
          <TableHead>
            <TableRow>
              <TableCell>Address</TableCell>
              <TableCell>State</TableCell>
              <TableCell>UUID</TableCell>
              <TableCell>Last probe</TableCell>
              <TableCell>Actions</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {talosCluster.addresses.map(a => (
              <FocusKeepingRow
                key={a.address}
                data-testid="discovery-row"
                data-address={a.address}
                data-state={a.state ?? ''}
              >
                <TableCell>
                  {a.address}
                  {a.addedByReclaim && (
                    <Chip
                      size="small"
                      label="added by Reset and add"
                      sx={{ ml: 1 }}
                    />
                  )}
                </TableCell>
                <TableCell>
                  {a.state ? (
                    <Chip
                      size="small"
                      color={STATE_COLOR[a.state]}
                      sx={chipLabelSx(STATE_COLOR[a.state])}
                      label={ADDRESS_STATE_TEXT[a.state]}
                    />
                  ) : (
                    'Not probed yet'
                  )}
                  {a.message && (
                    <Typography
                      variant="caption"
                      component="div"
                      color="text.secondary"
                    >
                      {a.message}
                    </Typography>
                  )}
                </TableCell>
                <TableCell>{a.uuid ?? ''}</TableCell>
                <TableCell>{when(a.lastProbeTime)}</TableCell>
                <TableCell>
                  <AddressAction
                    address={a}
                    can={can}
                    running={runningFor(reclaims, a.address)}
                    onResetAndAdd={onResetAndAdd}
                    onFollow={onFollow}
                  />
                </TableCell>
              </FocusKeepingRow>
            ))}
          </TableBody>
        </Table>
      )}
    </Box>
  );
}

/** The machines discovery found; Pending ones can be added. */
export function MachineTable(props: {
  machines: readonly TalosMachineResponse[];
  canAdd: boolean;
  can?: CanReclaimResponse;
  onAdd(machine: TalosMachineResponse): void;
  onResetAndAdd(): void;
}) {
  const { machines, canAdd, can, onAdd, onResetAndAdd } = props;
  return (
    <Box mb={3}>
      <Box display="flex" alignItems="center" gap={2}>
        <Typography variant="h6" component="h3">
          Machines
        </Typography>
        {can?.allowed && (
          <Button
            size="small"
            variant="outlined"
            color="warning"
            onClick={onResetAndAdd}
          >
            {RESET_AND_ADD}
          </Button>
        )}
      </Box>
      {machines.length === 0 ? (
        <Typography variant="body2">
          No machines found yet. A machine in maintenance mode at a discovery
          address shows up here.
        </Typography>
      ) : (
        <Table size="small" aria-label="Machines">
          <TableHead>
            <TableRow>
              <TableCell>UUID</TableCell>
              <TableCell>Address</TableCell>
              <TableCell>Phase</TableCell>
              <TableCell>Node</TableCell>
              <TableCell>Added by</TableCell>
              <TableCell>Actions</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {machines.map(m => (
              <FocusKeepingRow
                key={m.uuid}
                data-testid="machine-row"
                data-uuid={m.uuid}
                data-phase={m.phase}
              >
                <TableCell>{m.uuid}</TableCell>
                <TableCell>{m.address ?? ''}</TableCell>
                <TableCell>
                  {MACHINE_PHASE_TEXT[m.phase]}
                  {m.message && (
                    <Typography
                      variant="caption"
                      component="div"
                      color="text.secondary"
                    >
                      {m.message}
                    </Typography>
                  )}
                </TableCell>
                <TableCell>{m.nodeName ?? ''}</TableCell>
                <TableCell>
                  {m.join ? `${m.join.by}: ${m.join.reason}` : ''}
                </TableCell>
                <TableCell>
                  {canAdd && m.phase === 'Pending' && !m.join && (
                    <Button
                      size="small"
                      variant="contained"
                      onClick={() => onAdd(m)}
                      aria-label={`Add ${m.uuid}`}
                    >
                      Add
                    </Button>
                  )}
                </TableCell>
              </FocusKeepingRow>
            ))}
          </TableBody>
        </Table>
      )}
    </Box>
  );
}

/** The Reset and add requests of the cluster, newest first. */
export function ReclaimTable(props: {
  reclaims: readonly ReclaimResponse[];
  onOpen(name: string): void;
}) {
  const { reclaims, onOpen } = props;
  if (reclaims.length === 0) return null;
  return (
    <Box mb={1}>
      <Typography variant="h6" component="h3">
        Reset and add requests
      </Typography>
      <Table size="small" aria-label="Reset and add requests">
        <TableHead>
          <TableRow>
            <TableCell>Request</TableCell>
            <TableCell>Address</TableCell>
            <TableCell>Phase</TableCell>
            <TableCell>Result</TableCell>
            <TableCell>Asked by</TableCell>
            <TableCell>Actions</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {reclaims.map(r => (
            <FocusKeepingRow
              key={r.name}
              data-testid="reclaim-row"
              data-name={r.name}
              data-phase={r.phase}
            >
              <TableCell>{r.name}</TableCell>
              <TableCell>{r.address}</TableCell>
              <TableCell>{RECLAIM_PHASE_TEXT[r.phase]}</TableCell>
              <TableCell>{r.result ?? ''}</TableCell>
              <TableCell>
                {r.requestedBy ? `${r.requestedBy}: ${r.reason ?? ''}` : ''}
              </TableCell>
              <TableCell>
                <Button size="small" onClick={() => onOpen(r.name)}>
                  {r.terminal ? 'Details' : 'Open'}
                </Button>
              </TableCell>
            </FocusKeepingRow>
          ))}
        </TableBody>
      </Table>
    </Box>
  );
}
