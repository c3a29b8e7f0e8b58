// A headless portal on a rack of its own, for rack tests that call the servers backend over
// HTTP as several users: the simulated rack (startRack), what scripts/demo-access.mjs sets up
// on it (CRDs, the operator's and the backend's ServiceAccounts and roles, the chart's
// admission policies, the Redfish PowerProvider and ServerBMCs), the operator and the demo
// backend (packages/backend) run from source. No app bundle is built or needed: the tests
// speak to /api/servers with users' tokens. Plain ESM, Node 24.
//
//   const portal = await startRackPortal({ configs: [file], net, log });
//   portal.baseUrl                     // http://localhost:PORT (a free port)
//   await portal.tokenOf('user:default/engineer')  // that user's Backstage token (guest sign-in)
//   await portal.api(token, 'POST', '/clusters/plant-a/...', body)  // {status, body} (body parsed)
//   portal.kubectl(...args), portal.getJson(...args)  // admin kubeconfig
//   await portal.machineCounts(node)   // what the node's machine received (Talos emulator counts)
//   await portal.stopOperator({ signal: 'SIGKILL' }); await portal.startOperator();  // a crash, a restart
//   await portal.stop();
//
// Users sign in through the guest provider's API, as the browser does; the provider reads
// auth.providers.guest.userEntityRef at each sign-in from a config file of this helper that
// the backend watches, so tokenOf rewrites it and waits until the provider signs the new user
// in (the approach of e2e/tests/servers-mcp.e2e.mjs). Earlier tokens stay valid.
//
// The rack network (`net`, or the first free one of 160..189) is claimed in
// ~/.cache/rackside/nets, as the Jest rack tests and the browser harness claim theirs, so
// two racks never share addresses.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { binaries, startRack } from '../rack.mjs';
import { claimNetIn } from './net.mjs';

const ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../..',
);
const require = createRequire(import.meta.url);
const sleep = ms => new Promise(r => setTimeout(r, ms));

/** Polls `fn` until it answers something truthy; fails naming `what` after `timeoutMs`. */
export async function eventually(
  what,
  fn,
  { timeoutMs = 60_000, everyMs = 500 } = {},
) {
  const deadline = performance.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (performance.now() > deadline) {
      assert.fail(
        `${what}: not reached in ${timeoutMs} ms${
          last ? ` (last error: ${last.message})` : ''
        }`,
      );
    }
    await sleep(everyMs);
  }
}

/**
 * A rack network no live process holds: `net` when given, else the first free one of
 * 160..189 (the plan in e2e/rack/lib/net.mjs).
 */
function claimNet(net) {
  return net === undefined ? claimNetIn(160, 189) : claimNetIn(net, net);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The last `n` lines of a log file. */
function tailOf(file, n = 60) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-n).join('\n');
  } catch (error) {
    return `(no log: ${error.code ?? error.message})`;
  }
}

/**
 * Runs a backend-role package as `backstage-cli package start` does, without its file
 * watcher (others edit this tree; a restart mid-test would be a test of its own): node with
 * the CLI's TypeScript transform, `src/index` in the package's directory, in a process group
 * of its own, output appended to `logFile`.
 */
function spawnPackage(pkgDir, args, { env, logFile }) {
  const transform = require.resolve(
    '@backstage/cli-node/config/nodeTransform.cjs',
    { paths: [ROOT] },
  );
  const out = fs.openSync(logFile, 'a');
  const child = spawn(
    process.execPath,
    ['--enable-source-maps', '--require', transform, 'src/index', ...args],
    {
      cwd: path.join(ROOT, pkgDir),
      env: { ...process.env, ...env },
      stdio: ['ignore', out, out],
      detached: true,
    },
  );
  fs.closeSync(out);
  return child;
}

/**
 * `signal` (SIGTERM unless given) to a process group, SIGKILL after 15 s; resolves when its
 * leader has exited.
 */
async function stopGroup(child, signal = 'SIGTERM') {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise(r => child.once('exit', r));
  try {
    process.kill(-child.pid, signal);
  } catch {
    return;
  }
  const done = await Promise.race([
    exited.then(() => true),
    sleep(15_000).then(() => false),
  ]);
  if (!done) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
    await exited;
  }
}

