import {
  DEFAULT_NODE_ALERT_MATCHERS,
  isImagePrefix,
  parseFirmwareSource,
  validateAlertMatcherTemplates,
} from '@rackside/plugin-servers-common';
import os from 'node:os';
import { parseArgs } from 'node:util';
import {
  LOG_FORMATS,
  LOG_LEVELS,
  type LogFormat,
  type LogLevel,
} from './runtime/logger';
import type { AlertingConfig } from './runtime/alertmanager';

/** How the operator speaks to Alertmanager: the runtime's type (runtime/alertmanager.ts). */
export type { AlertingConfig };

/** The operator's configuration (flags and variables: `OPTIONS` below, and the README). */
export interface OperatorConfig {
  kubeconfig?: string;
  namespace: string;
  probePort: number;
  workers: number;
  identity: string;
  /** The node this replica runs on: it hands its Lease over before a verb for it. */
  nodeName?: string;
  /** A reboot that has not brought the node back (new boot ID) by then fails. */
  rebootDeadlineSeconds: number;
  /** A power verb recorded without the channel's answer is watched this long, never resent. */
  unansweredDeadlineSeconds: number;
  /**
   * The Talos installer image prefixes an upgrade may install (docs/upgrades.md); the
   * operator refuses any other image when it is about to send. Empty: no upgrade is sent.
   */
  talosImagePrefixes: string[];
  /**
   * The https origins a firmware update may fetch its image from (docs/upgrades.md,
   * "Firmware"); the operator refuses any other image URI when it is about to send.
   * Empty: no firmware update is sent.
   */
  firmwareSources: string[];
  /**
   * Those of `firmwareSources` whose images are sent only with a checksum
   * (`--firmware-sources-requiring-checksum`; they are allowed sources too).
   */
  firmwareChecksumRequired: string[];
  /**
   * The Secret in the operator's namespace whose `sources.json` holds the firmware sources'
   * credentials (docs/upgrades.md, "Credentials for a source"); absent: none.
   */
  firmwareSourceCredentialsSecret?: string;
  /** A PEM file of the CAs the firmware sources' certificates are checked against. */
  firmwareSourcesCaFile?: string;
  /** An upgrade not back on its target version (new boot ID) this long after Talos accepted it fails. */
  upgradeDeadlineSeconds: number;
  /** A reclaimed machine not back in maintenance mode this long after its reset fails (decision 0002: 600). */
  reclaimMaintenanceWaitSeconds: number;
  /** Upper bound of a MachineReclaim's TTL (spec.ttlMinutes is capped by it; at most 3600). */
  reclaimMaxTtlSeconds: number;
  /** The time limit of one MachineReclaim reconcile (decision 0002: 120). */
  reclaimReconcileTimeoutSeconds: number;
  /** A joining machine without a Ready Node this long after its config was applied fails. */
  joinTimeoutSeconds: number;
  /** Leader election (ms): renewDeadline < leaseDuration, retryPeriod < renewDeadline. */
  leaderElection: LeaderElectionConfig;
  /** How long a terminal NodeMaintenance or MachineReclaim is kept after it ended (ms). */
  retentionMs: number;
  /** Each ServerBMC's health is read about this often (ms, jittered ±20 %). */
  healthIntervalMs: number;
  /** BMCs whose health is read at once, at most. */
  healthConcurrency: number;
  /** A full health reading (parts, logs, firmware) of a BMC at least this often (ms). */
  healthFullIntervalMs: number;
  /** One health reading of a BMC, all its requests together, is given up after this (ms). */
  healthReadingDeadlineMs: number;
  /** Log lines: JSON with a level (the default), or text for people. */
  logFormat: LogFormat;
  /** Lines below this level are dropped. */
  logLevel: LogLevel;
  /** The MachineReclaim admission webhook (port 0: not served). */
  webhook: WebhookConfig;
  /**
   * The kinds MaintenancePlan object gates may read, as `resource.group` (a core kind:
   * its resource alone): the chart's operator.planGateReads. Empty: no object gate.
   */
  planGateReads: string[];
  /** Alertmanager (docs/alerts.md); absent when no URL is given: nothing is silenced or gated. */
  alerting?: AlertingConfig;
}

/** The Alertmanager flags past its address: what silences, gates and returns go by. */
export type AlertingSettings = Omit<
  AlertingConfig,
  'url' | 'caFile' | 'tokenFile'
