import type { ReactNode } from 'react';
import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import Chip from '@mui/material/Chip';
import LinearProgress from '@mui/material/LinearProgress';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemText from '@mui/material/ListItemText';
import Paper from '@mui/material/Paper';
import Typography from '@mui/material/Typography';
import type {
  MaintenancePhase,
  MaintenanceProgress,
  MaintenanceResponse,
} from '@rackside/plugin-servers-common';
import { chipLabelSx } from '../shared/chips';
import { AppLink, useServersLinks } from '../shared/links';
import { LiveDetail } from '../LiveDetail';
import {
  conditionText,
  drainOptionsText,
  formatTime,
  POWER_OFF_CONFIRMED,
  powerOffState,
  powerRecords,
  powerRecordText,
  powerWaitText,
  refusalNumbers,
  requestFlags,
  timelineOf,
  type PowerOffTone,
  type TimelineEntry,
} from '../shared/maintenanceText';

function phaseColor(
  phase: MaintenancePhase,
): 'default' | 'error' | 'success' | 'warning' | 'info' {
  switch (phase) {
    case 'Failed':
    case 'Refused':
      return 'error';
    case 'Drained':
    case 'Complete':
      return 'success';
    case 'PoweredOff':
    case 'Rebooting':
      return 'warning';
    default:
      return 'info';
  }
}

/** The colour of a timeline dot: requests apart from phases, failures in red. */
function dotColor(entry: TimelineEntry): string {
  if (entry.kind === 'request' || !entry.phase) return 'secondary.main';
  const color = phaseColor(entry.phase);
  return color === 'default' ? 'grey.500' : `${color}.main`;
}

function Section(props: {
  title: string;
  testId: string;
  children: ReactNode;
}) {
  const headingId = `rackside-maintenance-${props.testId}`;
  return (
    <Paper
      component="section"
      aria-labelledby={headingId}
      data-testid={props.testId}
      sx={{ p: 2, mb: 2 }}
    >
      <Typography variant="h6" component="h2" id={headingId} gutterBottom>
        {props.title}
      </Typography>
      {props.children}
    </Paper>
  );
}

function DrainProgress(props: { progress: MaintenanceProgress }) {
  const p = props.progress;
  const percent = p.total > 0 ? Math.round((100 * p.evicted) / p.total) : 100;
  const blockedBy = p.blockedBy ?? [];
  const pendingPods = p.pendingPods ?? [];
  return (
    <Section title="Drain progress" testId="maintenance-progress">
      <Typography variant="body1" data-testid="maintenance-progress-text">
        {`${p.evicted} of ${p.total} pods evicted, ${p.pending} pending`}
      </Typography>
      <LinearProgress
        variant="determinate"
        value={percent}
        aria-label="drain progress"
        sx={{ my: 1 }}
      />
      {p.startedAt && (
        <Typography variant="body2" color="text.secondary">
          {`Started ${formatTime(p.startedAt)}`}
        </Typography>
      )}
      {blockedBy.length > 0 && (
        <Box mt={2} data-testid="maintenance-blocked-by">
          <Typography variant="subtitle2" component="h3" color="error.main">
            {`Blocked by disruption budgets (${blockedBy.length})`}
          </Typography>
          <List dense disablePadding>
            {blockedBy.map(b => (
              <ListItem key={`${b.pod}/${b.pdb}`} disableGutters>
                <ListItemText
                  primary={`${b.pod} → ${b.pdb}`}
                  secondary={b.message}
                />
              </ListItem>
            ))}
          </List>
        </Box>
      )}
      {pendingPods.length > 0 && (
        <Box mt={2} data-testid="maintenance-pending">
          <Typography variant="subtitle2" component="h3">
            {`Pods still on the node (${pendingPods.length})`}
          </Typography>
          <Box
            component="ul"
            m={0}
            pl={3}
            sx={{ maxHeight: 240, overflowY: 'auto' }}
          >
            {pendingPods.map(pod => (
              <li key={pod}>
                <Typography variant="body2">{pod}</Typography>
              </li>
            ))}
          </Box>
        </Box>
      )}
      {p.lastError && (
        <Alert
          severity="error"
          sx={{ mt: 2 }}
          data-testid="maintenance-last-error"
        >
          <AlertTitle>Last error</AlertTitle>
          <Box component="span" sx={{ whiteSpace: 'pre-wrap' }}>
            {p.lastError}
          </Box>
        </Alert>
      )}
    </Section>
  );
}

/**
 * The drain options the maintenance was asked with (`spec.drain`), in words: each
 * option asked for and by whom, then the defaults of the rest ("Default drain: …").
 */
function DrainOptions(props: { maintenance: MaintenanceResponse }) {
  const text = drainOptionsText(props.maintenance);
  if (!text) return null;
  return (
    <Section title="Drain options" testId="maintenance-drain-options">
      {text.asked.length > 0 && (
        <List dense disablePadding>
          {text.asked.map(({ option, text: words }) => (
            <ListItem
              key={option}
              disableGutters
              data-testid="maintenance-drain-option"
              data-option={option}
            >
              <ListItemText primary={words} />
            </ListItem>
          ))}
        </List>
      )}
      {text.defaults && (
        <Typography
          variant="body2"
          color={text.asked.length > 0 ? 'text.secondary' : undefined}
          data-testid="maintenance-drain-defaults"
        >
          {text.defaults}
        </Typography>
      )}
    </Section>
  );
}

