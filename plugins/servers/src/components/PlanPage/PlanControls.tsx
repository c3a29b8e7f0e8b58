import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Button from '@mui/material/Button';
import Checkbox from '@mui/material/Checkbox';
import FormControlLabel from '@mui/material/FormControlLabel';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import {
  isTerminalPlanPhase,
  type PlanControl,
  type PlanResponse,
} from '@rackside/plugin-servers-common';
import { describeError, serversApiRef } from '../../api';
import { FOCUSABLE_PAPER, useFocusOnOpen } from '../dialogs/dialogFocus';
import { ReasonField } from '../dialogs/ReasonField';

/** What the plan page offers: the plan controls, and renewing its authorization. */
export type PlanPageControl = PlanControl | 'renew';

export const CONTROL_LABELS: Record<PlanPageControl, string> = {
  pause: 'Pause',
  resume: 'Resume',
  cancel: 'Cancel plan',
  renew: 'Renew authorization',
};

const CONTROL_TEXT: Record<PlanPageControl, string> = {
  pause: 'No new step starts while the plan is paused; running steps finish.',
  resume: 'The plan goes on with its next step, under its gates and window.',
  cancel:
    'Nothing new starts. Running steps finish or are abandoned, as the plan says; a cancelled plan cannot be resumed.',
  renew:
    'Your permissions are checked on every server not started yet, and the plan may start steps for the next hours in your name.',
};

/** The controls a plan offers now. */
export function controlsOf(plan: PlanResponse): PlanPageControl[] {
  if (isTerminalPlanPhase(plan.phase) || plan.cancel) return [];
  return [plan.paused ? 'resume' : 'pause', 'renew', 'cancel'];
}

export function ControlDialog(props: {
  cluster: string;
  plan: PlanResponse;
  control: PlanPageControl;
  onClose(done: boolean): void;
}) {
  const { cluster, plan, control, onClose } = props;
  const api = useApi(serversApiRef);
  const [reason, setReason] = useState('');
  const [skipRefused, setSkipRefused] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const focusRef = useFocusOnOpen();
  const titleId = `rackside-plan-${control}-title`;
  const submit = async () => {
    setBusy(true);
    setError(undefined);
    try {
      if (control === 'renew') {
        await api.renewPlan(cluster, plan.name, {
          reason,
          ...(skipRefused ? { skipRefused } : {}),
        });
      } else {
        await api.controlPlan(cluster, plan.name, control, { reason });
      }
      onClose(true);
    } catch (e) {
      setError(describeError(e).message);
      setBusy(false);
    }
  };
  return (
    <Dialog
      open
      onClose={() => onClose(false)}
      aria-labelledby={titleId}
      PaperProps={{ ...FOCUSABLE_PAPER, ref: focusRef }}
      fullWidth
      maxWidth="sm"
    >
      <DialogTitle id={titleId}>
        {`${CONTROL_LABELS[control]}: ${plan.name}`}
      </DialogTitle>
      <DialogContent>
        <DialogContentText sx={{ mb: 2 }}>
          {CONTROL_TEXT[control]}
        </DialogContentText>
        <ReasonField
          value={reason}
          onChange={setReason}
          error={error}
          testId={`plan-${control}-reason`}
        />
        {control === 'renew' && (
          <FormControlLabel
            control={
              <Checkbox
                checked={skipRefused}
                onChange={e => setSkipRefused(e.target.checked)}
              />
            }
            label="Renew without the servers I may not act on (their steps are skipped)"
          />
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={() => onClose(false)}>Close</Button>
        <Button
          variant="contained"
          color={control === 'cancel' ? 'error' : 'primary'}
          disabled={busy || reason.trim().length === 0}
          onClick={submit}
          data-testid={`plan-${control}-submit`}
        >
          {CONTROL_LABELS[control]}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
