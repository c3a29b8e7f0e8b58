// Shared by the benchmarks: flags, statistics, machine load, and the closing figure line.
// Plain ESM on Node 24, no npm dependencies.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);

export const sleep = ms => new Promise(r => setTimeout(r, ms));

export function log(message) {
  process.stderr.write(
    `[bench ${new Date().toISOString().slice(11, 23)}] ${message}\n`,
  );
}

/**
 * Parses `--name value` and `--flag` arguments against a spec
 * `{name: {type: 'number'|'string'|'boolean', default, help}}`. An unknown flag or a bad
 * number is an error (nothing has started yet).
 */
export function parseFlags(argv, spec, usage) {
  const out = {};
  for (const [name, s] of Object.entries(spec)) out[name] = s.default;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') {
      process.stdout.write(`${usage}\n\n${describeFlags(spec)}\n`);
      process.exit(0);
    }
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(arg);
    const key = m && camel(m[1]);
    if (!m || !(key in spec)) {
      throw new UsageError(`unknown argument ${arg}\n\n${usage}`);
    }
    const s = spec[key];
    if (s.type === 'boolean') {
      out[key] = m[2] === undefined ? true : m[2] !== 'false';
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined)
      throw new UsageError(`--${m[1]} needs a value\n\n${usage}`);
    if (s.type === 'number') {
      const n = Number(value);
      if (!Number.isFinite(n) || n < 0)
        throw new UsageError(
          `--${m[1]} must be a non-negative number, got ${value}`,
        );
      out[key] = n;
    } else out[key] = value;
  }
  return out;
}

function camel(flag) {
  return flag.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());
}

function kebab(name) {
  return name.replace(/[A-Z]/g, c => `-${c.toLowerCase()}`);
}

function describeFlags(spec) {
  return Object.entries(spec)
    .map(
      ([name, s]) =>
        `  --${kebab(name)}${
          s.type === 'boolean' ? '' : ` ${s.type.toUpperCase()}`
        }  ${s.help}${
          s.default !== undefined && s.default !== false
            ? ` (default ${s.default})`
            : ''
        }`,
    )
    .join('\n');
}

export class UsageError extends Error {}

/**
 * A directory for one bench run's own logs (operator, backend, kubectl), outside the rack
 * directory so they survive the rack's removal: $TMPDIR/rackside-bench-logs/NAME-TIME.
 */
export function runLogDir(name) {
  const dir = path.join(
    os.tmpdir(),
    'rackside-bench-logs',
    `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`,
  );
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Nearest-rank percentile of numbers (p in 0..100). */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function summary(values) {
  return {
    n: values.length,
    min: Math.min(...values),
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    max: Math.max(...values),
  };
}

export function ms(value) {
  return `${Math.round(value)} ms`;
}

export function seconds(valueMs) {
  return `${(valueMs / 1000).toFixed(2)} s`;
}

/** Bytes as MB (10^6 bytes, the unit of bench/README.md's goal). */
export function mb(bytes) {
  return `${(bytes / 1e6).toFixed(0)} MB`;
}

/** Runs fn over items with at most `limit` in flight; rejects on the first failure. */
export async function pool(items, limit, fn) {
  let next = 0;
  let failed;
  const workers = Array.from(
    { length: Math.min(limit, items.length) },
    async () => {
      while (next < items.length && !failed) {
        const i = next++;
        try {
          await fn(items[i], i);
        } catch (error) {
          failed ??= error;
        }
      }
    },
  );
  await Promise.all(workers);
  if (failed) throw failed;
}

/** The 1-minute load average, and the machine, for the record. */
export function machine() {
  const [one, five] = fs.readFileSync('/proc/loadavg', 'utf8').split(' ');
  return {
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
    load1: Number(one),
    load5: Number(five),
  };
}

/** Samples the 1-minute load average every few seconds; `stop()` returns min/max/mean. */
export function loadSampler(intervalMs = 5000) {
  const samples = [machine().load1];
  const timer = setInterval(() => samples.push(machine().load1), intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      samples.push(machine().load1);
      return {
        min: Math.min(...samples),
        max: Math.max(...samples),
        mean: samples.reduce((a, b) => a + b, 0) / samples.length,
      };
    },
  };
}

