import {
  AlertmanagerClient,
  type AlertmanagerApi,
} from '@rackside/plugin-servers-node';
import fs from 'node:fs';
import type { AlertingConfig } from '../config';

/**
 * The operator's Alertmanager client from its flags (docs/alerts.md); undefined when no
 * Alertmanager is configured, and every caller then does what it did before.
 */
export function createOperatorAlertmanager(
  alerting: AlertingConfig | undefined,
): AlertmanagerApi | undefined {
  if (!alerting) return undefined;
  return new AlertmanagerClient({
    url: alerting.url,
    caData: alerting.caFile
      ? fs.readFileSync(alerting.caFile, 'utf8')
      : undefined,
    tokenFile: alerting.tokenFile,
  });
}
