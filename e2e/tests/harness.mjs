// Browser-test harness: brings up what scripts/demo.sh brings up, but with its
// own rack (own --dir and --net) and with the production app bundle
// (packages/app/dist, from `yarn backstage-cli repo build --all`) served by
// the backend's app-backend on one port, so there is no dev server to wait
// for. Plain ESM, Node 24.
//
//   const portal = await startPortal();   // { baseUrl, net, rackDir, logs, kubectl(...args), getJson(...args), podsOn(node), stop() }
//   startPortal({ offset: 1, user: 'contractor' })  // its own rack and port, 1 above the defaults;
//   sign in as user:default/contractor (the users and groups of examples/org.yaml;
//   what each may do is the permission.rackside policy of app-config.yaml)
//   startPortal({ offset: 23, configs: [file], backendEnv: { NAME: value } })  // more
//   app-config files after the rack's, and environment for the backend
//   startPortal({ backendDir, baseConfigs: [file] })  // another portal's backend package
//   (absolute path) with its own app-config files instead of this repository's; its app
//   bundle is that portal's to build (e2e/portal)
//   startPortal({ installOperator: async ({ rackDir, net, kubeconfig, logs }) => ({ configs, stop }) })
//   // the operator installed the caller's way (e2e/portal: the chart from a registry): the
//   // harness then applies no CRDs, roles, admission policies, power or TalosCluster of its
//   // own (scripts/demo-access.mjs), runs no operator from source and registers no webhook;
//   // `configs` (app-config files: the cluster entry) replace the rack's, `stop()` runs first
//   startPortal({ rackDir, net, installOperator })  // a rack already up (rack.mjs up), which
//   // this portal neither starts nor stops: two portals, one after the other, on one rack
//   ...
//   await portal.stop();
//   const env = portalAndBrowser({ offset: 2 })  // a test file's before/after: env.portal, env.newPage()
//   pickDrainableWorker(portal.kubectl, { among, needPods })  // a worker a drain can empty
//   waitForShopWorkloads(portal)  // the fixture's shop pods scheduled and Running
//   claimRackNet()  // a free rack network (offset 11 and above pass 200): startPortal({ offset, net })
//   runAxe(page), formatViolations(list)  // axe-core on the page: { blocking, other }
//   getJson(portal.kubectl, 'nodes'), podsOn(portal.kubectl, node)  // admin kubeconfig reads
//
// In the browser (playwright-core pages):
//   eventually(what, fn, { timeoutMs, everyMs, retryErrors })  // poll until truthy
//   signIn(page), signInIfAsked(page, ready)   // the guest sign-in
//   const row = await openServersPage(page, portal, node)  // /servers, signed in, the node's row
//   readRow(row), waitForRow(row, what, predicate, opts)   // the row's state: ready, schedulable, maintenance, phase
//   allowEmptyDirEviction(dialog)                  // the action dialog's emptyDir option, new pre-flight
//   apiAsSignedInUser(page, method, url, body)     // the API with the page's user token
//   actWithReason(page, row, { action, node, reason })  // Cordon / Return to service from the row
//   reloadUntil(page, row, what, ready), catalogLinkOf(page, portal, node),
//   refreshedServerTab(page, portal, node), openRowAction(page, row, label),
//   expectAxeClean(page, what, include)
//   waitForRedfishReboot(portal); portal.machineOf(node), portal.machineCounts(uuid)  // the Talos emulator's counts
//
// Environment:
//   RACKSIDE_E2E_NET    rack network number (default 190)
//   RACKSIDE_E2E_PORT   backend/app port (default 7007)
//   RACKSIDE_E2E_BUILD  1 = rebuild packages/app/dist even when it is newer than its sources
//                       (it is rebuilt anyway when missing or stale; ~20 s)
//   RACKSIDE_E2E_KEEP   1 = leave the rack dir (logs) in place after stop()
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { binaries, cacheDir } from '../rack/rack.mjs';
import { claimNetIn, processAlive } from '../rack/lib/net.mjs';

export const ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);
const RACK = path.join(ROOT, 'e2e/rack/rack.mjs');
const require = createRequire(import.meta.url);

/** The rack network and port of a portal at offset 0; each test file takes its own offset. */
const BASE_NET = Number(process.env.RACKSIDE_E2E_NET ?? 190);
const BASE_PORT = Number(process.env.RACKSIDE_E2E_PORT ?? 7007);

const sleep = ms => new Promise(r => setTimeout(r, ms));

function log(msg) {
  process.stderr.write(`harness: ${msg}\n`);
}

/** Spawns a long-running child in its own process group, output to a log file. */
function spawnLogged(cmd, args, { env, logFile, cwd = ROOT }) {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(cmd, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', out, out],
    detached: true,
  });
  fs.closeSync(out);
  return child;
}

