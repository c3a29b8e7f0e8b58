import {
  AlertmanagerClient,
  type AlertmanagerApi,
} from '@rackside/plugin-servers-node';
import fs from 'node:fs';
import { NotLeadingError } from './leaderElection';

/** How the operator speaks to the cluster's Alertmanager (docs/alerts.md). */
export interface AlertingConfig {
  url: string;
  /** PEM CA bundle file; absent: the system trust store. */
  caFile?: string;
  /** Bearer token file (a mounted Secret), read again on every request. */
  tokenFile?: string;
  /** The templates that select a node's alerts (alternatives; `{{node}}`, `{{labels.KEY}}`). */
  matchers: readonly string[];
  /** A silence's lease: it ends this long after its last renewal. */
  silenceLeaseMs: number;
  /** How often an open maintenance renews its silence (< lease). */
  silenceRenewMs: number;
  /** No silence lasts past this from its creation, however long the maintenance. */
  silenceMaxMs: number;
  /** A node back in service stays silenced this long, and a healthy return fails on its alerts no sooner. */
  returnGraceMs: number;
  /** A maintenance's page (`{{name}}` for its name), linked from its silences' comment. */
  maintenanceUrl?: string;
}

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
