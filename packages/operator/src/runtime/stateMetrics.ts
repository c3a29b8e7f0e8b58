/*
 * Metrics read from the watch caches, for the chart's alerts (charts/rackside/monitoring):
 * what an alert needs to know about the objects themselves, which no counter of the
 * controllers says. Gauges are computed when Prometheus scrapes (nothing polls); the two
 * counters follow the caches' updates and count on the leader only, so the replicas of a
 * Deployment do not count one failure twice.
 */
import {
  HEALTH_ROLLUPS,
  type MaintenancePlan,
  type NodeMaintenance,
  type ServerBMC,
} from '@rackside/plugin-servers-common';
import type { RawKubeObject, WatchCache } from '@rackside/plugin-servers-node';
import { Counter, Gauge, type Registry } from 'prom-client';

const POWER_VERBS = ['reboot', 'shutdown', 'powerOn'] as const;

export function registerStateMetrics(options: {
  registry: Registry;
  maintenances: WatchCache<NodeMaintenance>;
  plans: WatchCache<MaintenancePlan & RawKubeObject>;
  /** ServerBMCs, for their health (absent: no health gauge). */
  bmcs?: WatchCache<ServerBMC & RawKubeObject>;
  /** Whether this replica leads at the moment (counters count there only). */
  isLeader: () => boolean;
}): () => void {
  const { registry, maintenances, plans, isLeader, bmcs } = options;
  // One series per server and rollup: 1 for the rollup of its last reading, 0 for the
  // others, so an alert can say `rackside_server_health{rollup="Critical"} == 1`.
  const serverHealth = new Gauge({
    name: 'rackside_server_health',
    help: "The rollup of a server's last BMC health reading (1) per node; Unknown when never read",
    labelNames: ['node', 'rollup'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const bmc of bmcs?.list() ?? []) {
        const current = bmc.status?.health?.rollup ?? 'Unknown';
        for (const rollup of HEALTH_ROLLUPS) {
          this.set(
            { node: bmc.metadata?.name ?? '', rollup },
            rollup === current ? 1 : 0,
          );
        }
      }
    },
  });
  const drainDeadlines = new Gauge({
    name: 'rackside_maintenance_drain_deadline_timestamp_seconds',
    help: 'When the drain of a Draining NodeMaintenance with a drain timeout must end (Unix time); past it the operator fails the maintenance',
    labelNames: ['name', 'node'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const nm of maintenances.list()) {
        const timeout = nm.spec?.drain?.timeoutSeconds;
        const started = Date.parse(nm.status?.drain?.startedAt ?? '');
        if (nm.status?.phase !== 'Draining' || !timeout || !started) continue;
        this.set(
          { name: nm.metadata?.name ?? '', node: nm.spec.nodeName },
          started / 1000 + timeout,
        );
      }
    },
  });
  const plansByPhase = new Gauge({
    name: 'rackside_plans',
    help: 'MaintenancePlan objects by phase',
    labelNames: ['phase'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const counts = new Map<string, number>();
      for (const plan of plans.list()) {
        const phase = plan.status?.phase ?? 'Pending';
        counts.set(phase, (counts.get(phase) ?? 0) + 1);
      }
      for (const [phase, n] of counts) this.set({ phase }, n);
    },
  });
  const gateDeadlines = new Gauge({
    name: 'rackside_plan_gate_deadline_timestamp_seconds',
    help: 'When the gate a MaintenancePlan waits on times out (Unix time); past it the operator fails the plan',
    labelNames: ['plan', 'gate'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const plan of plans.list()) {
        const waiting = plan.status?.waiting;
        const until = Date.parse(waiting?.until ?? '');
        if (
          plan.status?.phase !== 'Waiting' ||
          waiting?.on !== 'gate' ||
          !until
        )
          continue;
        this.set(
          { plan: plan.metadata?.name ?? '', gate: waiting.gate ?? '' },
          until / 1000,
        );
      }
    },
  });
  const powerFailures = new Counter({
    name: 'rackside_power_verb_failures_total',
    help: 'Power verbs whose call failed (the error recorded on the NodeMaintenance), by verb and channel',
    labelNames: ['verb', 'channel'] as const,
    registers: [registry],
  });
  // Zero series from the start, so increase() sees the first failure.
  for (const verb of POWER_VERBS)
    for (const channel of ['talos', 'redfish'])
      powerFailures.inc({ verb, channel }, 0);
  const planFailures = new Counter({
    name: 'rackside_plan_failures_total',
    help: 'MaintenancePlans that turned Failed',
    registers: [registry],
  });
  const unsubscribe = [
    maintenances.on('update', (nm, old) => {
      if (!isLeader()) return;
      for (const verb of POWER_VERBS) {
        const now = nm.status?.power?.[verb];
        if (now?.error && !old.status?.power?.[verb]?.error)
          powerFailures.inc({ verb, channel: now.channel ?? 'unknown' });
      }
    }),
    plans.on('update', (plan, old) => {
      if (!isLeader()) return;
      if (plan.status?.phase === 'Failed' && old.status?.phase !== 'Failed')
        planFailures.inc();
    }),
  ];
  return () => {
    unsubscribe.forEach(off => off());
    // Nothing to read once the caches stop.
    for (const gauge of [
      drainDeadlines,
      plansByPhase,
      gateDeadlines,
      serverHealth,
    ])
      gauge.reset();
  };
}