/** Fails with the end of the log when the child has exited. */
function checkAlive(child, name, logFile) {
  if (child.exitCode !== null || child.signalCode !== null) {
    throw new Error(
      `${name} exited (code ${child.exitCode}, signal ${
        child.signalCode
      }):\n${tailOf(logFile)}`,
    );
  }
}

/** The `sub` of a Backstage token (a JWT). */
export const subjectOf = token =>
  JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sub;

/**
 * Starts the rack, the operator and the backend. `configs` are app-config files read after
 * the demo's and the rack's (later files win: a list replaces, an object merges).
 */
export async function startRackPortal({
  configs = [],
  net: rackNet,
  log = () => {},
} = {}) {
  const claim = claimNet(rackNet);
  const port = await freePort();
  const baseUrl = `http://localhost:${port}`;
  const workDir = fs.mkdtempSync(
    path.join(os.tmpdir(), 'rackside-rack-portal-'),
  );
  const rackDir = path.join(workDir, 'rack');
  const logs = path.join(workDir, 'logs');
  fs.mkdirSync(logs, { recursive: true });
  const operatorLog = path.join(logs, 'operator.log');
  const backendLog = path.join(logs, 'backend.log');
  let rack;
  let operator;
  let backend;
  let failed = false;

  const stop = async () => {
    await stopGroup(backend);
    await stopGroup(operator);
    await rack?.stop();
    claim.release();
    if (failed || process.env.RACKSIDE_E2E_KEEP === '1')
      log(`rack portal: kept ${workDir}`);
    else fs.rmSync(workDir, { recursive: true, force: true });
  };

  const rackInfo = () =>
    JSON.parse(fs.readFileSync(path.join(rackDir, 'rack.json'), 'utf8'));

  const startOperator = async () => {
    const webhookCa = path.join(rackDir, 'webhook-ca.crt');
    fs.rmSync(webhookCa, { force: true });
    operator = spawnPackage('packages/operator', [], {
      env: {
        NODE_ENV: 'development',
        KUBECONFIG: path.join(rackDir, 'operator.kubeconfig'),
        RACKSIDE_OPERATOR_NAMESPACE: 'rackside-system',
        RACKSIDE_OPERATOR_PROBE_PORT: String(probePort),
        // The reclaim webhook listens (nothing here registers it: no test of this rack
        // reclaims a machine).
        RACKSIDE_OPERATOR_WEBHOOK_PORT: String(webhookPort),
        RACKSIDE_OPERATOR_WEBHOOK_HOST: '127.0.0.1',
        RACKSIDE_OPERATOR_WEBHOOK_CA_OUT: webhookCa,
        ...(rackInfo().alertmanager?.url
          ? { RACKSIDE_ALERTMANAGER_URL: rackInfo().alertmanager.url }
          : {}),
      },
      logFile: operatorLog,
    });
    const child = operator;
    await eventually(
      'the operator is ready (/readyz)',
      async () => {
        checkAlive(child, 'the operator', operatorLog);
        const res = await fetch(`http://127.0.0.1:${probePort}/readyz`);
        return res.ok;
      },
      { timeoutMs: 180_000, everyMs: 1000 },
    );
  };
  let probePort;
  let webhookPort;

  try {
    log(`rack portal: starting the rack in ${rackDir} (net ${claim.net})`);
    rack = await startRack({ dir: rackDir, net: claim.net, log });
    const rackConfig = path.join(workDir, 'app-config.rack.yaml');
    execFileSync(
      process.execPath,
      [path.join(ROOT, 'scripts/demo-access.mjs'), rackDir, rackConfig],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );

    probePort = await freePort();
    webhookPort = await freePort();
    log('rack portal: starting the operator');
    await startOperator();

    const guestConfig = path.join(workDir, 'app-config.guest.yaml');
    const writeGuest = userRef =>
      fs.writeFileSync(
        guestConfig,
        `auth:\n  providers:\n    guest:\n      userEntityRef: ${userRef}\n`,
      );
    writeGuest('user:default/guest');
    const portConfig = path.join(workDir, 'app-config.port.yaml');
    fs.writeFileSync(
      portConfig,
      [
        'app:',
        `  baseUrl: ${baseUrl}`,
        // The app bundle (packages/app/dist) is the browser tests' and may be served by
        // their backend at the same time: this one never writes its config into it.
        '  disableConfigInjection: true',
        '  disableStaticFallbackCache: true',
        'backend:',
        `  baseUrl: ${baseUrl}`,
        '  listen:',
        `    port: ${port}`,
        '',
      ].join('\n'),
    );
    log(`rack portal: starting the backend at ${baseUrl}`);
    backend = spawnPackage(
      'packages/backend',
      [
        path.join(ROOT, 'app-config.yaml'),
        rackConfig,
        portConfig,
        guestConfig,
        ...configs,
      ].flatMap(f => ['--config', f]),
      { env: { NODE_ENV: 'development' }, logFile: backendLog },
    );
    await eventually(
      'the servers backend answers /api/servers/health',
      async () => {
        checkAlive(backend, 'the backend', backendLog);
        const res = await fetch(`${baseUrl}/api/servers/health`);
        return res.ok;
      },
      { timeoutMs: 300_000, everyMs: 1000 },
    );

    const kubectlBin = binaries().kubectl;
    const kubectl = (...args) =>
      execFileSync(kubectlBin, ['--kubeconfig', rack.kubeconfig, ...args], {
        encoding: 'utf8',
      });
    const getJson = (...args) =>
      JSON.parse(kubectl('get', ...args, '-o', 'json'));

    const guestToken = async () => {
      const res = await fetch(`${baseUrl}/api/auth/guest/refresh`, {
        headers: { 'x-requested-with': 'XMLHttpRequest' },
      });
      if (!res.ok) return undefined;
      return (await res.json()).backstageIdentity.token;
    };

    /** The token of `userRef`, once the provider signs them in and the catalog knows them. */
    const tokenOf = async userRef => {
      writeGuest(userRef);
      const [, namespace, name] = userRef.match(/^user:([\w-]+)\/(.+)$/);
      return eventually(
        `the guest provider signs in ${userRef}, known to the catalog`,
        async () => {
          checkAlive(backend, 'the backend', backendLog);
          const token = await guestToken();
          if (!token || subjectOf(token) !== userRef) {
            // The backend's config watcher may miss a write that lands while it is still
            // reloading the previous one: write it again until the provider follows.
            writeGuest(userRef);
            return false;
          }
          const res = await fetch(
            `${baseUrl}/api/catalog/entities/by-name/user/${namespace}/${name}`,
            { headers: { authorization: `Bearer ${token}` } },
          );
          return res.ok && token;
        },
        { timeoutMs: 120_000, everyMs: 1000 },
      );
    };

    /** A call of the servers API: `{status, body}`, the body parsed when it is JSON. */
    const api = async (token, method, route, body) => {
      const res = await fetch(`${baseUrl}/api/servers${route}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: parsed };
    };

    return {
      baseUrl,
      rack,
      rackDir,
      logs,
      kubectl,
      getJson,
      tokenOf,
      api,
      rackInfo,
      /** What the node's machine received: `{reboot, shutdown, powerOff, powerOn, ...}`. */
      async machineCounts(node) {
        const machine = rackInfo().machines.find(m => m.node === node);
        assert.ok(machine, `the rack has a machine behind ${node}`);
        const res = await fetch(`${rackInfo().talos.controlUrl}/counts`);
        assert.equal(res.status, 200, 'the Talos emulator answers /counts');
        const all = await res.json();
        return {
          reboot: 0,
          shutdown: 0,
          powerOff: 0,
          powerOn: 0,
          ...all[machine.uuid],
        };
      },
      /**
       * Stops the operator process: SIGTERM as a rollout would (it hands its Lease over),
       * or SIGKILL as a crash would (the next one waits for the Lease to lapse).
       */
      stopOperator: ({ signal = 'SIGTERM' } = {}) =>
        stopGroup(operator, signal),
      /** Starts it again and waits until it is ready. */
      startOperator,
      operatorLog: () => tailOf(operatorLog, 200),
      backendLog: () => tailOf(backendLog, 200),
      /** Keep the logs of a run that failed. */
      keepLogs: () => {
        failed = true;
      },
      stop,
    };
  } catch (error) {
    failed = true;
    log(`rack portal: logs in ${logs}`);
    await stop();
    throw error;
  }
}