/**
 * Runs a backend-role package (packages/backend, packages/operator) as
 * `backstage-cli package start` runs it, minus its file watcher: `node
 * --enable-source-maps --require <node transform> src/index ARGS` in the
 * package's directory (the transform compiles the TypeScript as it loads).
 * The watcher restarts the process whenever a file it loaded changes, which in
 * a tree other people edit is any time: a restart mid-test refuses connections
 * for as long as the new process takes to start, or for good when the edit is
 * half done. Without it the child is the server itself, so its exit is seen.
 */
function spawnPackage(pkgDir, args, { env, logFile }) {
  const transform = require.resolve(
    '@backstage/cli-node/config/nodeTransform.cjs',
    { paths: [ROOT] },
  );
  return spawnLogged(
    process.execPath,
    ['--enable-source-maps', '--require', transform, 'src/index', ...args],
    { env, logFile, cwd: path.resolve(ROOT, pkgDir) },
  );
}

/** The last `n` lines of a log file (what there is of it). */
function tailOf(logFile, n) {
  try {
    return fs.readFileSync(logFile, 'utf8').split('\n').slice(-n).join('\n');
  } catch (error) {
    return `(no log: ${error.code ?? error.message})`;
  }
}

/** Signals a process group and waits (up to 15 s) for its leader to exit. */
async function stopGroup(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise(r => child.once('exit', r));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const done = await Promise.race([
    exited.then(() => true),
    sleep(15000).then(() => false),
  ]);
  if (!done) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

async function waitFor(what, fn, { timeoutMs, child, logFile }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      const tail = logFile ? tailOf(logFile, 60) : '';
      throw new Error(
        `${what}: process exited (code ${child.exitCode}, signal ${child.signalCode})\n${tail}`,
      );
    }
    try {
      if (await fn()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`${what}: timed out`);
    await sleep(1000);
  }
}

/** Newest mtime (ms) of the files under dir, skipping node_modules and dist. */
function newestMtime(dir) {
  let newest = 0;
  if (!fs.existsSync(dir)) return newest;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const p = path.join(dir, entry.name);
    const t = entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs;
    if (t > newest) newest = t;
  }
  return newest;
}

/** The sources the app bundle is built from (the frontend side of the repo). */
const APP_SOURCES = [
  'packages/app',
  'plugins/servers',
  'plugins/servers-common',
  'app-config.yaml',
];

/** Rejects when something (say a running scripts/demo.sh) holds the port. */
function checkPortFree(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', e =>
      reject(
        new Error(
          `port ${port} is in use (${e.code}); stop the demo or set RACKSIDE_E2E_PORT`,
        ),
      ),
    );
    server.listen(port, () => server.close(() => resolve()));
  });
}

/** True when packages/app/dist is missing or older than its sources. */
function appBundleIsStale() {
  const index = path.join(ROOT, 'packages/app/dist/index.html');
  if (!fs.existsSync(index)) return true;
  const built = fs.statSync(index).mtimeMs;
  return APP_SOURCES.some(s => {
    const p = path.join(ROOT, s);
    const t = fs.statSync(p).isDirectory()
      ? newestMtime(p)
      : fs.statSync(p).mtimeMs;
    return t > built;
  });
}

/**
 * Starts a portal on a rack of its own. `offset` moves the rack network and the
 * port above the defaults, so test files run side by side never meet; `net` and
 * `port` set them outright. `user` is who the guest sign-in signs in as.
 */
