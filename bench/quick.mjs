#!/usr/bin/env node
// Every bench's --quick mode, one after another against ONE simulated rack, as a stage of
// the test command: a bench that no longer starts (an operator entrypoint the image no
// longer has, an object the admission policies refuse) fails here instead of on the day
// someone wants its figure. A bench passes when it exits 0 and its last line is its
// figure (what that figure says is not judged: the machine is shared). Prints PASS or
// FAIL per bench, then `N passed, N failed`; exits 1 when one failed.
//
//   node bench/quick.mjs                      # starts a rack, runs them all, stops it
//   node bench/quick.mjs --rack DIR           # on a running rack (left running)
//   node bench/quick.mjs --only drain,plan    # some of them
//
// The benches that need no rack run first; then those that run on the rack's 10 fixture
// nodes; then the scale fixture is grown once (bench/scale.mjs --quick --keep, 200 nodes
// and 2,000 pods) for the ones that need it, so each grows nothing or a little. Each
// bench's own output goes to $TMPDIR/rackside-bench-logs/quick-<time>/<bench>.log.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { log, parseFlags, ROOT, UsageError } from './lib/common.mjs';
import { benchRack } from './lib/rack.mjs';

/**
 * The benches in the order they run: `rack` when it runs on the shared rack (--rack DIR),
 * `figure` the start of its last line, `args` what it is given besides --quick. The args
 * shorten only what is a fixed wait or a repeat count (idle windows, runs, a second size),
 * never a step, so every bench still runs all its code and prints its figure, and the
 * whole stays within a few minutes.
 */
export const QUICK_BENCHES = [
  { name: 'bmc-health-requests', figure: 'bmc-health-requests: ' },
  { name: 'bmc-sweep-memory', figure: 'bmc-sweep-memory: ' },
  { name: 'kube-keepalive', rack: true, figure: 'kube-keepalive: ' },
  {
    name: 'idle-traffic',
    rack: true,
    args: ['--idle-seconds', '10'],
    figure: 'idle traffic over ',
  },
  {
    name: 'drain',
    rack: true,
    args: ['--runs', '1'],
    figure: 'drain of 100 pods, ',
  },
  {
    name: 'scale',
    rack: true,
    // Leaves the grown fixture to the benches after it (the rack stops at the end).
    args: ['--keep'],
    figure: 'scale fixture: ',
  },
  { name: 'operator-memory', rack: true, figure: 'operator (' },
  { name: 'plan', rack: true, figure: 'rolling reboot of ' },
  { name: 'plan-upgrade', rack: true, figure: 'rolling Talos upgrade of ' },
  { name: 'plan-preflight', rack: true, figure: 'plan pre-flight of ' },
  {
    name: 'servers-list',
    rack: true,
    args: ['--sizes', '300', '--idle-seconds', '5'],
    figure: 'servers list at ',
  },
];

const USAGE =
  'usage: node bench/quick.mjs [--rack DIR] [--only NAME,NAME] [--bench-timeout-minutes M]';
const FLAGS = {
  rack: {
    type: 'string',
    help: 'use this running rack instead of starting one',
  },
  only: { type: 'string', help: 'run only these benches (comma-separated)' },
  benchTimeoutMinutes: {
    type: 'number',
    default: 10,
    help: 'a bench still running after this long fails (it is stopped with SIGTERM and cleans up)',
  },
};

/** The last non-empty line of a text. */
export function lastLine(text) {
  const lines = text.split('\n').filter(line => line.trim() !== '');
  return lines.at(-1) ?? '';
}

/** PASS or FAIL of one bench's run, with the reason of a FAIL. */
export function judge(bench, { code, signal, timedOut, stdout }) {
  if (timedOut) return { pass: false, why: 'did not finish in time' };
  if (signal) return { pass: false, why: `killed by ${signal}` };
  if (code !== 0) return { pass: false, why: `exit code ${code}` };
  const last = lastLine(stdout);
  if (!last.startsWith(bench.figure))
    return {
      pass: false,
      why: `its last line is not its figure (${bench.figure.trim()} ...): ${
        last.slice(0, 200) || '(no output)'
      }`,
    };
  return { pass: true, figure: last };
}

