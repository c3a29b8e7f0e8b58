import { useEffect, useState } from 'react';
import Alert from '@mui/material/Alert';
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
  renewalAcknowledgement,
  type PlanControl,
  type PlanPreflightResponse,
  type PlanResponse,
  type PreflightCeremonyLevel,
} from '@rackside/plugin-servers-common';
import { describeError, PreflightChangedError, serversApiRef } from '../../api';
import { HazardStepNames, hazardNamesTyped } from '../dialogs/HazardStepNames';
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

/** The steps a renewal covers: not started, not left out by an earlier renewal. */
export function remainingStepsOf(plan: PlanResponse): string[] {
  const excluded = plan.authorization?.excluded ?? [];
  return plan.nodes
    .filter(n => n.phase === 'Pending' && !excluded.includes(n.name))
    .map(n => n.name);
}

/**
 * What the renewer must acknowledge, from their own pre-flight of the remaining steps
 * (servers-common's renewalAcknowledgement, as the backend applies it).
 */
function renewalOf(plan: PlanResponse, preflight: PlanPreflightResponse) {
  return renewalAcknowledgement(
    {
      intent: plan.intent,
      acknowledged: plan.acknowledged as
        | Record<string, PreflightCeremonyLevel>
        | undefined,
    },
    preflight.nodes.map(n => ({ node: n.node, rung: n.ceremony.level })),
  );
}

/**
 * A renewal's own plan pre-flight of the remaining steps (as the plan runs them): taken
 * when the dialog opens; undefined while it loads or when it could not be taken (the
 * backend then says whether the renewal needs it).
 */
function useRenewalPreflight(
  cluster: string,
  plan: PlanResponse,
  active: boolean,
) {
  const api = useApi(serversApiRef);
  const [preflight, setPreflight] = useState<PlanPreflightResponse>();
  const [failed, setFailed] = useState<string>();
  useEffect(() => {
    const nodes = remainingStepsOf(plan);
    if (!active || nodes.length === 0) return undefined;
    let live = true;
    api
      .planPreflight(cluster, {
        intent: plan.intent,
        nodes,
        maxParallel: plan.maxParallel,
        ...(plan.drain?.deleteEmptyDirData ? { deleteEmptyDirData: true } : {}),
        ...(plan.drain?.force ? { force: true } : {}),
        ...(plan.drain?.allowNodeLocalData ? { allowNodeLocalData: true } : {}),
        // What an upgrade or a firmware plan installs: its pre-flight is asked for it.
        ...(plan.upgrade ? { image: plan.upgrade.image } : {}),
        ...(plan.firmware
          ? {
              imageURI: plan.firmware.imageURI,
              ...(plan.firmware.version !== undefined
                ? { version: plan.firmware.version }
                : {}),
              ...(plan.firmware.targets?.length
                ? { targets: plan.firmware.targets }
                : {}),
              ...(plan.firmware.checksum !== undefined
                ? { checksum: plan.firmware.checksum }
                : {}),
            }
          : {}),
      })
      .then(
        p => live && setPreflight(p),
        e => live && setFailed(describeError(e).message),
      );
    return () => {
      live = false;
    };
  }, [api, cluster, plan, active]);
  return { preflight, setPreflight, failed };
}

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
  const [typedNames, setTypedNames] = useState<Record<string, string>>({});
  const focusRef = useFocusOnOpen();
  const titleId = `rackside-plan-${control}-title`;
  const renewing = control === 'renew';
  const { preflight, setPreflight, failed } = useRenewalPreflight(
    cluster,
    plan,
    renewing,
  );
  const renewal = preflight ? renewalOf(plan, preflight) : undefined;
  const typed =
    !renewal?.needed || hazardNamesTyped(renewal.hazard, typedNames);
  const submit = async () => {
    setBusy(true);
    setError(undefined);
    try {
      if (renewing) {
        await api.renewPlan(cluster, plan.name, {
          reason,
          ...(skipRefused ? { skipRefused } : {}),
          // The renewer's own acknowledgement, when the remaining steps need one.
          ...(renewal?.needed && preflight
            ? {
                preflightToken: preflight.token,
                ...(renewal.hazard.length > 0
                  ? {
                      typedNames: renewal.hazard.map(
                        n => typedNames[n]?.trim() ?? '',
                      ),
                    }
                  : {}),
              }
            : {}),
        });
      } else {
        await api.controlPlan(cluster, plan.name, control, { reason });
      }
      onClose(true);
    } catch (e) {
      // A changed impact comes with the new pre-flight: acknowledge that one.
      if (e instanceof PreflightChangedError) {
        setPreflight(e.preflight as unknown as PlanPreflightResponse);
      }
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
        {renewing && renewal?.needed && (
          <Alert
            severity="warning"
            sx={{ mt: 2 }}
            data-testid="plan-renew-acknowledgement"
          >
            Renewing puts the remaining steps on your authority, with your own
            pre-flight of them: {renewal.reasons.join('; ')}.
          </Alert>
        )}
        {renewing && renewal?.needed && (
          <HazardStepNames
            hazard={renewal.hazard}
            typed={typedNames}
            onChange={setTypedNames}
          />
        )}
        {renewing && failed && (
          <Alert severity="info" sx={{ mt: 2 }}>
            The pre-flight of the remaining servers could not be taken ({failed}
            ): renewing without it works only if no remaining step needs a new
            acknowledgement.
          </Alert>
        )}
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
          disabled={busy || reason.trim().length === 0 || !typed}
          onClick={submit}
          data-testid={`plan-${control}-submit`}
        >
          {CONTROL_LABELS[control]}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
