#!/usr/bin/env node
// BMC requests of the operator's health sweep: the HTTP requests one reading makes against
// a DMTF mockup BMC (public-rackmount1 served by MockupBmc of servers-node's testing entry
// point, with and without `$expand`), counted by the BMC itself, and what the default sweep (a summary every
// 15 minutes, a full reading every 12 hours or when the summary's rollup changed) costs each
// server per hour, beside a 5-second UI poll's 720. The last line is the figure.
//
//   node bench/bmc-health-requests.mjs
//   node bench/bmc-health-requests.mjs --interval-minutes 5 --full-interval-hours 6
//   node bench/bmc-health-requests.mjs --quick     # the same (it takes seconds)
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { log, parseFlags, ROOT, runBench } from './lib/common.mjs';

const require = createRequire(import.meta.url);
const USAGE =
  'usage: node bench/bmc-health-requests.mjs [--interval-minutes M] [--full-interval-hours H]';
const FLAGS = {
  quick: {
    type: 'boolean',
    default: false,
    help: 'the same run (it is quick)',
  },
  intervalMinutes: {
    type: 'number',
    default: 15,
    help: 'the sweep interval (--health-interval, 15)',
  },
  fullIntervalHours: {
    type: 'number',
    default: 12,
    help: 'a full reading at least this often (--health-full-interval, 12)',
  },
};
const UI_POLL_PER_HOUR = 3600 / 5;
const GOAL_PER_HOUR = 12;

runBench(
  'bmc-health-requests',
  async () => {
    const flags = parseFlags(process.argv.slice(2), FLAGS, USAGE);
    const transform = require.resolve(
      '@backstage/cli/config/nodeTransform.cjs',
      { paths: [ROOT] },
    );
    const worker = spawnSync(
      process.execPath,
      [
        '--require',
        transform,
        path.join(ROOT, 'bench/lib/bmcHealthWorker.cjs'),
      ],
      { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
    );
    if (worker.status !== 0) {
      throw new Error(`worker failed: ${worker.stderr || worker.error}`);
    }
    const result = JSON.parse(worker.stdout.trim().split('\n').pop());
    const sweepsPerHour = 60 / flags.intervalMinutes;
    const sweepsPerFull = Math.max(
      1,
      Math.round((flags.fullIntervalHours * 60) / flags.intervalMinutes),
    );
    const perHour = r =>
      (((sweepsPerFull - 1) * r.summary.length + r.full.length) /
        sweepsPerFull) *
      sweepsPerHour;
    for (const [name, r] of Object.entries(result)) {
      log(
        `${name}: first reading ${r.first.length} requests (login included), full ${r.full.length}, summary ${r.summary.length}`,
      );
      log(`  full: ${r.full.join(', ')}`);
      log(`  summary: ${r.summary.join(', ')}`);
      log(
        `  every sweep in full instead: ${(
          r.full.length * sweepsPerHour
        ).toFixed(1)} requests/h`,
      );
    }
    const expand = perHour(result.withExpand);
    const noExpand = perHour(result.withoutExpand);
    log(
      `without $expand (members read one by one): ${noExpand.toFixed(
        1,
      )} requests/h per server`,
    );
    log(
      `a BMC session that expires between two sweeps costs 3 more a sweep (the 401, the service root, the new session): +${(
        3 * sweepsPerHour
      ).toFixed(0)}/h; Basic authentication costs nothing more`,
    );
    const verdict = expand <= GOAL_PER_HOUR ? 'within' : 'over';
    process.stdout.write(
      `bmc-health-requests: ${expand.toFixed(
        1,
      )} BMC requests per hour per server at a ${
        flags.intervalMinutes
      }-min sweep (summary ${result.withExpand.summary.length}, full ${
        result.withExpand.full.length
      } every ${
        flags.fullIntervalHours
      } h; goal ${GOAL_PER_HOUR}, ${verdict}), beside a 5-second UI poll's ${UI_POLL_PER_HOUR}\n`,
    );
  },
  { timeoutMinutes: 5 },
);
