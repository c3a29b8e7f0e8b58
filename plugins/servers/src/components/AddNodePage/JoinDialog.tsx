import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import type { TalosMachineResponse } from '@rackside/plugin-servers-common';
import { describeError, machinesApiRef, type DescribedError } from '../../api';
import { fieldErrorOf } from '../dialogs/fieldError';
import { FOCUSABLE_PAPER, useFocusOnOpen } from '../dialogs/dialogFocus';
import { ReasonField } from '../dialogs/ReasonField';

/** Asks for the reason, then sets `spec.join` on a Pending machine. */
export function JoinDialog(props: {
  cluster: string;
  machine: TalosMachineResponse;
  onClose(): void;
  onDone(): void;
}) {
  const { cluster, machine, onClose, onDone } = props;
  const api = useApi(machinesApiRef);
  const [reason, setReason] = useState('');
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<DescribedError | undefined>();
  const reasonError = fieldErrorOf(error, 'reason');
  const focusOnOpen = useFocusOnOpen();

  const submit = async () => {
    setSubmitting(true);
    setError(undefined);
    try {
      await api.joinMachine(cluster, machine.uuid, { reason });
      onDone();
    } catch (e) {
      setError(describeError(e));
      setSubmitting(false);
    }
  };

  return (
    <Dialog
      open
      onClose={submitting ? undefined : onClose}
      aria-labelledby="rackside-join-title"
      fullWidth
      maxWidth="sm"
      PaperProps={{ ...FOCUSABLE_PAPER, ref: focusOnOpen }}
    >
      <DialogTitle id="rackside-join-title">{`Add machine ${machine.uuid}`}</DialogTitle>
      <DialogContent>
        <DialogContentText sx={{ mb: 2 }}>
          {`The operator applies the join config of ${
            machine.talosCluster
          } to the machine at ${
            machine.address ?? 'its last address'
          }. It reboots with that config and becomes a node of ${cluster}.`}
        </DialogContentText>
        <ReasonField
          value={reason}
          onChange={setReason}
          error={reasonError}
          testId="join-reason"
        />
        {error && !reasonError && (
          <Alert severity="error" role="alert" data-testid="join-error">
            {error.message}
          </Alert>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose} disabled={submitting}>
          Cancel
        </Button>
        <Button
          variant="contained"
          onClick={submit}
          disabled={submitting || reason.trim().length === 0}
        >
          Add
        </Button>
      </DialogActions>
    </Dialog>
  );
}
