import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import LinearProgress from '@mui/material/LinearProgress';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemText from '@mui/material/ListItemText';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import WarningIcon from '@mui/icons-material/Warning';
import type { ReclaimResponse } from '@rackside/plugin-servers-common';
import { describeError, machinesApiRef, type DescribedError } from '../../api';
import { LIVE_HELPER_TEXT } from '../dialogs/ReasonField';
import { RECLAIM_PHASE_TEXT, RESET_AND_ADD, UUID_PATTERN, when } from './texts';

/**
 * Where a Reset and add request is: waiting for the UUID, the typed-UUID step, the
 * reset and the wait for maintenance mode, then Done or Failed (Expired, Refused)
 * with the operator's result in words, and every step of its audit trail.
 */
export function ReclaimProgress(props: {
  cluster: string;
  reclaim: ReclaimResponse;
  onConfirmed(): void;
}) {
  const { cluster, reclaim, onConfirmed } = props;
  const phase = reclaim.phase;
  const waitingMessage = reclaim.conditions.find(
    c => c.status === 'True' && c.message,
  )?.message;
  return (
    <Box data-testid="reclaim-progress" data-phase={phase}>
      <Typography variant="body1" gutterBottom>
        <strong>{reclaim.name}</strong>: {reclaim.address}, to be added to{' '}
        {reclaim.targetCluster}
      </Typography>
      <Typography
        variant="h6"
        component="p"
        data-testid="reclaim-phase"
        gutterBottom
      >
        {RECLAIM_PHASE_TEXT[phase]}
      </Typography>
      {!reclaim.terminal && phase !== 'AwaitingConfirmation' && (
        <LinearProgress sx={{ mb: 2 }} />
      )}
      {phase === 'Pending' && waitingMessage && (
        <Typography variant="body2" color="text.secondary" gutterBottom>
          {waitingMessage}
        </Typography>
      )}
      {phase === 'AwaitingConfirmation' && !reclaim.confirmed && (
        <ConfirmStep
          cluster={cluster}
          reclaim={reclaim}
          onConfirmed={onConfirmed}
        />
      )}
      {(phase === 'Resetting' || phase === 'WaitingForMaintenance') && (
        <Typography variant="body2" gutterBottom>
          {reclaim.resetSentAt
            ? `Reset sent at ${when(reclaim.resetSentAt)}. `
            : ''}
          The machine restarts in maintenance mode; this fails if it has not
          answered there with the same UUID 10 minutes after the reset.
        </Typography>
      )}
      {phase === 'Done' && (
        <Alert severity="success" sx={{ mb: 2 }} data-testid="reclaim-result">
          <AlertTitle>Done</AlertTitle>
          {reclaim.result ?? 'The machine is back in maintenance mode.'} It
          shows under Machines as Pending: add it there to join it.
        </Alert>
      )}
      {(phase === 'Failed' || phase === 'Expired' || phase === 'Refused') && (
        <Alert severity="error" sx={{ mb: 2 }} data-testid="reclaim-result">
          <AlertTitle>{phase}</AlertTitle>
          {reclaim.result ?? 'The operator gave no reason.'}
        </Alert>
      )}
      {reclaim.audit.length > 0 && (
        <>
          <Typography variant="subtitle2" component="h3">
            Steps
          </Typography>
          <List dense data-testid="reclaim-audit">
            {reclaim.audit.map((step, i) => (
              <ListItem key={`${step.at}-${i}`} disableGutters>
                <ListItemText
                  primary={`${when(step.at)} · ${step.event}${
                    step.actor ? ` · ${step.actor}` : ''
                  }`}
                  secondary={step.message}
                />
              </ListItem>
            ))}
          </List>
        </>
      )}
    </Box>
  );
}

/** The typed-UUID step: the reset is sent only for the UUID the operator read. */
function ConfirmStep(props: {
  cluster: string;
  reclaim: ReclaimResponse;
  onConfirmed(): void;
}) {
  const { cluster, reclaim, onConfirmed } = props;
  const api = useApi(machinesApiRef);
  const [typed, setTyped] = useState('');
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<DescribedError | undefined>();
  const expected = reclaim.machineUUID ?? '';
  const complete = UUID_PATTERN.test(typed.trim());
  const matches =
    complete && typed.trim().toLowerCase() === expected.toLowerCase();

  const confirm = async () => {
    setSubmitting(true);
    setError(undefined);
    try {
      await api.confirmReclaim(cluster, reclaim.name, { uuid: typed.trim() });
      onConfirmed();
    } catch (e) {
      setError(describeError(e));
    }
    setSubmitting(false);
  };

  return (
    <Box data-testid="reclaim-confirm" mb={2}>
      <Typography variant="body1" gutterBottom>
        Machine UUID, read through the other cluster&apos;s talosconfig:{' '}
        <code data-testid="reclaim-machine-uuid">{expected}</code>
      </Typography>
      {reclaim.expiresAt && (
        <Typography variant="body2" color="text.secondary" gutterBottom>
          {`Confirm before ${when(
            reclaim.expiresAt,
          )}, or the request expires and its credential is deleted.`}
        </Typography>
      )}
      <Alert
        severity="error"
        icon={<WarningIcon titleAccess="warning" />}
        sx={{ my: 2 }}
      >
        The reset wipes this machine: it leaves the other cluster for good.
        Rackside refuses it if it would break that cluster&apos;s etcd quorum or
        remove its last control plane.
      </Alert>
      <TextField
        label="Type the machine's UUID to confirm"
        value={typed}
        onChange={e => setTyped(e.target.value)}
        required
        fullWidth
        error={complete && !matches}
        helperText={
          complete && !matches
            ? 'This is not the UUID above.'
            : 'Type it, do not paste it: it is how you check it is the right machine.'
        }
        FormHelperTextProps={LIVE_HELPER_TEXT}
        inputProps={{ 'data-testid': 'reclaim-typed-uuid', spellCheck: false }}
        sx={{ mb: 2 }}
      />
      {error && (
        <Alert
          severity="error"
          role="alert"
          data-testid="reclaim-error"
          sx={{ mb: 2 }}
        >
          {error.message}
        </Alert>
      )}
      <Button
        variant="contained"
        color="error"
        onClick={confirm}
        disabled={!matches || submitting}
      >
        {`${RESET_AND_ADD} ${reclaim.address}`}
      </Button>
    </Box>
  );
}
