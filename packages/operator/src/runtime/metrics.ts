import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
} from 'prom-client';
import type { WorkQueueMetrics } from './workqueue';

/**
 * The operator's Prometheus metrics. One registry per operator instance so
 * tests can run several operators in one process.
 */
export function createMetrics() {
  const registry = new Registry();
  // CPU, memory, file descriptors, event loop lag, heap and GC under the standard
  // process_* / nodejs_* names (no rackside_ prefix): the names Prometheus users'
  // dashboards and alerts for any Node.js process already expect.
  collectDefaultMetrics({ register: registry });
  const maintenancesByPhase = new Gauge({
    name: 'rackside_maintenances',
    help: 'NodeMaintenance objects by phase',
    labelNames: ['phase'] as const,
    registers: [registry],
  });
  const drainDuration = new Histogram({
    name: 'rackside_drain_duration_seconds',
    help: 'Time from the first eviction to Drained',
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800],
    registers: [registry],
  });
  const powerVerbsSent = new Counter({
    name: 'rackside_power_verbs_sent_total',
    help: 'Power verbs sent to a power channel',
    labelNames: ['verb', 'channel'] as const,
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'rackside_refusals_total',
    help: 'Maintenances the operator refused, by cause',
    labelNames: ['cause'] as const,
    registers: [registry],
  });
  const reconcileErrors = new Counter({
    name: 'rackside_reconcile_errors_total',
    help: 'Reconciles that failed and were retried',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  // A status the apiserver refused (not a conflict): the object shows a stale status.
  const statusWriteFailures = new Counter({
    name: 'rackside_status_write_failures_total',
    help: 'Status writes the apiserver refused for another reason than a conflict, by kind',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  // Alertmanager refused, timed out or answered garbage: the maintenance went on without
  // its silence (docs/alerts.md, "Failure modes").
  const alertmanagerErrors = new Counter({
    name: 'rackside_alertmanager_errors_total',
    help: 'Alertmanager calls that failed (unreachable, refused, timed out), by operation',
    labelNames: ['operation'] as const,
    registers: [registry],
  });
  // Read at scrape time from the elector's predicate: a replica past its renew deadline
  // reports 0 even if nothing else has run since.
  let isLeader: () => boolean = () => false;
  const leader = new Gauge({
    name: 'rackside_leader',
    help: 'Whether this replica holds the leader Lease and may act (1) or stands by (0)',
    registers: [registry],
    collect() {
      this.set(isLeader() ? 1 : 0);
    },
  });
  // Read at scrape time from the webhook's certificate as served (reloads included).
  let certificateNotAfter: () => number | undefined = () => undefined;
  const webhookCertificateExpiry = new Gauge({
    name: 'rackside_webhook_certificate_expiry_timestamp_seconds',
    help: 'When the certificate the admission webhook serves expires (Unix time)',
    registers: [registry],
    collect() {
      const notAfter = certificateNotAfter();
      if (notAfter === undefined) this.reset();
      else this.set(notAfter / 1000);
    },
  });
  const retentionDeletions = new Counter({
    name: 'rackside_retention_deletions_total',
    help: 'Terminal objects deleted after the retention period, by kind',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const workqueueDepth = new Gauge({
    name: 'rackside_workqueue_depth',
    help: 'Keys waiting for a worker (not running, not waiting out a backoff), by controller',
    labelNames: ['controller'] as const,
    registers: [registry],
  });
  const workqueueRetries = new Counter({
    name: 'rackside_workqueue_retries_total',
    help: 'Keys requeued with backoff after a failed reconcile, by controller',
    labelNames: ['controller'] as const,
    registers: [registry],
  });
  const reconcileDuration = new Histogram({
    name: 'rackside_reconcile_duration_seconds',
    help: 'Time one reconcile took, failed ones included, by controller',
    labelNames: ['controller'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return {
    registry,
    workqueueDepth,
    workqueueRetries,
    reconcileDuration,
    /** What one controller's WorkQueue reports into (its `metrics` option). */
    queue(controller: string): WorkQueueMetrics {
      // Zero series from the start, so a rate() or an absent() alert sees the controller.
      workqueueDepth.set({ controller }, 0);
      workqueueRetries.inc({ controller }, 0);
      return {
        depth: keys => workqueueDepth.set({ controller }, keys),
        retry: () => workqueueRetries.inc({ controller }),
        reconciled: seconds =>
          reconcileDuration.observe({ controller }, seconds),
      };
    },
    leader,
    retentionDeletions,
    webhookCertificateExpiry,
    /** Where the webhook certificate's expiry is read from (ms since the epoch). */
    webhookCertificate(source: () => number | undefined) {
      certificateNotAfter = source;
    },
    /** Where rackside_leader reads leadership from. */
    leadership(source: () => boolean) {
      isLeader = source;
    },
    maintenancesByPhase,
    drainDuration,
    powerVerbsSent,
    refusals,
    reconcileErrors,
    statusWriteFailures,
    alertmanagerErrors,
    async render() {
      return {
        contentType: registry.contentType,
        body: await registry.metrics(),
      };
    },
  };
}

export type OperatorMetrics = ReturnType<typeof createMetrics>;
