import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogTitle from '@mui/material/DialogTitle';
import LinearProgress from '@mui/material/LinearProgress';
import { describeError, machinesApiRef } from '../../api';
import { useLiveRefresh } from '../hooks/useLiveRefresh';
import { useLoader } from '../hooks/useLoader';
import { FOCUSABLE_PAPER, useFocusOnOpen } from '../dialogs/dialogFocus';
import { ReclaimProgress } from './ReclaimProgress';
import { RECLAIM_DIALOG_TITLE } from './texts';
import { ReclaimForm } from './ReclaimForm';

export interface ReclaimDialogProps {
  cluster: string;
  /** Where the credential Secret is kept (the operator namespace). */
  namespace: string;
  /** The TalosClusters the machine can be added to. */
  talosClusters: string[];
  /** Prefilled: the AlreadyConfigured address the user clicked. */
  address?: string;
  /** A request made earlier: the dialog follows it instead of asking. */
  reclaim?: string;
  onClose(): void;
  /** Something was written; the page reloads its lists. */
  onChanged(): void;
}

/**
 * "Add a machine from another cluster" (decision 0002): the address, the other cluster's
 * talosconfig and a reason, with the warning that the credential is stored; then the
 * typed UUID; then the progress until Done or Failed, with the result in words.
 */
export function ReclaimDialog(props: ReclaimDialogProps) {
  const { cluster, onClose, onChanged } = props;
  const [name, setName] = useState(props.reclaim);
  const focusOnOpen = useFocusOnOpen();
  return (
    <Dialog
      open
      onClose={onClose}
      aria-labelledby="rackside-reclaim-title"
      fullWidth
      maxWidth="md"
      PaperProps={{ ...FOCUSABLE_PAPER, ref: focusOnOpen }}
    >
      <DialogTitle id="rackside-reclaim-title">
        {RECLAIM_DIALOG_TITLE}
      </DialogTitle>
      {name ? (
        <FollowReclaim
          cluster={cluster}
          name={name}
          onClose={onClose}
          onChanged={onChanged}
        />
      ) : (
        <ReclaimForm
          {...props}
          onCreated={created => {
            setName(created);
            onChanged();
          }}
        />
      )}
    </Dialog>
  );
}

function FollowReclaim(props: {
  cluster: string;
  name: string;
  onClose(): void;
  onChanged(): void;
}) {
  const { cluster, name, onClose, onChanged } = props;
  const api = useApi(machinesApiRef);
  const reclaim = useLoader(
    () => api.getReclaim(cluster, name),
    [api, cluster, name],
  );
  useLiveRefresh(cluster, reclaim.reload);
  return (
    <>
      <DialogContent data-testid="reclaim-follow">
        {reclaim.error !== undefined && !reclaim.value && (
          <Alert severity="error">
            {`Could not read request ${name}: ${
              describeError(reclaim.error).message
            }`}
          </Alert>
        )}
        {!reclaim.value && reclaim.loading && <LinearProgress />}
        {reclaim.value && (
          <ReclaimProgress
            cluster={cluster}
            reclaim={reclaim.value}
            onConfirmed={() => {
              reclaim.reload();
              onChanged();
            }}
          />
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Close</Button>
      </DialogActions>
    </>
  );
}