>;

export interface LeaderElectionConfig {
  /** How long a Lease is valid without renewal, as a standby judges it. */
  leaseDurationMs: number;
  /** A leader that has not renewed within this stops acting and exits. */
  renewDeadlineMs: number;
  /** How often the leader renews and a standby retries. */
  retryPeriodMs: number;
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

/** A flag, a bad value or a missing one: main prints it with the usage and exits 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** The version flag was given: main prints the version and exits 0. */
export class VersionRequested extends Error {
  constructor() {
    super('version');
    this.name = 'VersionRequested';
  }
}

/** The help flag was given: main prints the usage and exits 0. */
export class HelpRequested extends Error {
  constructor() {
    super('help');
    this.name = 'HelpRequested';
  }
}

/** One row per flag: its variables (first set wins), default and what it does. */
const OPTIONS = [
  ['kubeconfig', ['KUBECONFIG'], 'in-cluster config', 'kubeconfig file'],
  [
    'namespace',
    ['RACKSIDE_OPERATOR_NAMESPACE', 'POD_NAMESPACE'],
    'rackside-system',
    "the operator's namespace (Lease, Secrets, Talos kinds, reclaims)",
  ],
  [
    'probe-port',
    ['RACKSIDE_OPERATOR_PROBE_PORT'],
    '8081',
    '/healthz, /readyz and /metrics',
  ],
  ['workers', ['RACKSIDE_OPERATOR_WORKERS'], '4', 'reconcile workers'],
  [
    'identity',
    ['RACKSIDE_OPERATOR_IDENTITY', 'POD_NAME'],
    'hostname-pid',
    'Lease holder identity',
  ],
  [
    'node-name',
    ['RACKSIDE_NODE_NAME', 'NODE_NAME'],
    'none',
    'the node this replica runs on (the chart sets NODE_NAME from spec.nodeName): the Lease is handed over before a verb for it',
  ],
  [
    'lease-duration',
    ['RACKSIDE_LEASE_DURATION'],
    '15s',
    'how long a Lease is valid without renewal',
  ],
  [
    'renew-deadline',
    ['RACKSIDE_RENEW_DEADLINE'],
    '10s',
    'a leader not renewed within it stops acting and exits (< lease duration)',
  ],
  [
    'retry-period',
    ['RACKSIDE_RETRY_PERIOD'],
    '2s',
    'how often the leader renews and a standby retries (< renew deadline)',
  ],
  [
    'retention',
    ['RACKSIDE_RETENTION'],
    '7d',
    'terminal NodeMaintenances and MachineReclaims are deleted this long after they ended',
  ],
  [
    'health-interval',
    ['RACKSIDE_HEALTH_INTERVAL'],
    '15m',
    "each ServerBMC's health is read about this often (jittered ±20 %; two requests unless something changed)",
  ],
  [
    'health-concurrency',
    ['RACKSIDE_HEALTH_CONCURRENCY'],
    '4',
    'BMCs whose health is read at once, at most',
  ],
  [
    'health-full-interval',
    ['RACKSIDE_HEALTH_FULL_INTERVAL'],
    '12h',
    "a BMC's parts, log entries and firmware are read in full at least this often",
  ],
  [
    'health-reading-deadline',
    ['RACKSIDE_HEALTH_READING_DEADLINE'],
    '60s',
    'one health reading of a BMC (all its requests together) is given up after this, naming the BMC',
  ],
  [
    'log-format',
    ['RACKSIDE_LOG_FORMAT'],
    'json',
    'json (one object a line, with a level) or text for people',
  ],
  [
    'log-level',
    ['RACKSIDE_LOG_LEVEL'],
    'info',
    'debug, info, warn or error: lines below it are dropped',
  ],
  [
    'reboot-deadline-seconds',
    ['RACKSIDE_REBOOT_DEADLINE_SECONDS'],
    '900',
    'a reboot not back by then fails',
  ],
  [
    'unanswered-deadline-seconds',
    ['RACKSIDE_UNANSWERED_DEADLINE_SECONDS'],
    '300',
    'how long a power verb without an answer is watched',
  ],
  [
    'talos-image-prefixes',
    ['RACKSIDE_TALOS_IMAGE_PREFIXES'],
    'none',
    'Talos installer image prefixes an upgrade may install, comma-separated (e.g. factory.talos.dev/installer/); none: no upgrade is sent',
  ],
  [
    'firmware-sources',
    ['RACKSIDE_FIRMWARE_SOURCES'],
    'none',
    'https origins a firmware update may fetch its image from, comma-separated (e.g. https://firmware.example.com); none: no firmware update is sent',
  ],
  [
    'firmware-sources-requiring-checksum',
    ['RACKSIDE_FIRMWARE_SOURCES_REQUIRING_CHECKSUM'],
    'none',
    'https origins a firmware update may fetch its image from only with spec.firmware.checksum, comma-separated (allowed like --firmware-sources)',
  ],
  [
    'firmware-source-credentials-secret',
    ['RACKSIDE_FIRMWARE_SOURCE_CREDENTIALS_SECRET'],
    'none',
    "the Secret in the operator's namespace whose key sources.json maps each firmware source's origin to {username, password}",
  ],
  [
    'firmware-sources-ca-file',
    ['RACKSIDE_FIRMWARE_SOURCES_CA_FILE'],
    'system CAs',
    "PEM file of the CAs the firmware sources' certificates are checked against when the operator fetches an image itself",
  ],
  [
    'upgrade-deadline-seconds',
    ['RACKSIDE_UPGRADE_DEADLINE_SECONDS'],
    '1800',
    'an upgrade not back on its target version by then fails',
  ],
  [
    'reclaim-maintenance-wait-seconds',
    ['RACKSIDE_RECLAIM_MAINTENANCE_WAIT_SECONDS'],
    '600',
    'a reset machine not back by then fails',
  ],
  [
    'reclaim-max-ttl-seconds',
    ['RACKSIDE_RECLAIM_MAX_TTL_SECONDS'],
    '3600',
    'caps spec.ttlMinutes of a MachineReclaim (at most 3600)',
  ],
  [
    'reclaim-reconcile-timeout-seconds',
    ['RACKSIDE_RECLAIM_RECONCILE_TIMEOUT_SECONDS'],
    '120',
    'limit of one MachineReclaim reconcile',
  ],
  [
    'join-timeout-seconds',
    ['RACKSIDE_JOIN_TIMEOUT_SECONDS'],
    '900',
    'a joining machine without a Ready Node by then fails',
  ],
  [
    'plan-gate-reads',
    ['RACKSIDE_PLAN_GATE_READS'],
    'none',
    'kinds MaintenancePlan object gates may read, comma-separated resource.group (core: pods)',
  ],
  [
    'alertmanager-url',
    ['RACKSIDE_ALERTMANAGER_URL'],
    'none',
    'Alertmanager (API v2) to silence a node in maintenance and gate plans on; none: off',
  ],
  [
    'alertmanager-ca-file',
    ['RACKSIDE_ALERTMANAGER_CA_FILE'],
    'system trust store',
    "PEM CA bundle for the Alertmanager's certificate",
  ],
  [
    'alertmanager-token-file',
    ['RACKSIDE_ALERTMANAGER_TOKEN_FILE'],
    'none',
    'bearer token file for Alertmanager, read on every request',
  ],
  [
    'alert-matchers',
    ['RACKSIDE_ALERT_MATCHERS'],
    DEFAULT_NODE_ALERT_MATCHERS.join(';'),
    "templates selecting a node's alerts, ';'-separated alternatives ({{node}}, {{labels.KEY}})",
  ],
  [
    'silence-lease',
    ['RACKSIDE_SILENCE_LEASE'],
    '30m',
    "a maintenance's silence ends this long after its last renewal",
  ],
  [
    'silence-renew',
    ['RACKSIDE_SILENCE_RENEW'],
    '10m',
    'how often an open maintenance renews its silence (< silence lease)',
  ],
  [
    'silence-max',
    ['RACKSIDE_SILENCE_MAX'],
    '24h',
    'no silence lasts past this after the cordon, however long the maintenance',
  ],
  [
    'return-grace',
    ['RACKSIDE_RETURN_GRACE'],
    '5m',
    'a node back in service stays silenced this long; a healthy return fails on its alerts no sooner',
  ],
  [
    'maintenance-url',
    ['RACKSIDE_MAINTENANCE_URL'],
    'none',
    "a maintenance's page in the portal, {{name}} for its name: the silence's comment links it",
  ],
  [
    'webhook-port',
    ['RACKSIDE_OPERATOR_WEBHOOK_PORT'],
    '0',
    'serve the MachineReclaim admission webhook (0: not served)',
  ],
  [
    'webhook-host',
    ['RACKSIDE_OPERATOR_WEBHOOK_HOST'],
    '0.0.0.0',
    'webhook listen address',
  ],
  [
    'webhook-cert-file',
    ['RACKSIDE_OPERATOR_WEBHOOK_CERT_FILE'],
    'self-signed',
    'PEM serving certificate',
  ],
  [
    'webhook-key-file',
    ['RACKSIDE_OPERATOR_WEBHOOK_KEY_FILE'],
    'self-signed',
    'PEM serving key',
  ],
  [
    'webhook-cert-hosts',
    ['RACKSIDE_OPERATOR_WEBHOOK_CERT_HOSTS'],
    '127.0.0.1,localhost,<hostname>',
    'SANs of the self-signed certificate, comma-separated',
  ],
  [
    'webhook-ca-out',
    ['RACKSIDE_OPERATOR_WEBHOOK_CA_OUT'],
    'none',
    'file the self-signed CA is written to',
  ],
] as const satisfies readonly (readonly [
  string,
  readonly string[],
  string,
  string,
])[];

type FlagName = (typeof OPTIONS)[number][0];

/** The usage text printed with `--help` and with every flag error. */
export function usage(): string {
  const width = Math.max(...OPTIONS.map(([name]) => name.length)) + 2;
  const lines = OPTIONS.map(
    ([name, vars, fallback, what]) =>
      `  --${name.padEnd(width)}${what}\n  ${' '.repeat(width + 2)}(${vars.join(
        ', ',
      )}; default ${fallback})`,
  );
  return [
    'usage: rackside-operator [--flag value | --flag=value]...',
    '',
    'Flags win over the environment. Durations take a unit: 500ms, 30s, 5m, 12h, 7d (or 1h30m).',
    '',
    ...lines,
    '  --version      prints the version and exits',
    '  --help, -h',
  ].join('\n');
}

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** A duration like `7d`, `12h`, `30s`, `500ms` or `1h30m`, in milliseconds; undefined if malformed. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const [, amount, , unit] of trimmed.matchAll(
    /(\d+(\.\d+)?)(ms|s|m|h|d)/g,
  )) {
    total += Number(amount) * UNIT_MS[unit];
  }
  return total > 0 && Number.isFinite(total) ? Math.round(total) : undefined;
}

