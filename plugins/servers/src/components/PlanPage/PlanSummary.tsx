import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Chip from '@mui/material/Chip';
import LinearProgress from '@mui/material/LinearProgress';
import Stack from '@mui/material/Stack';
import Typography from '@mui/material/Typography';
import {
  isTerminalPlanPhase,
  type PlanResponse,
} from '@rackside/plugin-servers-common';
import { chipLabelSx } from '../ui/chips';
import { PageSection } from '../ui/PageSection';
import { durationText, formatTime } from '../ui/maintenanceText';
import { planPhaseColor, planProgressText, waitingText } from '../ui/planText';

/** A plan's summary: its phase and progress, what it does, who asked and why. */
export function PlanSummary(props: { plan: PlanResponse }) {
  const { plan } = props;
  const percent =
    plan.counts.total > 0
      ? Math.round(
          (100 *
            (plan.counts.total - plan.counts.pending - plan.counts.running)) /
            plan.counts.total,
        )
      : 100;
  return (
    <PageSection title="Summary" headingId="rackside-plan-summary">
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
      {plan.versions && (
        <Typography variant="body1" gutterBottom data-testid="plan-versions">
          {plan.versions.text}
        </Typography>
      )}
      <Typography variant="body2">
        {`Rolling ${plan.intent} of ${plan.counts.total} server${
          plan.counts.total === 1 ? '' : 's'
        }, at most ${
          plan.maxParallel
        } at a time (control-plane members one at a time).`}
      </Typography>
      {plan.upgrade && (
        <Typography
          variant="body2"
          sx={{ wordBreak: 'break-all' }}
          data-testid="plan-image"
        >
          {'Installer image: '}
          <code>{plan.upgrade.image}</code>
          {plan.upgrade.stage ? ' (staged)' : ''}
        </Typography>
      )}
      {plan.firmware && (
        <Typography
          variant="body2"
          sx={{ wordBreak: 'break-all' }}
          data-testid="plan-image-uri"
        >
          {'Firmware image: '}
          <code>{plan.firmware.imageURI}</code>
          {plan.firmware.applyTime === 'OnReset' ? ' (applied on reset)' : ''}
        </Typography>
      )}
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
    </PageSection>
  );
}

const WAIT_TITLES: Record<string, string> = {
  window: 'Outside the window',
  gate: 'Waiting on a gate',
  authorization: 'Waiting for its authorization to be renewed',
  healthyReturn: 'Waiting for the servers to return healthy',
};

/**
 * What holds a plan or ended it: what it waits on, who authorized it and until
 * when, who paused or cancelled it and why.
 */
export function PlanNotices(props: { plan: PlanResponse }) {
  const { plan } = props;
  const waiting = waitingText(plan);
  return (
    <>
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
      {(plan.acknowledgements?.length ?? 0) > 1 && (
        <Typography
          variant="body2"
          sx={{ mb: 2 }}
          data-testid="plan-acknowledgements"
        >
          {`Acknowledged by ${plan
            .acknowledgements!.map(
              a =>
                `${a.by} (${
                  a.on === 'create' ? 'created' : 'renewed'
                } ${formatTime(a.at)}: ${
                  Object.keys(a.rungs).join(', ') || 'no steps'
                })`,
            )
            .join('; ')}.`}
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
    </>
  );
}
