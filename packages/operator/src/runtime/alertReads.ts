/*
 * What the plan and maintenance rows read of Alertmanager (docs/alerts.md): every alert and
 * the ids of Rackside's own silences, read fresh at the moment a gate or a healthy return
 * is judged. Alertmanager has no watch, so a row held by alerts reads them again every
 * pollMs. Reads are never shared: a snapshot read before an alert fired, handed to a gate
 * judged after, would start a step the alert should have held.
 */
import {
  nodeAlertsFiring,
  racksideSilenceIdsOf,
  type AlertSnapshot,
  type HealthyReturnInput,
  type SilenceRecorder,
} from '@rackside/plugin-servers-common';
import {
  AlertmanagerUnreachableError,
  type AlertmanagerApi,
} from '@rackside/plugin-servers-node';

/** How often an object held by alerts (a gate, a healthy return) reads them again. */
export const DEFAULT_ALERT_POLL_MS = 10_000;

/** Alertmanager as the rows see it. */
export interface AlertReads {
  /** The templates that select a node's alerts (config.alerting.matchers). */
  matchers: readonly string[];
  /** Alerts of a node that came back are judged only once this has passed. */
  returnGraceMs: number;
  /** How often an object held by alerts reads them again. */
  pollMs: number;
  /** Every alert and Rackside's silences, read now; unknown, with why, when unreachable. */
  snapshot(): Promise<AlertSnapshot>;
}

/**
 * The rows' reads from the operator's Alertmanager client; undefined without one.
 * `maintenances` lists the NodeMaintenances now (the watch cache): a silence is Rackside's
 * only when one of them recorded its id (servers-common's racksideSilenceIdsOf), so a
 * person's silence that copies Rackside's marker is judged as a person's.
 */
export function createAlertReads(
  alertmanager: AlertmanagerApi | undefined,
  alerting: { matchers: readonly string[]; returnGraceMs: number } | undefined,
  maintenances: () => Iterable<SilenceRecorder>,
  pollMs = DEFAULT_ALERT_POLL_MS,
): AlertReads | undefined {
  if (!alertmanager || !alerting) return undefined;
  const read = async (): Promise<AlertSnapshot> => {
    try {
      const [alerts, silences] = await Promise.all([
        alertmanager.alerts(),
        alertmanager.silences(),
      ]);
      return {
        known: true,
        alerts,
        racksideSilenceIds: racksideSilenceIdsOf(silences, maintenances()),
      };
    } catch (error) {
      return {
        known: false,
        reason:
          error instanceof AlertmanagerUnreachableError
            ? `Alertmanager unreachable: ${error.message}`
            : `Alertmanager: ${(error as Error).message}`,
      };
    }
  };
  return {
    matchers: alerting.matchers,
    returnGraceMs: alerting.returnGraceMs,
    pollMs,
    snapshot: read,
  };
}

/**
 * A node's alerts as a healthy return reads them (servers-common's healthyReturnVerdict):
 * undefined without Alertmanager (Ready only), unknown with why, or those that fire.
 */
export function nodeAlertsFor(
  alerting: AlertReads | undefined,
  snapshot: AlertSnapshot | undefined,
  node: { name: string; labels?: Record<string, string> },
): HealthyReturnInput['alerts'] {
  if (!alerting || !snapshot) return undefined;
  if (!snapshot.known) return { known: false, reason: snapshot.reason };
  return {
    known: true,
    firing: nodeAlertsFiring(alerting.matchers, node, snapshot),
  };
}
