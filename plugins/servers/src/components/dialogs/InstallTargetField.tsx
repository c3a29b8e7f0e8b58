import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Checkbox from '@mui/material/Checkbox';
import FormControl from '@mui/material/FormControl';
import FormControlLabel from '@mui/material/FormControlLabel';
import FormGroup from '@mui/material/FormGroup';
import FormHelperText from '@mui/material/FormHelperText';
import FormLabel from '@mui/material/FormLabel';
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
  alreadyAtTarget,
  checksumErrorOf,
  checksumRequiredBy,
  restHint,
  sourcesOf,
  type FirmwareApplyTime,
  type FirmwareComponentChoice,
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
  /**
   * Firmware: the Components choice (the reading's components as checkboxes); without
   * it the reading is shown as a table.
   */
  components?: {
    choices: readonly FirmwareComponentChoice[];
    checked: readonly string[];
    onChange(checked: string[]): void;
    disabled?: boolean;
  };
}) {
  const { action, node, versions, target, components } = props;
  // The backend refuses the request in these words (a plan skips the node).
  const already = alreadyAtTarget(action, target, versions);
  if (action === 'upgrade') {
    const running = versions?.talos;
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
      {already && (
        <Alert severity="info" sx={{ mb: 1 }} data-testid="install-already">
          {`${node} is ${already}: ${
            target.ok && target.body.targets?.length
              ? 'every component checked'
              : "every firmware component the BMC's last reading lists"
          } reports it, so there is nothing to update.`}
        </Alert>
      )}
      {inventory.length === 0 && (
        <Typography variant="body2">
          {`The BMC's last reading lists no firmware of ${node}.`}
        </Typography>
      )}
      {inventory.length > 0 && components && (
        <FirmwareComponentsField {...components} />
      )}
      {inventory.length > 0 && !components && (
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
 * The Components choice of a firmware update: the components the BMC's reading lists
 * (one server's, or a plan's servers' together) as checkboxes with the version they
 * report now; the ids checked are the request's `targets`. None checked: no targets, the
 * BMC picks. A component the reading gave no id cannot be named, so it cannot be checked.
 */
export function FirmwareComponentsField(props: {
  choices: readonly FirmwareComponentChoice[];
  checked: readonly string[];
  onChange(checked: string[]): void;
  disabled?: boolean;
}) {
  const { choices, checked, onChange, disabled } = props;
  const toggle = (id: string, on: boolean) =>
    onChange(
      on
        ? [...checked.filter(x => x !== id), id]
        : checked.filter(x => x !== id),
    );
  return (
    <FormControl
      component="fieldset"
      variant="standard"
      sx={{ mb: 1 }}
      data-testid="install-components"
      aria-describedby="install-components-help"
    >
      <FormLabel component="legend">Components</FormLabel>
      <FormGroup>
        {choices.map(c => {
          const now = `now ${c.versions.join(', ')}`;
          return (
            <FormControlLabel
              key={c.id ?? `name:${c.name}`}
              control={
                <Checkbox
                  checked={c.id !== undefined && checked.includes(c.id)}
                  disabled={disabled || c.id === undefined}
                  onChange={e =>
                    c.id !== undefined && toggle(c.id, e.target.checked)
                  }
                />
              }
              label={
                c.id === undefined
                  ? `${c.name} (${now}; the reading gives no link to name it)`
                  : `${c.name} (${now})`
              }
            />
          );
        })}
      </FormGroup>
      <FormHelperText id="install-components-help">
        {checked.length === 0
          ? 'None checked: the BMC picks (any component that changes counts). Check the ones the image updates to name them as targets: "already at" and Done then look at those only.'
          : 'The checked components are the targets: "already at" and Done look at those only.'}
      </FormHelperText>
    </FormControl>
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
  // Firmware: the sources the backend says refuse a request without a checksum.
  const checksumRequired =
    action === 'firmware' && checksumRequiredBy(draft.source, sources.value);
  // Shown once something is typed; an empty required field is said by its hint.
  const checksumError = checksumErrorOf(draft);
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
      {action === 'firmware' && (
        <>
          <TextField
            label="Target version"
            value={draft.version}
            onChange={e =>
              onChange({ ...draft, source, version: e.target.value })
            }
            fullWidth
            disabled={disabled}
            autoComplete="off"
            helperText="Optional: the version the BMC's firmware inventory will report once the image is installed, e.g. 2.20.0. With it, a server whose checked components (every component when none is checked) already report it is skipped, and the update is Done only when the components it changed report it."
            inputProps={{ 'data-testid': 'install-version' }}
            sx={{ mt: 1, mb: 1 }}
          />
          <TextField
            label="Checksum"
            value={draft.checksum}
            onChange={e =>
              onChange({ ...draft, source, checksum: e.target.value })
            }
            fullWidth
            required={checksumRequired}
            disabled={disabled}
            autoComplete="off"
            error={!!checksumError}
            helperText={
              checksumError ??
              (checksumRequired
                ? `Required: ${source} accepts only an image whose checksum is given, sha256: and 64 lowercase hex digits`
                : 'Optional: sha256: and 64 lowercase hex digits of the image; the operator sends nothing to the BMC if the image does not hash to it')
            }
            FormHelperTextProps={LIVE_HELPER_TEXT}
            inputProps={{ 'data-testid': 'install-checksum' }}
            sx={{ mt: 1, mb: 1 }}
          />
        </>
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
