import Alert from '@mui/material/Alert';
import Chip from '@mui/material/Chip';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemText from '@mui/material/ListItemText';
import Typography from '@mui/material/Typography';
import type {
  MaintenanceResponse,
  ServerAlert,
  ServerAlertsResponse,
} from '@rackside/plugin-servers-common';
import { formatTime } from '../ui/maintenanceText';
import { Section } from './MaintenanceSection';

/** The condition the operator sets on whether it holds the node's silence (docs/alerts.md). */
export const ALERTS_SILENCED = 'AlertsSilenced';

/** How an alert's state reads: firing, or silenced by whom, or inhibited. */
export function alertStateText(alert: ServerAlert): string {
  switch (alert.state) {
    case 'firing':
      return 'firing';
    case 'inhibited':
      return 'inhibited';
    default:
      if (alert.silencedByRackside === true) return 'silenced by Rackside';
      if (alert.silencedByRackside === false) return 'silenced by a person';
      return 'silenced';
  }
}

function alertStateColor(alert: ServerAlert): 'error' | 'warning' | 'default' {
  if (alert.state !== 'firing') return 'default';
  return alert.severity === 'critical' ? 'error' : 'warning';
}

/** A node's alerts as a list (the maintenance page, the plan dialog's pre-flight). */
export function AlertList(props: {
  alerts: ReadonlyArray<ServerAlert & { nodes?: string[] }>;
  testId: string;
}) {
  return (
    <List dense disablePadding>
      {props.alerts.map(a => (
        <ListItem
          key={a.fingerprint}
          disableGutters
          data-testid={props.testId}
          data-alertname={a.alertname}
        >
          <Chip
            size="small"
            label={alertStateText(a)}
            color={alertStateColor(a)}
            variant={a.state === 'firing' ? 'filled' : 'outlined'}
            sx={{ mr: 1 }}
          />
          <ListItemText
            primary={`${a.alertname}${a.severity ? ` · ${a.severity}` : ''}${
              a.nodes && a.nodes.length ? ` · ${a.nodes.join(', ')}` : ''
            }`}
            secondary={`${a.summary ? `${a.summary} ` : ''}(since ${formatTime(
              a.startsAt,
            )})`}
          />
        </ListItem>
      ))}
    </List>
  );
}

/**
 * The maintenance page's alerts (docs/alerts.md, "In the portal"): the silence the operator
 * holds on the node's alerts (ids, until, renewed), why it holds none when its condition
 * says so, and the node's alerts as the backend last read them.
 */
export function AlertsSection(props: {
  maintenance: MaintenanceResponse;
  /** The node's alerts; undefined while unknown (not loaded or refused). */
  alerts?: ServerAlertsResponse;
}) {
  const { maintenance: m, alerts } = props;
  const condition = m.conditions.find(c => c.type === ALERTS_SILENCED);
  const configured = alerts?.configured === true;
  if (!m.alerting && !condition && !configured) return null;
  return (
    <Section title="Alerts" testId="maintenance-alerts">
      {m.alerting ? (
        <Typography variant="body1" data-testid="maintenance-silence">
          {m.alerting.expiredAt
            ? `Silence ${
                m.alerting.silenceIds.join(', ') || 'none'
              } expired at ${formatTime(m.alerting.expiredAt)}.`
            : `Silenced in Alertmanager until ${formatTime(m.alerting.until)}${
                m.alerting.renewedAt
                  ? `, renewed at ${formatTime(m.alerting.renewedAt)}`
                  : ''
              } (silence ${m.alerting.silenceIds.join(', ') || 'none'}).`}
        </Typography>
      ) : (
        !condition && (
          <Typography variant="body2" color="text.secondary">
            No silence is held for this maintenance.
          </Typography>
        )
      )}
      {condition?.status === 'False' && (
        <Alert
          severity="warning"
          sx={{ mt: 1 }}
          data-testid="maintenance-silence-condition"
        >
          {`Not silenced (${condition.reason})${
            condition.message ? `: ${condition.message}` : ''
          }`}
        </Alert>
      )}
      {configured && alerts && (
        <>
          <Typography variant="subtitle2" component="h3" sx={{ mt: 2 }}>
            {`Alerts of ${m.nodeName}`}
          </Typography>
          {alerts.stale && (
            <Alert severity="warning" sx={{ my: 1 }}>
              {`Alertmanager could not be read (${
                alerts.stale.error
              }); shown as of ${formatTime(alerts.readAt)}.`}
            </Alert>
          )}
          {alerts.items.length === 0 ? (
            <Typography
              variant="body2"
              color="text.secondary"
              data-testid="maintenance-no-alerts"
            >
              No alert for this server.
            </Typography>
          ) : (
            <AlertList alerts={alerts.items} testId="maintenance-alert" />
          )}
        </>
      )}
    </Section>
  );
}
