// The operator as a process of its own (so its RSS is its own), under the demo's
// ServiceAccount (operator.kubeconfig that scripts/demo-access.mjs writes), run one of two
// ways:
//  * 'build': what the image runs (packages/operator/Dockerfile: its ENTRYPOINT and CMD,
//    read from the file by imageEntrypoint, the script found in the unpacked build).
//    `yarn workspace @rackside/operator build` makes a deployment bundle (the operator and
//    its two workspace libraries compiled to CommonJS); it is unpacked into a temporary
//    directory, the workspace libraries linked next to it, third-party packages taken from
//    the repository's node_modules (NODE_PATH). Rebuilt when a source is newer.
//  * 'source': TypeScript through backstage-cli's node transform, as the demo and the rack
//    tests run it. The transform (swc) costs some 35 MB of RSS of its own.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
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

const BUNDLE = path.join(ROOT, 'packages/operator/dist/bundle.tar.gz');
const BUNDLE_SOURCES = [
  'packages/operator',
  'plugins/servers-node',
  'plugins/servers-common',
];

function newestSource(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (
      entry.name === 'node_modules' ||
      entry.name === 'dist' ||
      entry.name === 'dist-types'
    )
      continue;
    const p = path.join(dir, entry.name);
    const t = entry.isDirectory() ? newestSource(p) : fs.statSync(p).mtimeMs;
    if (t > newest) newest = t;
  }
  return newest;
}

/**
 * The operator's build unpacked into a fresh temporary directory; returns the directory
 * (remove it when done), the operator package in it (the image's WORKDIR) and the script
 * the image's entrypoint runs. Builds first when the bundle is missing or
 * older than a source file.
 */
export function unpackOperatorBuild() {
  const built = fs.existsSync(BUNDLE) ? fs.statSync(BUNDLE).mtimeMs : 0;
  if (BUNDLE_SOURCES.some(d => newestSource(path.join(ROOT, d)) > built)) {
    log('building the operator (yarn workspace @rackside/operator build)');
    execFileSync('yarn', ['workspace', '@rackside/operator', 'build'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  const dir = fs.mkdtempSync(
    path.join(os.tmpdir(), 'rackside-operator-build-'),
  );
  execFileSync('tar', ['xzf', BUNDLE, '-C', dir]);
  fs.mkdirSync(path.join(dir, 'node_modules/@rackside'), { recursive: true });
  for (const name of ['servers-node', 'servers-common'])
    fs.symlinkSync(
      path.join(dir, 'plugins', name),
      path.join(dir, 'node_modules/@rackside', `plugin-${name}`),
    );
  // The image's WORKDIR is the operator package (the Dockerfile copies its package.json
  // and dist/ there): the entrypoint's script is found relative to that package here.
  const workdir = path.join(dir, 'packages/operator');
  const { script } = imageEntrypoint();
  const entry = path.join(workdir, script);
  if (!fs.existsSync(entry)) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `the image runs ${script} (${DOCKERFILE}), which the build (${BUNDLE}) lacks at packages/operator/${script}`,
    );
  }
  return { dir, workdir, entry };
}

/** VmRSS and VmHWM (peak) of a process, in bytes. */
export function rssOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = key =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) *
    1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

const NODE_TRANSFORM = require.resolve(
  '@backstage/cli/config/nodeTransform.cjs',
  {
    paths: [ROOT],
  },
);

const DOCKERFILE = path.join(ROOT, 'packages/operator/Dockerfile');

/** An exec-form (JSON array) argument of ENTRYPOINT or CMD. */
function execForm(file, instruction, arg) {
  let argv;
  try {
    argv = JSON.parse(arg);
  } catch {
    argv = undefined;
  }
  if (!Array.isArray(argv) || !argv.every(a => typeof a === 'string'))
    throw new Error(
      `${file}: ${instruction} ${arg}: only the exec form (a JSON array) is read here`,
    );
  return argv;
}

/**
 * What the operator image runs, read from its own definition (packages/operator/Dockerfile)
 * and nowhere else: the final stage's ENTRYPOINT followed by its CMD (exec form), which
 * must be `node [options...] SCRIPT [args...]`. Returns the node options, the script
 * relative to the stage's WORKDIR (the operator package, where the Dockerfile copies its
 * package.json and dist/), and the script's own arguments.
 */
