import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import TextField from '@mui/material/TextField';
import WarningIcon from '@mui/icons-material/Warning';
import type {
  ActionOffer,
  QuorumSummaryResponse,
  ServerAction,
} from '@rackside/plugin-servers-common';
import { describeError, serversApiRef, type DescribedError } from '../api';
import { ACTION_DESCRIPTIONS, ACTION_LABELS } from './labels';

/** The hint shown under the reason field; the backend's 400 replaces it. */
export const REASON_HINT =
  "Why, in your own words (a ticket reference helps). The deployment's reason policy applies.";

export interface ActionDialogProps {
  cluster: string;
  node: string;
  action: ServerAction;
  offer: ActionOffer;
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
  const { cluster, node, action, offer, quorum, onClose, onDone } = props;
  const api = useApi(serversApiRef);
  const { ceremony } = offer;
  const hazard = ceremony.level === 'hazard';
  const refused = ceremony.level === 'refused';
  const needsTypedName = ceremony.requires.typedName;
  const needsPreflight = ceremony.requires.preflightAck;

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
    !needsPreflight &&
    reason.trim().length > 0 &&
    (!needsTypedName || typedName === node);

  const submit = async () => {
    setSubmitting(true);
    setError(undefined);
    try {
      const result = await api.requestAction(cluster, node, action, {
        reason,
        ...(needsTypedName ? { typedName } : {}),
      });
      onDone(result.name);
    } catch (e) {
      setError(describeError(e));
      setSubmitting(false);
    }
  };

  const label = ACTION_LABELS[action];
  const titleId = `rackside-action-title-${action}`;
  return (
    <Dialog
      open
      onClose={submitting ? undefined : onClose}
      aria-labelledby={titleId}
      fullWidth
      maxWidth="sm"
      PaperProps={{
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
        {refused && (
          <Alert severity="error" sx={{ mb: 2 }} data-testid="action-refused">
            <AlertTitle>Refused</AlertTitle>
            {`This would drop the ready control-plane members of ${cluster} below quorum, so Rackside refuses it.`}
            {quorum && (
              <Box component="div" mt={1}>
                {quorum.derived
                  ? `Members ${quorum.members}, quorum ${quorum.quorum}, margin ${quorum.margin}.`
                  : `Quorum cannot be derived: ${quorum.reason}`}
              </Box>
            )}
          </Alert>
        )}
        {needsPreflight && (
          <Alert severity="info" sx={{ mb: 2 }}>
            This action needs a pre-flight acknowledgement, which this page
            cannot show yet.
          </Alert>
        )}
        {!refused && (
          <>
            <TextField
              label="Reason"
              value={reason}
              onChange={e => setReason(e.target.value)}
              required
              fullWidth
              multiline
              minRows={2}
              error={!!reasonError}
              helperText={reasonError ?? REASON_HINT}
              inputProps={{ 'data-testid': 'action-reason' }}
              sx={{ mb: 2 }}
            />
            {needsTypedName && (
              <TextField
                label={`Type ${node} to confirm`}
                value={typedName}
                onChange={e => setTypedName(e.target.value)}
                required
                fullWidth
                error={typedName.length > 0 && typedName !== node}
                inputProps={{ 'data-testid': 'action-typed-name' }}
              />
            )}
          </>
        )}
        {error && !reasonError && (
          <Alert severity="error" role="alert" data-testid="action-error">
            {error.status === 409 && <AlertTitle>Refused</AlertTitle>}
            {error.message}
            {error.quorum && (
              <Box component="div" mt={1}>
                {`Members ${error.quorum.members ?? '?'}, quorum ${
                  error.quorum.quorum ?? '?'
                }, margin ${error.quorum.margin ?? '?'}.`}
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
