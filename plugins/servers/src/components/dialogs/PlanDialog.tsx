import { useEffect, useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Checkbox from '@mui/material/Checkbox';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import FormControl from '@mui/material/FormControl';
import FormControlLabel from '@mui/material/FormControlLabel';
import FormHelperText from '@mui/material/FormHelperText';
import FormLabel from '@mui/material/FormLabel';
import LinearProgress from '@mui/material/LinearProgress';
import Radio from '@mui/material/Radio';
import RadioGroup from '@mui/material/RadioGroup';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import type {
  PlanIntent,
  PlanPreflightResponse,
  PlanPreflightStep,
} from '@rackside/plugin-servers-common';
import { describeError, PreflightChangedError, serversApiRef } from '../../api';
import {
  ACKNOWLEDGEMENT,
  DRAIN_OPTIONS,
  IMPACT_CHANGED,
  NOTHING_CHANGED,
} from './ActionDialog';
import { FOCUSABLE_PAPER, useFocusOnOpen } from './dialogFocus';
import {
  HazardStepNames,
  hazardNamesTyped,
  hazardNodesOf,
} from './HazardStepNames';
import { AppLink, useServersLinks } from '../shared/links';
import { durationText } from '../shared/maintenanceText';
import { quorumNumbers } from './preflight';
import { LIVE_HELPER_TEXT, ReasonField } from './ReasonField';

/** "Step 1: worker-1, worker-2 (about 2 min)": one step as a sentence. */
export function stepText(step: PlanPreflightStep): string {
  const who = step.controlPlane
    ? `${step.nodes.join(', ')} (control plane, alone)`
    : step.nodes.join(', ');
  return `Step ${step.index + 1}: ${who}, about ${durationText(
    step.estimateSeconds,
  )}`;
}

/** The readable plan pre-flight: the estimate, each step, each node, the budgets. */
export function PlanPreflightView(props: { preflight: PlanPreflightResponse }) {
  const p = props.preflight;
  return (
    <Box data-testid="plan-preflight">
      <Typography
        variant="body1"
        gutterBottom
        data-testid="plan-estimate-total"
      >
        {`${p.nodes.length} server${p.nodes.length === 1 ? '' : 's'} in ${
          p.steps.length
        } step${p.steps.length === 1 ? '' : 's'}, about ${durationText(
          p.estimate.seconds,
        )} of draining in all${
          p.intent === 'reboot'
            ? ' (each reboot adds its machine’s boot time)'
            : ''
        }.`}
      </Typography>
      {p.blockers.length > 0 && (
        <Alert severity="error" sx={{ mb: 2 }} data-testid="plan-blockers">
          <AlertTitle>The plan cannot start as it is</AlertTitle>
          <Box component="ul" m={0} pl={2}>
            {p.blockers.map(b => (
              <li key={b}>{b}</li>
            ))}
          </Box>
        </Alert>
      )}
      <Typography variant="subtitle2" component="h3">
        Steps
      </Typography>
      <Box
        component="ol"
        m={0}
        mb={2}
        pl={3}
        data-testid="plan-preflight-steps"
      >
        {p.steps.map(step => {
          const numbers = quorumNumbers(step.quorum);
          return (
            <li key={step.index}>
              <Typography variant="body2">{stepText(step)}</Typography>
              {step.controlPlane && (
                <Typography variant="body2" color="text.secondary">
                  {`${step.quorum.reason}${numbers ? ` ${numbers}` : ''}`}
                </Typography>
              )}
            </li>
          );
        })}
      </Box>
      <Typography variant="subtitle2" component="h3" id="rackside-plan-nodes">
        Per server
      </Typography>
      <Table size="small" aria-labelledby="rackside-plan-nodes" sx={{ mb: 2 }}>
        <TableHead>
          <TableRow>
            <TableCell>Server</TableCell>
            <TableCell>Step</TableCell>
            <TableCell>Pods evicted</TableCell>
            <TableCell>Refused</TableCell>
            <TableCell>Budgets blocking now</TableCell>
            <TableCell>Drain estimate</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {p.nodes.map(n => (
            <TableRow
              key={n.node}
              data-testid={`plan-preflight-node-${n.node}`}
            >
              <TableCell>
                {n.node}
                {n.controlPlane ? ' (control plane)' : ''}
              </TableCell>
              <TableCell>{n.step + 1}</TableCell>
              <TableCell>{n.evict.length}</TableCell>
              <TableCell>{n.refused.length}</TableCell>
              <TableCell>
                {n.budgets
                  .filter(b => b.blocksNow)
                  .map(b => `${b.namespace}/${b.name}`)
                  .join(', ') || 'none'}
              </TableCell>
              <TableCell>{durationText(n.estimate?.seconds ?? 0)}</TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
      {p.budgets.length > 0 && (
        <>
          <Typography variant="subtitle2" component="h3">
            Disruption budgets over these servers’ pods
          </Typography>
          <Box component="ul" m={0} mb={2} pl={3}>
            {p.budgets.map(b => (
              <li key={`${b.namespace}/${b.name}`}>
                <Typography variant="body2">
                  {`${b.namespace}/${b.name}: ${
                    b.blocksNow
                      ? 'blocks evictions now; the plan waits until it is healthy'
                      : `allows ${b.disruptionsAllowed} disruption${
                          b.disruptionsAllowed === 1 ? '' : 's'
                        }`
                  }`}
                </Typography>
              </li>
            ))}
          </Box>
        </>
      )}
    </Box>
  );
}

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
  const [drain, setDrain] = useState({
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
  const countId = 'rackside-plan-typed-count';
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
            <FormControl sx={{ mb: 2 }}>
              <FormLabel id="rackside-plan-intent">
                What each server goes through
              </FormLabel>
              <RadioGroup
                row
                aria-labelledby="rackside-plan-intent"
                value={intent}
                onChange={e => setIntent(e.target.value as PlanIntent)}
              >
                <FormControlLabel
                  value="drain"
                  control={<Radio />}
                  label="Drain"
                />
                <FormControlLabel
                  value="reboot"
                  control={<Radio />}
                  label="Reboot"
                />
              </RadioGroup>
            </FormControl>
            <TextField
              label="At most this many at a time"
              type="number"
              value={maxParallel}
              onChange={e => {
                const n = Math.floor(Number(e.target.value));
                if (n >= 1 && n <= 100) setMaxParallel(n);
              }}
              inputProps={{
                min: 1,
                max: 100,
                'data-testid': 'plan-max-parallel',
              }}
              sx={{ mb: 2, display: 'block' }}
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
              <Box mb={2} data-testid="plan-drain-options">
                <Typography variant="subtitle2" component="h3">
                  Drain options of every step
                </Typography>
                {DRAIN_OPTIONS.map(o => (
                  <Box key={o.option}>
                    <FormControlLabel
                      control={
                        <Checkbox
                          checked={drain[o.option]}
                          onChange={e =>
                            setDrain(d => ({
                              ...d,
                              [o.option]: e.target.checked,
                            }))
                          }
                          inputProps={{
                            'aria-describedby': `rackside-plan-option-${o.option}`,
                          }}
                        />
                      }
                      label={o.label.replace('this node', 'its server')}
                    />
                    <FormHelperText
                      id={`rackside-plan-option-${o.option}`}
                      sx={{ mt: -1, ml: 4 }}
                      error
                    >
                      {o.warning.replace('this node', 'the server')}
                    </FormHelperText>
                  </Box>
                ))}
              </Box>
            )}
            {preflight?.canProceed && (
              <>
                <ReasonField
                  value={reason}
                  onChange={setReason}
                  error={
                    error && error.status === 400 ? error.message : undefined
                  }
                  testId="plan-reason"
                />
                <FormControlLabel
                  control={
                    <Checkbox
                      checked={acknowledged}
                      onChange={e => setAcknowledged(e.target.checked)}
                      inputProps={{ 'data-testid': 'plan-acknowledge' } as any}
                    />
                  }
                  label={ACKNOWLEDGEMENT}
                />
                {intent === 'reboot' && (
                  <TextField
                    id={countId}
                    label={`Type the number of servers to reboot (${nodes.length})`}
                    value={typedCount}
                    onChange={e => setTypedCount(e.target.value)}
                    required
                    fullWidth
                    error={typedCount !== '' && !countOk}
                    helperText={
                      typedCount !== '' && !countOk
                        ? `That is not ${nodes.length}.`
                        : 'Rebooting many servers is confirmed by typing how many.'
                    }
                    FormHelperTextProps={LIVE_HELPER_TEXT}
                    inputProps={{
                      inputMode: 'numeric',
                      'data-testid': 'plan-typed-count',
                    }}
                    sx={{ mt: 2 }}
                  />
                )}
                <HazardStepNames
                  hazard={hazard}
                  typed={typedNames}
                  onChange={setTypedNames}
                />
              </>
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