const TONE_SEVERITIES: Record<PowerOffTone, 'success' | 'info' | 'warning'> = {
  confirmed: 'success',
  pending: 'info',
  unconfirmed: 'warning',
};

/** The status timestamps of the power verbs, each beside its record. */
const ACCEPTED_AT = [
  { verb: 'reboot', at: 'rebootSentAt', label: 'Reboot' },
  { verb: 'shutdown', at: 'poweredOffAt', label: 'Shutdown' },
  { verb: 'powerOn', at: 'powerOnSentAt', label: 'Power-on' },
] as const;

/**
 * The power part of a maintenance: what it waits for now, whether a shut-down
 * machine is known to be off, and each verb as the operator recorded it (when
 * it was sent, over which channel, what the channel was asked or answered,
 * and its error).
 */
function PowerSection(props: { maintenance: MaintenanceResponse }) {
  const m = props.maintenance;
  const records = powerRecords(m);
  const waiting = powerWaitText(m);
  const offState = powerOffState(m);
  if (!waiting && !offState && records.length === 0) return null;
  return (
    <Section title="Power" testId="maintenance-power">
      {waiting && (
        <Typography
          variant="body1"
          data-testid="maintenance-power-waiting"
          gutterBottom
        >
          {waiting}
        </Typography>
      )}
      {ACCEPTED_AT.filter(
        // The record says it already, with the channel; this is for objects without one.
        ({ verb, at }) => m[at] && !m.power?.[verb]?.sentAt,
      ).map(({ at, label }) => (
        <Typography
          key={at}
          variant="body2"
          color="text.secondary"
          data-testid="maintenance-power-accepted"
        >
          {`${label} accepted at ${formatTime(m[at])}`}
        </Typography>
      ))}
      {offState && (
        <Alert
          severity={TONE_SEVERITIES[offState.tone]}
          sx={{ my: 1 }}
          data-testid="maintenance-power-off"
          data-tone={offState.tone}
        >
          {offState.text}
        </Alert>
      )}
      {records.length > 0 && (
        <List dense disablePadding>
          {records.map(({ verb, record }) => (
            <ListItem
              key={verb}
              disableGutters
              data-testid="maintenance-power-record"
              data-verb={verb}
            >
              <ListItemText
                primary={powerRecordText(verb, record)}
                secondary={
                  <>
                    {record.detail && (
                      <Box component="span" display="block">
                        {record.detail}
                      </Box>
                    )}
                    {record.error && (
                      <Box
                        component="span"
                        display="block"
                        color="error.main"
                        sx={{ whiteSpace: 'pre-wrap' }}
                        data-testid="maintenance-power-record-error"
                      >
                        {record.error}
                      </Box>
                    )}
                  </>
                }
              />
            </ListItem>
          ))}
        </List>
      )}
    </Section>
  );
}

function Timeline(props: { maintenance: MaintenanceResponse }) {
  const m = props.maintenance;
  const entries = timelineOf(m);
  const lastPhase = [...entries].reverse().find(e => e.kind === 'phase');
  return (
    <Section title="Timeline" testId="maintenance-timeline">
      {entries.length === 0 ? (
        <Typography variant="body2" color="text.secondary">
          Nothing recorded yet: the operator has not picked this maintenance up.
        </Typography>
      ) : (
        <Box component="ol" aria-label="Phase timeline" m={0} p={0}>
          {entries.map((e, i) => {
            const current = e === lastPhase && !m.terminal;
            return (
              <Box
                component="li"
                key={`${i}-${e.label}`}
                data-testid="timeline-entry"
                data-kind={e.kind}
                data-phase={e.phase}
                sx={{
                  listStyle: 'none',
                  position: 'relative',
                  pl: 3,
                  pb: 2,
                  borderLeft: 2,
                  borderColor:
                    i === entries.length - 1 ? 'transparent' : 'divider',
                  ml: 1,
                  '&::before': {
                    content: '""',
                    position: 'absolute',
                    left: -7,
                    top: 4,
                    width: 12,
                    height: 12,
                    borderRadius: '50%',
                    bgcolor: dotColor(e),
                  },
                }}
              >
                <Typography variant="body2" color="text.secondary">
                  {formatTime(e.at)}
                </Typography>
                <Typography variant="subtitle1" component="div">
                  <strong>{e.label}</strong>
                  {current && <Chip size="small" label="now" sx={{ ml: 1 }} />}
                </Typography>
                {e.message && (
                  <Typography variant="body2">{e.message}</Typography>
                )}
                {(e.by || e.reason) && (
                  <Typography variant="body2" color="text.secondary">
                    {`${e.by ? `by ${e.by}` : 'by someone unrecorded'}${
                      e.reason ? `: ${e.reason}` : ''
                    }`}
                  </Typography>
                )}
              </Box>
            );
          })}
        </Box>
      )}
    </Section>
  );
}

