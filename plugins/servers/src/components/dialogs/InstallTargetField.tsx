import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import LinearProgress from '@mui/material/LinearProgress';
import MenuItem from '@mui/material/MenuItem';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { useApi } from '@backstage/frontend-plugin-api';
import type {
  PreflightVersions,
  UpgradeSourcesResponse,
} from '@rackside/plugin-servers-common';
import { describeError, serversApiRef } from '../../api';
import { useLoader } from '../hooks/useLoader';
import { LIVE_HELPER_TEXT } from './ReasonField';
import {
  restHint,
  sourcesOf,
  type FirmwareApplyTime,
  type InstallAction,
  type InstallDraft,
  type InstallTarget,
} from './installTarget';

/** The allowed sources, read once when an upgrade or firmware dialog opens. */
export function useUpgradeSources(enabled: boolean) {
  const api = useApi(serversApiRef);
  return useLoader<UpgradeSourcesResponse | undefined>(
    async () => (enabled ? api.getUpgradeSources() : undefined),
    [api, enabled],
  );
}

/** The setting each empty list names, so the person knows whom to ask. */
const SETTING: Record<InstallAction, string> = {
  upgrade: 'servers.upgrades.talosImages',
  firmware: 'servers.upgrades.firmwareSources',
};

/**
 * What the server runs now beside the chosen target: the Talos version (and whether the
 * node is already there: the backend refuses that request), or the BMC's firmware
 * inventory as last read.
 */
export function CurrentVersions(props: {
  action: InstallAction;
  node: string;
  /** The pre-flight's reading of what the node runs; the row's version until it is there. */
  versions?: PreflightVersions;
  target: InstallTarget;
}) {
  const { action, node, versions, target } = props;
  if (action === 'upgrade') {
    const running = versions?.talos;
    const already = target.ok && !!running && running === target.version;
    return (
      <Box mb={2} data-testid="install-current">
        <Typography variant="body2">
          {running
            ? `${node} runs Talos ${running} now.`
            : `${node} reports no Talos version.`}
          {target.ok && target.version && !already
            ? ` The upgrade installs ${target.version}.`
            : ''}
        </Typography>
        {already && (
          <Alert severity="info" sx={{ mt: 1 }} data-testid="install-already">
            {`${node} is already at ${running}: there is nothing to upgrade.`}
          </Alert>
        )}
      </Box>
    );
  }
  const inventory = versions?.firmware ?? [];
  return (
    <Box mb={2} data-testid="install-current">
      {inventory.length === 0 ? (
        <Typography variant="body2">
          {`The BMC's last reading lists no firmware of ${node}.`}
        </Typography>
      ) : (
        <Table size="small" aria-label={`Firmware of ${node} now`}>
          <TableHead>
            <TableRow>
              <TableCell>Component</TableCell>
              <TableCell>Version now</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {inventory.map(c => (
              <TableRow key={`${c.name}-${c.version}`}>
                <TableCell>{c.name}</TableCell>
                <TableCell>{c.version}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      )}
    </Box>
  );
}

/**
 * The target of an upgrade or a firmware update: a source from the deployment's allowed
 * list, and the version (or image path) after it; the whole image shown as it will be
 * sent, or why servers-common's rule refuses it. An empty list says which setting holds it.
 */
export function InstallTargetField(props: {
  action: InstallAction;
  sources: ReturnType<typeof useUpgradeSources>;
  draft: InstallDraft;
  onChange(draft: InstallDraft): void;
  target: InstallTarget;
  disabled?: boolean;
}) {
  const { action, sources, draft, onChange, target, disabled } = props;
  const allowed = sourcesOf(action, sources.value);
  if (sources.loading && !sources.value) {
    return (
      <LinearProgress aria-label="reading the allowed sources" sx={{ mb: 2 }} />
    );
  }
  if (sources.error !== undefined && !sources.value) {
    return (
      <Alert
        severity="error"
        sx={{ mb: 2 }}
        data-testid="install-sources-error"
      >
        {`Could not read the allowed sources: ${
          describeError(sources.error).message
        }`}
      </Alert>
    );
  }
  if (allowed.length === 0) {
    return (
      <Alert severity="warning" sx={{ mb: 2 }} data-testid="install-no-sources">
        {`This deployment allows no ${
          action === 'upgrade' ? 'Talos installer image' : 'firmware source'
        } (${SETTING[action]} is empty): ask an administrator to allow one.`}
      </Alert>
    );
  }
  // The dialog hands a draft whose source is allowed (withAllowedSource).
  const source = draft.source;
  const restLabel = action === 'upgrade' ? 'Version' : 'Image path';
  return (
    <Box mb={2} data-testid="install-target">
      <TextField
        select
        label={
          action === 'upgrade' ? 'Installer image source' : 'Firmware source'
        }
        value={source}
        onChange={e => onChange({ ...draft, source: e.target.value })}
        fullWidth
        required
        disabled={disabled}
        helperText={`Allowed here (${SETTING[action]})`}
        SelectProps={{
          inputProps: { 'data-testid': 'install-source' },
        }}
        sx={{ mb: 2 }}
      >
        {allowed.map(s => (
          <MenuItem key={s} value={s}>
            {s}
          </MenuItem>
        ))}
      </TextField>
      <TextField
        label={restLabel}
        value={draft.rest}
        onChange={e => onChange({ ...draft, source, rest: e.target.value })}
        fullWidth
        required
        disabled={disabled}
        autoComplete="off"
        error={!target.ok && !!target.why}
        helperText={
          !target.ok && target.why ? target.why : restHint(action, source)
        }
        FormHelperTextProps={LIVE_HELPER_TEXT}
        inputProps={{ 'data-testid': 'install-rest' }}
        sx={{ mb: 1 }}
      />
      {action === 'firmware' && (
        <TextField
          select
          label="Apply"
          value={draft.applyTime}
          onChange={e =>
            onChange({
              ...draft,
              source,
              applyTime: e.target.value as FirmwareApplyTime,
            })
          }
          fullWidth
          disabled={disabled}
          helperText="OnReset: the BMC applies the image at the reset Rackside sends once its task completes"
          SelectProps={{ inputProps: { 'data-testid': 'install-apply' } }}
          sx={{ mt: 1, mb: 1 }}
        >
          <MenuItem value="Immediate">Immediate</MenuItem>
          <MenuItem value="OnReset">OnReset</MenuItem>
        </TextField>
      )}
      {target.ok && (
        <Typography
          variant="body2"
          sx={{ wordBreak: 'break-all' }}
          data-testid="install-shown"
        >
          {action === 'upgrade' ? 'Image: ' : 'Image URI: '}
          <code>{target.shown}</code>
        </Typography>
      )}
    </Box>
  );
}
