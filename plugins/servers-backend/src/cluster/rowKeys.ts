/*
 * The parts of a server row's key that the cluster's change signal compares (a reading
 * and the alerts as the row shows them): KubeClusterState signals a change only when a
 * shown row changed, and the servers list caches its pages by the same keys.
 */
import {
  failedPartsOf,
  hardwareReadingState,
  type ServerAlertSummary,
  type ServerHealth,
} from '@rackside/plugin-servers-common';
import { alertSummaryOf } from './nodeAlerts';
import type { ClusterSnapshot } from './types';

/**
 * The part of a row's key a health reading makes (what the row shows of it, and whether
 * the reading still counts: it goes unknown with time alone, and the row's rung with it).
 */
export function healthRowKey(
  health: ServerHealth | undefined,
  now: number = Date.now(),
): string {
  return health
    ? `${health.rollup}|${health.readAt ?? ''}|${failedPartsOf(health)}|${
        health.error ?? ''
      }|${hardwareReadingState(health, now).state}`
    : '';
}

/** A row's alert summary; undefined when the cluster has no Alertmanager configured. */
export function alertSummaryOfNode(
  snapshot: ClusterSnapshot,
  name: string,
): ServerAlertSummary | undefined {
  if (!snapshot.alerts) return undefined;
  return alertSummaryOf(
    snapshot.alerts.byNode.get(name),
    snapshot.alerts.stale !== undefined,
  );
}

/** What a row's key takes of its alerts: the summary the row shows. */
export function alertsKeyOf(snapshot: ClusterSnapshot, name: string): string {
  const summary = alertSummaryOfNode(snapshot, name);
  return summary ? JSON.stringify(summary) : '';
}