/** Everything about one maintenance: what, who and why, its drain options, progress, conditions, timeline. */
export function MaintenanceDetail(props: {
  cluster: string;
  maintenance: MaintenanceResponse;
}) {
  const { cluster, maintenance: m } = props;
  const links = useServersLinks();
  const flags = requestFlags(m);
  const refusalText = m.refusal && refusalNumbers(m.refusal);
  // Refused at the moment of acting, after the node was cordoned: it stays cordoned
  // until someone returns it to service (offered on its row of the Servers page).
  const leftCordoned =
    m.phase === 'Refused' && m.history.some(h => h.phase === 'Cordoned');
  return (
    <>
      <Box
        display="flex"
        alignItems="center"
        gap={1}
        flexWrap="wrap"
        mb={2}
        data-testid="maintenance-header"
      >
        <Typography variant="h6" component="p">
          {`Node ${m.nodeName} · ${m.intent} · cluster ${cluster}`}
        </Typography>
        <Chip
          label={m.phase}
          color={phaseColor(m.phase)}
          sx={chipLabelSx(phaseColor(m.phase))}
          data-testid="maintenance-phase-chip"
        />
        {m.abandoned && <Chip label="abandoned" variant="outlined" />}
        {m.terminal && (
          <Typography variant="body2" color="text.secondary">
            (finished)
          </Typography>
        )}
      </Box>

      <Section title="Who and why" testId="maintenance-who">
        <Typography variant="body1">
          {`Requested by ${m.requestedBy ?? 'someone unrecorded'}${
            m.createdAt ? ` at ${formatTime(m.createdAt)}` : ''
          }`}
        </Typography>
        <Typography variant="body1" sx={{ fontStyle: 'italic', mb: 1 }}>
          {`“${m.reason}”`}
        </Typography>
        {flags.length > 0 && (
          <List dense disablePadding>
            {flags.map(({ label, flag }) => (
              <ListItem
                key={label}
                disableGutters
                data-testid="maintenance-flag"
              >
                <ListItemText
                  primary={`${label} by ${flag.by}${
                    flag.at ? ` at ${formatTime(flag.at)}` : ''
                  }`}
                  secondary={`“${flag.reason}”`}
                />
              </ListItem>
            ))}
          </List>
        )}
      </Section>

      <DrainOptions maintenance={m} />

      {m.refusal && (
        <Alert
          severity="error"
          sx={{ mb: 2 }}
          data-testid="maintenance-refusal"
        >
          <AlertTitle>Refused</AlertTitle>
          {m.refusal.reason}
          {refusalText && <Box mt={1}>{refusalText}</Box>}
          {leftCordoned && (
            <Box mt={1} data-testid="maintenance-refusal-return">
              {`Nothing was sent: ${m.nodeName} is left cordoned and drained. Return it to service from `}
              {links.servers ? (
                <AppLink to={links.servers()}>
                  its row on the Servers page
                </AppLink>
              ) : (
                'its row on the Servers page'
              )}
              .
            </Box>
          )}
          {m.refusal.blockingMaintenance && (
            <Box mt={1}>
              {'It collided with '}
              {links.maintenance ? (
                <AppLink
                  to={links.maintenance(cluster, m.refusal.blockingMaintenance)}
                >
                  {m.refusal.blockingMaintenance}
                </AppLink>
              ) : (
                m.refusal.blockingMaintenance
              )}
              .
            </Box>
          )}
        </Alert>
      )}

      {m.progress && <DrainProgress progress={m.progress} />}

      <PowerSection maintenance={m} />

      <Section title="Conditions" testId="maintenance-conditions">
        {m.conditions.length === 0 ? (
          <Typography variant="body2" color="text.secondary">
            No conditions reported.
          </Typography>
        ) : (
          <List dense disablePadding>
            {m.conditions.map(c => (
              <ListItem key={c.type} disableGutters>
                <ListItemText
                  primary={conditionText(c)}
                  secondary={`${
                    // The words replace the raw condition; keep it for whoever reads the object.
                    c.type === POWER_OFF_CONFIRMED
                      ? `${c.type} ${c.status} (${c.reason}). `
                      : ''
                  }${c.message ? `${c.message} ` : ''}(since ${formatTime(
                    c.lastTransitionTime,
                  )})`}
                />
              </ListItem>
            ))}
          </List>
        )}
      </Section>

      <Timeline maintenance={m} />
    </>
  );
}

/**
 * The page of one maintenance at `/servers/maintenances/:cluster/:name`,
 * kept live by the same signals (or polling) as the Servers page.
 */
export function MaintenancePage(props: { cluster: string; name: string }) {
  const { cluster, name } = props;
  return (
    <LiveDetail
      cluster={cluster}
      name={name}
      kind="maintenance"
      title={`Maintenance ${name}`}
      testId="rackside-maintenance-page"
      load={(api, c, n) => api.getMaintenance(c, n)}
    >
      {maintenance => (
        <MaintenanceDetail cluster={cluster} maintenance={maintenance} />
      )}
    </LiveDetail>
  );
}
