import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Checkbox from '@mui/material/Checkbox';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import FormControlLabel from '@mui/material/FormControlLabel';
import FormHelperText from '@mui/material/FormHelperText';
import LinearProgress from '@mui/material/LinearProgress';
import TextField from '@mui/material/TextField';
import WarningIcon from '@mui/icons-material/Warning';
import {
  PREFLIGHT_ACTIONS,
  quorumNumbersSentence,
  type ActionOffer,
  type PowerVerb,
  type PreflightAction,
  type PreflightResponse,
  type QuorumSummaryResponse,
  type ServerAction,
} from '@rackside/plugin-servers-common';
import {
  describeError,
  PreflightChangedError,
  serversApiRef,
  type DescribedError,
} from '../../api';
import { FOCUSABLE_PAPER, useFocusOnOpen } from './dialogFocus';
import { ACTION_DESCRIPTIONS, ACTION_LABELS } from '../shared/labels';
import { nodeLocalPods, PreflightView, quorumNumbers } from './preflight';
import { quorumText } from '../shared/QuorumBanner';
import { LIVE_HELPER_TEXT, REASON_HINT, ReasonField } from './ReasonField';
import { usePreflight, type PreflightState } from '../hooks/usePreflight';

/** The acknowledgement a pre-flight asks for. */
export const ACKNOWLEDGEMENT = 'I have reviewed this impact';

/** Shown above a pre-flight the backend sent back because the impact changed. */
export const IMPACT_CHANGED = 'The impact changed since you looked';

/** The drain options, each with the plain warning of what it gives up (the plan dialog's too). */
export const DRAIN_OPTIONS = [
  {
    option: 'deleteEmptyDirData',
    label: 'Also evict pods with emptyDir volumes',
    warning: 'Data in emptyDir volumes is lost.',
  },
  {
    option: 'force',
    label: 'Also evict pods without a controller',
    warning: 'Pods without a controller are not recreated.',
  },
  {
    option: 'allowNodeLocalData',
    label: 'Also evict pods with data on this node',
    warning:
      'Data on this node will be unavailable until the node returns: these pods cannot run anywhere else until then.',
  },
] as const;

/** The id of a drain option's warning, which describes its checkbox. */
function optionWarningId(option: string): string {
  return `rackside-drain-option-${option}-warning`;
}

function isPreflightAction(action: ServerAction): action is PreflightAction {
  return (PREFLIGHT_ACTIONS as readonly ServerAction[]).includes(action);
}

/** The hint of the hazard tier, where the reason must be typed out. */
export const TYPED_REASON_HINT =
  'Type the reason out yourself: spending the last of the quorum margin is recorded in your own words.';

/** Under a 409: the backend refused and wrote nothing. */
export const NOTHING_CHANGED = 'Nothing was changed.';

/**
 * How a machine comes back after a shutdown, for the shutdown dialog: through
 * power-on where the channel can switch it on, otherwise by a person at the
 * rack (a shutdown is offered without power-on only where the rack is
 * declared attended).
 */
export function shutdownReturnText(
  node: string,
  powerVerbs: readonly PowerVerb[] | undefined,
): string {
  if (!powerVerbs) {
    return `${node} stays off until it is powered on: through its BMC where the power channel can, otherwise by a person at the rack.`;
  }
  if (powerVerbs.includes('power-on')) {
    return `To bring ${node} back, use Power on on its row: Rackside asks its BMC to switch it on and returns it to service once it is Ready.`;
  }
  return `This power channel cannot switch ${node} back on: a person at the rack has to power it on. It returns to service once it is Ready.`;
}

/**
 * The refusal in words: the guard's own sentence and numbers from the
 * pre-flight when there is one, else the cluster's quorum as last read.
 */
function refusalOf(
  cluster: string,
  preflight: PreflightResponse | undefined,
  quorum: QuorumSummaryResponse | undefined,
): { sentence: string; numbers?: string } {
  if (preflight && preflight.ceremony.level === 'refused') {
    return {
      sentence: preflight.quorum.reason,
      numbers: quorumNumbers(preflight.quorum),
    };
  }
  const sentence = `This would drop the ready control-plane members of ${cluster} below quorum, so Rackside refuses it.`;
  if (!quorum) return { sentence };
  return {
    sentence,
    numbers: quorum.derived
      ? quorumNumbersSentence({
          members: quorum.members,
          quorum: quorum.quorum,
          margin: quorum.margin,
        })
      : quorumText(quorum),
  };
}

export interface ActionDialogProps {
  cluster: string;
  node: string;
  action: ServerAction;
  offer: ActionOffer;
  /** The power verbs the channel offers for this node (how a shutdown comes back). */
  powerVerbs?: readonly PowerVerb[];
  /** The cluster's quorum, to explain a refusal. */
  quorum?: QuorumSummaryResponse;
  onClose(): void;
  /** Called with the NodeMaintenance the backend created or changed. */
  onDone(maintenance: string): void;
}