export async function startPortal(opts = {}) {
  const offset = opts.offset ?? 0;
  const rackNet = Number(opts.net ?? BASE_NET + offset);
  const port = Number(opts.port ?? BASE_PORT + offset);
  const baseUrl = `http://localhost:${port}`;
  await checkPortFree(port);
  holdRackNet(rackNet);
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-e2e-'));
  // rack.mjs wants a fresh dir; opts.rackDir is a rack already up, which this
  // portal neither starts nor stops (give its `net` too).
  const rackDir = opts.rackDir ?? path.join(workDir, 'rack');
  const logs = path.join(workDir, 'logs');
  fs.mkdirSync(logs, { recursive: true });
  const children = [];
  /** What opts.installOperator answered: its stop() runs before the rack goes down. */
  let installed;
  let rackUp = false;
  let stopping = false;
  /** What exited before stop() asked it to: the reports printed when it happened. */
  const deaths = [];
  // A backend (or operator) that goes away mid-test turns every later request
  // into ERR_CONNECTION_REFUSED, which says nothing of why; so say it the
  // moment it happens, with how it ended and the end of its log, and keep the
  // logs (stop() leaves the portal's directory in place).
  const watchExit = (child, name, logFile) => {
    child.once('exit', (code, signal) => {
      if (stopping) return;
      const report = [
        `${name} (pid ${child.pid}) exited while the test ran: code ${code}, signal ${signal}`,
        `last 60 lines of ${logFile}:`,
        tailOf(logFile, 60),
        `--- end of ${name} log`,
      ].join('\n');
      deaths.push(report);
      log(report);
    });
  };

  const stop = async () => {
    stopping = true;
    if (deaths.length > 0) process.env.RACKSIDE_E2E_KEEP = '1';
    for (const c of children.reverse()) await stopGroup(c);
    await installed?.stop?.();
    if (rackUp) {
      spawnSync(process.execPath, [RACK, 'down', '--dir', rackDir], {
        stdio: 'ignore',
      });
    }
    if (process.env.RACKSIDE_E2E_KEEP === '1') log(`kept ${workDir}`);
    else fs.rmSync(workDir, { recursive: true, force: true });
  };

  try {
    if (!opts.backendDir) {
      // Test files run side by side (scripts/test.sh runs two at a time): one builds
      // the bundle while the others wait, then find it fresh. Without the lock two
      // builds wrote the same dist/ at once and one failed.
      await withAppBuildLock(() => {
        if (process.env.RACKSIDE_E2E_BUILD === '1' || appBundleIsStale()) {
          log('building the app bundle (yarn workspace app build)');
          execFileSync('yarn', ['workspace', 'app', 'build'], {
            cwd: ROOT,
            stdio: ['ignore', 'ignore', 'inherit'],
          });
        }
      });
    }

    if (opts.rackDir) log(`using the running rack in ${rackDir}`);
    else {
      log(`starting the simulated rack in ${rackDir} (net ${rackNet})`);
      execFileSync(
        process.execPath,
        [RACK, 'up', '--detach', '--dir', rackDir, '--net', String(rackNet)],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      );
      rackUp = true;
    }

    const rackConfig = path.join(workDir, 'app-config.rack.yaml');
    if (!opts.installOperator)
      execFileSync(
        process.execPath,
        [path.join(ROOT, 'scripts/demo-access.mjs'), rackDir, rackConfig],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      );

    // The app is served by the backend: one origin for the app and the API.
    const portConfig = path.join(workDir, 'app-config.e2e.yaml');
    fs.writeFileSync(
      portConfig,
      [
        'app:',
        `  baseUrl: ${baseUrl}`,
        'backend:',
        `  baseUrl: ${baseUrl}`,
        '  listen:',
        `    port: ${port}`,
        '  cors:',
        `    origin: ${baseUrl}`,
        // Who the guest sign-in signs in as (examples/org.yaml).
        ...(opts.user
          ? [
              'auth:',
              '  providers:',
              '    guest:',
              `      userEntityRef: user:default/${opts.user}`,
            ]
          : []),
        '',
      ].join('\n'),
    );

    if (opts.installOperator) {
      log("installing the operator (the caller's installOperator)");
      installed = await opts.installOperator({
        rackDir,
        net: rackNet,
        kubeconfig: path.join(rackDir, 'kubeconfig'),
        logs,
      });
    } else {
      log('starting the operator');
      const operatorLog = path.join(logs, 'operator.log');
      // The rack's Alertmanager: the operator silences a node in maintenance and gates plans
      // on it (docs/alerts.md), as the demo does.
      const alertmanagerUrl = JSON.parse(
        fs.readFileSync(path.join(rackDir, 'rack.json'), 'utf8'),
      ).alertmanager?.url;
      const webhookPort = 19443 + (rackNet % 100);
      const webhookCa = path.join(rackDir, 'webhook-ca.crt');
      const operator = spawnPackage('packages/operator', [], {
        env: {
          NODE_ENV: 'development',
          KUBECONFIG: path.join(rackDir, 'operator.kubeconfig'),
          RACKSIDE_OPERATOR_NAMESPACE: 'rackside-system',
          RACKSIDE_OPERATOR_PROBE_PORT: String(
            opts.probePort ?? 18081 + (rackNet % 100),
          ),
          // The reclaim webhook, on a port of this rack's own (portals may run side by side).
          RACKSIDE_OPERATOR_WEBHOOK_PORT: String(webhookPort),
          RACKSIDE_OPERATOR_WEBHOOK_HOST: '127.0.0.1',
          RACKSIDE_OPERATOR_WEBHOOK_CA_OUT: webhookCa,
          ...(alertmanagerUrl
            ? { RACKSIDE_ALERTMANAGER_URL: alertmanagerUrl }
            : {}),
        },
        logFile: operatorLog,
      });
      children.push(operator);
      watchExit(operator, 'the operator', operatorLog);
      await waitFor(
        'operator webhook CA',
        async () => fs.existsSync(webhookCa) && fs.statSync(webhookCa).size > 0,
        { timeoutMs: 120000, child: operator, logFile: operatorLog },
      );
      execFileSync(
        process.execPath,
        [
          path.join(ROOT, 'scripts/register-webhook.mjs'),
          rackDir,
          webhookCa,
          String(webhookPort),
        ],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      );
    }

    log(`starting the backend with the built app at ${baseUrl}`);
    const backendLog = path.join(logs, 'backend.log');
    const configs = [
      ...(opts.baseConfigs ?? [path.join(ROOT, 'app-config.yaml')]),
      ...(installed ? installed.configs : [rackConfig]),
      portConfig,
      ...(opts.configs ?? []),
    ].flatMap(f => ['--config', f]);
    const backend = spawnPackage(
      opts.backendDir ?? 'packages/backend',
      configs,
      {
        env: { NODE_ENV: 'development', ...opts.backendEnv },
        logFile: backendLog,
      },
    );
    children.push(backend);
    watchExit(backend, 'the backend', backendLog);

    await waitFor(
      'backend',
      async () => {
        const res = await fetch(`${baseUrl}/servers`);
        const body = await res.text();
        return res.ok && body.includes('id="root"');
      },
      { timeoutMs: 240000, child: backend, logFile: backendLog },
    );
    await waitFor(
      'servers API',
      async () => {
        const res = await fetch(`${baseUrl}/api/servers/health`);
        return res.ok;
      },
      { timeoutMs: 60000, child: backend, logFile: backendLog },
    );
    log('portal is up');
  } catch (e) {
    log(`logs in ${logs}`);
    process.env.RACKSIDE_E2E_KEEP = '1';
    await stop();
    throw e;
  }

  const kubectlBin = binaries().kubectl;
  const kubectl = (...args) =>
    execFileSync(
      kubectlBin,
      ['--kubeconfig', path.join(rackDir, 'kubeconfig'), ...args],
      { encoding: 'utf8' },
    );

  const rackInfo = () =>
    JSON.parse(fs.readFileSync(path.join(rackDir, 'rack.json'), 'utf8'));

  return {
    baseUrl,
    net: rackNet,
    rackDir,
    logs,
    kubectl,
    getJson: (...args) => getJson(kubectl, ...args),
    podsOn: node => podsOn(kubectl, node),
    rackInfo,
    /** The rack's machine behind a node ({ node, uuid, address, ... }). */
    machineOf: node => rackInfo().machines.find(m => m.node === node),
    /** What the machine `uuid` received, as the Talos emulator counts it. */
    async machineCounts(uuid) {
      const res = await fetch(`${rackInfo().talos.controlUrl}/counts`);
      assert.equal(res.status, 200, 'the Talos emulator answers /counts');
      const all = await res.json();
      return { reboot: 0, powerOff: 0, powerOn: 0, ...all[uuid] };
    },
    stop,
  };
}

