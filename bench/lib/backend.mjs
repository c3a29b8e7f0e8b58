// The demo portal's backend (packages/backend: auth with the guest provider, catalog with
// Rackside's server entities, the permission backend with Rackside's app-config policy,
// signals, the servers plugin) on a bench rack, serving the built app (packages/app/dist)
// on one loopback port, as e2e/tests/harness.mjs runs it for the browser tests.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { log, ROOT, sleep } from './common.mjs';

const require = createRequire(import.meta.url);

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Newest mtime under dir, skipping node_modules and dist. */
function newestMtime(dir) {
  let newest = 0;
  if (!fs.existsSync(dir)) return newest;
  if (!fs.statSync(dir).isDirectory()) return fs.statSync(dir).mtimeMs;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const t = newestMtime(path.join(dir, entry.name));
    if (t > newest) newest = t;
  }
  return newest;
}

/** Builds packages/app/dist when it is missing or older than the frontend's sources. */
export function ensureAppBundle() {
  const index = path.join(ROOT, 'packages/app/dist/index.html');
  const built = fs.existsSync(index) ? fs.statSync(index).mtimeMs : 0;
  const sources = [
    'packages/app',
    'plugins/servers',
    'plugins/servers-common',
    'app-config.yaml',
  ];
  if (sources.some(s => newestMtime(path.join(ROOT, s)) > built)) {
    log('building the app bundle (yarn workspace app build)');
    execFileSync('yarn', ['workspace', 'app', 'build'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
}

/** Total CPU seconds (user + system) a process and its reaped children used so far. */
export function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100;
}

/**
 * Starts the backend as `yarn workspace backend start` (backstage-cli package start) runs
 * it, minus the file watcher: `node --enable-source-maps --require <node transform>
 * src/index` in packages/backend. (The watcher restarts the backend whenever anyone edits a
 * file of the shared tree, which would restart a measurement.) against the bench rack's app-config (written by
 * demo-access.mjs); `user` is the examples/org.yaml user the guest sign-in signs in as;
 * `root` another checkout of the repository to run (an experiment's patched copy); `env`
 * more environment (e.g. NODE_OPTIONS=--inspect=127.0.0.1:0 for a CPU profile);
 * `buildApp: false` serves the app bundle as it is (no staleness check); `configs` more
 * app-config files, loaded after the bench's (e.g. app-config.production.yaml).
 * Resolves when /api/servers/health answers.
 */
export async function startBackend(
  rackDir,
  {
    user = 'guest',
    logFile,
    readyTimeoutMs = 300_000,
    root = ROOT,
    env = {},
    buildApp = true,
    configs: moreConfigs = [],
  } = {},
) {
  // A bench that starts several backends builds the app once: the shared tree's frontend
  // sources change under it while it runs.
  if (buildApp) ensureAppBundle();
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = path.join(rackDir, `app-config.bench-backend-${port}.yaml`);
  fs.writeFileSync(
    config,
    [
      '# Written by bench/lib/backend.mjs: the demo backend on loopback for a benchmark.',
      'app:',
      `  baseUrl: ${baseUrl}`,
      'backend:',
      `  baseUrl: ${baseUrl}`,
      '  listen:',
      `    port: ${port}`,
      '    host: 127.0.0.1',
      '  cors:',
      `    origin: ${baseUrl}`,
      'auth:',
      '  providers:',
      '    guest:',
      `      userEntityRef: user:default/${user}`,
      '',
    ].join('\n'),
  );
  logFile ??= path.join(rackDir, 'logs', `backend-bench-${port}.log`);
  const out = fs.openSync(logFile, 'a');
  const configs = [
    path.join(root, 'app-config.yaml'),
    path.join(rackDir, 'app-config.bench.yaml'),
    config,
    ...moreConfigs,
  ].flatMap(f => ['--config', f]);
  const transform = require.resolve(
    '@backstage/cli-node/config/nodeTransform.cjs',
    {
      paths: [ROOT],
    },
  );
  const args = [
    '--enable-source-maps',
    '--require',
    transform,
    'src/index',
    ...configs,
  ];
  const child = spawn(process.execPath, args, {
    cwd: path.join(root, 'packages/backend'),
    env: { ...process.env, NODE_ENV: 'development', ...env },
    stdio: ['ignore', out, out],
    detached: true,
  });
  fs.closeSync(out);
  let exited = null;
  child.on('exit', code => (exited = code));
  const stop = async () => {
    if (exited !== null) return;
    const gone = new Promise(r => child.once('exit', r));
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      return;
    }
    const done = await Promise.race([
      gone.then(() => true),
      sleep(15_000).then(() => false),
    ]);
    if (!done) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  };
  const started = Date.now();
  try {
    for (;;) {
      if (exited !== null)
        throw new Error(`the backend exited (${exited}); see its log`);
      try {
        const r = await fetch(`${baseUrl}/api/servers/health`);
        if (r.ok) break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() - started > readyTimeoutMs)
        throw new Error(`the backend did not answer in ${readyTimeoutMs} ms`);
      await sleep(1000);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  log(
    `backend up at ${baseUrl} after ${((Date.now() - started) / 1000).toFixed(
      1,
    )} s`,
  );
  return {
    baseUrl,
    logFile,
    pid: () => child.pid,
    /** A Backstage token of the guest sign-in (the user above). */
    async token() {
      const r = await fetch(`${baseUrl}/api/auth/guest/refresh`, {
        headers: { 'x-requested-with': 'XMLHttpRequest' },
      });
      if (!r.ok)
        throw new Error(`guest sign-in: ${r.status} ${await r.text()}`);
      return (await r.json()).backstageIdentity.token;
    },
    stop,
  };
}