/**
 * The dialog of one action on one server: the reason, and whatever else the
 * ceremony from the server response requires.
 */
export function ActionDialog(props: ActionDialogProps) {
  const { cluster, node, action, offer, powerVerbs, quorum, onClose, onDone } =
    props;
  const api = useApi(serversApiRef);
  // A refused action with a pre-flight still takes it: it carries the guard's
  // sentence and numbers as they are now (and says so if the refusal is over).
  const preflightAction =
    isPreflightAction(action) &&
    (offer.ceremony.requires.preflightAck || offer.ceremony.level === 'refused')
      ? action
      : undefined;
  const needsPreflight = preflightAction !== undefined;
  const pre = usePreflight(cluster, node, preflightAction);
  // The pre-flight's ceremony is the newer word on what the request must carry.
  const ceremony = pre.preflight?.ceremony ?? offer.ceremony;
  const hazard = ceremony.level === 'hazard';
  const refused = ceremony.level === 'refused';
  const needsTypedName = ceremony.requires.typedName;
  const typedReason = ceremony.requires.typedReason;
  const preflightReady =
    !needsPreflight ||
    (!pre.loading &&
      !!pre.preflight &&
      pre.preflight.canProceed &&
      pre.acknowledged);

  const [reason, setReason] = useState('');
  const [typedName, setTypedName] = useState('');
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<DescribedError | undefined>();

  // The reason policy's 400 belongs under the reason; other 400s (ceremony) go below.
  const reasonError =
    error?.status === 400 && /^reason\b/i.test(error.message)
      ? error.message
      : undefined;
  const canSubmit =
    !submitting &&
    !refused &&
    preflightReady &&
    reason.trim().length > 0 &&
    (!needsTypedName || typedName === node);

  const submit = async () => {
    setSubmitting(true);
    setError(undefined);
    try {
      const preflight = needsPreflight ? pre.preflight : undefined;
      const result = await api.requestAction(cluster, node, action, {
        reason,
        ...(needsTypedName ? { typedName } : {}),
        ...(preflight
          ? {
              preflightToken: preflight.token,
              // The options the acknowledged impact was computed with.
              deleteEmptyDirData: preflight.options.deleteEmptyDirData,
              force: preflight.options.force,
              // Only when ticked on purpose; recorded on the maintenance.
              ...(preflight.options.allowNodeLocalData
                ? { allowNodeLocalData: true }
                : {}),
            }
          : {}),
      });
      onDone(result.name);
    } catch (e) {
      if (PreflightChangedError.is(e)) {
        pre.replace(e.preflight);
      } else {
        setError(describeError(e));
      }
      setSubmitting(false);
    }
  };

  const label = ACTION_LABELS[action];
  const refusal = refused
    ? refusalOf(cluster, pre.preflight, quorum)
    : undefined;
  const typedNameWrong = typedName.length > 0 && typedName !== node;
  const titleId = `rackside-action-title-${action}`;
  const focusOnOpen = useFocusOnOpen();
  return (
    <Dialog
      open
      onClose={submitting ? undefined : onClose}
      aria-labelledby={titleId}
      fullWidth
      maxWidth={needsPreflight ? 'md' : 'sm'}
      PaperProps={{
        ...FOCUSABLE_PAPER,
        ref: focusOnOpen,
        sx: hazard ? { borderTop: 6, borderColor: 'error.main' } : undefined,
      }}
    >
      <DialogTitle id={titleId}>
        {hazard ? (
          <Box display="flex" alignItems="center" gap={1} color="error.main">
            <WarningIcon titleAccess="warning" />
            <span>{ceremony.hint?.title ?? 'Hazard'}</span>
          </Box>
        ) : null}
        {`${label}: ${node}`}
      </DialogTitle>
      <DialogContent data-ceremony={ceremony.level}>
        <DialogContentText sx={{ mb: 2 }}>
          {ACTION_DESCRIPTIONS[action]} Cluster <strong>{cluster}</strong>.
        </DialogContentText>
        {hazard && (
          <Alert severity="error" sx={{ mb: 2 }}>
            This takes the cluster to the edge of quorum. Type the node name and
            write the reason yourself.
          </Alert>
        )}
        {refusal && (
          <Alert severity="error" sx={{ mb: 2 }} data-testid="action-refused">
            <AlertTitle>Refused</AlertTitle>
            {refusal.sentence}
            {refusal.numbers && (
              <Box component="div" mt={1} data-testid="action-refused-numbers">
                {refusal.numbers}
              </Box>
            )}
            <Box component="div" mt={1}>
              No ceremony can allow it.
            </Box>
          </Alert>
        )}
        {refused && pre.loading && (
          <LinearProgress aria-label="taking the pre-flight" sx={{ mb: 1 }} />
        )}
        {action === 'shutdown' && !refused && (
          <Alert severity="info" sx={{ mb: 2 }} data-testid="shutdown-return">
            {shutdownReturnText(node, powerVerbs)}
          </Alert>
        )}
        {needsPreflight && !refused && <PreflightStep state={pre} />}
        {!refused && (
          <>
            <ReasonField
              value={reason}
              onChange={setReason}
              error={reasonError}
              hint={typedReason ? TYPED_REASON_HINT : REASON_HINT}
              // The hazard tier's reason is written, never picked: no autofill either.
              autoComplete={typedReason ? 'off' : undefined}
              testId="action-reason"
            />
            {needsTypedName && (
              <TextField
                label={`Type ${node} to confirm`}
                value={typedName}
                onChange={e => setTypedName(e.target.value)}
                required
                fullWidth
                autoComplete="off"
                error={typedNameWrong}
                helperText={
                  typedNameWrong
                    ? `That is not ${node}: type the node name exactly.`
                    : `The name of the node this acts on, typed out.`
                }
                FormHelperTextProps={LIVE_HELPER_TEXT}
                inputProps={{ 'data-testid': 'action-typed-name' }}
                sx={{ mb: 2 }}
              />
            )}
          </>
        )}
        {error && !reasonError && (
          <Alert severity="error" role="alert" data-testid="action-error">
            {error.status === 409 && <AlertTitle>Refused</AlertTitle>}
            {error.message}
            {error.quorum && quorumNumbersSentence(error.quorum) && (
              <Box component="div" mt={1}>
                {quorumNumbersSentence(error.quorum)}
              </Box>
            )}
            {error.status === 409 && (
              <Box component="div" mt={1}>
                {NOTHING_CHANGED}
              </Box>
            )}
          </Alert>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose} disabled={submitting}>
          Cancel
        </Button>
        {!refused && (
          <Button
            onClick={submit}
            disabled={!canSubmit}
            variant="contained"
            color={hazard ? 'error' : 'primary'}
          >
            {label}
          </Button>
        )}
      </DialogActions>
    </Dialog>
  );
}

/** The pre-flight part of the dialog: the impact, the options, the acknowledgement. */
function PreflightStep(props: { state: PreflightState }) {
  const { state } = props;
  const { preflight, options } = state;
  // The options matter only when something is refused, or once one is on;
  // the node-local one only where the pre-flight lists node-local data.
  const showOptions =
    !!preflight &&
    (preflight.refused.length > 0 ||
      options.deleteEmptyDirData ||
      options.force ||
      options.allowNodeLocalData);
  const shownOptions = DRAIN_OPTIONS.filter(
    o =>
      o.option !== 'allowNodeLocalData' ||
      options.allowNodeLocalData ||
      (!!preflight && nodeLocalPods(preflight).length > 0),
  );
  return (
    <Box mb={2} data-testid="preflight-step">
      {state.loading && (
        <LinearProgress aria-label="taking the pre-flight" sx={{ mb: 1 }} />
      )}
      {state.error !== undefined && !state.loading && (
        <Alert
          severity="error"
          sx={{ mb: 1 }}
          data-testid="preflight-error"
          action={
            <Button color="inherit" size="small" onClick={state.retry}>
              Try again
            </Button>
          }
        >
          {`Could not take the pre-flight: ${
            describeError(state.error).message
          }`}
        </Alert>
      )}
      {state.changed && preflight && (
        <Alert
          severity="warning"
          sx={{ mb: 1 }}
          data-testid="preflight-changed"
        >
          <AlertTitle>{IMPACT_CHANGED}</AlertTitle>
          This is the impact now. Review it and acknowledge it again.
        </Alert>
      )}
      {preflight && <PreflightView preflight={preflight} />}
      {showOptions && (
        <Box mt={1} data-testid="preflight-options">
          {shownOptions.map(o => (
            <Box key={o.option}>
              <FormControlLabel
                control={
                  <Checkbox
                    checked={options[o.option]}
                    disabled={state.loading}
                    onChange={e => state.setOption(o.option, e.target.checked)}
                    inputProps={{
                      'aria-describedby': optionWarningId(o.option),
                    }}
                  />
                }
                label={o.label}
              />
              <FormHelperText
                id={optionWarningId(o.option)}
                sx={{ mt: -1, ml: 4 }}
                error
              >
                {o.warning}
              </FormHelperText>
            </Box>
          ))}
        </Box>
      )}
      {preflight && (
        <FormControlLabel
          sx={{ mt: 1 }}
          control={
            <Checkbox
              checked={state.acknowledged}
              disabled={state.loading || !preflight.canProceed}
              onChange={e => state.setAcknowledged(e.target.checked)}
              inputProps={
                { 'data-testid': 'preflight-ack' } as Record<string, string>
              }
            />
          }
          label={ACKNOWLEDGEMENT}
        />
      )}
    </Box>
  );
}