/**
 * Runs `build` holding the app bundle's lock (a pid file under the cache directory),
 * waiting while a live process (this one included: two portals of one file) holds it;
 * a lock whose process is gone is taken.
 */
async function withAppBuildLock(build) {
  const file = path.join(cacheDir(), 'app-build.lock');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  for (;;) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let owner = 0;
      try {
        owner = Number(fs.readFileSync(file, 'utf8').trim());
      } catch {
        continue; // released between the two calls
      }
      if (!owner || !processAlive(owner)) {
        fs.rmSync(file, { force: true });
        continue;
      }
      await new Promise(resolve => setTimeout(resolve, 500));
    }
  }
  try {
    build();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/**
 * Holds the lock of a rack network for this process (as claimRackNet does), so the
 * Jest rack tests and benches, which claim networks from the same directory, never
 * start a rack on the addresses of this portal's. A network another live process
 * holds is an error that names it.
 */
function holdRackNet(net) {
  const dir = path.join(cacheDir(), 'nets');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${net}.lock`);
  try {
    fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
    return;
  } catch {
    const owner = Number(fs.readFileSync(file, 'utf8').trim());
    if (owner && owner !== process.pid && processAlive(owner)) {
      throw new Error(
        `rack network ${net} is held by process ${owner} (${file}); pick another offset or net`,
      );
    }
    fs.writeFileSync(file, String(process.pid));
  }
}

/**
 * A rack network no live process holds, from 100 to 149 (the plan in
 * e2e/rack/lib/net.mjs), for a browser test whose offset would put it past the last
 * network (200): `startPortal({ offset, net })`. Answers `{ net, release() }`.
 */
export function claimRackNet() {
  return claimNetIn(100, 149);
}

export const CHROMIUM =
  process.env.RACKSIDE_E2E_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Debian's Chromium, headless, with a fresh profile (launchPersistentContext
 * is how playwright-core takes --user-data-dir). The background-networking
 * flags keep it from reaching for hosts this machine cannot reach. A missing
 * browser is a failure, not a skip: scripts/test.sh installs it.
 */
export async function launchBrowser() {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  }
  const { chromium } = await import('playwright-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    // Wide enough that a row's actions are all buttons (the tests click them
    // in the row by role and name); servers-a11y checks narrower windows,
    // where what does not fit is behind the row's More actions menu.
    viewport: { width: 1920, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The set-up of a browser test file, registered as its `before` and `after`: a
 * portal of its own (`startPortal(options)`) and a headless Chromium, both
 * stopped after the file's tests. `options` may be an async function that
 * answers them (for what is started first, such as a database). With
 * `claimNet`, the portal's rack network is one claimRackNet() claims (for an
 * offset past the last network), released at the end; `cleanup` runs after
 * the portal stopped. Answers `{ portal, chrome, newPage() }`, set once
 * `before` has run.
 */
export function portalAndBrowser(options = {}, { claimNet, cleanup } = {}) {
  const env = {
    portal: undefined,
    chrome: undefined,
    /** A new page (tab) of the browser; its sign-in is shared with the others. */
    newPage: () => env.chrome.context.newPage(),
  };
  let netLock;
  before(
    async () => {
      const opts = typeof options === 'function' ? await options() : options;
      if (claimNet) netLock = claimRackNet();
      env.portal = await startPortal(
        netLock ? { ...opts, net: netLock.net } : opts,
      );
      env.chrome = await launchBrowser();
    },
    { timeout: 600_000 },
  );
  after(async () => {
    await env.chrome?.close();
    await env.portal?.stop();
    await cleanup?.();
    netLock?.release();
  });
  return env;
}

/** `kubectl get ARGS -o json` through a portal's admin kubectl, parsed. */
export function getJson(kubectl, ...args) {
  return JSON.parse(kubectl('get', ...args, '-o', 'json'));
}

const controllerOf = pod =>
  (pod.metadata.ownerReferences ?? []).find(r => r.controller);

const isFinished = pod =>
  pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/**
 * A schedulable worker whose drain can finish: none of its pods is a
 * shop/payments pod (that budget, minAvailable = replicas, refuses every
 * eviction) or unmanaged (refused without force), and none has data on the node
 * (a claim or hostPath volume) or a `rackside.dev/drain` rule (the fixture's
 * worker-5: docs/drain.md). Among those, one without an
 * emptyDir pod (which needs the emptyDir option) if possible, then the one
 * with the most pods to evict. `among` limits the choice to those node names
 * (say, the nodes with a ServerBMC); `needPods` (default true) skips workers
 * with nothing to evict. Returns `{name, evictable, emptyDir}` or undefined.
 */
export function pickDrainableWorker(kubectl, { among, needPods = true } = {}) {
  const workers = getJson(kubectl, 'nodes')
    .items.filter(
      n =>
        !(
          'node-role.kubernetes.io/control-plane' in (n.metadata.labels ?? {})
        ) &&
        n.metadata.labels?.['rackside.dev/virtual-node'] !== 'true' &&
        !n.spec.unschedulable &&
        (!among || among.includes(n.metadata.name)),
    )
    .map(n => n.metadata.name);
  const pods = getJson(kubectl, 'pods', '-A').items.filter(p => !isFinished(p));
  const candidates = workers
    .map(name => {
      const mine = pods.filter(p => p.spec.nodeName === name);
      const evictable = mine.filter(p => controllerOf(p)?.kind !== 'DaemonSet');
      return {
        name,
        evictable,
        payments: mine.some(
          p =>
            p.metadata.namespace === 'shop' &&
            p.metadata.labels?.app === 'payments',
        ),
        unmanaged: mine.some(p => !controllerOf(p)),
        // Data on the node (refused without allowNodeLocalData) or a drain rule
        // (wait-completed waits for the pod to finish): not a drain that ends unattended.
        ruled: mine.some(
          p =>
            (p.spec.volumes ?? []).some(
              v => v.persistentVolumeClaim || v.hostPath || v.ephemeral,
            ) ||
            p.metadata.labels?.['rackside.dev/drain'] !== undefined ||
            p.metadata.annotations?.['rackside.dev/drain'] !== undefined,
        ),
        emptyDir: evictable.some(p =>
          (p.spec.volumes ?? []).some(v => v.emptyDir),
        ),
      };
    })
    .filter(
      c =>
        !c.payments &&
        !c.unmanaged &&
        !c.ruled &&
        (!needPods || c.evictable.length > 0),
    )
    .sort(
      (a, b) =>
        Number(a.emptyDir) - Number(b.emptyDir) ||
        b.evictable.length - a.evictable.length ||
        a.name.localeCompare(b.name),
    );
  return candidates[0];
}

/** The pods on a node that are not finished. */
export function podsOn(kubectl, node) {
  return getJson(
    kubectl,
    'pods',
    '-A',
    '--field-selector',
    `spec.nodeName=${node}`,
  ).items.filter(p => !isFinished(p));
}

/** Whether a pod is a DaemonSet's (a drain leaves it in place). */
export function isDaemonSetPod(pod) {
  return controllerOf(pod)?.kind === 'DaemonSet';
}

/**
 * Waits until the fixture's shop workloads are scheduled and Running, so that a
 * choice of worker sees where they landed.
 */
export function waitForShopWorkloads(portal) {
  return eventually(
    'the shop workloads scheduled and running',
    () => {
      const shop = portal.getJson('pods', '-n', 'shop').items;
      return (
        shop.length >= 7 &&
        shop.every(p => p.spec.nodeName && p.status?.phase === 'Running')
      );
    },
    { timeoutMs: 120_000 },
  );
}

/**
 * Polls `fn` until it returns a truthy value, and returns that; fails the test
 * after `timeoutMs` (on the monotonic clock, so a wall-clock step does not
 * end the wait). With `retryErrors` a throw counts as "not yet" (a page that
 * is reloading); otherwise it fails the test at once.
 */
export async function eventually(
  what,
  fn,
  { timeoutMs = 60_000, everyMs = 1000, retryErrors = false } = {},
) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let value;
    try {
      value = await fn();
    } catch (error) {
      if (!retryErrors) throw error;
    }
    if (value) return value;
    if (performance.now() > deadline) {
      assert.fail(`${what}: not reached in ${timeoutMs} ms`);
    }
    await sleep(everyMs);
  }
}

/** The guest sign-in's button (who it signs in as: startPortal's `user`). */
const enterButton = page => page.getByRole('button', { name: 'Enter' });

/** Signs in as the guest on the sign-in page the app shows first. */
export async function signIn(page) {
  await enterButton(page).click();
}

/**
 * After a navigation that can land on the sign-in page again (a reload, a
 * direct URL): waits for `ready` or the sign-in, and signs in if it was that.
 */
export async function signInIfAsked(page, ready) {
  const enter = enterButton(page);
  await enter.or(ready).first().waitFor({ timeout: 60_000 });
  if (await enter.isVisible()) await enter.click();
}

/** The row of `node` in the Servers page's table. */
export function serverRow(page, node) {
  return page.locator(`[data-testid="server-row"][data-node="${node}"]`);
}

/** Opens /servers, signs in as the guest and waits for the row of `node`, which it returns. */
export async function openServersPage(page, portal, node) {
  await page.goto(`${portal.baseUrl}/servers`);
  await signIn(page);
  const row = serverRow(page, node);
  await row.waitFor({ timeout: 60_000 });
  return row;
}

/**
 * Reloads the page (signing in again if asked) until `ready()` says yes: for
 * what the backend's caches may learn after the page's first load, such as
 * the PowerProvider's advertisement that makes a row offer Reboot.
 */
export function reloadUntil(page, row, what, ready) {
  return eventually(
    what,
    async () => {
      if (await ready()) return true;
      await page.reload();
      await signInIfAsked(page, row);
      await row.waitFor({ timeout: 60_000 });
      return false;
    },
    { timeoutMs: 90_000, everyMs: 2000 },
  );
}

/**
 * The row's link to the catalog entity of `node`, once the catalog provider
 * has published it: /servers opened again (signed in) until the link is there.
 */
export function catalogLinkOf(page, portal, node) {
  return eventually(
    `catalog link of ${node}`,
    async () => {
      await page.goto(`${portal.baseUrl}/servers`);
      await signInIfAsked(
        page,
        page.locator('[data-testid="server-row"]').first(),
      );
      const row = serverRow(page, node);
      await row.waitFor({ timeout: 60_000 });
      const candidate = row.getByRole('link', {
        name: `catalog entity of ${node}`,
      });
      await candidate.waitFor({ timeout: 5_000 });
      return candidate;
    },
    { timeoutMs: 90_000, everyMs: 2000, retryErrors: true },
  );
}

/**
 * An action of the row that asks only for a reason (Cordon, Return to
 * service): its button in the row, the reason, the dialog's button, and the
 * dialog closed.
 */
export async function actWithReason(page, row, { action, node, reason }) {
  await row.getByRole('button', { name: `${action} ${node}` }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByTestId('action-reason').fill(reason);
  await dialog.getByRole('button', { name: action, exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
}

/**
 * Waits until the operator has read the demo's Redfish PowerProvider (its
 * status for the current spec) and advertises reboot.
 */
export function waitForRedfishReboot(portal) {
  return eventually(
    'the redfish PowerProvider advertises reboot',
    () => {
      const pp = portal.getJson('powerproviders', 'default');
      return (
        pp.spec.type === 'redfish' &&
        pp.status?.observedGeneration === pp.metadata.generation &&
        pp.status?.reboot === true
      );
    },
    { timeoutMs: 120_000 },
  );
}

/** Where a server row's columns stand (ServerTable's HEADERS). */
const SERVER_COLUMNS = { ready: 3, schedulable: 4, maintenance: 5 };

const columnText = async (row, column) =>
  (await row.locator('td').nth(SERVER_COLUMNS[column]).innerText()).trim();

/**
 * A server row as a person reads it: the Ready, Schedulable and Maintenance
 * columns' text, and `phase`, the maintenance's phase (null without one).
 */
export async function readRow(row) {
  const cell = row.getByTestId('maintenance-cell');
  return {
    ready: await columnText(row, 'ready'),
    schedulable: await columnText(row, 'schedulable'),
    maintenance: await columnText(row, 'maintenance'),
    phase:
      (await cell.count()) > 0
        ? await cell.getAttribute('data-phase').catch(() => null)
        : null,
  };
}

/** Polls the row (readRow) until `predicate` says yes, and returns its answer. */
export function waitForRow(row, what, predicate, opts) {
  return eventually(what, async () => predicate(await readRow(row)), opts);
}

/**
 * Turns on the action dialog's "Also evict pods with emptyDir volumes" and
 * waits for the new pre-flight it takes, with nothing refused any more.
 */
export async function allowEmptyDirEviction(dialog) {
  const preflight = dialog.getByTestId('preflight');
  const before = await preflight.getAttribute('data-token');
  await dialog.getByLabel('Also evict pods with emptyDir volumes').check();
  await eventually(
    'a new pre-flight with the emptyDir option',
    async () =>
      (await preflight.getAttribute('data-token')) !== before &&
      (await preflight.getByTestId('preflight-refused').count()) === 0,
    { timeoutMs: 30_000, everyMs: 250 },
  );
}

/**
 * A request straight at the API with the token of the page's signed-in user
 * (the guest session's refresh), as the browser would send it. Answers
 * `{ status, body }` with the body as text.
 */
export function apiAsSignedInUser(page, method, url, body) {
  return page.evaluate(
    async ({ method: m, url: u, body: b }) => {
      const session = await fetch('/api/auth/guest/refresh', {
        headers: { 'x-requested-with': 'XMLHttpRequest' },
      }).then(r => r.json());
      const r = await fetch(u, {
        method: m,
        headers: {
          authorization: `Bearer ${session.backstageIdentity.token}`,
          'content-type': 'application/json',
        },
        body: b === undefined ? undefined : JSON.stringify(b),
      });
      return { status: r.status, body: await r.text() };
    },
    { method, url, body },
  );
}

/** axe-core's browser build (the root devDependency), injected into pages by runAxe. */
const AXE_SOURCE = path.join(ROOT, 'node_modules/axe-core/axe.min.js');

/** The impacts a browser test fails on. */
export const BLOCKING_IMPACTS = ['serious', 'critical'];

/**
 * Runs axe-core (WCAG 2.x A/AA and best-practice rules) on the page, or on the
 * elements `include` selects (a CSS selector). Answers `{ blocking, other }`:
 * the violations of serious or critical impact, and the rest (moderate,
 * minor), each `{ id, impact, help, targets }`. axe is injected once per
 * document; a page whose scripts the CSP limits still gets it (evaluate).
 */
export async function runAxe(page, { include, exclude } = {}) {
  const loaded = await page.evaluate(() => typeof window.axe === 'object');
  if (!loaded) {
    const source = fs.readFileSync(AXE_SOURCE, 'utf8');
    await page.addScriptTag({ content: source }).catch(() => {});
    if (!(await page.evaluate(() => typeof window.axe === 'object'))) {
      await page.evaluate(source);
    }
  }
  const violations = await page.evaluate(
    async ({ include: inc, exclude: exc }) => {
      const context =
        inc || exc
          ? { ...(inc ? { include: [inc] } : {}), exclude: exc ? [exc] : [] }
          : document;
      const result = await window.axe.run(context, {
        resultTypes: ['violations'],
      });
      return result.violations.map(v => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        targets: v.nodes.map(n => n.target.join(' ')),
      }));
    },
    { include, exclude },
  );
  return {
    blocking: violations.filter(v => BLOCKING_IMPACTS.includes(v.impact)),
    other: violations.filter(v => !BLOCKING_IMPACTS.includes(v.impact)),
  };
}

/** axe violations as lines a person reads: rule, impact, help, then where. */
export function formatViolations(violations) {
  return violations
    .map(
      v =>
        `  ${v.id} (${v.impact}): ${v.help}\n${v.targets
          .slice(0, 8)
          .map(t => `      at ${t}`)
          .join('\n')}${
          v.targets.length > 8 ? `\n      … ${v.targets.length - 8} more` : ''
        }`,
    )
    .join('\n');
}

/**
 * What of the Servers page's tables does not fit, at the page's current width:
 * a table wider than its container (a horizontal scroll bar inside the card),
 * a container wider than its card (the Paper of its cluster), and a header
 * cell whose label is cut (its content wider than the cell). Answers lines a
 * person reads; [] when everything fits.
 */
export function tableOverflow(page) {
  return page.evaluate(() => {
    const problems = [];
    for (const container of document.querySelectorAll(
      '[data-testid^="server-table-"]',
    )) {
      const name = container.getAttribute('data-testid');
      const table = container.querySelector('table');
      const card = container.closest('.MuiPaper-root');
      if (
        table &&
        table.getBoundingClientRect().width > container.clientWidth + 1
      ) {
        problems.push(
          `${name}: table ${Math.round(
            table.getBoundingClientRect().width,
          )} px wide in a container of ${container.clientWidth} px`,
        );
      }
      if (card) {
        const c = container.getBoundingClientRect();
        const p = card.getBoundingClientRect();
        if (c.right > p.right + 1 || c.left < p.left - 1) {
          problems.push(
            `${name}: container [${Math.round(c.left)}, ${Math.round(
              c.right,
            )}] outside its card [${Math.round(p.left)}, ${Math.round(
              p.right,
            )}]`,
          );
        }
      }
      for (const th of container.querySelectorAll('thead th')) {
        const label = th.textContent.trim();
        const style = getComputedStyle(th);
        // A column the page leaves out at this width (the Talos version below 1,400
        // px) shows no label to cut.
        if (style.display === 'none') continue;
        // The label's own width (a span or the sort label) against the cell's room.
        const range = document.createRange();
        range.selectNodeContents(th);
        const content = range.getBoundingClientRect().width;
        const room =
          th.clientWidth -
          parseFloat(style.paddingLeft) -
          parseFloat(style.paddingRight);
        if (content > room + 1) {
          problems.push(
            `${name}: header "${label}" needs ${Math.round(
              content,
            )} px, has ${Math.round(room)} px`,
          );
        }
      }
    }
    return problems;
  });
}

/** Fails the test with axe's words when the part of the page has a blocking violation. */
export async function expectAxeClean(page, what, include) {
  const { blocking } = await runAxe(page, { include });
  assert.equal(
    blocking.length,
    0,
    `axe on ${what}:\n${formatViolations(blocking)}`,
  );
}

/** Clicks a Servers row's action: its button or, when it does not fit, in More actions. */
export async function openRowAction(page, row, label) {
  const button = row.getByRole('button', { name: label });
  if (await button.isVisible().catch(() => false)) {
    await button.click();
    return;
  }
  await row.getByTestId('more-actions').click();
  await page.getByRole('menuitem', { name: label }).click();
}

/**
 * Opens `node`'s Server tab (its catalog entity, linked first), asks its BMC for a
 * reading with the Hardware card's Refresh (the operator's sweep is every 15 minutes)
 * and waits for the reading that answers it, with its firmware. Answers the card and
 * the reading (the ServerBMC's status.health).
 */
export async function refreshedServerTab(page, portal, node) {
  await catalogLinkOf(page, portal, node);
  await page.goto(
    `${portal.baseUrl}/catalog/default/resource/plant-a--${node}/server`,
  );
  const card = page.getByTestId('entity-server-hardware');
  await card.waitFor();
  await card.getByRole('button', { name: 'Refresh' }).click();
  const asked = await eventually(
    'the refresh was requested',
    () => portal.getJson('serverbmcs', node).spec.healthRefresh?.requestedAt,
  );
  const reading = await eventually(
    `the operator's reading of ${node}, with its firmware`,
    async () => {
      const health = portal.getJson('serverbmcs', node).status?.health;
      return health?.answeredRequestAt === asked && health.firmware?.length
        ? health
        : undefined;
    },
    { timeoutMs: 120_000, everyMs: 2000 },
  );
  return { card, reading };
}
