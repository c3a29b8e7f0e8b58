import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Accordion from '@mui/material/Accordion';
import AccordionDetails from '@mui/material/AccordionDetails';
import AccordionSummary from '@mui/material/AccordionSummary';
import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Checkbox from '@mui/material/Checkbox';
import FormControlLabel from '@mui/material/FormControlLabel';
import LinearProgress from '@mui/material/LinearProgress';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import ExpandMoreIcon from '@mui/icons-material/ExpandMore';
import type {
  ApprovalRequestKind,
  ApprovalView,
  PlanPreflightResponse,
  PreflightResponse,
} from '@rackside/plugin-servers-common';
import {
  ApprovalRungGrewError,
  describeError,
  PreflightChangedError,
  serversApiRef,
  type DescribedError,
} from '../../api';
import { useLoader } from '../hooks/useLoader';
import { PageSection } from '../ui/PageSection';
import { formatTime } from '../ui/maintenanceText';
import { PreflightView } from '../dialogs/preflight';
import { PlanPreflightView } from '../dialogs/PlanPreflightView';
import { ReasonField } from '../dialogs/ReasonField';
import { TypedNameField } from '../dialogs/ActionDialogParts';
import {
  HazardStepNames,
  hazardNamesTyped,
  hazardNodesOf,
} from '../dialogs/HazardStepNames';
import {
  ACKNOWLEDGEMENT,
  IMPACT_CHANGED,
  NOTHING_CHANGED,
  TYPED_REASON_HINT,
} from '../dialogs/ceremonyText';
import {
  approvalStatusText,
  impactRows,
  impactTimes,
  rungAbove,
  rungText,
} from './approvalText';

/** The hint under the approval's reason. */
const DECISION_REASON_HINT =
  'Why you approve or reject, in your own words: it is recorded with your decision and sent to the requester.';

/** The refusal of a decision, from the backend's answer. */
type DecisionError =
  | { kind: 'rung'; requestedRung: string; rungNow: string; message: string }
  | { kind: 'other'; error: DescribedError };

function decisionErrorOf(error: unknown): DecisionError {
  if (ApprovalRungGrewError.is(error)) {
    return {
      kind: 'rung',
      requestedRung: error.requestedRung,
      rungNow: error.rungNow,
      message: error.message,
    };
  }
  return { kind: 'other', error: describeError(error) };
}

/** What the backend said instead of recording the decision. */
function DecisionErrorAlert(props: { error: DecisionError }) {
  const { error } = props;
  if (error.kind === 'rung') {
    return (
      <Alert
        severity="error"
        role="alert"
        sx={{ mt: 2 }}
        data-testid="approval-rung-grew"
      >
        <AlertTitle>Ask again</AlertTitle>
        {`The impact grew since the request: the requester acknowledged the ${rungText(
          error.requestedRung,
        )} rung, it is at the ${rungText(
          error.rungNow,
        )} rung now. This approval cannot cover it: the requester must ask again.`}
        <Box component="div" mt={1}>
          {NOTHING_CHANGED}
        </Box>
      </Alert>
    );
  }
  const { status, message } = error.error;
  return (
    <Alert
      severity="error"
      role="alert"
      sx={{ mt: 2 }}
      data-testid="approval-error"
      data-status={status}
    >
      {status === 403 && <AlertTitle>Not allowed</AlertTitle>}
      {status === 409 && <AlertTitle>Refused</AlertTitle>}
      {message}
      {status === 409 && (
        <Box component="div" mt={1}>
          {NOTHING_CHANGED}
        </Box>
      )}
    </Alert>
  );
}

