import {
  AlertmanagerClient,
  type AlertmanagerApi,
} from '@rackside/plugin-servers-node';
import fs from 'node:fs';
import type { AlertingConfig } from '../config';
import { NotLeadingError } from './leaderElection';

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

/**
 * The client with its writes (a silence put or expired) asking the elector first, as every
 * Kubernetes write of the operator does; reads go through. A wrapper rather than
 * `leaderGated`: the client keeps private fields, which a prototype copy cannot reach.
 */
export function leaderGatedAlertmanager(
  api: AlertmanagerApi,
  leading: () => boolean,
): AlertmanagerApi {
  const gate = <T>(what: string, call: () => Promise<T>): Promise<T> =>
    leading() ? call() : Promise.reject(new NotLeadingError(what));
  return {
    alerts: filter => api.alerts(filter),
    silences: filter => api.silences(filter),
    putSilence: silence =>
      gate('Alertmanager putSilence', () => api.putSilence(silence)),
    expireSilence: id =>
      gate('Alertmanager expireSilence', () => api.expireSilence(id)),
  };
}
