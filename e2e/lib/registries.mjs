// Package registries a test runs for itself, each on a free loopback port with its storage
// in a temporary directory, so a release is published for real and installed from there as
// a user would: Verdaccio (npm) and the CNCF Distribution registry (OCI: images and charts).
// Plain ESM, Node 22+. Needs network once: Verdaccio from the npm registry, cached in
// ~/.cache/rackside/verdaccio-<version>; the registry built from the Go module proxy by
// scripts/release/registry.sh into ~/.cache/rackside/bin/registry-<version>/.
//
//   import { startNpmRegistry, startOciRegistry, publishPackages, pushImage, pushChart,
//            publishRelease } from '../lib/registries.mjs';
//
//   const npm = await startNpmRegistry();   // {url, token, npmrc, dir, stop()}
//     url:   'http://127.0.0.1:PORT/' (Verdaccio; every package may be read anonymously;
//            `@rackside/*` only from what was published to it, anything else from its
//            uplink when `startNpmRegistry({ uplink: 'https://registry.npmjs.org/' })`)
//     token: a publisher's token (a user made at start); npmrc: a file with that token, for
//            `npm --userconfig` (yarn: npmScopes.rackside.npmAuthToken)
//   const oci = await startOciRegistry();   // {url, host, dir, stop()}
//     url:   'http://127.0.0.1:PORT' (its v2 API at url + '/v2/'); host: '127.0.0.1:PORT'
//            (plain HTTP: skopeo --tls-verify=false, helm --plain-http)
//   publishPackages(npm, version, { releaseDir })   // npm publish of every tarball of
//            `version` in releaseDir (default dist/release), dependencies first; npm is the
//            object above or a URL (then pass { token }). Answers the package names.
//   pushImage(oci, ociTar)    // skopeo copy of an OCI archive (scripts/image.sh's) to
//            HOST/rackside/operator:<its tag>; answers {repository, tag, digest, ref}
//            (ref = repository@digest)
//   pushChart(oci, chartTgz)  // helm push to oci://HOST/charts; answers
//            'oci://HOST/charts/rackside' (use with --version and --plain-http)
//   publishRelease({ npm, oci, version?, releaseDir?, imageArchive? })
//            // all of it as `scripts/release.sh --publish` does: the packages, the image, then
//            // the chart whose values.yaml names the image by its digest; answers
//            // {version, packages, image, chart, chartFile}
//   await npm.stop(); await oci.stop();     // stop the process, remove the storage
//
// The publishing functions are scripts/release/publish.mjs's, the ones the release runs.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export {
  chartWithImage,
  publishPackages,
  publishRelease,
  pushChart,
  pushImage,
  releaseVersion,
} from '../../scripts/release/publish.mjs';

const REPO_ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);
/** 6.10.x wants Node 22 or newer (the toolchain's is 24). */
export const VERDACCIO_VERSION =
  process.env.RACKSIDE_VERDACCIO_VERSION ?? '6.10.4';

const cacheDir = () =>
  process.env.RACKSIDE_CACHE ?? path.join(os.homedir(), '.cache/rackside');
const log = msg => process.stderr.write(`registries: ${msg}\n`);

