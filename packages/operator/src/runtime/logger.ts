/*
 * The operator's log: JSON lines with a level (pino), which log collectors index, or
 * `--log-format text` for people: `<time> <LEVEL> rackside-operator: <message> key=value...`.
 * Lines about an object carry the same fields (kind, name, namespace, phase, reason), so a
 * collector can follow one object or find every error; `--log-level` drops what is below
 * it. Writes are synchronous so the last lines before an exit (a lost lease, a fatal error)
 * are not lost.
 */
import pino from 'pino';

export type LogFormat = 'json' | 'text';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'text'];

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS: readonly LogLevel[] = [
  'debug',
  'info',
  'warn',
  'error',
];

/** What a line is about: the object, where its lifecycle stands, and why. */
export interface LogFields {
  kind?: string;
  name?: string;
  namespace?: string;
  phase?: string;
  reason?: string;
  [key: string]: string | number | boolean | undefined;
}

/**
 * How the operator's parts write a line: a message and, for lines about an object, its
 * fields; `level` defaults to info.
 */
export type OperatorLog = (
  message: string,
  fields?: LogFields & { level?: LogLevel },
) => void;

export interface OperatorLogger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** The same logger as an {@link OperatorLog}. */
  log: OperatorLog;
}

export function createLogger(
  format: LogFormat,
  options: {
    identity?: string;
    /** Lines below it are dropped (default info). */
    level?: LogLevel;
    /** Where lines go (tests); stdout by default. */
    out?: { write(line: string): void };
  } = {},
): OperatorLogger {
  const out = options.out;
  const text = {
    write(line: string) {
      const { time, level, msg, component, identity, ...fields } =
        JSON.parse(line);
      const extra = Object.entries(fields)
        .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
        .join(' ');
      const rendered = `${time} ${String(level)
        .toUpperCase()
        .padEnd(5)} ${component}: ${msg}${extra ? ` ${extra}` : ''}\n`;
      if (out) out.write(rendered);
      else process.stdout.write(rendered);
    },
  };
  const destination =
    format === 'text' ? text : out ?? pino.destination({ dest: 1, sync: true });
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: {
        component: 'rackside-operator',
        ...(options.identity ? { identity: options.identity } : {}),
      },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: label => ({ level: label }) },
    },
    destination,
  );
  const write = (level: LogLevel, message: string, fields?: LogFields) => {
    const defined = fields
      ? Object.fromEntries(
          Object.entries(fields).filter(([, value]) => value !== undefined),
        )
      : undefined;
    if (defined && Object.keys(defined).length > 0)
      logger[level](defined, message);
    else logger[level](message);
  };
  return {
    debug: (message, fields) => write('debug', message, fields),
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
    log: (message, fields) => {
      const { level = 'info', ...rest } = fields ?? {};
      write(level, message, rest);
    },
  };
}

/**
 * The fields of a reconcile that failed: the object's key (`namespace/name` or `name`),
 * its phase when known, and the reason the apiserver gave (Conflict, Forbidden, ...) or
 * the error's name.
 */
export function reconcileErrorFields(
  kind: string,
  key: string,
  error: unknown,
  phase?: string,
): LogFields & { level: LogLevel } {
  const slash = key.indexOf('/');
  return {
    level: 'error',
    kind,
    name: slash >= 0 ? key.slice(slash + 1) : key,
    namespace: slash >= 0 ? key.slice(0, slash) : undefined,
    phase,
    reason: errorReason(error),
  };
}

function errorReason(error: unknown): string {
  if (error && typeof error === 'object') {
    // KubeApiError (servers-node) carries the apiserver's Status; client-node's
    // ApiException its body.
    const status = (error as { status?: unknown }).status;
    const body = (error as { body?: unknown }).body;
    for (const candidate of [
      status,
      typeof body === 'string' ? safeJson(body) : body,
    ]) {
      const reason = (candidate as { reason?: unknown } | undefined)?.reason;
      if (typeof reason === 'string' && reason) return reason;
    }
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && name && name !== 'Error') return name;
  }
  return 'ReconcileError';
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