/** The impact the requester acknowledged beside the impact now. */
function ImpactComparison(props: { view: ApprovalView; headingId: string }) {
  const { view, headingId } = props;
  const rows = impactRows(view);
  const times = impactTimes(view);
  return (
    <Box mb={2}>
      <Typography variant="subtitle1" component="h3" id={headingId}>
        Impact acknowledged and now
      </Typography>
      <Table
        size="small"
        aria-labelledby={headingId}
        data-testid="approval-impact"
      >
        <TableHead>
          <TableRow>
            <TableCell component="th" scope="col">
              What
            </TableCell>
            <TableCell component="th" scope="col">
              {`Acknowledged by the requester${
                times.acknowledged ? ` (${formatTime(times.acknowledged)})` : ''
              }`}
            </TableCell>
            <TableCell component="th" scope="col">
              {`Now${times.now ? ` (${formatTime(times.now)})` : ''}`}
            </TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {rows.map(r => (
            <TableRow
              key={r.label}
              data-testid="approval-impact-row"
              data-changed={r.changed ? 'true' : undefined}
            >
              <TableCell component="th" scope="row">
                {r.label}
              </TableCell>
              <TableCell>{r.acknowledged}</TableCell>
              <TableCell sx={r.changed ? { fontWeight: 'bold' } : undefined}>
                {r.changed ? `${r.now} (changed)` : r.now}
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </Box>
  );
}

/** The fresh pre-flight in full, folded: the comparison says what changed. */
function PreflightNow(props: {
  kind: ApprovalRequestKind;
  now: PreflightResponse | PlanPreflightResponse;
}) {
  const { kind, now } = props;
  return (
    <Accordion disableGutters sx={{ mb: 2 }} data-testid="approval-preflight">
      <AccordionSummary expandIcon={<ExpandMoreIcon />}>
        <Typography variant="body2">The pre-flight now, in full</Typography>
      </AccordionSummary>
      <AccordionDetails>
        {kind === 'plan' ? (
          <PlanPreflightView preflight={now as PlanPreflightResponse} />
        ) : (
          <PreflightView preflight={now as PreflightResponse} />
        )}
      </AccordionDetails>
    </Accordion>
  );
}

/**
 * The approver's decision: acknowledge the impact now, a reason, the typed name at the
 * hazard rung (a maintenance's node; each hazard step's node of a plan), then Approve or
 * Reject.
 */
function DecisionForm(props: {
  cluster: string;
  kind: ApprovalRequestKind;
  name: string;
  view: ApprovalView;
  /** The node of a maintenance, whose name the hazard rung asks typed out. */
  node?: string;
  onDecided(): void;
  /** The backend said the impact changed since this pre-flight (409 with a new one). */
  onStale(): void;
}) {
  const { cluster, kind, name, view, node, onDecided, onStale } = props;
  const api = useApi(serversApiRef);
  const [acknowledged, setAcknowledged] = useState(false);
  const [reason, setReason] = useState('');
  const [typedName, setTypedName] = useState('');
  const [typedNames, setTypedNames] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<DecisionError>();
  const hazard = view.rungNow === 'hazard';
  const grew = rungAbove(view.requestedRung, view.rungNow);
  // A cordon has no pre-flight: nothing to acknowledge, no token to send.
  const token = view.now?.token;
  const hazardSteps =
    kind === 'plan' && hazard
      ? hazardNodesOf(view.now as PlanPreflightResponse | undefined)
      : [];
  const hasReason = reason.trim().length > 0;
  const typed =
    !hazard ||
    (kind === 'plan'
      ? hazardNamesTyped(hazardSteps, typedNames)
      : typedName === node);
  const canApprove =
    !busy && !grew && (!view.now || acknowledged) && hasReason && typed;

  const decide = async (decision: 'approve' | 'reject') => {
    setBusy(true);
    setError(undefined);
    try {
      await api.decideApproval(cluster, kind, name, {
        decision,
        reason,
        ...(decision === 'approve' && token ? { preflightToken: token } : {}),
        ...(decision === 'approve' && hazard && kind === 'maintenance'
          ? { typedName }
          : {}),
        ...(decision === 'approve' && hazardSteps.length > 0
          ? { typedNames: hazardSteps.map(n => typedNames[n]?.trim() ?? '') }
          : {}),
      });
      onDecided();
    } catch (e) {
      // The fresh pre-flight went stale (or its impact changed): read the view again,
      // with a new one to acknowledge.
      if (PreflightChangedError.is(e)) onStale();
      else setError(decisionErrorOf(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Box data-testid="approval-decision" data-ceremony={view.rungNow}>
      {grew && (
        <Alert severity="error" sx={{ mb: 2 }} data-testid="approval-grew">
          <AlertTitle>Ask again</AlertTitle>
          {view.rungNow === 'refused'
            ? `It would be refused now (the quorum guard or the pre-flight's blockers): it cannot be approved as it is; reject it so the requester asks again once it can go ahead.`
            : `The impact grew since the request: acknowledged at the ${rungText(
                view.requestedRung,
              )} rung, at the ${rungText(
                view.rungNow,
              )} rung now. It cannot be approved as it is; reject it so the requester asks again.`}
        </Alert>
      )}
      {hazard && !grew && kind === 'maintenance' && (
        <Alert severity="error" sx={{ mb: 2 }}>
          This takes the cluster to the edge of quorum. Type the name and write
          the reason yourself.
        </Alert>
      )}
      {!grew && view.now && (
        <FormControlLabel
          control={
            <Checkbox
              checked={acknowledged}
              disabled={busy}
              onChange={e => setAcknowledged(e.target.checked)}
              inputProps={
                { 'data-testid': 'approval-ack' } as Record<string, string>
              }
            />
          }
          label={ACKNOWLEDGEMENT}
          sx={{ mb: 1 }}
        />
      )}
      <ReasonField
        value={reason}
        onChange={setReason}
        hint={hazard ? TYPED_REASON_HINT : DECISION_REASON_HINT}
        autoComplete={hazard ? 'off' : undefined}
        testId="approval-reason"
      />
      {hazard && !grew && kind === 'maintenance' && node && (
        <TypedNameField node={node} value={typedName} onChange={setTypedName} />
      )}
      {hazard && !grew && kind === 'plan' && (
        <Box mb={2}>
          <HazardStepNames
            hazard={hazardSteps}
            typed={typedNames}
            onChange={setTypedNames}
          />
        </Box>
      )}
      <Stack direction="row" spacing={1}>
        <Button
          variant="contained"
          color={hazard ? 'error' : 'primary'}
          disabled={!canApprove}
          onClick={() => decide('approve')}
          data-testid="approval-approve"
        >
          Approve
        </Button>
        <Button
          variant="outlined"
          color="error"
          disabled={busy || !hasReason}
          onClick={() => decide('reject')}
          data-testid="approval-reject"
        >
          Reject
        </Button>
      </Stack>
      {busy && <LinearProgress aria-label="recording the decision" />}
      {error && <DecisionErrorAlert error={error} />}
    </Box>
  );
}

/**
 * The approval of a maintenance or a plan (docs/approvals.md): who must approve and
 * until when, the impact the requester acknowledged beside the impact now, and for an
 * approver the decision. Approving takes the pre-flight again (its token binds the
 * approval) and, at the hazard rung, the typed name; rejecting takes a reason. `node` is
 * a maintenance's node. `version` is anything that changes when the request changes (its
 * phase): the approval is read again then.
 */
export function ApprovalPanel(props: {
  cluster: string;
  kind: ApprovalRequestKind;
  name: string;
  node?: string;
  version?: string;
  onDecided?(): void;
}) {
  const { cluster, kind, name, node, version, onDecided } = props;
  const api = useApi(serversApiRef);
  const [changed, setChanged] = useState(false);
  const loaded = useLoader(
    () => api.getApproval(cluster, kind, name),
    [api, cluster, kind, name, version],
  );
  const view = loaded.value;
  const headingId = `rackside-approval-${kind}`;
  return (
    <PageSection
      title="Approval"
      headingId={`${headingId}-title`}
      testId="approval-panel"
    >
      {loaded.loading && !view && (
        <LinearProgress aria-label="reading the approval" />
      )}
      {loaded.error !== undefined && (
        <Alert severity={view ? 'warning' : 'error'} sx={{ mb: 2 }}>
          {`Could not read the approval: ${
            describeError(loaded.error).message
          }`}
        </Alert>
      )}
      {view && (
        <>
          <Typography
            variant="body1"
            gutterBottom
            data-testid="approval-status"
            data-state={view.state}
          >
            {approvalStatusText(view)}
          </Typography>
          {view.requestedBy && (
            <Typography variant="body2" color="text.secondary" gutterBottom>
              {`Requested by ${
                view.requestedBy
              }, who acknowledged the ${rungText(view.requestedRung)} rung.`}
            </Typography>
          )}
          {view.state === 'awaiting' && (
            <>
              {changed && (
                <Alert
                  severity="warning"
                  sx={{ mb: 2 }}
                  data-testid="approval-impact-changed"
                >
                  <AlertTitle>{IMPACT_CHANGED}</AlertTitle>
                  This is the impact now. Review it and acknowledge it again.
                </Alert>
              )}
              <ImpactComparison view={view} headingId={`${headingId}-impact`} />
              {view.now && <PreflightNow kind={kind} now={view.now} />}
              {view.mayApprove ? (
                <DecisionForm
                  // A new pre-flight is a new acknowledgement: the form starts over.
                  key={view.now?.token ?? 'no-preflight'}
                  cluster={cluster}
                  kind={kind}
                  name={name}
                  view={view}
                  node={node}
                  onDecided={() => {
                    setChanged(false);
                    loaded.reload();
                    onDecided?.();
                  }}
                  onStale={() => {
                    setChanged(true);
                    loaded.reload();
                  }}
                />
              ) : (
                <Alert
                  severity="info"
                  data-testid="approval-not-yours"
                  sx={{ mb: 1 }}
                >
                  {view.whyNot ?? 'You may not decide this approval.'}
                </Alert>
              )}
            </>
          )}
        </>
      )}
    </PageSection>
  );
}
