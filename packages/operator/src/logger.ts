/*
 * The operator's log: JSON lines with a level (pino), which log collectors index, or
 * `--log-format text` for people: `<time> <LEVEL> rackside-operator: <message>`. Writes
 * are synchronous so the last lines before an exit (a lost lease, a fatal error) are not
 * lost.
 */
import pino from 'pino';

export type LogFormat = 'json' | 'text';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'text'];

export interface OperatorLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export function createLogger(
  format: LogFormat,
  options: {
    identity?: string;
    /** Where lines go (tests); stdout by default. */
    out?: { write(line: string): void };
  } = {},
): OperatorLogger {
  const out = options.out;
  const text = {
    write(line: string) {
      const entry = JSON.parse(line);
      const rendered = `${entry.time} ${String(entry.level)
        .toUpperCase()
        .padEnd(5)} rackside-operator: ${entry.msg}\n`;
      if (out) out.write(rendered);
      else process.stdout.write(rendered);
    },
  };
  const destination =
    format === 'text' ? text : out ?? pino.destination({ dest: 1, sync: true });
  const logger = pino(
    {
      base: {
        component: 'rackside-operator',
        ...(options.identity ? { identity: options.identity } : {}),
      },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: label => ({ level: label }) },
    },
    destination,
  );
  return {
    info: message => logger.info(message),
    warn: message => logger.warn(message),
    error: message => logger.error(message),
  };
}
