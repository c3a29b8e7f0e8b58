import Box from '@mui/material/Box';
import LinearProgress from '@mui/material/LinearProgress';
import Typography from '@mui/material/Typography';
import type {
  MaintenanceResponse,
  ServerListItem,
} from '@rackside/plugin-servers-common';
import { AppLink, useServersLinks } from '../ui/links';
import { PageTooltip as Tooltip } from './PageTooltip';
import {
  AWAITING_APPROVAL_LABEL,
  isAwaitingApproval,
} from '../ApprovalPanel/approvalText';
import {
  powerOffState,
  powerRecords,
  powerWaitText,
  refusalNumbers,
  type PowerOffTone,
} from '../ui/maintenanceText';

/**
 * The phase of a maintenance in a few words: "Draining 3 of 7" while it drains
 * (just "Draining" until the operator has counted the pods), what a reboot
 * waits for, "Powered off" once a shutdown was accepted.
 */
export function phaseSummary(m: MaintenanceResponse): string {
  const p = m.progress;
  if (m.phase === 'Draining' && p && p.total > 0) {
    return `Draining ${p.evicted} of ${p.total}`;
  }
  if (m.phase === 'Rebooting') return powerWaitText(m)!;
  if (m.phase === 'PoweredOff') return 'Powered off';
  if (isAwaitingApproval(m.phase)) return AWAITING_APPROVAL_LABEL;
  return m.phase;
}

/** The class of the cell's dash when the server has no maintenance. */
export const NO_MAINTENANCE_CLASS = 'rackside-no-maintenance';

const TONE_COLORS: Record<PowerOffTone, string> = {
  confirmed: 'success.main',
  pending: 'text.secondary',
  unconfirmed: 'warning.main',
};

/** The error of a power verb the channel did not accept, if there is one. */
function powerError(m: MaintenanceResponse): string | undefined {
  return powerRecords(m).find(r => !r.record.sentAt && r.record.error)?.record
    .error;
}

/** The names of the disruption budgets refusing evictions now, each once. */
export function blockingBudgets(m: MaintenanceResponse): string[] {
  return [...new Set((m.progress?.blockedBy ?? []).map(b => b.pdb))];
}

/** An error cut to its first line and `max` characters, for a table cell. */
export function shortError(text: string, max = 60): string {
  const line = text.split('\n')[0].trim();
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

/**
 * The maintenance column of a server row: the phase (a link to the
 * maintenance's page), and while it drains the progress, the budgets blocking
 * now and the last error (short; the tooltip has it whole). Fits the fixed row
 * height: one line, a bar, one caption line.
 */
export function MaintenanceCell(props: {
  server: Pick<ServerListItem, 'name' | 'cluster' | 'maintenance'>;
}) {
  const { server } = props;
  const links = useServersLinks();
  const m = server.maintenance;
  if (!m) {
    // Most rows: plain text, styled by the table (ServerTable's row rule).
    return <span className={NO_MAINTENANCE_CLASS}>—</span>;
  }
  const p = m.progress;
  const draining = m.phase === 'Draining' && !!p;
  const percent =
    draining && p.total > 0
      ? Math.round((100 * p.evicted) / p.total)
      : undefined;
  const blocking = draining ? blockingBudgets(m) : [];
  const lastError = draining ? p.lastError : undefined;
  const summary = phaseSummary(m);
  const href = links.maintenance?.(server.cluster, m.name);
  const offState = m.phase === 'PoweredOff' ? powerOffState(m) : undefined;
  // A maintenance refused at the moment of acting that still holds the node cordoned
  // (the backend shows it until the node is returned to service).
  const refusal =
    m.phase === 'Refused' && m.refusal
      ? refusalNumbers(m.refusal) ?? shortError(m.refusal.reason)
      : undefined;
  const verbError = powerError(m);
  return (
    <Box data-testid="maintenance-cell" data-phase={m.phase}>
      <Tooltip
        title={`${m.name} (${m.intent})${
          m.requestedBy ? ` by ${m.requestedBy}` : ''
        }: ${m.reason}`}
      >
        <Typography variant="body2" noWrap data-testid="maintenance-phase">
          {href ? <AppLink to={href}>{summary}</AppLink> : summary}
        </Typography>
      </Tooltip>
      {percent !== undefined && (
        <LinearProgress
          variant="determinate"
          value={percent}
          aria-label={`drain progress of ${server.name}`}
        />
      )}
      {(blocking.length > 0 || lastError) && (
        <Typography
          variant="caption"
          component="div"
          noWrap
          color="error.main"
          data-testid="maintenance-blockers"
        >
          {blocking.length > 0 && (
            <span data-testid="maintenance-blocking">{`blocked by ${blocking.join(
              ', ',
            )}`}</span>
          )}
          {blocking.length > 0 && lastError && ' · '}
          {lastError && (
            <Tooltip title={lastError}>
              <span data-testid="maintenance-last-error">
                {shortError(lastError)}
              </span>
            </Tooltip>
          )}
        </Typography>
      )}
      {offState && (
        <Typography
          variant="caption"
          component="div"
          noWrap
          color={TONE_COLORS[offState.tone]}
          title={offState.text}
          data-testid="maintenance-power-off"
          data-tone={offState.tone}
        >
          {offState.text}
        </Typography>
      )}
      {refusal && (
        <Tooltip title={m.refusal!.reason}>
          <Typography
            variant="caption"
            component="div"
            noWrap
            color="error.main"
            data-testid="maintenance-refusal"
          >
            {refusal}
          </Typography>
        </Tooltip>
      )}
      {!offState && verbError && (
        <Tooltip title={verbError}>
          <Typography
            variant="caption"
            component="div"
            noWrap
            color="error.main"
            data-testid="maintenance-power-error"
          >
            {shortError(verbError)}
          </Typography>
        </Tooltip>
      )}
    </Box>
  );
}
