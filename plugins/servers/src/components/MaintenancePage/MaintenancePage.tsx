import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import Chip from '@mui/material/Chip';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemText from '@mui/material/ListItemText';
import Typography from '@mui/material/Typography';
import type {
  MaintenanceResponse,
  ServerAlertsResponse,
} from '@rackside/plugin-servers-common';
import { chipLabelSx } from '../ui/chips';
import { AppLink, useServersLinks } from '../ui/links';
import { LiveDetail } from '../LiveDetail';
import {
  conditionText,
  formatTime,
  POWER_OFF_CONFIRMED,
  refusalNumbers,
  requestFlags,
} from '../ui/maintenanceText';
import { DrainOptions, DrainProgress } from './DrainSections';
import { phaseColor, Section } from './MaintenanceSection';
import { HardwareSection } from './HardwareSection';
import { PowerSection } from './PowerSection';
import { InstallSection } from './InstallSection';
import { AlertsSection } from './AlertsSection';
import { Timeline } from './Timeline';
import { ApprovalPanel, showsApproval } from '../ApprovalPanel';

/** Everything about one maintenance: what, who and why, its drain options, progress, conditions, timeline. */
export function MaintenanceDetail(props: {
  cluster: string;
  maintenance: MaintenanceResponse;
  /** The node's Alertmanager alerts, when they could be read. */
  alerts?: ServerAlertsResponse;
}) {
  const { cluster, maintenance: m, alerts } = props;
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

      {showsApproval(m) && (
        <ApprovalPanel
          cluster={cluster}
          kind="maintenance"
          name={m.name}
          node={m.nodeName}
          version={m.phase}
        />
      )}

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

      <InstallSection maintenance={m} />

      <AlertsSection maintenance={m} alerts={alerts} />

      <HardwareSection maintenance={m} />

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
      load={async (api, c, n) => {
        const maintenance = await api.getMaintenance(c, n);
        // The node's alerts are an addition: the page shows the maintenance without them.
        const alerts = await api
          .getServerAlerts(c, maintenance.nodeName)
          .catch(() => undefined);
        return { maintenance, alerts };
      }}
    >
      {({ maintenance, alerts }) => (
        <MaintenanceDetail
          cluster={cluster}
          maintenance={maintenance}
          alerts={alerts}
        />
      )}
    </LiveDetail>
  );
}