function runOne(bench, { rackDir, logDir, timeoutMs }) {
  const args = [
    path.join(ROOT, 'bench', `${bench.name}.mjs`),
    '--quick',
    ...(bench.rack ? ['--rack', rackDir] : []),
    ...(bench.args ?? []),
  ];
  const logFile = path.join(logDir, `${bench.name}.log`);
  const out = fs.createWriteStream(logFile);
  out.write(`$ node ${args.map(a => path.relative(ROOT, a) || a).join(' ')}\n`);
  return new Promise(resolve => {
    const started = Date.now();
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let timedOut = false;
    child.stdout.on('data', chunk => {
      stdout += chunk;
      out.write(chunk);
    });
    child.stderr.on('data', chunk => out.write(chunk));
    // SIGTERM: the bench's own handler stops what it started (runBench); it exits soon.
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 60_000).unref();
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      out.end();
      resolve({
        code,
        signal,
        timedOut,
        stdout,
        ms: Date.now() - started,
        logFile,
      });
    });
  });
}

async function main() {
  let flags;
  try {
    flags = parseFlags(process.argv.slice(2), FLAGS, USAGE);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 2;
  }
  const only = flags.only?.split(',').map(s => s.trim());
  const unknown = only?.filter(n => !QUICK_BENCHES.some(b => b.name === n));
  if (unknown?.length) {
    process.stderr.write(`no bench ${unknown.join(', ')}\n\n${USAGE}\n`);
    return 2;
  }
  const benches = QUICK_BENCHES.filter(b => !only || only.includes(b.name));
  const logDir = path.join(
    os.tmpdir(),
    'rackside-bench-logs',
    `quick-${new Date().toISOString().replace(/[:.]/g, '-')}`,
  );
  fs.mkdirSync(logDir, { recursive: true });

  const started = Date.now();
  let rack;
  const stopRack = async () => {
    const r = rack;
    rack = undefined;
    await r?.stop();
  };
  const onSignal = async sig => {
    log(`${sig}: stopping the rack`);
    await stopRack();
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const results = [];
  let rackFailed = false;
  try {
    if (benches.some(b => b.rack)) {
      // The scale benches' heartbeat: 200 kwok Nodes heartbeating every 20 s are a load
      // of their own on two cores, and no bench here measures heartbeats.
      rack = await benchRack({ rackDir: flags.rack, heartbeatSeconds: 300 });
    }
    for (const bench of benches) {
      log(`${bench.name}: node bench/${bench.name}.mjs --quick`);
      const run = await runOne(bench, {
        rackDir: rack?.dir,
        logDir,
        timeoutMs: flags.benchTimeoutMinutes * 60_000,
      });
      const verdict = judge(bench, run);
      const took = `${(run.ms / 1000).toFixed(0)} s`;
      results.push({ bench, verdict });
      if (verdict.pass) {
        console.log(`PASS ${bench.name} (${took}): ${verdict.figure}`);
      } else {
        console.log(
          `FAIL ${bench.name} (${took}): ${verdict.why}; its output: ${run.logFile}`,
        );
      }
    }
  } catch (error) {
    rackFailed = true;
    console.log(`FAIL the shared rack: ${error.stack ?? error}`);
  } finally {
    await stopRack();
  }
  const passed = results.filter(r => r.verdict.pass).length;
  // A bench that did not run (the rack did not start) counts as failed, and so does the rack.
  const failed =
    results.length -
    passed +
    (benches.length - results.length) +
    (rackFailed ? 1 : 0);
  log(
    `${benches.length} benches in ${((Date.now() - started) / 1000).toFixed(
      0,
    )} s; their output in ${logDir}`,
  );
  console.log(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

// Run as a script (not when a test imports QUICK_BENCHES or judge).
if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    code => process.exit(code),
    error => {
      console.error(error);
      process.exit(1);
    },
  );
}
