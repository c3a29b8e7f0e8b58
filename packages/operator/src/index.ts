/*
 * The Rackside operator process: configuration from flags and environment (config.ts:
 * `--help` prints them; an unknown or malformed flag or a bad value exits 2 with the
 * usage), probes and metrics, leader election gating the controllers, graceful SIGTERM.
 * Every replica serves the webhook and is Ready once its caches are synced and the
 * webhook listens; leadership is the metric rackside_leader, not readiness.
 */
import { KubeConfig } from '@kubernetes/client-node';
import fs from 'node:fs';
import path from 'node:path';
import { shareKeepAliveAgents } from '@rackside/plugin-servers-node';
import { startHealthServer } from './runtime/health';
import { createMetrics } from './runtime/metrics';
import { startOperator } from './operator';
import {
  ConfigError,
  HelpRequested,
  readConfig,
  usage,
  VersionRequested,
  type OperatorConfig,
} from './config';
import { createLogger } from './runtime/logger';
import { createOperatorAlertmanager } from './runtime/alertmanager';
import { serveMachineReclaimWebhook } from './webhook/server';

/** The Alertmanager client and the silence lease's flags; undefined without --alertmanager-url. */
function alertingOf(config: OperatorConfig) {
  const alertmanager = createOperatorAlertmanager(config.alerting);
  if (!alertmanager || !config.alerting) return undefined;
  return { alertmanager, settings: config.alerting };
}

async function main() {
  const config = configOrExit();
  const logger = createLogger(config.logFormat, {
    identity: config.identity,
    level: config.logLevel,
  });
  const log = logger.log;
  log(`rackside-operator ${version()}`);
  const kubeConfig = new KubeConfig();
  if (config.kubeconfig) kubeConfig.loadFromFile(config.kubeconfig);
  else kubeConfig.loadFromCluster();
  // client-node's own clients (the Event recorder) keep the one connection per cluster
  // that KubeHttp keeps, instead of a TLS handshake per request.
  shareKeepAliveAgents(kubeConfig);

  const metrics = createMetrics();
  let exiting = false;
  const operator = await startOperator({
    kubeConfig,
    identity: config.identity,
    nodeName: config.nodeName,
    leaseNamespace: config.namespace,
    workers: config.workers,
    power: {
      rebootSeconds: config.rebootDeadlineSeconds,
      unansweredSeconds: config.unansweredDeadlineSeconds,
      upgradeSeconds: config.upgradeDeadlineSeconds,
    },
    upgrades: {
      imagePrefixes: config.talosImagePrefixes,
      firmwareSources: config.firmwareSources,
      firmwareChecksumRequired: config.firmwareChecksumRequired,
      firmwareSourceCredentialsSecret: config.firmwareSourceCredentialsSecret,
      firmwareSourceCaBundle: config.firmwareSourcesCaFile
        ? fs.readFileSync(config.firmwareSourcesCaFile, 'utf8')
        : undefined,
    },
    machines: {
      reclaim: {
        maintenanceWaitMs: config.reclaimMaintenanceWaitSeconds * 1000,
        ttlMaxMs: config.reclaimMaxTtlSeconds * 1000,
        reconcileTimeoutMs: config.reclaimReconcileTimeoutSeconds * 1000,
      },
      join: { joinTimeoutMs: config.joinTimeoutSeconds * 1000 },
    },
    leaderElection: config.leaderElection,
    retentionMs: config.retentionMs,
    health: {
      intervalMs: config.healthIntervalMs,
      concurrency: config.healthConcurrency,
      fullIntervalMs: config.healthFullIntervalMs,
      readingDeadlineMs: config.healthReadingDeadlineMs,
    },
    planGateReads: config.planGateReads,
    alerting: alertingOf(config),
    metrics,
    log,
    // Like controller-runtime: a replica that lost its lease exits and starts afresh.
    onLostLeadership: () => {
      logger.warn('no longer leading: exiting 1 (restarted as a standby)');
      void shutdown(1);
    },
  });
  // Every replica serves the webhook, leading or not: it only reads.
  let webhookServing = config.webhook.port === 0;
  const server = await startHealthServer({
    port: config.probePort,
    isReady: () => operator.isReady() && webhookServing,
    metrics: () => metrics.render(),
  });
  log(`identity ${config.identity}, probes on :${config.probePort}`);
  const webhook =
    config.webhook.port > 0
      ? await serveMachineReclaimWebhook({
          ...config.webhook,
          kubeConfig,
          log,
        })
      : undefined;
  webhookServing = true;
  if (webhook) metrics.webhookCertificate(() => webhook.notAfter());

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

/** The configuration, or the usage on stderr and exit 2 (0 for --help). */
function configOrExit(): OperatorConfig {
  try {
    return readConfig(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof HelpRequested) {
      process.stdout.write(`${usage()}\n`);
      process.exit(0);
    }
    if (error instanceof VersionRequested) {
      process.stdout.write(`rackside-operator ${version()}\n`);
      process.exit(0);
    }
    if (error instanceof ConfigError) {
      process.stderr.write(
        `rackside-operator: ${error.message}\n\n${usage()}\n`,
      );
      process.exit(2);
    }
    throw error;
  }
}

/**
 * The package's version, from the package.json one level above the entry script: above
 * src/ from a checkout, above dist/ in the image (/app).
 */
function version(): string {
  try {
    const entry = fs.realpathSync(process.argv[1]);
    const manifest = JSON.parse(
      fs.readFileSync(
        path.join(path.dirname(entry), '..', 'package.json'),
        'utf8',
      ),
    );
    return String(manifest.version);
  } catch {
    return 'unknown';
  }
}

main().catch(error => {
  // eslint-disable-next-line no-console
  console.error(error);
  process.exit(1);
});
