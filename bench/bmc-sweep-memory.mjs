#!/usr/bin/env node
// The operator's memory and time during a health sweep of hostile BMCs (issue 45): the
// operator's own sweep (HealthMonitor through RedfishPowerChannel, in a worker process of
// its own) reads 500 fake Redfish BMCs this process serves on loopback, of which 10 answer
// their event log with a 50 MB body and 10 send their headers and then nothing. Each answer
// is refused at its byte cap as it streams (4 MiB for a log page) and a stalled reading is
// given up at the reading deadline, so the peak resident set stays within 64 MB of an idle
// sweep (the same 500 BMCs, all well behaved) and the sweep ends within the time the
// deadline bounds. The last line is the figure.
//
//   node bench/bmc-sweep-memory.mjs
//   node bench/bmc-sweep-memory.mjs --quick   # 50 BMCs, 2 large, 2 stalled (seconds)
import { spawn } from 'node:child_process';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { log, mb, parseFlags, ROOT, runBench, seconds } from './lib/common.mjs';

const require = createRequire(import.meta.url);
const USAGE =
  'usage: node bench/bmc-sweep-memory.mjs [--quick] [--bmcs N] [--large N] [--stalled N] [--large-mb M] [--deadline-seconds S] [--concurrency N]';
const FLAGS = {
  quick: {
    type: 'boolean',
    default: false,
    help: '50 BMCs, 2 large, 2 stalled, a 5 s deadline',
  },
  bmcs: { type: 'number', default: 500, help: 'fake BMCs (500)' },
  large: {
    type: 'number',
    default: 10,
    help: 'BMCs whose event log answer is --large-mb (10)',
  },
  stalled: {
    type: 'number',
    default: 10,
    help: 'BMCs that stall after their headers (10)',
  },
  largeMb: { type: 'number', default: 50, help: 'the large body (50 MB)' },
  deadlineSeconds: {
    type: 'number',
    default: 10,
    help: 'the reading deadline (--health-reading-deadline; 60 s in the operator, 10 s here to keep the run short)',
  },
  concurrency: {
    type: 'number',
    default: 4,
    help: 'BMCs read at once (--health-concurrency, 4)',
  },
};
const GOAL_MB = 64;
const ENTRIES = '/redfish/v1/Systems/1/LogServices/SEL/Entries';

/** A small Redfish service: a system, its chassis, a SEL of 20 entries; no parts, no firmware. */
function resourceAt(p) {
  const id = x => ({ '@odata.id': x });
  switch (p) {
    case '/redfish/v1':
      return { '@odata.id': p, Systems: id('/redfish/v1/Systems') };
    case '/redfish/v1/Systems/1':
      return {
        '@odata.id': p,
        Id: '1',
        Status: { State: 'Enabled', Health: 'OK', HealthRollup: 'OK' },
        Links: { Chassis: [id('/redfish/v1/Chassis/1')] },
        LogServices: id('/redfish/v1/Systems/1/LogServices'),
      };
    case '/redfish/v1/Chassis/1':
      return { '@odata.id': p, Status: { State: 'Enabled', Health: 'OK' } };
    case '/redfish/v1/Systems/1/LogServices':
      return { '@odata.id': p, Members: [id(`${p}/SEL`)] };
    case '/redfish/v1/Systems/1/LogServices/SEL':
      return { '@odata.id': p, Entries: id(ENTRIES) };
    case ENTRIES:
      return {
        '@odata.id': p,
        Members: Array.from({ length: 20 }, (_, i) => ({
          '@odata.id': `${p}/${i}`,
          Id: String(i),
          Created: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
          Severity: 'OK',
          Message: `entry ${i}`,
        })),
      };
    default:
      return undefined;
  }
}

/** Streams `bytes` of a JSON log with back-pressure; stops when the reader goes. */
function streamLarge(res, bytes) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"Members":[');
  const entry = `{"Id":"x","Created":"2026-01-01T00:00:00Z","Message":"${'x'.repeat(
    1000,
  )}"},`;
  let sent = 0;
  let gone = false;
  res.on('close', () => {
    gone = true;
  });
  const more = () => {
    while (!gone && sent < bytes) {
      sent += entry.length;
      if (!res.write(entry)) {
        res.once('drain', more);
        return;
      }
    }
    if (!gone) res.end('{}]}');
  };
  more();
}

/** One fake BMC on its own loopback port: `kind` is ok, large or stalled. */
async function startBmc(kind, largeBytes) {
  const server = http.createServer((req, res) => {
    const p = new URL(req.url, 'http://bmc').pathname.replace(/\/+$/, '');
    if (p === ENTRIES && kind === 'large') {
      streamLarge(res, largeBytes);
      return;
    }
    if (p === ENTRIES && kind === 'stalled') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"Members":[');
      return;
    }
    const json = resourceAt(p);
    res
      .writeHead(json ? 200 : 404, { 'content-type': 'application/json' })
      .end(JSON.stringify(json ?? { error: { message: `${p} not found` } }));
  });
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    kind,
    stop: () => {
      server.closeAllConnections();
      return new Promise(resolve => server.close(resolve));
    },
  };
}

