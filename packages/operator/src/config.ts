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
    identity:
      flags.get('identity') ??
      env.RACKSIDE_OPERATOR_IDENTITY ??
      env.POD_NAME ??
      `${os.hostname()}-${process.pid}`,
  };
}
