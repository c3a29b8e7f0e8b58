import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The operator's Prometheus metrics. One registry per operator instance so
 * tests can run several operators in one process.
 */
export function createMetrics() {
  const registry = new Registry();
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
  const retentionDeletions = new Counter({
    name: 'rackside_retention_deletions_total',
    help: 'Terminal objects deleted after the retention period, by kind',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  return {
    registry,
    leader,
    retentionDeletions,
    /** Where rackside_leader reads leadership from. */
    leadership(source: () => boolean) {
      isLeader = source;
    },
    maintenancesByPhase,
    drainDuration,
    powerVerbsSent,
    refusals,
    reconcileErrors,
    async render() {
      return {
        contentType: registry.contentType,
        body: await registry.metrics(),
      };
    },
  };
}

export type OperatorMetrics = ReturnType<typeof createMetrics>;