/**
 * Reads the configuration; flags win over the environment. Throws {@link ConfigError} for
 * an unknown or malformed flag (node's `parseArgs`, strict) or a bad value, and
 * {@link HelpRequested} for `--help`.
 */
export function readConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): OperatorConfig {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(
          OPTIONS.map(([name]) => [name, { type: 'string' as const }]),
        ),
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
    });
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const values = parsed.values as Partial<Record<FlagName, string>> & {
    help?: boolean;
    version?: boolean;
  };
  if (values.help) throw new HelpRequested();
  if (values.version) throw new VersionRequested();

  const row = (flag: FlagName) => OPTIONS.find(([name]) => name === flag)!;
  /** The flag's value, else the first of its variables that is set (and not empty). */
  const text = (flag: FlagName): string | undefined => {
    const given = values[flag];
    if (given !== undefined) {
      if (given.trim() === '') throw new ConfigError(`--${flag} is empty`);
      return given;
    }
    for (const variable of row(flag)[1]) {
      if (env[variable]) return env[variable];
    }
    return undefined;
  };
  const integer = (flag: FlagName, fallback: number, min = 1) => {
    const value = text(flag);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) {
      throw new ConfigError(
        `--${flag} must be ${
          min === 0 ? 'a whole number' : 'a positive integer'
        }, got "${value}"`,
      );
    }
    return n;
  };
  const duration = (flag: FlagName, fallback: string) => {
    const value = text(flag) ?? fallback;
    const ms = parseDuration(value);
    if (ms === undefined) {
      throw new ConfigError(
        `--${flag} must be a duration with a unit (e.g. 30s, 12h, 7d), got "${value}"`,
      );
    }
    return ms;
  };

  const webhookPort = integer('webhook-port', 0, 0);
  if (webhookPort > 65535) {
    throw new ConfigError(
      `--webhook-port must be 0 (off) to 65535, got "${webhookPort}"`,
    );
  }
  const probePort = integer('probe-port', 8081);
  if (probePort > 65535) {
    throw new ConfigError(`--probe-port must be 1 to 65535, got ${probePort}`);
  }
  const reclaimMaxTtlSeconds = integer('reclaim-max-ttl-seconds', 3600);
  if (reclaimMaxTtlSeconds > 3600) {
    throw new ConfigError(
      `--reclaim-max-ttl-seconds must be at most 3600 seconds (the 60 minutes a MachineReclaim may ask for), got ${reclaimMaxTtlSeconds}`,
    );
  }
  const leaderElection = {
    leaseDurationMs: duration('lease-duration', '15s'),
    renewDeadlineMs: duration('renew-deadline', '10s'),
    retryPeriodMs: duration('retry-period', '2s'),
  };
  // The order that makes overlap impossible: a leader gives up (renew deadline) before a
  // standby may take the Lease (lease duration), and gets more than one try before that.
  if (leaderElection.renewDeadlineMs >= leaderElection.leaseDurationMs) {
    throw new ConfigError(
      `--renew-deadline (${leaderElection.renewDeadlineMs} ms) must be shorter than --lease-duration (${leaderElection.leaseDurationMs} ms)`,
    );
  }
  if (leaderElection.retryPeriodMs >= leaderElection.renewDeadlineMs) {
    throw new ConfigError(
      `--retry-period (${leaderElection.retryPeriodMs} ms) must be shorter than --renew-deadline (${leaderElection.renewDeadlineMs} ms)`,
    );
  }
  const logFormat = text('log-format') ?? 'json';
  if (!LOG_FORMATS.includes(logFormat as LogFormat)) {
    throw new ConfigError(
      `--log-format must be json or text, got "${logFormat}"`,
    );
  }
  const logLevel = text('log-level') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
    throw new ConfigError(
      `--log-level must be debug, info, warn or error, got "${logLevel}"`,
    );
  }
  const certHosts = text('webhook-cert-hosts');
  const planGateReads = (text('plan-gate-reads') ?? '')
    .split(',')
    .map(r => r.trim())
    .filter(Boolean);
  const alerting = readAlerting(text, duration);
  const firmwareSources = (text('firmware-sources') ?? '')
    .split(',')
    .map(s => s.trim())
    .filter(Boolean);
  const notOrigins = firmwareSources.filter(s => !parseFirmwareSource(s));
  if (notOrigins.length) {
    throw new ConfigError(
      `--firmware-sources: not an https origin (https://host[:port], nothing after it): ${notOrigins
        .map(s => `"${s}"`)
        .join(', ')}`,
    );
  }
  const firmwareChecksumRequired = (
    text('firmware-sources-requiring-checksum') ?? ''
  )
    .split(',')
    .map(s => s.trim())
    .filter(Boolean);
  const notChecksumOrigins = firmwareChecksumRequired.filter(
    s => !parseFirmwareSource(s),
  );
  if (notChecksumOrigins.length) {
    throw new ConfigError(
      `--firmware-sources-requiring-checksum: not an https origin (https://host[:port], nothing after it): ${notChecksumOrigins
        .map(s => `"${s}"`)
        .join(', ')}`,
    );
  }
  const firmwareSourceCredentialsSecret = text(
    'firmware-source-credentials-secret',
  );
  if (
    firmwareSourceCredentialsSecret !== undefined &&
    !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(
      firmwareSourceCredentialsSecret,
    )
  ) {
    throw new ConfigError(
      `--firmware-source-credentials-secret: not a Secret name: "${firmwareSourceCredentialsSecret}"`,
    );
  }
  const talosImagePrefixes = (text('talos-image-prefixes') ?? '')
    .split(',')
    .map(p => p.trim())
    .filter(Boolean);
  const unreadable = talosImagePrefixes.filter(p => !isImagePrefix(p));
  if (unreadable.length) {
    throw new ConfigError(
      `--talos-image-prefixes: not an image reference prefix (a registry, then repository components, ending with / for any repository below or naming one repository): ${unreadable
        .map(p => `"${p}"`)
        .join(', ')}`,
    );
  }
  return {
    ...(alerting ? { alerting } : {}),
    kubeconfig: text('kubeconfig'),
    namespace: text('namespace') ?? 'rackside-system',
    probePort,
    workers: integer('workers', 4),
    identity: text('identity') ?? `${os.hostname()}-${process.pid}`,
    nodeName: text('node-name'),
    rebootDeadlineSeconds: integer('reboot-deadline-seconds', 900),
    unansweredDeadlineSeconds: integer('unanswered-deadline-seconds', 300),
    talosImagePrefixes,
    // A source that requires a checksum is an allowed source too.
    firmwareSources: [
      ...new Set([...firmwareSources, ...firmwareChecksumRequired]),
    ],
    firmwareChecksumRequired,
    firmwareSourceCredentialsSecret,
    firmwareSourcesCaFile: text('firmware-sources-ca-file'),
    upgradeDeadlineSeconds: integer('upgrade-deadline-seconds', 1800),
    reclaimMaintenanceWaitSeconds: integer(
      'reclaim-maintenance-wait-seconds',
      600,
    ),
    reclaimMaxTtlSeconds,
    reclaimReconcileTimeoutSeconds: integer(
      'reclaim-reconcile-timeout-seconds',
      120,
    ),
    joinTimeoutSeconds: integer('join-timeout-seconds', 900),
    leaderElection,
    retentionMs: duration('retention', '7d'),
    healthIntervalMs: duration('health-interval', '15m'),
    healthConcurrency: integer('health-concurrency', 4),
    healthFullIntervalMs: duration('health-full-interval', '12h'),
    healthReadingDeadlineMs: duration('health-reading-deadline', '60s'),
    logFormat: logFormat as LogFormat,
    logLevel: logLevel as LogLevel,
    planGateReads,
    webhook: {
      // Off unless asked for: two operators on one host (tests, a demo) must not collide.
      port: webhookPort,
      host: text('webhook-host') ?? '0.0.0.0',
      certFile: text('webhook-cert-file'),
      keyFile: text('webhook-key-file'),
      certHosts: certHosts
        ? certHosts
            .split(',')
            .map(h => h.trim())
            .filter(Boolean)
        : ['127.0.0.1', 'localhost', os.hostname()],
      caOut: text('webhook-ca-out'),
    },
  };
}

