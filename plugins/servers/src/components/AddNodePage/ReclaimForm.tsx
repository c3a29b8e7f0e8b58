import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Button from '@mui/material/Button';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import LinearProgress from '@mui/material/LinearProgress';
import MenuItem from '@mui/material/MenuItem';
import TextField from '@mui/material/TextField';
import { RECLAIM_TTL_MINUTES } from '@rackside/plugin-servers-common';
import { describeError, machinesApiRef, type DescribedError } from '../../api';
import { fieldErrorOf } from '../dialogs/fieldError';
import { LIVE_HELPER_TEXT, ReasonField } from '../dialogs/ReasonField';
import { TalosconfigUpload } from './TalosconfigUpload';

/** What the form asks for (as ReclaimDialogProps says), and who hears of the request made. */
export interface ReclaimFormProps {
  cluster: string;
  namespace: string;
  talosClusters: string[];
  address?: string;
  onClose(): void;
  onCreated(name: string): void;
}

/**
 * The request: the address, the TalosCluster to add it to, the other cluster's
 * talosconfig (from a file or pasted), how long the credential is kept, a reason.
 */
export function ReclaimForm(props: ReclaimFormProps) {
  const { cluster, namespace, talosClusters, onClose, onCreated } = props;
  const api = useApi(machinesApiRef);
  const [address, setAddress] = useState(props.address ?? '');
  const [target, setTarget] = useState(talosClusters[0] ?? '');
  // Held only here, sent once, dropped when the request is made.
  const [talosconfig, setTalosconfig] = useState('');
  const [ttl, setTtl] = useState<number>(RECLAIM_TTL_MINUTES.default);
  const [reason, setReason] = useState('');
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<DescribedError | undefined>();

  const canSubmit =
    !submitting &&
    address.trim().length > 0 &&
    talosconfig.trim().length > 0 &&
    reason.trim().length > 0;

  const submit = async () => {
    setSubmitting(true);
    setError(undefined);
    try {
      const created = await api.createReclaim(cluster, {
        address: address.trim(),
        talosconfig,
        reason,
        ttlMinutes: ttl,
        ...(talosClusters.length > 1 ? { talosCluster: target } : {}),
      });
      setTalosconfig('');
      onCreated(created.name);
    } catch (e) {
      setError(describeError(e));
      setSubmitting(false);
    }
  };

  // A 400 about one field goes under that field (its helper text: live, and
  // the field's aria-describedby); the rest below the form.
  const fieldError = (field: string) => fieldErrorOf(error, field);
  const addressError = fieldError('address');
  const ttlError = fieldError('ttlMinutes');
  const reasonError = fieldError('reason');
  const formError = !addressError && !ttlError && !reasonError;

  return (
    <>
      <DialogContent data-testid="reclaim-form">
        <DialogContentText sx={{ mb: 2 }}>
          Reset a machine that another Talos cluster configured, and add it to{' '}
          <strong>{cluster}</strong>. The reset wipes the machine&apos;s STATE
          and EPHEMERAL partitions; it comes back in maintenance mode and shows
          up here as a pending machine.
        </DialogContentText>
        <TextField
          label="Address of the machine"
          value={address}
          onChange={e => setAddress(e.target.value)}
          required
          fullWidth
          error={!!addressError}
          helperText={addressError}
          FormHelperTextProps={LIVE_HELPER_TEXT}
          sx={{ mb: 2 }}
          inputProps={{ 'data-testid': 'reclaim-address' }}
        />
        {talosClusters.length > 1 && (
          <TextField
            select
            label="Add it to"
            value={target}
            onChange={e => setTarget(e.target.value)}
            fullWidth
            sx={{ mb: 2 }}
          >
            {talosClusters.map(c => (
              <MenuItem key={c} value={c}>
                {c}
              </MenuItem>
            ))}
          </TextField>
        )}
        <TalosconfigUpload
          cluster={cluster}
          namespace={namespace}
          ttl={ttl}
          talosconfig={talosconfig}
          onTalosconfig={setTalosconfig}
        />
        <TextField
          type="number"
          label="Minutes to confirm before the request expires"
          value={ttl}
          onChange={e => setTtl(Number(e.target.value))}
          inputProps={{
            min: RECLAIM_TTL_MINUTES.min,
            max: RECLAIM_TTL_MINUTES.max,
            'data-testid': 'reclaim-ttl',
          }}
          error={!!ttlError}
          helperText={
            ttlError ??
            `From ${RECLAIM_TTL_MINUTES.min} to ${RECLAIM_TTL_MINUTES.max}.`
          }
          FormHelperTextProps={LIVE_HELPER_TEXT}
          sx={{ mb: 2, width: 360 }}
        />
        <ReasonField
          value={reason}
          onChange={setReason}
          error={reasonError}
          testId="reclaim-reason"
        />
        {error && formError && (
          <Alert severity="error" role="alert" data-testid="reclaim-error">
            {error.status === 409 && <AlertTitle>Refused</AlertTitle>}
            {error.message}
          </Alert>
        )}
        {submitting && <LinearProgress />}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose} disabled={submitting}>
          Cancel
        </Button>
        <Button variant="contained" onClick={submit} disabled={!canSubmit}>
          Continue
        </Button>
      </DialogActions>
    </>
  );
}
