import type { ServerAlertSummary } from '@rackside/plugin-servers-common';
import { CellChip, type CellChipTone } from './CellChip';

/** The tone of a firing count: red from `critical` up, amber otherwise. */
export function alertTone(severity: string | undefined): CellChipTone {
  const s = severity?.toLowerCase();
  return s === 'critical' || s === 'page' || s === 'error'
    ? 'error'
    : 'warning';
}

/** "2 firing · critical", "1 firing", or undefined when nothing fires. */
export function firingLabel(alerts: ServerAlertSummary): string | undefined {
  if (alerts.firing === 0) return undefined;
  return `${alerts.firing} firing${
    alerts.highestSeverity ? ` · ${alerts.highestSeverity}` : ''
  }`;
}

/**
 * A row's Alertmanager alerts (docs/alerts.md, "In the portal"): the firing count with the
 * highest severity, and the silenced ones apart. Nothing when the cluster has no
 * Alertmanager configured or the node has no alert; "stale" when the backend's last read
 * of Alertmanager failed and the counts are from before.
 */
export function AlertsCell(props: { alerts?: ServerAlertSummary }) {
  const { alerts } = props;
  if (!alerts) return null;
  const firing = firingLabel(alerts);
  if (!firing && alerts.silenced === 0 && !alerts.stale) return null;
  return (
    <span
      data-testid="server-alerts"
      title={
        alerts.stale
          ? 'Alertmanager could not be read: these counts are from its last answer'
          : 'Alertmanager alerts of this server'
      }
    >
      {firing && (
        <CellChip label={firing} color={alertTone(alerts.highestSeverity)} />
      )}
      {alerts.silenced > 0 && (
        <CellChip label={`${alerts.silenced} silenced`} variant="outlined" />
      )}
      {alerts.stale && <CellChip label="alerts stale" variant="outlined" />}
    </span>
  );
}