/** The Alertmanager flags; undefined without `--alertmanager-url`. */
function readAlerting(
  text: (flag: FlagName) => string | undefined,
  duration: (flag: FlagName, fallback: string) => number,
): AlertingConfig | undefined {
  const url = text('alertmanager-url');
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`--alertmanager-url is not a URL: "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`--alertmanager-url must be http(s), got "${url}"`);
  }
  if (parsed.username || parsed.password) {
    throw new ConfigError(
      '--alertmanager-url carries user info: give --alertmanager-token-file instead',
    );
  }
  const matchers = (
    text('alert-matchers') ?? DEFAULT_NODE_ALERT_MATCHERS.join(';')
  )
    .split(';')
    .map(m => m.trim())
    .filter(Boolean);
  try {
    validateAlertMatcherTemplates(matchers);
  } catch (error) {
    throw new ConfigError(`--alert-matchers: ${(error as Error).message}`);
  }
  const silenceLeaseMs = duration('silence-lease', '30m');
  const silenceRenewMs = duration('silence-renew', '10m');
  if (silenceRenewMs >= silenceLeaseMs) {
    throw new ConfigError(
      `--silence-renew (${silenceRenewMs} ms) must be shorter than --silence-lease (${silenceLeaseMs} ms)`,
    );
  }
  const silenceMaxMs = duration('silence-max', '24h');
  if (silenceMaxMs < silenceLeaseMs) {
    throw new ConfigError(
      `--silence-max (${silenceMaxMs} ms) must be at least --silence-lease (${silenceLeaseMs} ms)`,
    );
  }
  const maintenanceUrl = text('maintenance-url');
  if (maintenanceUrl !== undefined) {
    const example = maintenanceUrl.replace(/\{\{name\}\}/g, 'm');
    if (
      !maintenanceUrl.includes('{{name}}') ||
      !/^https?:\/\/[^\s]+$/.test(example) ||
      !URL.canParse(example)
    ) {
      throw new ConfigError(
        `--maintenance-url must be an http(s) URL with {{name}} where the maintenance's name goes, got "${maintenanceUrl}"`,
      );
    }
  }
  return {
    ...(maintenanceUrl !== undefined ? { maintenanceUrl } : {}),
    url,
    caFile: text('alertmanager-ca-file'),
    tokenFile: text('alertmanager-token-file'),
    matchers,
    silenceLeaseMs,
    silenceRenewMs,
    silenceMaxMs,
    returnGraceMs: duration('return-grace', '5m'),
  };
}
