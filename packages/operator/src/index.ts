/*
 * The Rackside operator process: configuration from flags and environment, probes and
 * metrics, leader election gating the controllers, graceful SIGTERM.
 *
 *   --kubeconfig PATH        (or KUBECONFIG; in-cluster config when neither is set)
 *   --namespace NS           Lease namespace (RACKSIDE_OPERATOR_NAMESPACE / POD_NAMESPACE)
 *   --probe-port N           /healthz /readyz /metrics (RACKSIDE_OPERATOR_PROBE_PORT, 8081)
 *   --workers N              reconcile workers (RACKSIDE_OPERATOR_WORKERS, 4)
 *   --identity ID            Lease holder identity (RACKSIDE_OPERATOR_IDENTITY / POD_NAME / hostname)
 *   --reboot-deadline-seconds N       a reboot not back by then fails (RACKSIDE_REBOOT_DEADLINE_SECONDS, 900)
 *   --unanswered-deadline-seconds N   an unanswered power verb is watched this long (RACKSIDE_UNANSWERED_DEADLINE_SECONDS, 300)
 *   --reclaim-maintenance-wait-seconds N   a reset machine not back by then fails (RACKSIDE_RECLAIM_MAINTENANCE_WAIT_SECONDS, 600)
 *   --reclaim-max-ttl-seconds N            cap of a MachineReclaim's TTL (RACKSIDE_RECLAIM_MAX_TTL_SECONDS, 3600)
 *   --reclaim-reconcile-timeout-seconds N  limit of one reclaim reconcile (RACKSIDE_RECLAIM_RECONCILE_TIMEOUT_SECONDS, 120)
 *   --join-timeout-seconds N               a join without a Ready Node by then fails (RACKSIDE_JOIN_TIMEOUT_SECONDS, 900)
 *   --webhook-port N (0: off), --webhook-host, --webhook-cert-file, --webhook-key-file,
 *   --webhook-cert-hosts, --webhook-ca-out   the MachineReclaim admission webhook (README)
 */
import { KubeConfig } from '@kubernetes/client-node';
import { startHealthServer } from './health';
import { createMetrics } from './metrics';
import { startOperator } from './operator';
import { readConfig } from './config';
import { serveMachineReclaimWebhook } from './webhook/server';

async function main() {
  const log = (message: string) =>
    // eslint-disable-next-line no-console
    console.log(`${new Date().toISOString()} rackside-operator: ${message}`);
  const config = readConfig(process.argv.slice(2), process.env);
  const kubeConfig = new KubeConfig();
  if (config.kubeconfig) kubeConfig.loadFromFile(config.kubeconfig);
  else kubeConfig.loadFromCluster();

  const metrics = createMetrics();
  let exiting = false;
  const operator = await startOperator({
    kubeConfig,
    identity: config.identity,
    leaseNamespace: config.namespace,
    workers: config.workers,
    power: {
      rebootSeconds: config.rebootDeadlineSeconds,
      unansweredSeconds: config.unansweredDeadlineSeconds,
    },
    machines: {
      reclaim: {
        maintenanceWaitMs: config.reclaimMaintenanceWaitSeconds * 1000,
        ttlMaxMs: config.reclaimMaxTtlSeconds * 1000,
        reconcileTimeoutMs: config.reclaimReconcileTimeoutSeconds * 1000,
      },
      join: { joinTimeoutMs: config.joinTimeoutSeconds * 1000 },
    },
    metrics,
    log,
    // Like controller-runtime: a replica that lost its lease exits and starts afresh.
    onLostLeadership: () => void shutdown(1),
  });
  const server = await startHealthServer({
    port: config.probePort,
    isReady: () => operator.isReady(),
    metrics: () => metrics.render(),
  });
  log(`identity ${config.identity}, probes on :${config.probePort}`);
  // Every replica serves the webhook, leading or not: it only reads.
  const webhook =
    config.webhook.port > 0
      ? await serveMachineReclaimWebhook({
          ...config.webhook,
          kubeConfig,
          log,
        })
      : undefined;

  async function shutdown(code: number) {
    if (exiting) return;
    exiting = true;
    log('shutting down');
    await operator.stop().catch(error => log(String(error)));
    await webhook?.close();
    server.close(() => process.exit(code));
    setTimeout(() => process.exit(code), 5000).unref();
  }
  process.on('SIGTERM', () => void shutdown(0));
  process.on('SIGINT', () => void shutdown(0));
}

main().catch(error => {
  // eslint-disable-next-line no-console
  console.error(error);
  process.exit(1);
});
