// Talos API emulator of the simulated rack (see e2e/rack/talosemu/README.md).
//
//   import { startTalosEmulator } from './lib/talos.mjs';
//   const t = await startTalosEmulator({ dir, net, fixture, kubeconfig, log });
//   t.controlUrl, t.talosconfigs['plant-a'], await t.machines(), await t.counts(), await t.stop();
//
// Builds e2e/rack/talosemu with `go build` into ${RACKSIDE_CACHE}/bin/talosemu-<hash>/ (keyed by
// a hash of its sources, so a change rebuilds and an unchanged tree reuses the binary), spawns
// it in its own process group, records it in DIR/pids/talosemu.pid (so `rack.mjs down` stops
// it) and logs to DIR/logs/talosemu.log. Plain ESM, no npm dependencies.

import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const TALOSEMU_SRC = path.resolve(here, '..', 'talosemu');
export const DEFAULT_FIXTURE = path.resolve(
  here,
  '..',
  'fixture',
  'plant-a.yaml',
);

export function cacheDir() {
  return (
    process.env.RACKSIDE_CACHE || path.join(os.homedir(), '.cache', 'rackside')
  );
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

function sourceHash() {
  const h = crypto.createHash('sha256');
  const files = fs
    .readdirSync(TALOSEMU_SRC)
    .filter(
      f =>
        (f.endsWith('.go') && !f.endsWith('_test.go')) ||
        f === 'go.mod' ||
        f === 'go.sum',
    )
    .sort();
  for (const f of files) {
    h.update(f + '\0');
    h.update(fs.readFileSync(path.join(TALOSEMU_SRC, f)));
  }
  return h.digest('hex').slice(0, 16);
}

function goBinary() {
  for (const c of [
    process.env.GO,
    'go',
    '/usr/local/go/bin/go',
    '/usr/lib/go/bin/go',
  ]) {
    if (!c) continue;
    const r = spawnSync(c, ['version'], { encoding: 'utf8' });
    if (r.status === 0) return c;
  }
  throw new Error('talosemu: no Go toolchain found (set GO=/path/to/go)');
}

/** Builds (or reuses) the emulator binary; returns its path. */
export function buildTalosEmulator({ log = () => {} } = {}) {
  const dir = path.join(cacheDir(), 'bin', `talosemu-${sourceHash()}`);
  const bin = path.join(dir, 'talosemu');
  if (fs.existsSync(bin)) return bin;
  fs.mkdirSync(dir, { recursive: true });
  const tmp = `${bin}.tmp-${process.pid}-${Date.now()}`;
  log(`building talosemu into ${dir} (first build of these sources)`);
  const t0 = Date.now();
  const r = spawnSync(
    goBinary(),
    [
      'build',
      '-trimpath',
      '-buildvcs=false',
      '-ldflags',
      '-s -w',
      '-o',
      tmp,
      '.',
    ],
    {
      cwd: TALOSEMU_SRC,
      env: { ...process.env, CGO_ENABLED: '0' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  if (r.status !== 0) {
    fs.rmSync(tmp, { force: true });
    throw new Error(`talosemu build failed:\n${r.stderr || r.stdout}`);
  }
  fs.renameSync(tmp, bin); // atomic: concurrent builders race harmlessly
  // Drop binaries of older sources (a running emulator keeps its deleted file open).
  for (const d of fs.readdirSync(path.dirname(dir))) {
    if (d.startsWith('talosemu-') && d !== path.basename(dir)) {
      fs.rmSync(path.join(path.dirname(dir), d), {
        recursive: true,
        force: true,
      });
    }
  }
  log(`talosemu built in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  return bin;
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pid, sig) {
  try {
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      /* gone */
    }
  }
}

async function stopPid(pid, timeoutMs = 5000) {
  if (!pid || !isAlive(pid)) return;
  signalGroup(pid, 'SIGTERM');
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(50);
  if (isAlive(pid)) signalGroup(pid, 'SIGKILL');
}

function tail(file, n = 30) {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .slice(-n)
      .join('\n');
  } catch {
    return '';
  }
}

/** Spawns a long-running child in its own process group, logging to DIR/logs/NAME.log. */
export function spawnRecorded(
  dir,
  name,
  bin,
  args,
  { env, recorded = bin } = {},
) {
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'pids'), { recursive: true });
  const logFile = path.join(dir, 'logs', `${name}.log`);
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(bin, args, {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', fd, fd],
    detached: true,
  });
  fs.closeSync(fd);
  if (!child.pid) throw new Error(`could not start ${name} (${bin})`);
  child.unref();
  const pidFile = path.join(dir, 'pids', `${name}.pid`);
  fs.writeFileSync(pidFile, `${child.pid} ${recorded}\n`);
  const entry = { name, pid: child.pid, child, logFile, pidFile, exited: null };
  child.on('exit', (code, sig) => (entry.exited = { code, sig }));
  child.on('error', e => (entry.exited = { error: e.message }));
  // A rack started by a library call must not outlive the Node process.
  const exitHook = () => {
    if (!entry.exited && isAlive(entry.pid)) signalGroup(entry.pid, 'SIGKILL');
  };
  process.once('exit', exitHook);
  entry.stop = async () => {
    process.removeListener('exit', exitHook);
    await stopPid(entry.pid);
    fs.rmSync(pidFile, { force: true });
  };
  entry.check = () => {
    if (entry.exited)
      throw new Error(
        `${name} exited (${JSON.stringify(
          entry.exited,
        )}); last log lines:\n${tail(logFile)}`,
      );
  };
  return entry;
}

async function httpJson(url, { method = 'GET', body } = {}) {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!res.ok)
    throw new Error(
      `${method} ${url}: ${res.status} ${
        typeof data === 'string' ? data : JSON.stringify(data)
      }`,
    );
  return data;
}

/**
 * Starts the emulator for every machine of the fixture.
 * @param {object} o
 * @param {string} o.dir           rack directory (state in DIR/talos, talosconfigs DIR/talos/<cluster>.talosconfig)
 * @param {number} o.net           rack network number (machines on 127.0.<10+net>.<host>:50000)
 * @param {object} [o.fixture]     parsed fixture (written to DIR/talos/fixture.json); else o.fixturePath
 * @param {string} [o.fixturePath] fixture file (YAML or JSON); default e2e/rack/fixture/plant-a.yaml
 * @param {string} [o.kubeconfig]  admin kubeconfig of the rack (Nodes are linked); omit for none
 * @param {object} [o.timing]      {rebootDownMs, resetDownMs, applyDownMs, upgradeDelayMs}
 * @param {string[]} [o.upgradeFails] image references or tags whose Upgrade rolls back
 */
export async function startTalosEmulator({
  dir,
  net = 0,
  fixture,
  fixturePath,
  kubeconfig,
  log = () => {},
  timing = {},
  upgradeFails = [],
} = {}) {
  if (!dir) throw new Error('startTalosEmulator: dir is required');
  dir = path.resolve(dir);
  const stateDir = path.join(dir, 'talos');
  fs.mkdirSync(stateDir, { recursive: true });
  let fx = fixturePath || fixture?.file || DEFAULT_FIXTURE;
  if (fixture && typeof fixture === 'object') {
    fx = path.join(stateDir, 'fixture.json');
    const { workloads, ...rest } = fixture; // eslint-disable-line no-unused-vars
    fs.writeFileSync(fx, JSON.stringify(rest, null, 2));
  }
  const bin = buildTalosEmulator({ log });
  const readyFile = path.join(stateDir, 'talosemu.json');
  fs.rmSync(readyFile, { force: true });
  const args = [
    '--fixture',
    fx,
    '--net',
    String(net),
    '--state-dir',
    stateDir,
    '--control-addr',
    '127.0.0.1:0',
  ];
  if (kubeconfig) args.push('--kubeconfig', kubeconfig);
  if (timing.rebootDownMs != null)
    args.push('--reboot-down', `${timing.rebootDownMs}ms`);
  if (timing.resetDownMs != null)
    args.push('--reset-down', `${timing.resetDownMs}ms`);
  if (timing.applyDownMs != null)
    args.push('--apply-down', `${timing.applyDownMs}ms`);
  if (timing.upgradeDelayMs != null)
    args.push('--upgrade-delay', `${timing.upgradeDelayMs}ms`);
  if (upgradeFails.length) args.push('--upgrade-fails', upgradeFails.join(','));
  const proc = spawnRecorded(dir, 'talosemu', bin, args);
  const deadline = Date.now() + 60000;
  let ready;
  for (;;) {
    proc.check();
    try {
      const r = JSON.parse(fs.readFileSync(readyFile, 'utf8'));
      if (r.pid === proc.pid) {
        ready = r;
        break;
      }
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) {
      await proc.stop();
      throw new Error(
        `talosemu not ready after 60s; last log lines:\n${tail(proc.logFile)}`,
      );
    }
    await sleep(50);
  }
  const controlUrl = ready.controlUrl;
  const talosconfigs = ready.talosconfigs;
  const caFiles = Object.fromEntries(
    Object.keys(talosconfigs).map(c => [c, path.join(stateDir, `${c}-ca.crt`)]),
  );
  log(
    `talosemu: ${ready.machines.length} machines on 127.0.${
      10 + net
    }.x:50000, control ${controlUrl}`,
  );
  return {
    controlUrl,
    stateDir,
    pid: proc.pid,
    logFile: proc.logFile,
    binary: bin,
    talosconfigs,
    caFiles,
    /** Machines as they were at start (uuid, name, nodeName, address, endpoint, mode, cluster, role, bmc). */
    machines: ready.machines,
    /** Current machines from the control API. */
    list: () => httpJson(`${controlUrl}/machines`),
    machine: id => httpJson(`${controlUrl}/machines/${encodeURIComponent(id)}`),
    /** {uuid: {reboot, shutdown, reset, apply, upgrade, powerOn, powerOff}} */
    counts: () => httpJson(`${controlUrl}/counts`),
    power: (id, state) =>
      httpJson(`${controlUrl}/machines/${encodeURIComponent(id)}/power`, {
        method: 'POST',
        body: { state },
      }),
    resetAddress: (id, host) =>
      httpJson(
        `${controlUrl}/machines/${encodeURIComponent(id)}/reset-address`,
        { method: 'POST', body: { host } },
      ),
    /**
     * The Upgrade calls a machine got: {version, staged, count, images, requests: [{image,
     * version, preserve, stage, force, result, from, to, error}]}.
     */
    upgrades: id =>
      httpJson(`${controlUrl}/machines/${encodeURIComponent(id)}/upgrades`),
    /** Sets the version a machine runs (and its Node's osImage): a node already at a target. */
    setVersion: (id, version) =>
      httpJson(`${controlUrl}/machines/${encodeURIComponent(id)}/version`, {
        method: 'POST',
        body: { version },
      }),
    /**
     * Makes the machine's Talos Version answer `version` while its Node's osImage follows the
     * version it runs (two witnesses that disagree); '' clears it.
     */
    setReportedVersion: (id, version) =>
      httpJson(
        `${controlUrl}/machines/${encodeURIComponent(id)}/reported-version`,
        { method: 'PUT', body: { version } },
      ),
    /**
     * Upgrade knobs: {delayMs} (the installer's run before the reboot) and {failing}
     * (replaces the list of image references or tags whose upgrade rolls back).
     */
    setUpgrade: ({ delayMs, failing } = {}) =>
      httpJson(`${controlUrl}/upgrade`, {
        method: 'PUT',
        body: { delayMs, failing },
      }),
    /** Marks one image reference (with '/' or ':') or tag as failing ({fails: false} clears). */
    failUpgrade: (imageOrTag, { fails = true } = {}) =>
      httpJson(`${controlUrl}/upgrade/failing`, {
        method: 'POST',
        body: /[/:]/.test(imageOrTag)
          ? { image: imageOrTag, fails }
          : { tag: imageOrTag, fails },
      }),
    stop: () => proc.stop(),
  };
}