export function imageEntrypoint(file = DOCKERFILE) {
  const instructions = fs
    .readFileSync(file, 'utf8')
    .replace(/\\\r?\n/g, ' ')
    .split('\n')
    .map(l => l.trim())
    .filter(l => l && !l.startsWith('#'));
  let workdir = '/';
  let entrypoint;
  let cmd;
  for (const line of instructions) {
    const [, instruction, arg] = /^(\S+)\s*(.*)$/.exec(line);
    switch (instruction.toUpperCase()) {
      case 'FROM': // a new stage: what the base image runs is not this file's
        workdir = '/';
        entrypoint = undefined;
        cmd = undefined;
        break;
      case 'WORKDIR':
        workdir = path.posix.resolve(workdir, arg);
        break;
      case 'ENTRYPOINT':
        entrypoint = execForm(file, instruction, arg);
        break;
      case 'CMD':
        cmd = execForm(file, instruction, arg);
        break;
      default:
    }
  }
  const argv = [...(entrypoint ?? []), ...(cmd ?? [])];
  const at = argv.findIndex((a, i) => i > 0 && !a.startsWith('-'));
  if (argv[0] !== 'node' || at < 0)
    throw new Error(
      `${file}: expected the final stage to run ["node", ...options, SCRIPT, ...args], got ${JSON.stringify(
        argv,
      )}`,
    );
  const script = path.posix.relative(
    workdir,
    path.posix.resolve(workdir, argv[at]),
  );
  if (script.startsWith('..'))
    throw new Error(
      `${file}: the entrypoint's script ${argv[at]} is outside the WORKDIR ${workdir} (the operator package)`,
    );
  return {
    nodeOptions: argv.slice(1, at),
    script,
    args: argv.slice(at + 1),
  };
}

/**
 * Starts the operator; resolves once /readyz says its caches are synced and the
 * `rackside_leader` gauge says it leads (every replica is Ready; only one leads).
 * `from` is 'build' or 'source' (see above); `nodeArgs` go to node (e.g. --cpu-prof,
 * --heapsnapshot-signal=SIGUSR2).
 */
export async function startOperatorProcess(rackDir, options = {}) {
  // freePort() only says the port was free when it asked: another process (the other lane
  // of scripts/test.sh starts racks and backends) may bind it before the operator does.
  // Such a start is made again on another port.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOperatorOnce(rackDir, options);
    } catch (error) {
      if (!(error instanceof ProbePortTaken) || attempt === 3) throw error;
      log(`operator: ${error.message}; starting it again on another port`);
    }
  }
}

/** The operator exited at once because its probe port was taken (EADDRINUSE). */
class ProbePortTaken extends Error {}

