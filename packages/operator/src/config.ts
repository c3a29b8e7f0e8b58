import os from 'node:os';

/** The operator's configuration (see index.ts for flags and variables). */
export interface OperatorConfig {
  kubeconfig?: string;
  namespace: string;
  probePort: number;
  workers: number;
  identity: string;
  /** A reboot that has not brought the node back (new boot ID) by then fails. */
  rebootDeadlineSeconds: number;
  /** A power verb recorded without the channel's answer is watched this long, never resent. */
  unansweredDeadlineSeconds: number;
  /** A reclaimed machine not back in maintenance mode this long after its reset fails (ADR 0107: 600). */
  reclaimMaintenanceWaitSeconds: number;
  /** Upper bound of a MachineReclaim's TTL (spec.ttlMinutes is capped by it; at most 3600). */
  reclaimMaxTtlSeconds: number;
  /** The time limit of one MachineReclaim reconcile (ADR 0107: 120). */
  reclaimReconcileTimeoutSeconds: number;
  /** A joining machine without a Ready Node this long after its config was applied fails. */
  joinTimeoutSeconds: number;
  /** The MachineReclaim admission webhook (port 0: not served). */
  webhook: WebhookConfig;
}

export interface WebhookConfig {
  port: number;
  /** Listen address. */
  host: string;
  /** Serving certificate and key (PEM); without them a self-signed pair is made at start. */
  certFile?: string;
  keyFile?: string;
  /** Names and addresses of the self-signed certificate. */
  certHosts: string[];
  /** Where to write the self-signed CA (the caBundle to register the webhook with). */
  caOut?: string;
}

/** Reads the configuration; flags win over the environment. */
export function readConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): OperatorConfig {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) continue;
    const eq = arg.indexOf('=');
    if (eq > 0) flags.set(arg.slice(2, eq), arg.slice(eq + 1));
    else if (i + 1 < argv.length) flags.set(arg.slice(2), argv[++i]);
  }
  const number = (
    value: string | undefined,
    fallback: number,
    what: string,
  ) => {
    if (value === undefined || value === '') return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) {
      throw new Error(`${what} must be a positive integer, got "${value}"`);
    }
    return n;
  };
  const text = (flag: string, variable: string) =>
    flags.get(flag) ?? (env[variable] || undefined);
  const webhookPort = text('webhook-port', 'RACKSIDE_OPERATOR_WEBHOOK_PORT');
  if (
    webhookPort !== undefined &&
    !(/^\d+$/.test(webhookPort) && Number(webhookPort) <= 65535)
  ) {
    throw new Error(
      `webhook port must be 0 (off) to 65535, got "${webhookPort}"`,
    );
  }
  const reclaimMaxTtlSeconds = number(
    text('reclaim-max-ttl-seconds', 'RACKSIDE_RECLAIM_MAX_TTL_SECONDS'),
    3600,
    'reclaim max TTL',
  );
  if (reclaimMaxTtlSeconds > 3600) {
    throw new Error(
      `reclaim max TTL must be at most 3600 seconds (the 60 minutes a MachineReclaim may ask for), got ${reclaimMaxTtlSeconds}`,
    );
  }
  const certHosts = text(
    'webhook-cert-hosts',
    'RACKSIDE_OPERATOR_WEBHOOK_CERT_HOSTS',
  );
  return {
    kubeconfig: flags.get('kubeconfig') ?? (env.KUBECONFIG || undefined),
    namespace:
      flags.get('namespace') ??
      env.RACKSIDE_OPERATOR_NAMESPACE ??
      env.POD_NAMESPACE ??
      'rackside-system',
    probePort: number(
      flags.get('probe-port') ?? env.RACKSIDE_OPERATOR_PROBE_PORT,
      8081,
      'probe port',
    ),
    workers: number(
      flags.get('workers') ?? env.RACKSIDE_OPERATOR_WORKERS,
      4,
      'workers',
    ),
    rebootDeadlineSeconds: number(
      flags.get('reboot-deadline-seconds') ??
        env.RACKSIDE_REBOOT_DEADLINE_SECONDS,
      900,
      'reboot deadline',
    ),
    unansweredDeadlineSeconds: number(
      flags.get('unanswered-deadline-seconds') ??
        env.RACKSIDE_UNANSWERED_DEADLINE_SECONDS,
      300,
      'unanswered deadline',
    ),
    reclaimMaintenanceWaitSeconds: number(
      text(
        'reclaim-maintenance-wait-seconds',
        'RACKSIDE_RECLAIM_MAINTENANCE_WAIT_SECONDS',
      ),
      600,
      'reclaim maintenance wait',
    ),
    reclaimMaxTtlSeconds,
    reclaimReconcileTimeoutSeconds: number(
      text(
        'reclaim-reconcile-timeout-seconds',
        'RACKSIDE_RECLAIM_RECONCILE_TIMEOUT_SECONDS',
      ),
      120,
      'reclaim reconcile timeout',
    ),
    joinTimeoutSeconds: number(
      text('join-timeout-seconds', 'RACKSIDE_JOIN_TIMEOUT_SECONDS'),
      900,
      'join timeout',
    ),
    webhook: {
      // Off unless asked for: two operators on one host (tests, a demo) must not collide.
      port: webhookPort === undefined ? 0 : Number(webhookPort),
      host: text('webhook-host', 'RACKSIDE_OPERATOR_WEBHOOK_HOST') ?? '0.0.0.0',
      certFile: text(
        'webhook-cert-file',
        'RACKSIDE_OPERATOR_WEBHOOK_CERT_FILE',
      ),
      keyFile: text('webhook-key-file', 'RACKSIDE_OPERATOR_WEBHOOK_KEY_FILE'),
      certHosts: certHosts
        ? certHosts
            .split(',')
            .map(h => h.trim())
            .filter(Boolean)
        : ['127.0.0.1', 'localhost', os.hostname()],
      caOut: text('webhook-ca-out', 'RACKSIDE_OPERATOR_WEBHOOK_CA_OUT'),
    },
    identity:
      flags.get('identity') ??
      env.RACKSIDE_OPERATOR_IDENTITY ??
      env.POD_NAME ??
      `${os.hostname()}-${process.pid}`,
  };
}
