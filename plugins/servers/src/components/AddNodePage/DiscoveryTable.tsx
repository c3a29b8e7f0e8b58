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
} from '@rackside/plugin-servers-common';
import { ADDRESS_STATE_TEXT, RESET_AND_ADD, resetCommand, when } from './texts';
import { chipLabelSx } from '../ui/chips';
import { FocusKeepingRow } from '../ui/FocusKeepingRow';

/** The colour of an address's chip, by what the last probe found there. */
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