/** A TCP port free on 127.0.0.1 at the time of asking. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Verdaccio's bin, installed from the npm registry once per version. */
export function verdaccioBinary() {
  const dir = path.join(cacheDir(), `verdaccio-${VERDACCIO_VERSION}`);
  const bin = path.join(dir, 'node_modules/verdaccio/bin/verdaccio');
  if (fs.existsSync(bin)) return bin;
  log(`installing verdaccio@${VERDACCIO_VERSION} into ${dir}`);
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  fs.writeFileSync(path.join(tmp, 'package.json'), '{"private":true}\n');
  execFileSync(
    'npm',
    [
      'install',
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--omit=dev',
      '--loglevel=error',
      `verdaccio@${VERDACCIO_VERSION}`,
    ],
    { cwd: tmp, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  // Renamed into place whole, so an interrupted install is never taken for a cached one;
  // when another process got there first, its install is used and this one dropped.
  try {
    fs.renameSync(tmp, dir);
  } catch (error) {
    if (!fs.existsSync(bin)) throw error;
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return bin;
}

/** The Distribution registry's binary (scripts/release/registry.sh builds it once). */
export function ociRegistryBinary() {
  const out = execFileSync(
    path.join(REPO_ROOT, 'scripts/release/registry.sh'),
    [],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return out.trim().split('\n').pop();
}

/**
 * Starts `cmd args` and waits until `ready()` answers true; stops it if it exits first or
 * takes longer than `timeoutMs`. Answers {child, logs(), stop()}.
 */
async function startProcess(name, cmd, args, { ready, timeoutMs, cwd, env }) {
  let output = '';
  const child = spawn(cmd, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '', ...env },
  });
  child.stdout.on('data', d => (output = (output + d).slice(-20000)));
  child.stderr.on('data', d => (output = (output + d).slice(-20000)));
  const exited = new Promise(resolve => child.once('exit', resolve));
  let gone = false;
  exited.then(() => (gone = true));
  const stop = async () => {
    if (!gone) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (gone) throw new Error(`${name} exited before it was ready:\n${output}`);
    if (await ready().catch(() => false)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} not ready in ${timeoutMs} ms:\n${output}`);
    }
    await Promise.race([exited, new Promise(r => setTimeout(r, 100))]);
  }
  return { child, logs: () => output, stop };
}

/**
 * Starts Verdaccio on a free loopback port with a fresh storage, makes a publisher
 * (user `rackside`) and answers {url, token, npmrc, dir, stop()}.
 * Options: `uplink`, a registry it proxies for packages not published to it (none by
 * default: it answers only what was published); `dir`, where its storage goes.
 */
export async function startNpmRegistry({ uplink, dir } = {}) {
  const bin = verdaccioBinary();
  const root =
    dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-verdaccio-'));
  fs.mkdirSync(root, { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const proxy = uplink ? '    proxy: upstream\n' : '';
  fs.writeFileSync(
    path.join(root, 'config.yaml'),
    [
      `storage: ${JSON.stringify(path.join(root, 'storage'))}`,
      'auth:',
      '  htpasswd:',
      `    file: ${JSON.stringify(path.join(root, 'htpasswd'))}`,
      '    max_users: 10',
      uplink
        ? `uplinks:\n  upstream:\n    url: ${JSON.stringify(
            uplink,
          )}\n    timeout: 60s`
        : 'uplinks: {}',
      'packages:',
      "  '@rackside/*':",
      '    access: $all',
      '    publish: $authenticated',
      '    unpublish: $authenticated',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      '    unpublish: $authenticated',
      proxy.trimEnd(),
      'server:',
      '  keepAliveTimeout: 60',
      'web:',
      '  enable: false',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ]
      .filter(l => l !== '')
      .join('\n')
      .concat('\n'),
  );
  const server = await startProcess(
    'verdaccio',
    process.execPath,
    [
      bin,
      '--config',
      path.join(root, 'config.yaml'),
      '--listen',
      `127.0.0.1:${port}`,
    ],
    {
      cwd: root,
      timeoutMs: 60000,
      ready: async () => (await fetch(`${url}-/ping`)).ok,
    },
  );
  // A publisher: Verdaccio's htpasswd plugin makes the user on its first login and
  // answers a token (what `npm adduser` does).
  const password = `rackside-${process.pid}-${port}`;
  const added = await fetch(`${url}-/user/org.couchdb.user:rackside`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'rackside', password }),
  });
  const body = await added.json();
  if (!added.ok || !body.token) {
    await server.stop();
    throw new Error(
      `verdaccio refused the publisher: ${added.status} ${JSON.stringify(
        body,
      )}`,
    );
  }
  const npmrc = path.join(root, 'npmrc');
  fs.writeFileSync(
    npmrc,
    `registry=${url}\n//127.0.0.1:${port}/:_authToken=${body.token}\n`,
    { mode: 0o600 },
  );
  return {
    url,
    token: body.token,
    npmrc,
    dir: root,
    logs: server.logs,
    stop: async () => {
      await server.stop();
      if (!dir) fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * Starts the Distribution registry on a free loopback port (plain HTTP, no auth) with a
 * fresh storage; answers {url, host, dir, stop()}. Option `dir`: where its storage goes.
 */
export async function startOciRegistry({ dir } = {}) {
  const bin = ociRegistryBinary();
  const root =
    dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-registry-'));
  fs.mkdirSync(root, { recursive: true });
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const url = `http://${host}`;
  const config = path.join(root, 'config.yml');
  fs.writeFileSync(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: warn',
      '  accesslog:',
      '    disabled: true',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${JSON.stringify(path.join(root, 'storage'))}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: ${host}`,
      '',
    ].join('\n'),
  );
  const server = await startProcess('registry', bin, ['serve', config], {
    cwd: root,
    // No tracing exporter to reach (the registry's OpenTelemetry default is localhost:4318).
    env: { OTEL_TRACES_EXPORTER: 'none' },
    timeoutMs: 30000,
    ready: async () => (await fetch(`${url}/v2/`)).ok,
  });
  return {
    url,
    host,
    dir: root,
    logs: server.logs,
    stop: async () => {
      await server.stop();
      if (!dir) fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