async function startOperatorOnce(
  rackDir,
  {
    from = 'build',
    logFile,
    nodeArgs = [],
    identity = 'bench-operator',
    readyTimeoutMs = 300_000,
    /** More of the operator's flags (e.g. --talos-image-prefixes). */
    args = [],
  } = {},
) {
  if (from !== 'build' && from !== 'source')
    throw new Error(`the operator runs from build or source, not ${from}`);
  const port = await freePort();
  const build = from === 'build' ? unpackOperatorBuild() : undefined;
  const image = build ? imageEntrypoint() : undefined;
  const entry = build
    ? [...image.nodeOptions, build.entry, ...image.args]
    : [
        '--require',
        NODE_TRANSFORM,
        path.join(ROOT, 'packages/operator/src/index.ts'),
      ];
  const env = build
    ? { NODE_PATH: path.join(ROOT, 'node_modules'), NODE_ENV: 'production' }
    : {};
  const logPath = logFile ?? path.join(rackDir, 'logs', 'operator-bench.log');
  const out = fs.openSync(logPath, 'a');
  // Where this start's output begins in the log (an earlier start's is before it).
  const logStart = fs.fstatSync(out).size;
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      ...entry,
      '--kubeconfig',
      path.join(rackDir, 'operator.kubeconfig'),
      '--namespace',
      'rackside-system',
      '--probe-port',
      String(port),
      '--identity',
      identity,
      // No MachineReclaim admission webhook: nothing here registers it, and its default
      // port may be taken by a demo running on the same machine.
      '--webhook-port',
      '0',
      ...args,
    ],
    {
      cwd: build ? build.workdir : path.join(ROOT, 'packages/operator'),
      env: { ...process.env, ...env },
      stdio: ['ignore', out, out],
    },
  );
  fs.closeSync(out);
  let exited = null;
  child.on('exit', (code, signal) => (exited = { code, signal }));
  const started = Date.now();
  const url = `http://127.0.0.1:${port}`;
  const fail = message => {
    if (!exited) child.kill('SIGKILL');
    if (build) fs.rmSync(build.dir, { recursive: true, force: true });
    throw new Error(message);
  };
  for (;;) {
    if (exited) {
      if (build) fs.rmSync(build.dir, { recursive: true, force: true });
      const output = fs.readFileSync(logPath).subarray(logStart).toString();
      if (new RegExp(`EADDRINUSE[\\s\\S]*?port: ${port}\\b`).test(output))
        throw new ProbePortTaken(`its probe port ${port} was taken`);
      throw new Error(
        `the operator exited (${JSON.stringify(exited)}); see its log`,
      );
    }
    try {
      const r = await fetch(`${url}/readyz`);
      if (r.ok) {
        const metrics = await (await fetch(`${url}/metrics`)).text();
        if (/^rackside_leader 1$/m.test(metrics)) break;
      }
    } catch {
      /* not listening yet */
    }
    if (Date.now() - started > readyTimeoutMs)
      fail(`the operator was not ready after ${readyTimeoutMs} ms`);
    await sleep(250);
  }
  const readyMs = Date.now() - started;
  log(
    `operator (pid ${child.pid}, from ${from}) ready in ${(
      readyMs / 1000
    ).toFixed(1)} s`,
  );
  return {
    pid: child.pid,
    url,
    readyMs,
    rss: () => rssOf(child.pid),
    metrics: async () => (await fetch(`${url}/metrics`)).text(),
    /** SIGTERM (the operator releases its Lease), SIGKILL after 10 s. */
    async stop() {
      if (!exited) {
        const gone = new Promise(r => child.once('exit', r));
        child.kill('SIGTERM');
        const done = await Promise.race([
          gone.then(() => true),
          sleep(10_000).then(() => false),
        ]);
        if (!done) child.kill('SIGKILL');
      }
      if (build) fs.rmSync(build.dir, { recursive: true, force: true });
    },
  };
}

/**
 * Where a process's RSS lives, from /proc/PID/smaps: anonymous mappings (mostly the V8
 * heap), the malloc heap (native allocations: OpenSSL, zlib, buffers), the node binary's
 * pages, the swc binding of the source transform, and other files. In bytes.
 */
export function memoryBreakdown(pid) {
  const out = {
    anonymous: 0,
    mallocHeap: 0,
    nodeBinary: 0,
    swc: 0,
    otherFiles: 0,
  };
  let bucket;
  for (const line of fs
    .readFileSync(`/proc/${pid}/smaps`, 'utf8')
    .split('\n')) {
    const map = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (map) {
      const name = map[1];
      bucket =
        name === '' || name.startsWith('[anon') || name === '[stack]'
          ? 'anonymous'
          : name === '[heap]'
          ? 'mallocHeap'
          : name === process.execPath
          ? 'nodeBinary'
          : /swc/.test(name)
          ? 'swc'
          : 'otherFiles';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && bucket) out[bucket] += Number(rss[1]) * 1024;
  }
  return out;
}

export function describeBreakdown(b) {
  const m = n => `${(n / 1e6).toFixed(0)} MB`;
  return `anonymous (V8 heap and other mmaps) ${m(
    b.anonymous,
  )}, malloc heap ${m(b.mallocHeap)}, node binary ${m(
    b.nodeBinary,
  )}, swc transform ${m(b.swc)}, other files ${m(b.otherFiles)}`;
}
