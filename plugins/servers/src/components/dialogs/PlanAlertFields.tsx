import { useState } from 'react';
import Alert from '@mui/material/Alert';
import Box from '@mui/material/Box';
import Checkbox from '@mui/material/Checkbox';
import FormControlLabel from '@mui/material/FormControlLabel';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import type {
  PlanAlertGateInput,
  PlanPreflightAlerts,
} from '@rackside/plugin-servers-common';
import { AlertList } from '../MaintenancePage/AlertsSection';
import { formatTime } from '../ui/maintenanceText';

/** The alert gate and the healthy return as the dialog edits them (texts as typed). */
export interface PlanAlertDraft {
  /** Wait before each next step while a matching alert fires. */
  gate: boolean;
  alertnames: string;
  /** Comma-separated. */
  severities: string;
  /** One Alertmanager matcher per line. */
  matchers: string;
  ignoreSilencedByRackside: boolean;
  /** An alert a person silenced holds the gate too. */
  includeSilenced: boolean;
  /** The opt-in `whenUnknown: Proceed`: go on while Alertmanager cannot be read. */
  proceedWhenUnknown: boolean;
  /** A step is done only once its server has been Ready this long with no alert firing. */
  healthyReturn: boolean;
  healthyForSeconds: string;
}

export const EMPTY_ALERT_DRAFT: PlanAlertDraft = {
  gate: false,
  alertnames: '',
  severities: '',
  matchers: '',
  ignoreSilencedByRackside: true,
  includeSilenced: false,
  proceedWhenUnknown: false,
  healthyReturn: false,
  healthyForSeconds: '60',
};

/** The gate a draft asks for (undefined: none), as the request body's `gates.alerts`. */
export function alertGateOf(
  draft: PlanAlertDraft,
): PlanAlertGateInput | undefined {
  if (!draft.gate) return undefined;
  const list = (text: string, separator: RegExp) =>
    text
      .split(separator)
      .map(s => s.trim())
      .filter(Boolean);
  const matchers = list(draft.matchers, /\n/);
  const severities = list(draft.severities, /,/);
  return {
    ...(matchers.length ? { matchers } : {}),
    ...(draft.alertnames.trim() ? { alertnames: draft.alertnames.trim() } : {}),
    ...(severities.length ? { severities } : {}),
    ignoreSilencedByRackside: draft.ignoreSilencedByRackside,
    // Sent only when set: the defaults (false, Hold) are the schema's.
    ...(draft.includeSilenced ? { includeSilenced: true } : {}),
    ...(draft.proceedWhenUnknown ? { whenUnknown: 'Proceed' as const } : {}),
  };
}

/** The healthy return a draft asks for (undefined: none), as the body's `healthyReturn`. */
export function healthyReturnOf(
  draft: PlanAlertDraft,
): { healthyForSeconds: number } | undefined {
  if (!draft.healthyReturn) return undefined;
  const seconds = Number(draft.healthyForSeconds);
  return { healthyForSeconds: seconds };
}

/** Why a draft's healthy return cannot be sent, or undefined. */
export function healthyForSecondsError(
  draft: PlanAlertDraft,
): string | undefined {
  if (!draft.healthyReturn) return undefined;
  const seconds = Number(draft.healthyForSeconds);
  return Number.isInteger(seconds) && seconds >= 0 && seconds <= 3600
    ? undefined
    : 'a whole number of seconds from 0 to 3600';
}

/**
 * The plan dialog's alert gate (docs/alerts.md): wait before each next step while a
 * matching alert fires, and a healthy return. The texts are applied when a field is left
 * (`onApply`), so the pre-flight that shows the matching alerts is not taken per keystroke.
 */
