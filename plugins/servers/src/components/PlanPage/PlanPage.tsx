import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import { usePermission } from '@backstage/plugin-permission-react';
import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Button from '@mui/material/Button';
import Checkbox from '@mui/material/Checkbox';
import FormControlLabel from '@mui/material/FormControlLabel';
import Chip from '@mui/material/Chip';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import LinearProgress from '@mui/material/LinearProgress';
import Paper from '@mui/material/Paper';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import {
  isTerminalPlanPhase,
  serversPlanPermission,
  type PlanControl,
  type PlanResponse,
} from '@rackside/plugin-servers-common';
import { describeError, serversApiRef } from '../../api';
import { chipLabelSx } from '../shared/chips';
import { FOCUSABLE_PAPER, useFocusOnOpen } from '../dialogs/dialogFocus';
import { AppLink, useServersLinks } from '../shared/links';
import { LiveDetail } from '../LiveDetail';
import { durationText, formatTime } from '../shared/maintenanceText';
import {
  planPhaseColor,
  planProgressText,
  waitingText,
} from '../shared/planText';
import { ReasonField } from '../dialogs/ReasonField';

/** What the plan page offers: the plan controls, and renewing its authorization. */
type PlanPageControl = PlanControl | 'renew';

const CONTROL_LABELS: Record<PlanPageControl, string> = {
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

function ControlDialog(props: {
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

const WAIT_TITLES: Record<string, string> = {
  window: 'Outside the window',
  gate: 'Waiting on a gate',
  authorization: 'Waiting for its authorization to be renewed',
};

/** One plan: its summary, what it waits on, its controls and each node's step. */
export function PlanDetail(props: {
  cluster: string;
  plan: PlanResponse;
  onChanged(): void;
}) {
  const { cluster, plan, onChanged } = props;
  const links = useServersLinks();
  // Asking failed: the controls are offered and the backend's 403 decides.
  const planning = usePermission({ permission: serversPlanPermission });
  const canPlan = planning.allowed || planning.error !== undefined;
  const [control, setControl] = useState<PlanPageControl>();
  const waiting = waitingText(plan);
  const percent =
    plan.counts.total > 0
      ? Math.round(
          (100 *
            (plan.counts.total - plan.counts.pending - plan.counts.running)) /
            plan.counts.total,
        )
      : 100;
  return (
    <>
      <Paper
        component="section"
        aria-labelledby="rackside-plan-summary"
        sx={{ p: 2, mb: 2 }}
      >
        <Typography
          variant="h6"
          component="h2"
          id="rackside-plan-summary"
          gutterBottom
        >
          Summary
        </Typography>
        <Stack direction="row" spacing={1} alignItems="center" mb={1}>
          <Chip
            label={plan.phase}
            color={planPhaseColor(plan.phase)}
            sx={chipLabelSx(planPhaseColor(plan.phase))}
            data-testid="plan-phase"
          />
          <Typography variant="body1" data-testid="plan-progress">
            {planProgressText(plan)}
          </Typography>
        </Stack>
        <LinearProgress
          variant="determinate"
          value={percent}
          aria-label="plan progress"
          sx={{ mb: 2 }}
        />
        <Typography variant="body2">
          {`Rolling ${plan.intent} of ${plan.counts.total} server${
            plan.counts.total === 1 ? '' : 's'
          }, at most ${
            plan.maxParallel
          } at a time (control-plane members one at a time).`}
        </Typography>
        <Typography variant="body2">
          {`Requested by ${plan.requestedBy ?? 'unknown'}${
            plan.createdAt ? ` at ${formatTime(plan.createdAt)}` : ''
          }: ${plan.reason}`}
        </Typography>
        {plan.message && (
          <Typography variant="body2" data-testid="plan-message">
            {plan.message}
          </Typography>
        )}
        {plan.estimate && !isTerminalPlanPhase(plan.phase) && (
          <Typography variant="body2" data-testid="plan-estimate">
            {`About ${durationText(
              plan.estimate.remainingSeconds,
            )} left (${durationText(plan.estimate.stepSeconds)} per step)${
              plan.estimate.completesAt
                ? `, done around ${formatTime(plan.estimate.completesAt)}`
                : ''
            }.`}
          </Typography>
        )}
      </Paper>
      {waiting && (
        <Alert severity="info" sx={{ mb: 2 }} data-testid="plan-waiting">
          <AlertTitle>
            {WAIT_TITLES[plan.waiting?.on ?? ''] ?? 'Waiting on a gate'}
          </AlertTitle>
          {waiting}
        </Alert>
      )}
      {plan.authorization && !isTerminalPlanPhase(plan.phase) && (
        <Typography
          variant="body2"
          sx={{ mb: 2 }}
          data-testid="plan-authorization"
        >
          {`Authorized by ${plan.authorization.by} until ${formatTime(
            plan.authorization.until,
          )}${
            plan.authorization.excluded?.length
              ? `; left out: ${plan.authorization.excluded.join(', ')}`
              : ''
          }.`}
        </Typography>
      )}
      {plan.paused && plan.pause && (
        <Alert severity="warning" sx={{ mb: 2 }} data-testid="plan-paused">
          {`Paused by ${plan.pause.by} at ${formatTime(plan.pause.at)}: ${
            plan.pause.reason
          }`}
        </Alert>
      )}
      {plan.cancel && (
        <Alert severity="warning" sx={{ mb: 2 }} data-testid="plan-cancelled">
          {`Cancelled by ${plan.cancel.by} at ${formatTime(plan.cancel.at)}: ${
            plan.cancel.reason
          }`}
        </Alert>
      )}
      {canPlan && controlsOf(plan).length > 0 && (
        <Stack direction="row" spacing={1} mb={2}>
          {controlsOf(plan).map(c => (
            <Button
              key={c}
              variant="outlined"
              color={c === 'cancel' ? 'error' : 'primary'}
              onClick={() => setControl(c)}
              data-testid={`plan-${c}`}
            >
              {CONTROL_LABELS[c]}
            </Button>
          ))}
        </Stack>
      )}
      <Paper
        component="section"
        aria-labelledby="rackside-plan-steps"
        sx={{ p: 2, mb: 2 }}
      >
        <Typography
          variant="h6"
          component="h2"
          id="rackside-plan-steps"
          gutterBottom
        >
          Servers, in the order they go
        </Typography>
        <Table
          size="small"
          aria-labelledby="rackside-plan-steps"
          data-testid="plan-steps"
        >
          <TableHead>
            <TableRow>
              <TableCell>Server</TableCell>
              <TableCell>Step</TableCell>
              <TableCell>Maintenance</TableCell>
              <TableCell>Started</TableCell>
              <TableCell>Ended</TableCell>
              <TableCell>Note</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {plan.nodes.map(step => (
              <TableRow key={step.name} data-testid={`plan-step-${step.name}`}>
                <TableCell>
                  {step.name}
                  {step.controlPlane ? ' (control plane)' : ''}
                </TableCell>
                <TableCell>
                  <Chip
                    size="small"
                    label={step.phase}
                    color={planPhaseColor(step.phase)}
                    sx={chipLabelSx(planPhaseColor(step.phase))}
                  />
                </TableCell>
                <TableCell>
                  {step.maintenance && links.maintenance ? (
                    <AppLink to={links.maintenance(cluster, step.maintenance)}>
                      {step.maintenance}
                    </AppLink>
                  ) : (
                    step.maintenance ?? 'not started'
                  )}
                </TableCell>
                <TableCell>
                  {step.startedAt ? formatTime(step.startedAt) : ''}
                </TableCell>
                <TableCell>
                  {step.endedAt ? formatTime(step.endedAt) : ''}
                </TableCell>
                <TableCell>{step.message ?? ''}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </Paper>
      {control && (
        <ControlDialog
          cluster={cluster}
          plan={plan}
          control={control}
          onClose={done => {
            setControl(undefined);
            if (done) onChanged();
          }}
        />
      )}
    </>
  );
}

/** The page of one maintenance plan (`/servers/plans/:cluster/:name`). */
export function PlanPage(props: { cluster: string; name: string }) {
  const { cluster, name } = props;
  return (
    <LiveDetail
      cluster={cluster}
      name={name}
      kind="maintenance plan"
      title={`Maintenance plan ${name}`}
      testId="rackside-plan-page"
      load={(api, c, n) => api.getPlan(c, n)}
    >
      {(plan, reload) => (
        <PlanDetail cluster={cluster} plan={plan} onChanged={reload} />
      )}
    </LiveDetail>
  );
}