export function describeLoad(load) {
  return `load average (1 min) ${load.min.toFixed(1)}-${load.max.toFixed(
    1,
  )}, mean ${load.mean.toFixed(1)}`;
}

/**
 * Runs a benchmark's main: usage errors exit 2, failures 1; `--timeout-minutes` (or the
 * bench's own bound) ends a run that hangs, after cleaning up.
 */
export function runBench(name, main, { timeoutMinutes }) {
  const cleanups = [];
  let finished = false;
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (error) {
        log(`cleanup: ${error.message}`);
      }
    }
    cleanups.length = 0;
  };
  const onSignal = async sig => {
    if (finished) return;
    finished = true;
    log(`${sig}: cleaning up`);
    await cleanup();
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const ctx = {
    onCleanup: fn => cleanups.push(fn),
    setTimeoutMinutes(minutes) {
      timeoutMinutes = minutes;
      arm();
    },
  };
  let timer;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      if (finished) return;
      finished = true;
      log(`${name}: no result after ${timeoutMinutes} min; giving up`);
      await cleanup();
      process.exit(1);
    }, timeoutMinutes * 60_000);
    timer.unref();
  };
  arm();
  main(ctx).then(
    async () => {
      finished = true;
      clearTimeout(timer);
      await cleanup();
      process.exit(process.exitCode ?? 0);
    },
    async error => {
      finished = true;
      clearTimeout(timer);
      if (error instanceof UsageError) {
        process.stderr.write(`${error.message}\n`);
        await cleanup();
        process.exit(2);
      }
      log(`${name} failed: ${error.stack ?? error}`);
      await cleanup();
      process.exit(1);
    },
  );
}

/**
 * CPU time of every process on the machine, totalled by command name (`/proc/PID/stat`'s
 * comm: kube-apiserver, etcd, kwok, chromium, ...); `stop()` returns the seconds each
 * name used since the start, largest first, and the wall seconds between. Where the
 * cores went during a stretch of a benchmark, so a slow figure can be told apart from a
 * machine busy with something else. Node 24 names every process's main thread
 * `MainThread`, so the backend, the bench and any other Node process would share one
 * name: `roles` names the known ones by pid (`{ [backendPid]: 'backend' }`); the bench's
 * own process is `bench`, any other Node process `node (other)`.
 */
export function processCpuSampler(roles = {}) {
  const names = new Map(
    [[process.pid, 'bench'], ...Object.entries(roles)].map(([pid, name]) => [
      String(pid),
      name,
    ]),
  );
  const nameOf = (pid, comm) => {
    if (names.has(pid)) return names.get(pid);
    if (comm === 'MainThread' || comm === 'node') return 'node (other)';
    // A kernel worker's comm names the work it does now (kworker/u8:1-writeback).
    if (comm.startsWith('kworker/')) return 'kworker';
    return comm;
  };
  const read = () => {
    const out = new Map();
    for (const pid of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      let stat;
      try {
        stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        continue; // gone meanwhile
      }
      const comm = nameOf(
        pid,
        stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      );
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      out.set(pid, { comm, ticks, startedAt: fields[19] });
    }
    return out;
  };
  const start = read();
  const t0 = performance.now();
  return {
    stop() {
      const end = read();
      const byName = new Map();
      for (const [pid, { comm, ticks, startedAt }] of end) {
        // A process started meanwhile (a new pid, or a pid reused: another start
        // time) counts from zero.
        const before = start.get(pid);
        const used =
          ticks - (before?.startedAt === startedAt ? before.ticks : 0);
        if (used > 0) byName.set(comm, (byName.get(comm) ?? 0) + used / 100);
      }
      return {
        wallSeconds: (performance.now() - t0) / 1000,
        byName: [...byName].sort((a, b) => b[1] - a[1]),
      };
    },
  };
}

/** `processCpuSampler().stop()` as one line: the cores used in all and the top names. */
export function describeProcessCpu({ wallSeconds, byName }, top = 6) {
  const all = byName.reduce((sum, [, s]) => sum + s, 0);
  const named = byName
    .slice(0, top)
    .map(([name, s]) => `${name} ${(s / wallSeconds).toFixed(2)}`)
    .join(', ');
  return `${(all / wallSeconds).toFixed(2)} cores busy of ${wallSeconds.toFixed(
    1,
  )} s (${named})`;
}