export function PlanAlertFields(props: {
  draft: PlanAlertDraft;
  onApply(draft: PlanAlertDraft): void;
  /** What the pre-flight says of the gate now. */
  alerts?: PlanPreflightAlerts;
}) {
  const { onApply, alerts } = props;
  const [draft, setDraft] = useState(props.draft);
  const apply = (next = draft) => onApply(next);
  const change = (patch: Partial<PlanAlertDraft>, now = false) => {
    const next = { ...draft, ...patch };
    setDraft(next);
    if (now) apply(next);
  };
  const healthyError = healthyForSecondsError(draft);
  return (
    <Box mb={2} data-testid="plan-alert-fields">
      <Typography variant="subtitle2" component="h3">
        Alerts
      </Typography>
      <FormControlLabel
        control={
          <Checkbox
            checked={draft.gate}
            onChange={e => change({ gate: e.target.checked }, true)}
            inputProps={{ 'data-testid': 'plan-alert-gate' } as object}
          />
        }
        label="Wait before each next step while a matching alert fires"
      />
      {draft.gate && (
        <Box ml={4}>
          <TextField
            label="Alert names (regular expression)"
            value={draft.alertnames}
            onChange={e => change({ alertnames: e.target.value })}
            onBlur={() => apply()}
            helperText="Matches the whole alertname; empty: any alert"
            size="small"
            fullWidth
            sx={{ mb: 1 }}
            inputProps={{ 'data-testid': 'plan-alert-names' }}
          />
          <TextField
            label="Severities"
            value={draft.severities}
            onChange={e => change({ severities: e.target.value })}
            onBlur={() => apply()}
            helperText="Comma-separated, e.g. critical, warning; empty: any severity"
            size="small"
            fullWidth
            sx={{ mb: 1 }}
            inputProps={{ 'data-testid': 'plan-alert-severities' }}
          />
          <TextField
            label="Matchers"
            value={draft.matchers}
            onChange={e => change({ matchers: e.target.value })}
            onBlur={() => apply()}
            helperText='One per line, e.g. team="storage"; all must hold'
            size="small"
            fullWidth
            multiline
            minRows={1}
            sx={{ mb: 1 }}
            inputProps={{ 'data-testid': 'plan-alert-matchers' }}
          />
          <GateCheckbox
            checked={draft.ignoreSilencedByRackside}
            onChange={checked =>
              change({ ignoreSilencedByRackside: checked }, true)
            }
            testId="plan-alert-ignore-rackside"
            label="Ignore alerts only Rackside's own maintenance silences hold"
          />
          <GateCheckbox
            checked={draft.includeSilenced}
            onChange={checked => change({ includeSilenced: checked }, true)}
            testId="plan-alert-include-silenced"
            label="Also wait on alerts a person silenced"
          />
          <GateCheckbox
            checked={draft.proceedWhenUnknown}
            onChange={checked => change({ proceedWhenUnknown: checked }, true)}
            testId="plan-alert-proceed-unknown"
            label="Opt in: go on when Alertmanager cannot be read (by default the gate holds)"
          />
          {draft.proceedWhenUnknown && (
            <Alert
              severity="warning"
              sx={{ mb: 1 }}
              data-testid="plan-alert-proceed-unknown-warning"
            >
              While Alertmanager cannot be read, the plan starts its next step
              without seeing any alert: whoever breaks the path to Alertmanager
              can take the plan past this gate.
            </Alert>
          )}
          <PlanGateAlerts
            alerts={alerts}
            proceedWhenUnknown={draft.proceedWhenUnknown}
          />
        </Box>
      )}
      <FormControlLabel
        control={
          <Checkbox
            checked={draft.healthyReturn}
            onChange={e => change({ healthyReturn: e.target.checked }, true)}
            inputProps={{ 'data-testid': 'plan-healthy-return' } as object}
          />
        }
        label="Set how long each server must be back healthy before its step is done (default 60 s)"
      />
      {draft.healthyReturn && (
        <Box ml={4}>
          <TextField
            label="Ready for (seconds), with no alert firing"
            type="number"
            value={draft.healthyForSeconds}
            onChange={e => change({ healthyForSeconds: e.target.value })}
            onBlur={() => apply()}
            error={!!healthyError}
            helperText={healthyError ?? 'Default 60'}
            size="small"
            inputProps={{
              min: 0,
              max: 3600,
              'data-testid': 'plan-healthy-for-seconds',
            }}
          />
        </Box>
      )}
    </Box>
  );
}

/** What the pre-flight says would hold the gate now. */
export function PlanGateAlerts(props: {
  alerts?: PlanPreflightAlerts;
  /** The plan opts in to `whenUnknown: Proceed`. */
  proceedWhenUnknown?: boolean;
}) {
  const { alerts, proceedWhenUnknown } = props;
  if (!alerts) return null;
  const unknownDoes = proceedWhenUnknown
    ? 'the gate does not hold (you opted in to go on)'
    : 'the gate holds every next step';
  if (!alerts.configured) {
    return (
      <Alert severity="warning" data-testid="plan-gate-alerts">
        {`No Alertmanager is configured for this cluster: the alert state is unknown, so ${unknownDoes}.`}
      </Alert>
    );
  }
  if (!alerts.known) {
    return (
      <Alert severity="warning" data-testid="plan-gate-alerts">
        {`Alertmanager could not be read (${alerts.reason}): while it cannot, ${unknownDoes}.`}
      </Alert>
    );
  }
  // Alerts of servers the reader cannot see hold the gate too: counted, never named.
  const count = alerts.holding.length + (alerts.hiddenAlerts ?? 0);
  const hidden = alerts.hiddenServers
    ? ` (${alerts.holding.length > 0 ? 'and' : 'on'} ${
        alerts.hiddenServers
      } server${alerts.hiddenServers === 1 ? '' : 's'} you cannot see)`
    : '';
  if (count === 0) {
    return (
      <Alert severity="success" data-testid="plan-gate-alerts">
        {`No matching alert fires now${
          alerts.readAt ? ` (as of ${formatTime(alerts.readAt)})` : ''
        }.`}
      </Alert>
    );
  }
  return (
    <Alert severity="warning" data-testid="plan-gate-alerts">
      {`${count} matching alert${count === 1 ? '' : 's'} fire${
        count === 1 ? 's' : ''
      } now${hidden}: the plan would wait before its next step until they clear.`}
      <AlertList alerts={alerts.holding} testId="plan-gate-alert" />
    </Alert>
  );
}

/** One of the gate's yes-or-no choices, applied at once. */
function GateCheckbox(props: {
  checked: boolean;
  onChange: (checked: boolean) => void;
  testId: string;
  label: string;
}) {
  return (
    <FormControlLabel
      control={
        <Checkbox
          checked={props.checked}
          onChange={e => props.onChange(e.target.checked)}
          inputProps={{ 'data-testid': props.testId } as object}
        />
      }
      label={props.label}
    />
  );
}
