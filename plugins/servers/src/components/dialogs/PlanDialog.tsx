import { useEffect, useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import LinearProgress from '@mui/material/LinearProgress';
import type {
  PlanIntent,
  PlanPreflightResponse,
} from '@rackside/plugin-servers-common';
import { describeError, PreflightChangedError, serversApiRef } from '../../api';
import { IMPACT_CHANGED, NOTHING_CHANGED } from './ceremonyText';
import { FOCUSABLE_PAPER, useFocusOnOpen } from './dialogFocus';
import { hazardNamesTyped, hazardNodesOf } from './HazardStepNames';
import { AppLink, useServersLinks } from '../ui/links';
import {
  PlanCeremony,
  PlanDrainOptions,
  PlanShapeFields,
  type PlanDrainFlags,
} from './PlanFields';
import { PlanPreflightView } from './PlanPreflightView';

/**
 * "Plan a rolling drain / reboot" of the selected servers: the plan pre-flight (per
 * node, per step, the estimate) and the ceremony (reason, acknowledgement, and for
 * reboots the number of servers typed). On success it links to the plan's page.
 */
export function PlanDialog(props: {
  cluster: string;
  nodes: string[];
  onClose(created?: string): void;
}) {
  const { cluster, nodes, onClose } = props;
  const api = useApi(serversApiRef);
  const links = useServersLinks();
  const focusRef = useFocusOnOpen();
  const [intent, setIntent] = useState<PlanIntent>('drain');
  const [maxParallel, setMaxParallel] = useState(1);
  const [drain, setDrain] = useState<PlanDrainFlags>({
    deleteEmptyDirData: false,
    force: false,
    allowNodeLocalData: false,
  });
  const [preflight, setPreflight] = useState<PlanPreflightResponse>();
  const [loadError, setLoadError] = useState<string>();
  const [changed, setChanged] = useState(false);
  const [reason, setReason] = useState('');
  const [acknowledged, setAcknowledged] = useState(false);
  const [typedCount, setTypedCount] = useState('');
  const [typedNames, setTypedNames] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ message: string; status?: number }>();
  const [created, setCreated] = useState<string>();
  const nodesKey = nodes.join(',');

  useEffect(() => {
    let cancelled = false;
    setPreflight(undefined);
    setLoadError(undefined);
    setAcknowledged(false);
    setChanged(false);
    api
      .planPreflight(cluster, {
        intent,
        nodes: nodesKey.split(','),
        maxParallel,
        // Only the options that are on, as the single pre-flight asks.
        ...Object.fromEntries(Object.entries(drain).filter(([, on]) => on)),
      })
      .then(
        p => !cancelled && setPreflight(p),
        e => !cancelled && setLoadError(describeError(e).message),
      );
    return () => {
      cancelled = true;
    };
  }, [api, cluster, intent, maxParallel, nodesKey, drain]);
  const anyOption = Object.values(drain).some(Boolean);
  const showOptions =
    anyOption || !!preflight?.nodes.some(n => n.refused.length > 0);

  const countOk = intent !== 'reboot' || Number(typedCount) === nodes.length;
  const hazard = hazardNodesOf(preflight);
  const canSubmit =
    !!preflight &&
    preflight.canProceed &&
    acknowledged &&
    reason.trim().length > 0 &&
    countOk &&
    hazardNamesTyped(hazard, typedNames) &&
    !busy;

  const submit = async () => {
    if (!preflight) return;
    setBusy(true);
    setError(undefined);
    try {
      const res = await api.createPlan(cluster, {
        intent,
        nodes,
        maxParallel,
        ...(anyOption ? { drain } : {}),
        reason,
        preflightToken: preflight.token,
        ...(intent === 'reboot' ? { typedCount: Number(typedCount) } : {}),
        ...(hazard.length > 0
          ? { typedNames: hazard.map(n => typedNames[n]?.trim() ?? '') }
          : {}),
      });
      setCreated(res.name);
    } catch (e) {
      if (PreflightChangedError.is(e)) {
        // The 409 carries the new plan pre-flight: show it, ask again.
        setPreflight(e.preflight as unknown as PlanPreflightResponse);
        setChanged(true);
        setAcknowledged(false);
      }
      const described = describeError(e);
      setError({ message: described.message, status: described.status });
    } finally {
      setBusy(false);
    }
  };

  const titleId = 'rackside-plan-dialog-title';
  return (
    <Dialog
      open
      onClose={() => onClose(created)}
      aria-labelledby={titleId}
      PaperProps={{ ...FOCUSABLE_PAPER, ref: focusRef }}
      fullWidth
      maxWidth="md"
      data-testid="plan-dialog"
    >
      <DialogTitle id={titleId}>
        {`Plan a rolling drain / reboot of ${nodes.length} server${
          nodes.length === 1 ? '' : 's'
        }`}
      </DialogTitle>
      <DialogContent>
        {created ? (
          <Alert severity="success" data-testid="plan-created">
            {'Plan '}
            {links.plan ? (
              <AppLink to={links.plan(cluster, created)}>{created}</AppLink>
            ) : (
              created
            )}
            {' was created; the operator takes the servers through it.'}
          </Alert>
        ) : (
          <>
            <DialogContentText sx={{ mb: 2 }}>
              {`One server after another (${nodes.join(
                ', ',
              )}): workers first, at most the number below at a time, then control-plane members one at a time while the quorum allows. Before each next step the previous servers must be Ready and every disruption budget healthy.`}
            </DialogContentText>
            <PlanShapeFields
              intent={intent}
              onIntent={setIntent}
              maxParallel={maxParallel}
              onMaxParallel={setMaxParallel}
            />
            {!preflight && !loadError && (
              <LinearProgress aria-label="loading the plan pre-flight" />
            )}
            {loadError && (
              <Alert severity="error" sx={{ mb: 2 }}>
                {`Could not load the plan pre-flight: ${loadError}`}
              </Alert>
            )}
            {changed && (
              <Alert
                severity="warning"
                sx={{ mb: 2 }}
                data-testid="plan-impact-changed"
              >
                {`${IMPACT_CHANGED}: review the new pre-flight and acknowledge it again. ${NOTHING_CHANGED}`}
              </Alert>
            )}
            {preflight && <PlanPreflightView preflight={preflight} />}
            {showOptions && (
              <PlanDrainOptions drain={drain} setDrain={setDrain} />
            )}
            {preflight?.canProceed && (
              <PlanCeremony
                intent={intent}
                nodes={nodes}
                reason={reason}
                setReason={setReason}
                reasonError={
                  error && error.status === 400 ? error.message : undefined
                }
                acknowledged={acknowledged}
                setAcknowledged={setAcknowledged}
                typedCount={typedCount}
                setTypedCount={setTypedCount}
                countOk={countOk}
                hazard={hazard}
                typedNames={typedNames}
                setTypedNames={setTypedNames}
              />
            )}
            {error && error.status !== 400 && (
              <Alert
                severity="error"
                sx={{ mt: 2 }}
                data-testid="plan-error"
                role="alert"
              >
                {`${error.message}${
                  error.status === 409 ? ` ${NOTHING_CHANGED}` : ''
                }`}
              </Alert>
            )}
          </>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={() => onClose(created)}>Close</Button>
        {!created && (
          <Button
            variant="contained"
            color={intent === 'reboot' ? 'warning' : 'primary'}
            disabled={!canSubmit}
            onClick={submit}
            data-testid="plan-submit"
          >
            {intent === 'reboot'
              ? 'Start rolling reboot'
              : 'Start rolling drain'}
          </Button>
        )}
      </DialogActions>
    </Dialog>
  );
}