/** One sweep by the operator's HealthMonitor in a worker process of its own. */
function sweep(bmcs, flags) {
  const transform = require.resolve('@backstage/cli/config/nodeTransform.cjs', {
    paths: [ROOT],
  });
  const config = {
    bmcs: bmcs.map((b, i) => ({ name: `bmc-${i}`, url: b.url })),
    concurrency: flags.concurrency,
    deadlineMs: flags.deadlineSeconds * 1000,
    minIntervalMs: 0,
  };
  return new Promise((resolve, reject) => {
    // Asynchronous: this process serves the BMCs while the worker reads them.
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--require',
        transform,
        path.join(ROOT, 'bench/lib/bmcSweepWorker.cjs'),
        JSON.stringify(config),
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 15 * 60_000);
    child.stdout.on('data', d => {
      out += d;
    });
    child.stderr.on('data', d => {
      err += d;
    });
    child.on('exit', code => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`sweep worker exited ${code}: ${err.slice(-2000)}`));
        return;
      }
      resolve(JSON.parse(out.trim().split('\n').pop()));
    });
  });
}

runBench(
  'bmc-sweep-memory',
  async () => {
    const flags = parseFlags(process.argv.slice(2), FLAGS, USAGE);
    if (flags.quick) {
      Object.assign(flags, {
        bmcs: 50,
        large: 2,
        stalled: 2,
        deadlineSeconds: 5,
      });
    }
    if (flags.large + flags.stalled > flags.bmcs) {
      throw new Error('--large and --stalled must add up to at most --bmcs');
    }
    const largeBytes = flags.largeMb * 1000 * 1000;
    const kindOf = i =>
      i < flags.large
        ? 'large'
        : i < flags.large + flags.stalled
        ? 'stalled'
        : 'ok';
    const started = [];
    try {
      const idleBmcs = [];
      for (let i = 0; i < flags.bmcs; i++) {
        idleBmcs.push(await startBmc('ok', largeBytes));
      }
      started.push(...idleBmcs);
      log(`idle sweep: ${flags.bmcs} well-behaved BMCs on loopback`);
      const idle = await sweep(idleBmcs, flags);
      const idleErrors = Object.values(idle.outcomes).filter(o =>
        o.startsWith('error'),
      );
      log(
        `  peak RSS ${mb(idle.peak)} (from ${mb(idle.baseline)}), ${seconds(
          idle.durationMs,
        )}, ${idleErrors.length} errors`,
      );
      if (idleErrors.length > 0) {
        throw new Error(`the idle sweep failed: ${idleErrors[0]}`);
      }
      const hostileBmcs = [];
      for (let i = 0; i < flags.bmcs; i++) {
        hostileBmcs.push(await startBmc(kindOf(i), largeBytes));
      }
      started.push(...hostileBmcs);
      log(
        `hostile sweep: ${flags.large} BMCs answer their log with ${
          flags.largeMb
        } MB, ${flags.stalled} stall after their headers, ${
          flags.bmcs - flags.large - flags.stalled
        } well-behaved; reading deadline ${flags.deadlineSeconds} s, ${
          flags.concurrency
        } at once`,
      );
      const hostile = await sweep(hostileBmcs, flags);
      const outcome = kind =>
        hostileBmcs
          .map((b, i) => [b.kind, hostile.outcomes[`bmc-${i}`] ?? 'none'])
          .filter(([k]) => k === kind)
          .map(([, o]) => o);
      for (const kind of ['large', 'stalled', 'ok']) {
        const list = outcome(kind);
        const errors = list.filter(o => o.startsWith('error'));
        log(
          `  ${kind}: ${list.length - errors.length} read, ${
            errors.length
          } errors${errors[0] ? ` (e.g. ${errors[0].slice(0, 220)})` : ''}`,
        );
      }
      const wrong = [
        ...outcome('large').filter(o => !/larger than the limit/.test(o)),
        ...outcome('stalled').filter(o => !/passed its deadline/.test(o)),
        ...outcome('ok').filter(o => o !== 'read'),
      ];
      // Said, not thrown: the figure is printed either way (before a fix, as after).
      if (wrong.length > 0) {
        log(
          `  ${wrong.length} readings not refused as they should be, e.g. ${wrong[0]}`,
        );
        process.exitCode = 1;
      }
      const growth = hostile.peak - idle.peak;
      // The stalled readings hold their slots until the deadline, `concurrency` at a time.
      const boundMs =
        idle.durationMs +
        Math.ceil(flags.stalled / flags.concurrency) *
          flags.deadlineSeconds *
          1000 +
        5000;
      log(
        `  peak RSS ${mb(hostile.peak)} (from ${mb(
          hostile.baseline,
        )}), ${seconds(hostile.durationMs)}`,
      );
      const memoryVerdict = growth <= GOAL_MB * 1e6 ? 'within' : 'over';
      const timeVerdict = hostile.durationMs <= boundMs ? 'within' : 'over';
      process.stdout.write(
        `bmc-sweep-memory: peak RSS ${mb(hostile.peak)} during a sweep of ${
          flags.bmcs
        } BMCs (${flags.large} answering ${flags.largeMb} MB, ${
          flags.stalled
        } stalled) vs ${mb(idle.peak)} idle: ${growth >= 0 ? '+' : ''}${(
          growth / 1e6
        ).toFixed(
          1,
        )} MB (goal ${GOAL_MB} MB, ${memoryVerdict}); sweep ${seconds(
          hostile.durationMs,
        )} vs ${seconds(boundMs)} the ${
          flags.deadlineSeconds
        } s deadline bounds (${timeVerdict})${
          wrong.length > 0
            ? `; ${wrong.length} large or stalled BMCs not refused`
            : ''
        }\n`,
      );
    } finally {
      await Promise.all(started.map(b => b.stop()));
    }
  },
  { timeoutMinutes: 20 },
);
