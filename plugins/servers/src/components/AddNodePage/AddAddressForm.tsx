import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import MenuItem from '@mui/material/MenuItem';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import { describeError, machinesApiRef, type DescribedError } from '../../api';

/** The address field: appends a discovery address to a TalosCluster. */
export function AddAddressForm(props: {
  cluster: string;
  talosClusters: string[];
  onAdded(address: string): void;
}) {
  const { cluster, talosClusters, onAdded } = props;
  const api = useApi(machinesApiRef);
  const [address, setAddress] = useState('');
  const [reason, setReason] = useState('');
  const [target, setTarget] = useState(talosClusters[0] ?? '');
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<DescribedError | undefined>();

  const submit = async () => {
    setSubmitting(true);
    setError(undefined);
    try {
      const added = await api.addDiscoveryAddress(cluster, {
        address: address.trim(),
        reason,
        ...(talosClusters.length > 1 ? { talosCluster: target } : {}),
      });
      setAddress('');
      setReason('');
      onAdded(added.address);
    } catch (e) {
      setError(describeError(e));
    }
    setSubmitting(false);
  };

  return (
    <Box
      component="form"
      mb={3}
      onSubmit={e => {
        e.preventDefault();
        submit();
      }}
      aria-label={`Add a discovery address to ${cluster}`}
    >
      <Typography variant="h6" component="h3" gutterBottom>
        Add an address
      </Typography>
      <Box display="flex" gap={2} alignItems="flex-start" flexWrap="wrap">
        <TextField
          size="small"
          label="Address"
          placeholder="10.0.0.5 or host:50000"
          value={address}
          onChange={e => setAddress(e.target.value)}
          inputProps={{ 'data-testid': 'discovery-address' }}
        />
        {talosClusters.length > 1 && (
          <TextField
            select
            size="small"
            label="TalosCluster"
            value={target}
            onChange={e => setTarget(e.target.value)}
            sx={{ minWidth: 160 }}
          >
            {talosClusters.map(c => (
              <MenuItem key={c} value={c}>
                {c}
              </MenuItem>
            ))}
          </TextField>
        )}
        <TextField
          size="small"
          label="Reason"
          value={reason}
          onChange={e => setReason(e.target.value)}
          sx={{ flex: 1, minWidth: 280 }}
          inputProps={{ 'data-testid': 'discovery-reason' }}
        />
        <Button
          type="submit"
          variant="contained"
          disabled={submitting || !address.trim() || reason.trim().length === 0}
        >
          Add address
        </Button>
      </Box>
      {error && (
        <Alert
          severity="error"
          role="alert"
          sx={{ mt: 1 }}
          data-testid="discovery-error"
        >
          {error.message}
        </Alert>
      )}
    </Box>
  );
}
