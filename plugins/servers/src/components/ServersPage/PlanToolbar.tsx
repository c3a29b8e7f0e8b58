import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Typography from '@mui/material/Typography';
import { matchesServerFilter } from '@rackside/plugin-servers-common';
import { describeError, serversApiRef } from '../../api';
import { PlanDialog } from '../dialogs/PlanDialog';

/**
 * The selection of a cluster's servers for a maintenance plan, above its table: how
 * many are selected, "Select all matching the filter" (the whole list, filtered with
 * the shared rule, not only the rows in view), "Clear selection", and "Plan a rolling
 * drain / reboot", which opens the plan dialog. When the dialog closes the focus goes
 * back to the button that opened it (the dialog's own focus return).
 */
export function PlanToolbar(props: {
  cluster: string;
  filter: string;
  selected: ReadonlySet<string>;
  onSelectedChange(next: Set<string>): void;
  onPlanned(name: string): void;
}) {
  const { cluster, filter, selected, onSelectedChange, onPlanned } = props;
  const api = useApi(serversApiRef);
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const selectMatching = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const list = await api.listServers(cluster);
      onSelectedChange(
        new Set(
          list.items
            .filter(s => matchesServerFilter(s, filter))
            .map(s => s.name),
        ),
      );
    } catch (e) {
      setError(describeError(e).message);
    } finally {
      setBusy(false);
    }
  };
  const nodes = [...selected].sort();
  return (
    <Box
      display="flex"
      alignItems="center"
      gap={1}
      mb={1}
      flexWrap="wrap"
      data-testid={`plan-toolbar-${cluster}`}
    >
      <Typography
        variant="body2"
        aria-live="polite"
        data-testid={`plan-selected-${cluster}`}
      >
        {`${selected.size} selected`}
      </Typography>
      <Button size="small" onClick={selectMatching} disabled={busy}>
        {filter.trim() ? 'Select all matching the filter' : 'Select all'}
      </Button>
      <Button
        size="small"
        onClick={() => onSelectedChange(new Set())}
        disabled={selected.size === 0}
      >
        Clear selection
      </Button>
      <Button
        size="small"
        variant="contained"
        disabled={selected.size === 0}
        onClick={() => setOpen(true)}
        data-testid={`plan-open-${cluster}`}
      >
        Plan a rolling drain / reboot
      </Button>
      {error && (
        <Typography variant="body2" color="error" role="alert">
          {`Could not select the servers: ${error}`}
        </Typography>
      )}
      {open && (
        <PlanDialog
          cluster={cluster}
          nodes={nodes}
          onClose={created => {
            setOpen(false);
            if (created) {
              onSelectedChange(new Set());
              onPlanned(created);
            }
          }}
        />
      )}
    </Box>
  );
}
