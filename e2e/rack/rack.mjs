#!/usr/bin/env node
// The simulated rack: a real etcd + kube-apiserver + kube-controller-manager + kube-scheduler,
// kwok for fake Nodes/Pods, the fixture's nodes and workloads, and (from lib/talos.mjs and
// lib/redfish.mjs) the Talos API emulator and Redfish BMCs. Plain ESM, no npm dependencies.
//
//   node e2e/rack/rack.mjs up   [--dir DIR] [--net N] [--fixture FILE] [--detach] [--no-talos] [--no-redfish] [--no-alertmanager] [--node-heartbeat-seconds S]
//   node e2e/rack/rack.mjs down [--dir DIR]
//   node e2e/rack/rack.mjs status [--dir DIR]
//
// Library: startRack({dir, net, fixture, withTalos, withRedfish, nodeHeartbeatSeconds, log}) -> rack (see README.md).

import { spawn, spawnSync, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { machineAddress, checkNet, freePort } from './lib/net.mjs';

export { machineAddress } from './lib/net.mjs';

export const RACK_DIR = path.dirname(fileURLToPath(import.meta.url));
export const POWER_ANNOTATION = 'rack.rackside.dev/power';
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
export const SERVICE_CIDR = '10.96.0.0/16';
export const POD_CIDR = '10.244.0.0/16';
const RACK_MARKER = '.rackside-rack';

// ---------------------------------------------------------------------------------------------
// Versions, cache, binaries

/** Parses versions.env (KEY=VALUE lines, # comments). */
export function readVersions(file = path.join(RACK_DIR, 'versions.env')) {
  const out = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^\s*([A-Z0-9_]+)=["']?([^"'#\s]*)["']?\s*(#.*)?$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

export function cacheDir() {
  return (
    process.env.RACKSIDE_CACHE || path.join(os.homedir(), '.cache', 'rackside')
  );
}

/** Paths of the binaries build.sh produces. */
export function binaries(versions = readVersions()) {
  const bin = path.join(cacheDir(), 'bin');
  const k8s = path.join(bin, `k8s-${versions.KUBERNETES_VERSION}`);
  return {
    binRoot: bin,
    k8sDir: k8s,
    kubeApiserver: path.join(k8s, 'kube-apiserver'),
    kubeControllerManager: path.join(k8s, 'kube-controller-manager'),
    kubeScheduler: path.join(k8s, 'kube-scheduler'),
    kubectl: path.join(k8s, 'kubectl'),
    yaml2json: path.join(k8s, 'yaml2json'),
    etcd: path.join(bin, `etcd-${versions.ETCD_VERSION}`, 'etcd'),
    kwok: path.join(bin, `kwok-${versions.KWOK_VERSION}`, 'kwok'),
    alertmanager: path.join(
      bin,
      `alertmanager-${versions.ALERTMANAGER_VERSION}`,
      'alertmanager',
    ),
  };
}

function checkBinaries(bins) {
  const missing = Object.entries(bins)
    .filter(([k]) => !['binRoot', 'k8sDir'].includes(k))
    .filter(([, p]) => !fs.existsSync(p))
    .map(([, p]) => p);
  if (missing.length) {
    throw new Error(
      `rack binaries missing (run e2e/rack/build.sh first):\n  ${missing.join(
        '\n  ',
      )}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Fixture

export const DEFAULT_FIXTURE = path.join(RACK_DIR, 'fixture', 'plant-a.yaml');

/** Parses a YAML fixture with the yaml2json helper that build.sh builds (sigs.k8s.io/yaml). */
export function loadFixture(file = DEFAULT_FIXTURE, bins = binaries()) {
  const out = execFileSync(bins.yaml2json, [file], { encoding: 'utf8' });
  const fixture = JSON.parse(out);
  fixture.file = path.resolve(file);
  return fixture;
}

/** Every machine of the fixture with its loopback address in rack `net`. */
export function fixtureMachines(fixture, rackNet) {
  const machines = [];
  for (const n of fixture.nodes || []) {
    if (!n.machine) continue;
    machines.push({
      kind: 'node',
      node: n.name,
      cluster: fixture.cluster,
      role: n.controlPlane ? 'controlplane' : 'worker',
      host: n.machine.host,
      address: machineAddress(rackNet, n.machine.host),
      uuid: n.machine.uuid,
      bmc: !!n.machine.bmc,
    });
  }
  for (const s of fixture.spares || []) {
    machines.push({
      kind: 'spare',
      host: s.host,
      address: machineAddress(rackNet, s.host),
      uuid: s.uuid,
      bmc: !!s.bmc,
    });
  }
  for (const f of fixture.foreign?.machines || []) {
    machines.push({
      kind: 'foreign',
      cluster: fixture.foreign.cluster,
      role: f.role,
      host: f.host,
      address: machineAddress(rackNet, f.host),
      uuid: f.uuid,
      bmc: !!f.bmc,
    });
  }
  return machines;
}

/** The Node object the rack creates for one fixture node. */
export function fixtureNode(n, rackNet, k8sVersion) {
  const labels = {
    'kubernetes.io/hostname': n.name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    type: 'kwok',
  };
  const taints = [];
  if (n.controlPlane) {
    labels['node-role.kubernetes.io/control-plane'] = '';
    taints.push({
      key: 'node-role.kubernetes.io/control-plane',
      effect: 'NoSchedule',
    });
  }
  if (n.virtual) {
    labels['rackside.dev/virtual-node'] = 'true';
    taints.push({
      key: 'virtual-kubelet.io/provider',
      value: 'rackside',
      effect: 'NoSchedule',
    });
  }
  const addresses = [];
  if (n.machine)
    addresses.push({
      type: 'InternalIP',
      address: machineAddress(rackNet, n.machine.host),
    });
  addresses.push({ type: 'Hostname', address: n.name });
  const resources = {
    cpu: '16',
    memory: '64Gi',
    pods: '110',
    'ephemeral-storage': '500Gi',
  };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: n.name,
      labels,
      annotations: {
        [KWOK_NODE_ANNOTATION]: 'fake',
        'node.alpha.kubernetes.io/ttl': '0',
      },
    },
    spec: { taints },
    status: {
      addresses,
      capacity: resources,
      allocatable: resources,
      nodeInfo: {
        machineID: n.machine ? n.machine.uuid.replace(/-/g, '') : '',
        systemUUID: n.machine ? n.machine.uuid : '',
        bootID: crypto.randomUUID(),
        kernelVersion: n.virtual ? '' : '6.12.48-talos',
        osImage: n.virtual ? 'virtual-kubelet' : 'Talos (v1.11.3)',
        containerRuntimeVersion: n.virtual
          ? 'virtual://1.0'
          : 'containerd://2.1.4',
        kubeletVersion: `v${k8sVersion}`,
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Small helpers

const sleep = ms => new Promise(r => setTimeout(r, ms));

async function freePorts(n) {
  const ports = new Set();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

function isAlive(pid) {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return e.code === 'EPERM';
  }
  // A zombie still answers kill(0); treat it as gone.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z /.test(stat);
  } catch {
    return true;
  }
}

function readPid(file) {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** The command line of a pid (to check that a pid file still names our process). */
function cmdline(pid) {
  try {
    return fs
      .readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .join(' ');
  } catch {
    return '';
  }
}

function signalGroup(pid, sig) {
  try {
    process.kill(-pid, sig);
    return true;
  } catch {
    try {
      process.kill(pid, sig);
      return true;
    } catch {
      return false;
    }
  }
}

/** SIGTERM a process group, wait, then SIGKILL it. */
async function stopPid(pid, { timeoutMs = 10000 } = {}) {
  if (!isAlive(pid)) return;
  signalGroup(pid, 'SIGTERM');
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(pid)) {
    signalGroup(pid, 'SIGKILL');
    const d2 = Date.now() + 5000;
    while (isAlive(pid) && Date.now() < d2) await sleep(50);
  } else {
    // The leader is gone; make sure nothing else of its group is left.
    signalGroup(pid, 'SIGKILL');
  }
}

function tail(file, lines = 25) {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .join('\n');
  } catch {
    return '';
  }
}

function defaultLog(msg) {
  process.stderr.write(`[rack] ${msg}\n`);
}

// ---------------------------------------------------------------------------------------------
// Certificates (openssl CLI: node:crypto cannot sign certificates)

function openssl(args, opts = {}) {
  const r = spawnSync('openssl', args, { encoding: 'utf8', ...opts });
  if (r.error)
    throw new Error(`openssl: ${r.error.message} (is openssl installed?)`);
  if (r.status !== 0)
    throw new Error(`openssl ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

function ecKey(file) {
  openssl([
    'genpkey',
    '-algorithm',
    'EC',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-out',
    file,
  ]);
}

function signCert(pki, name, subject, ext) {
  const key = path.join(pki, `${name}.key`);
  const csr = path.join(pki, `${name}.csr`);
  const crt = path.join(pki, `${name}.crt`);
  const extFile = path.join(pki, `${name}.ext`);
  ecKey(key);
  openssl(['req', '-new', '-key', key, '-subj', subject, '-out', csr]);
  fs.writeFileSync(extFile, ext.join('\n') + '\n');
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    path.join(pki, 'ca.crt'),
    '-CAkey',
    path.join(pki, 'ca.key'),
    '-set_serial',
    '0x' + crypto.randomBytes(12).toString('hex'),
    '-days',
    '3650',
    '-sha256',
    '-extfile',
    extFile,
    '-out',
    crt,
  ]);
  fs.rmSync(csr);
  fs.rmSync(extFile);
  return { cert: crt, key };
}

/** CA, apiserver serving cert, admin client cert, service-account key pair. */
export function generatePki(pki) {
  fs.mkdirSync(pki, { recursive: true, mode: 0o700 });
  const ca = { cert: path.join(pki, 'ca.crt'), key: path.join(pki, 'ca.key') };
  ecKey(ca.key);
  openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    ca.key,
    '-sha256',
    '-days',
    '3650',
    '-subj',
    '/CN=rackside-rack-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    '-out',
    ca.cert,
  ]);
  const serving = signCert(pki, 'apiserver', '/CN=kube-apiserver', [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    'extendedKeyUsage=serverAuth',
    'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,' +
      'DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local',
  ]);
  const admin = signCert(pki, 'admin', '/O=system:masters/CN=rackside-admin', [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    'extendedKeyUsage=clientAuth',
  ]);
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', {
    modulusLength: 2048,
  });
  const sa = { key: path.join(pki, 'sa.key'), pub: path.join(pki, 'sa.pub') };
  fs.writeFileSync(
    sa.key,
    privateKey.export({ type: 'pkcs8', format: 'pem' }),
    { mode: 0o600 },
  );
  fs.writeFileSync(sa.pub, publicKey.export({ type: 'spki', format: 'pem' }));
  return { ca, serving, admin, sa };
}

function kubeconfigYaml({
  server,
  caFile,
  certFile,
  keyFile,
  token,
  user = 'rackside-admin',
  cluster = 'rack',
}) {
  const b64 = f => fs.readFileSync(f).toString('base64');
  const userLines = token
    ? [`    token: ${token}`]
    : [
        `    client-certificate-data: ${b64(certFile)}`,
        `    client-key-data: ${b64(keyFile)}`,
      ];
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${cluster}`,
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${b64(caFile)}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    ...userLines,
    'contexts:',
    `- name: ${cluster}`,
    '  context:',
    `    cluster: ${cluster}`,
    `    user: ${user}`,
    `current-context: ${cluster}`,
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// A minimal Kubernetes client (node:https; admin client cert or bearer token)

export function kubeClient({
  server,
  caFile,
  certFile,
  keyFile,
  token,
  timeoutMs = 30000,
  maxSockets = 8,
}) {
  const u = new URL(server);
  const agent = new https.Agent({
    ca: fs.readFileSync(caFile),
    cert: certFile ? fs.readFileSync(certFile) : undefined,
    key: keyFile ? fs.readFileSync(keyFile) : undefined,
    keepAlive: true,
    maxSockets,
  });
  function request(
    method,
    p,
    body,
    { contentType = 'application/json', headers = {} } = {},
  ) {
    return new Promise((resolve, reject) => {
      const data =
        body === undefined
          ? undefined
          : typeof body === 'string'
          ? body
          : JSON.stringify(body);
      const req = https.request(
        {
          host: u.hostname,
          port: u.port,
          method,
          path: p,
          agent,
          headers: {
            accept: 'application/json',
            ...(data !== undefined
              ? {
                  'content-type': contentType,
                  'content-length': Buffer.byteLength(data),
                }
              : {}),
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...headers,
          },
        },
        res => {
          const chunks = [];
          res.on('data', c => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json;
            try {
              json = text ? JSON.parse(text) : undefined;
            } catch {
              json = undefined;
            }
            resolve({
              status: res.statusCode,
              body: json ?? text,
              headers: res.headers,
            });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.setTimeout(timeoutMs, () =>
        req.destroy(new Error(`${method} ${p}: timeout`)),
      );
      if (data !== undefined) req.write(data);
      req.end();
    });
  }
  async function must(method, p, body, opts) {
    const r = await request(method, p, body, opts);
    if (r.status < 200 || r.status >= 300) {
      const msg = typeof r.body === 'object' ? r.body.message : r.body;
      const err = new Error(`${method} ${p}: ${r.status} ${msg}`);
      err.status = r.status;
      err.body = r.body;
      throw err;
    }
    return r.body;
  }
  return {
    request,
    get: p => must('GET', p),
    post: (p, b) => must('POST', p, b),
    put: (p, b) => must('PUT', p, b),
    del: p => must('DELETE', p),
    patch: (p, b, type = 'application/merge-patch+json') =>
      must('PATCH', p, b, { contentType: type }),
    close: () => agent.destroy(),
  };
}

// ---------------------------------------------------------------------------------------------
// Processes

class Procs {
  constructor(dir, log) {
    this.dir = dir;
    this.log = log;
    this.list = []; // {name, pid, child, logFile}
    fs.mkdirSync(path.join(dir, 'pids'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
  }

  start(name, bin, args, { env } = {}) {
    const logFile = path.join(this.dir, 'logs', `${name}.log`);
    const fd = fs.openSync(logFile, 'a');
    const child = spawn(bin, args, {
      cwd: this.dir,
      env: { ...process.env, ...env },
      stdio: ['ignore', fd, fd],
      detached: true, // own process group: `down` signals the group, terminal signals don't reach it
    });
    fs.closeSync(fd);
    if (!child.pid) throw new Error(`could not start ${name} (${bin})`);
    child.unref();
    const entry = { name, pid: child.pid, child, logFile, bin, exited: null };
    child.on('exit', (code, sig) => {
      entry.exited = { code, sig };
    });
    child.on('error', e => {
      entry.exited = { error: e.message };
    });
    fs.writeFileSync(
      path.join(this.dir, 'pids', `${name}.pid`),
      `${child.pid} ${bin}\n`,
    );
    this.list.push(entry);
    return entry;
  }

  check(entry) {
    if (entry.exited) {
      throw new Error(
        `${entry.name} exited (${JSON.stringify(
          entry.exited,
        )}); last log lines:\n${tail(entry.logFile)}`,
      );
    }
  }

  /** Reverse start order: kwok and controllers first, etcd last. */
  async stopAll() {
    for (const e of [...this.list].reverse()) {
      await stopPid(e.pid);
      fs.rmSync(path.join(this.dir, 'pids', `${e.name}.pid`), { force: true });
    }
    this.list = [];
  }

  killAllSync() {
    for (const e of this.list)
      if (isAlive(e.pid)) signalGroup(e.pid, 'SIGKILL');
  }
}

async function waitFor(
  what,
  fn,
  { timeoutMs = 60000, intervalMs = 200, check } = {},
) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    if (check) check();
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${
          last ? `: ${last.message}` : ''
        }`,
      );
    }
    await sleep(intervalMs);
  }
}

// ---------------------------------------------------------------------------------------------
// Rack directory bookkeeping

function prepareDir(dir) {
  if (fs.existsSync(dir)) {
    const entries = fs.readdirSync(dir);
    if (entries.length && !entries.includes(RACK_MARKER)) {
      throw new Error(
        `${dir} is not empty and is not a rack directory; refusing to use it`,
      );
    }
    const running = runningPids(dir);
    if (running.length) {
      throw new Error(
        `a rack is already running in ${dir} (pids ${running.join(
          ', ',
        )}); run \`rack.mjs down --dir ${dir}\``,
      );
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, RACK_MARKER),
    'simulated rack directory (safe to delete when the rack is down)\n',
  );
}

/** Pids recorded in DIR (rack.pid and pids/*.pid) that are still our processes. */
function runningPids(dir) {
  const files = [path.join(dir, 'rack.pid')];
  const pidDir = path.join(dir, 'pids');
  if (fs.existsSync(pidDir))
    for (const f of fs.readdirSync(pidDir)) files.push(path.join(pidDir, f));
  const out = [];
  for (const f of files) {
    const pid = readPid(f);
    if (pid && isAlive(pid) && pid !== process.pid) {
      const recorded = fs
        .readFileSync(f, 'utf8')
        .trim()
        .split(/\s+/)
        .slice(1)
        .join(' ');
      const cl = cmdline(pid);
      // Guard against pid reuse: the process must still run the recorded binary / rack.mjs.
      if (!recorded || cl.includes(recorded) || cl.includes('rack.mjs'))
        out.push(pid);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// startRack

/**
 * Starts a rack. Resolves once nodes are Ready, workloads run and PDBs have status.
 * @returns rack: {dir, net, server, kubeconfig, caFile, adminCertFile, adminKeyFile, fixture,
 *   machines, talos, redfish, kube (client), createServiceAccountToken(), saToken(), stop()}
 */
export async function startRack({
  dir = path.join(cacheDir(), 'racks', 'demo'),
  net: rackNet = 0,
  fixture = DEFAULT_FIXTURE,
  withTalos = true,
  withRedfish = true,
  withAlertmanager = true,
  withWorkloads = true,
  nodeHeartbeatSeconds,
  log = defaultLog,
  detached = false,
} = {}) {
  const t0 = Date.now();
  rackNet = checkNet(rackNet);
  dir = path.resolve(dir);
  const versions = readVersions();
  const bins = binaries(versions);
  checkBinaries(bins);
  const fx = typeof fixture === 'string' ? loadFixture(fixture, bins) : fixture;
  const machines = fixtureMachines(fx, rackNet);
  if (
    nodeHeartbeatSeconds !== undefined &&
    !(Number.isInteger(nodeHeartbeatSeconds) && nodeHeartbeatSeconds >= 1)
  )
    throw new Error(
      `nodeHeartbeatSeconds must be a positive integer, got ${nodeHeartbeatSeconds}`,
    );

  prepareDir(dir);
  const procs = new Procs(dir, log);
  const exitHook = () => procs.killAllSync();
  if (!detached) process.once('exit', exitHook);
  let kube;
  const extras = []; // started emulators: {name, stop}

  const stop = async () => {
    process.removeListener('exit', exitHook);
    for (const x of extras.reverse()) {
      try {
        await x.stop();
      } catch (e) {
        log(`stopping ${x.name}: ${e.message}`);
      }
    }
    kube?.close();
    await procs.stopAll();
    if (readPid(path.join(dir, 'rack.pid')) === process.pid)
      fs.rmSync(path.join(dir, 'rack.pid'), { force: true });
    try {
      const info = JSON.parse(
        fs.readFileSync(path.join(dir, 'rack.json'), 'utf8'),
      );
      info.state = 'stopped';
      fs.writeFileSync(
        path.join(dir, 'rack.json'),
        JSON.stringify(info, null, 2) + '\n',
      );
    } catch {
      /* no rack.json yet */
    }
  };

  try {
    log(
      `starting rack in ${dir} (net ${rackNet}, machines on 127.0.${
        10 + rackNet
      }.x)`,
    );
    const pki = generatePki(path.join(dir, 'pki'));
    const [etcdClient, etcdPeer, apiPort, kcmPort, schedPort] = await freePorts(
      5,
    );
    const server = `https://127.0.0.1:${apiPort}`;
    const kubeconfig = path.join(dir, 'kubeconfig');
    fs.writeFileSync(
      kubeconfig,
      kubeconfigYaml({
        server,
        caFile: pki.ca.cert,
        certFile: pki.admin.cert,
        keyFile: pki.admin.key,
      }),
      { mode: 0o600 },
    );

    // etcd
    const etcd = procs.start('etcd', bins.etcd, [
      '--name',
      'rack',
      '--data-dir',
      path.join(dir, 'etcd'),
      '--listen-client-urls',
      `http://127.0.0.1:${etcdClient}`,
      '--advertise-client-urls',
      `http://127.0.0.1:${etcdClient}`,
      '--listen-peer-urls',
      `http://127.0.0.1:${etcdPeer}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${etcdPeer}`,
      '--initial-cluster',
      `rack=http://127.0.0.1:${etcdPeer}`,
      '--initial-cluster-state',
      'new',
      '--unsafe-no-fsync',
      '--quota-backend-bytes',
      String(4 * 1024 ** 3),
      '--log-level',
      'warn',
    ]);
    await waitFor(
      'etcd',
      async () => {
        const r = await fetch(`http://127.0.0.1:${etcdClient}/health`);
        return r.ok && (await r.json()).health === 'true';
      },
      { check: () => procs.check(etcd) },
    );
    log(
      `etcd up on 127.0.0.1:${etcdClient} (${((Date.now() - t0) / 1000).toFixed(
        1,
      )}s)`,
    );

    // kube-apiserver
    const apiserver = procs.start('kube-apiserver', bins.kubeApiserver, [
      `--etcd-servers=http://127.0.0.1:${etcdClient}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${pki.serving.cert}`,
      `--tls-private-key-file=${pki.serving.key}`,
      `--client-ca-file=${pki.ca.cert}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.sa.pub}`,
      `--service-account-signing-key-file=${pki.sa.key}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--authorization-mode=Node,RBAC',
      // Defaults include MutatingAdmissionWebhook, ValidatingAdmissionWebhook and
      // ValidatingAdmissionPolicy. ServiceAccount admission is off: there is no kubelet to mount
      // tokens, and pods need not wait for the default ServiceAccount. TaintNodesByCondition is
      // off: it puts node.kubernetes.io/not-ready on every new Node and only the node-lifecycle
      // controller (not run here: kwok and the Talos emulator own node readiness) removes it.
      '--enable-admission-plugins=NodeRestriction',
      '--disable-admission-plugins=ServiceAccount,TaintNodesByCondition',
      '--allow-privileged=true',
      '--profiling=false',
      '--v=1',
    ]);
    kube = kubeClient({
      server,
      caFile: pki.ca.cert,
      certFile: pki.admin.cert,
      keyFile: pki.admin.key,
    });
    await waitFor(
      'kube-apiserver /readyz',
      async () => (await kube.request('GET', '/readyz')).status === 200,
      {
        timeoutMs: 120000,
        intervalMs: 250,
        check: () => procs.check(apiserver),
      },
    );
    log(
      `kube-apiserver ready at ${server} (${((Date.now() - t0) / 1000).toFixed(
        1,
      )}s)`,
    );

    // kube-controller-manager, kube-scheduler, kwok
    procs.start('kube-controller-manager', bins.kubeControllerManager, [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${kcmPort}`,
      '--leader-elect=false',
      '--use-service-account-credentials=false',
      // No node-lifecycle controller: node readiness belongs to kwok and the Talos emulator.
      '--controllers=' +
        [
          'disruption',
          'garbage-collector',
          'serviceaccount-token',
          'serviceaccount',
          'namespace',
          'deployment',
          'replicaset',
          'daemonset',
          'statefulset',
          'job',
          'ttl-after-finished',
          'pod-garbage-collector',
          'clusterrole-aggregation',
          'root-ca-certificate-publisher',
          // Type-checks ValidatingAdmissionPolicies (their status; the chart's are tested).
          'validatingadmissionpolicy-status',
        ]
          .map(c => `${c}-controller`)
          .join(','),
      `--service-account-private-key-file=${pki.sa.key}`,
      `--root-ca-file=${pki.ca.cert}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--concurrent-gc-syncs=5',
      '--v=1',
    ]);
    procs.start('kube-scheduler', bins.kubeScheduler, [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${schedPort}`,
      '--leader-elect=false',
      '--v=1',
    ]);
    const kwok = procs.start('kwok', bins.kwok, [
      '-c',
      kwokStagesFile(dir, nodeHeartbeatSeconds),
      `--kubeconfig=${kubeconfig}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
      `--cidr=${POD_CIDR}`,
      `--node-ip=127.0.${10 + rackNet}.254`,
      '--v=WARN',
    ]);

    // Nodes
    for (const n of fx.nodes || []) {
      const want = fixtureNode(n, rackNet, versions.KUBERNETES_VERSION);
      const got = await kube.post('/api/v1/nodes', want);
      if (got.status?.nodeInfo?.bootID !== want.status.nodeInfo.bootID) {
        // Status dropped on create: set it through the status subresource.
        await kube.patch(
          `/api/v1/nodes/${n.name}/status`,
          { status: want.status },
          'application/strategic-merge-patch+json',
        );
      }
    }
    await waitFor(
      'nodes Ready',
      async () => {
        const list = await kube.get('/api/v1/nodes');
        return (
          list.items.length >= (fx.nodes || []).length &&
          list.items.every(isNodeReady)
        );
      },
      { timeoutMs: 60000, check: () => procs.check(kwok) },
    );
    log(
      `${(fx.nodes || []).length} nodes Ready (${(
        (Date.now() - t0) /
        1000
      ).toFixed(1)}s)`,
    );

    const rack = {
      dir,
      net: rackNet,
      server,
      kubeconfig,
      caFile: pki.ca.cert,
      adminCertFile: pki.admin.cert,
      adminKeyFile: pki.admin.key,
      kubectl: bins.kubectl,
      binaries: bins,
      versions,
      fixture: fx,
      fixtureFile: fx.file,
      machines,
      talos: null,
      redfish: null,
      alertmanager: null,
      kube,
      createServiceAccountToken: (ns, name, opts) =>
        createServiceAccountToken(kube, ns, name, opts),
      saToken: (ns, name, opts) =>
        createServiceAccountToken(kube, ns, name, { create: true, ...opts }),
      kubeconfigFor: (token, file) =>
        writeTokenKubeconfig({ server, caFile: pki.ca.cert, token, file }),
      processes: () =>
        procs.list.map(({ name, pid, logFile }) => ({ name, pid, logFile })),
      stop,
    };

    // Workloads
    if (withWorkloads && fx.workloads) {
      // CRDs first: kubectl maps every kind of a file before applying any of it.
      if (fx.customResourceDefinitions) {
        const crds = path.join(dir, 'crds.yaml');
        fs.writeFileSync(crds, fx.customResourceDefinitions);
        kubectl(bins.kubectl, kubeconfig, ['apply', '-f', crds]);
        kubectl(bins.kubectl, kubeconfig, [
          'wait',
          '--for=condition=Established',
          '--timeout=60s',
          '-f',
          crds,
        ]);
      }
      const wl = path.join(dir, 'workloads.yaml');
      fs.writeFileSync(wl, fx.workloads);
      kubectl(bins.kubectl, kubeconfig, ['apply', '-f', wl]);
      await bindPrebound(kube);
      await waitForWorkloads(kube, { check: () => procs.check(kwok) });
      log(
        `workloads running, PDBs computed (${((Date.now() - t0) / 1000).toFixed(
          1,
        )}s)`,
      );
    }

    // Talos emulator and Redfish BMCs (the other half of the rack)
    const common = {
      dir,
      net: rackNet,
      fixture: fx,
      kubeconfig,
      binDir: bins.binRoot,
      server,
      caFile: pki.ca.cert,
      log,
    };
    if (withTalos) {
      const mod = await importOptional('./lib/talos.mjs', log);
      if (mod?.startTalosEmulator) {
        const t = await mod.startTalosEmulator(common);
        extras.push({ name: 'talos emulator', stop: () => t.stop() });
        rack.talos = t;
        log(`Talos emulator up (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
      }
    }
    if (withAlertmanager) {
      const mod = await importOptional('./lib/alertmanager.mjs', log);
      if (mod?.startAlertmanager) {
        const a = await mod.startAlertmanager({
          dir,
          bin: bins.alertmanager,
          log,
        });
        extras.push({ name: 'alertmanager', stop: () => a.stop() });
        rack.alertmanager = a;
        log(`Alertmanager up at ${a.url}`);
      }
    }
    if (withRedfish) {
      const mod = await importOptional('./lib/redfish.mjs', log);
      if (mod?.startRedfish) {
        const r = await mod.startRedfish(common);
        extras.push({ name: 'redfish', stop: () => r.stop() });
        rack.redfish = r;
        log(`Redfish BMCs up (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
      }
    }

    writeRackJson(rack, { pid: process.pid });
    fs.writeFileSync(path.join(dir, 'rack.pid'), `${process.pid} rack.mjs\n`);
    log(
      `rack ready in ${((Date.now() - t0) / 1000).toFixed(
        1,
      )}s — export KUBECONFIG=${kubeconfig}`,
    );
    return rack;
  } catch (e) {
    await stop().catch(() => {});
    throw e;
  }
}

/**
 * The kwok Stage file: kwok/stages.yaml as it is, or (with `heartbeatSeconds`) a copy in
 * DIR whose node-heartbeat stage fires every `heartbeatSeconds` (+ up to 20 % jitter)
 * instead of every 20-25 s. Thousands of nodes heartbeating every 20 s are a load of their
 * own; a real kubelet with node leases posts its status every 5 minutes.
 */
export function kwokStagesFile(dir, heartbeatSeconds) {
  const stock = path.join(RACK_DIR, 'kwok', 'stages.yaml');
  if (heartbeatSeconds === undefined) return stock;
  if (!Number.isInteger(heartbeatSeconds) || heartbeatSeconds < 1)
    throw new Error(
      `nodeHeartbeatSeconds must be a positive integer, got ${heartbeatSeconds}`,
    );
  const text = fs.readFileSync(stock, 'utf8');
  const delay =
    /(name: node-heartbeat\n[\s\S]*?delay:\n\s+durationMilliseconds: )\d+(\n\s+jitterDurationMilliseconds: )\d+/;
  if (!delay.test(text))
    throw new Error(`${stock}: no delay block in the node-heartbeat stage`);
  const ms = heartbeatSeconds * 1000;
  const file = path.join(dir, 'kwok-stages.yaml');
  fs.writeFileSync(
    file,
    text.replace(delay, `$1${ms}$2${Math.round(ms * 1.2)}`),
  );
  return file;
}

function isNodeReady(node) {
  return (node.status?.conditions || []).some(
    c => c.type === 'Ready' && c.status === 'True',
  );
}

function kubectl(bin, kubeconfig, args, input) {
  const r = spawnSync(bin, [`--kubeconfig=${kubeconfig}`, ...args], {
    encoding: 'utf8',
    input,
  });
  if (r.status !== 0)
    throw new Error(
      `kubectl ${args.join(' ')} failed:\n${r.stderr}${r.stdout}`,
    );
  return r.stdout;
}

/**
 * The rack runs no PersistentVolume binder: a claim the fixture pre-binds
 * (`spec.volumeName`, with the volume's `claimRef` naming it) is marked Bound here, as the
 * binder would, so that `kubectl get pvc,pv` reads as on a real cluster.
 */
async function bindPrebound(kube) {
  const claims = await kube.get('/api/v1/persistentvolumeclaims');
  for (const claim of claims.items) {
    const volume = claim.spec?.volumeName;
    if (!volume || claim.status?.phase === 'Bound') continue;
    const { namespace, name } = claim.metadata;
    const statusOf = async (p, body) => {
      const r = await kube.request('PATCH', `${p}/status`, body, {
        contentType: 'application/merge-patch+json',
      });
      if (r.status >= 300)
        throw new Error(`binding ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    };
    await statusOf(`/api/v1/persistentvolumes/${volume}`, {
      status: { phase: 'Bound' },
    });
    await statusOf(
      `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${name}`,
      {
        status: {
          phase: 'Bound',
          accessModes: claim.spec.accessModes,
          capacity: claim.spec.resources?.requests,
        },
      },
    );
  }
}

async function waitForWorkloads(kube, { check, timeoutMs = 90000 } = {}) {
  await waitFor(
    'workloads',
    async () => {
      const [deps, dss, sts, jobs, pods, pdbs] = await Promise.all([
        kube.get('/apis/apps/v1/deployments'),
        kube.get('/apis/apps/v1/daemonsets'),
        kube.get('/apis/apps/v1/statefulsets'),
        kube.get('/apis/batch/v1/jobs'),
        kube.get('/api/v1/pods'),
        kube.get('/apis/policy/v1/poddisruptionbudgets'),
      ]);
      const depsOk = [...deps.items, ...sts.items].every(
        d =>
          (d.status?.readyReplicas || 0) === d.spec.replicas &&
          d.status?.observedGeneration >= d.metadata.generation,
      );
      // A Job counts once its pod runs (or has run): kwok holds some Running on purpose.
      const jobsOk = jobs.items.every(
        j => (j.status?.active || 0) + (j.status?.succeeded || 0) > 0,
      );
      const dssOk = dss.items.every(
        d =>
          d.status?.desiredNumberScheduled > 0 &&
          d.status.numberReady === d.status.desiredNumberScheduled,
      );
      const podsOk = pods.items.every(
        p => p.status?.phase === 'Running' || p.status?.phase === 'Succeeded',
      );
      const pdbsOk = pdbs.items.every(
        p =>
          p.status?.observedGeneration >= p.metadata.generation &&
          p.status.expectedPods > 0 &&
          p.status.currentHealthy === p.status.expectedPods,
      );
      return depsOk && jobsOk && dssOk && podsOk && pdbsOk;
    },
    { timeoutMs, intervalMs: 300, check },
  );
}

async function importOptional(rel, log) {
  const file = path.join(RACK_DIR, rel);
  if (!fs.existsSync(file)) {
    log(`${rel} not present; continuing without it`);
    return null;
  }
  return import(pathToFileURL(file).href);
}

function writeRackJson(rack, extra = {}) {
  const strip = o => {
    if (!o) return null;
    const out = {};
    for (const [k, v] of Object.entries(o))
      if (typeof v !== 'function') out[k] = v;
    return out;
  };
  const info = {
    state: 'ready',
    dir: rack.dir,
    net: rack.net,
    server: rack.server,
    kubeconfig: rack.kubeconfig,
    caFile: rack.caFile,
    adminCertFile: rack.adminCertFile,
    adminKeyFile: rack.adminKeyFile,
    kubectl: rack.kubectl,
    versions: rack.versions,
    fixtureFile: rack.fixtureFile,
    cluster: rack.fixture.cluster,
    machines: rack.machines,
    talos: strip(rack.talos),
    redfish: strip(rack.redfish),
    alertmanager: strip(rack.alertmanager),
    processes: rack.processes(),
    ...extra,
  };
  fs.writeFileSync(
    path.join(rack.dir, 'rack.json'),
    JSON.stringify(info, null, 2) + '\n',
  );
}

// ---------------------------------------------------------------------------------------------
// ServiceAccount tokens

/**
 * A token for ServiceAccount ns/name through the TokenRequest API (admin client cert).
 * `create: true` creates the namespace and ServiceAccount when missing.
 */
export async function createServiceAccountToken(
  kube,
  namespace,
  name,
  { expirationSeconds = 3600, create = false, audiences } = {},
) {
  if (create) {
    const ns = await kube.request('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
    if (ns.status >= 300 && ns.status !== 409)
      throw new Error(`create namespace ${namespace}: ${ns.status}`);
    const sa = await kube.request(
      'POST',
      `/api/v1/namespaces/${namespace}/serviceaccounts`,
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name, namespace },
      },
    );
    if (sa.status >= 300 && sa.status !== 409)
      throw new Error(
        `create serviceaccount ${namespace}/${name}: ${sa.status}`,
      );
  }
  const tr = await kube.post(
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds, ...(audiences ? { audiences } : {}) },
    },
  );
  return tr.status.token;
}

/** Writes a kubeconfig that authenticates with a bearer token; returns its path. */
export function writeTokenKubeconfig({ server, caFile, token, file }) {
  fs.writeFileSync(
    file,
    kubeconfigYaml({ server, caFile, token, user: 'token-user' }),
    { mode: 0o600 },
  );
  return file;
}

/** A client for an already running rack, from its rack.json. */
export function connectRack(dir = path.join(cacheDir(), 'racks', 'demo')) {
  const info = JSON.parse(fs.readFileSync(path.join(dir, 'rack.json'), 'utf8'));
  const kube = kubeClient({
    server: info.server,
    caFile: info.caFile,
    certFile: info.adminCertFile,
    keyFile: info.adminKeyFile,
  });
  return {
    ...info,
    kube,
    createServiceAccountToken: (ns, name, opts) =>
      createServiceAccountToken(kube, ns, name, opts),
  };
}

// ---------------------------------------------------------------------------------------------
// down

/** Stops the rack in DIR: the `up` process (if any), then every process of pids/. */
export async function stopRack(
  dir = path.join(cacheDir(), 'racks', 'demo'),
  { log = defaultLog } = {},
) {
  dir = path.resolve(dir);
  const rackPid = readPid(path.join(dir, 'rack.pid'));
  if (
    rackPid &&
    rackPid !== process.pid &&
    isAlive(rackPid) &&
    cmdline(rackPid).includes('rack.mjs')
  ) {
    log(`stopping rack process ${rackPid}`);
    // The up process stops its children on SIGTERM; give it time, then fall through.
    process.kill(rackPid, 'SIGTERM');
    const deadline = Date.now() + 30000;
    while (isAlive(rackPid) && Date.now() < deadline) await sleep(100);
    if (isAlive(rackPid)) signalGroup(rackPid, 'SIGKILL');
  }
  const pidDir = path.join(dir, 'pids');
  let n = 0;
  if (fs.existsSync(pidDir)) {
    for (const f of fs.readdirSync(pidDir)) {
      const file = path.join(pidDir, f);
      const pid = readPid(file);
      const recorded = fs
        .readFileSync(file, 'utf8')
        .trim()
        .split(/\s+/)
        .slice(1)
        .join(' ');
      if (
        pid &&
        isAlive(pid) &&
        (!recorded || cmdline(pid).includes(recorded))
      ) {
        await stopPid(pid);
        n++;
      }
      fs.rmSync(file, { force: true });
    }
  }
  fs.rmSync(path.join(dir, 'rack.pid'), { force: true });
  log(
    n
      ? `stopped ${n} leftover process(es) in ${dir}`
      : `rack in ${dir} is down`,
  );
}

// ---------------------------------------------------------------------------------------------
// CLI

function parseArgs(argv) {
  const opts = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--dir') opts.dir = argv[++i];
    else if (a === '--net') opts.net = Number(argv[++i]);
    else if (a === '--fixture') opts.fixture = argv[++i];
    else if (a === '--detach') opts.detach = true;
    else if (a === '--no-talos') opts.withTalos = false;
    else if (a === '--no-redfish') opts.withRedfish = false;
    else if (a === '--no-alertmanager') opts.withAlertmanager = false;
    else if (a === '--no-workloads') opts.withWorkloads = false;
    else if (a === '--node-heartbeat-seconds')
      opts.nodeHeartbeatSeconds = Number(argv[++i]);
    else if (a === '-h' || a === '--help') opts.help = true;
    else opts._.push(a);
  }
  return opts;
}

const USAGE = `usage:
  node e2e/rack/rack.mjs up     [--dir DIR] [--net N] [--fixture FILE] [--detach] [--no-talos] [--no-redfish] [--no-alertmanager] [--no-workloads] [--node-heartbeat-seconds S]
  node e2e/rack/rack.mjs down   [--dir DIR]
  node e2e/rack/rack.mjs status [--dir DIR]
defaults: --dir \${RACKSIDE_CACHE:-~/.cache/rackside}/racks/demo  --net 0  --fixture e2e/rack/fixture/plant-a.yaml`;

async function main(argv) {
  const opts = parseArgs(argv);
  const cmd = opts._[0];
  const dir = path.resolve(opts.dir || path.join(cacheDir(), 'racks', 'demo'));
  if (opts.help || !cmd) {
    console.log(USAGE);
    return cmd || opts.help ? 0 : 2;
  }
  if (cmd === 'down') {
    await stopRack(dir);
    return 0;
  }
  if (cmd === 'status') {
    const f = path.join(dir, 'rack.json');
    if (!fs.existsSync(f)) {
      console.log(`no rack in ${dir}`);
      return 1;
    }
    const info = JSON.parse(fs.readFileSync(f, 'utf8'));
    const alive = runningPids(dir);
    console.log(
      JSON.stringify(
        { ...info, running: alive.length > 0, runningPids: alive },
        null,
        2,
      ),
    );
    return alive.length ? 0 : 1;
  }
  if (cmd !== 'up') {
    console.error(USAGE);
    return 2;
  }
  if (opts.detach) {
    // Run `up` in the background as its own process group; return once rack.json says ready.
    const logs = path.join(path.dirname(dir), `${path.basename(dir)}.up.log`);
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    const fd = fs.openSync(logs, 'w');
    const args = argv.filter(a => a !== '--detach');
    const child = spawn(
      process.execPath,
      [fileURLToPath(import.meta.url), ...args],
      {
        detached: true,
        stdio: ['ignore', fd, fd],
      },
    );
    fs.closeSync(fd);
    child.unref();
    process.stderr.write(
      `[rack] starting in the background (pid ${child.pid}, log ${logs})\n`,
    );
    let exited = null;
    child.on('exit', code => (exited = code));
    const deadline = Date.now() + 300000;
    for (;;) {
      await sleep(250);
      if (exited !== null) {
        process.stderr.write(tail(logs, 40) + '\n');
        return 1;
      }
      try {
        const info = JSON.parse(
          fs.readFileSync(path.join(dir, 'rack.json'), 'utf8'),
        );
        if (info.state === 'ready' && info.pid === child.pid) {
          process.stderr.write(tail(logs, 40) + '\n');
          console.log(
            `rack up (pid ${child.pid}); stop with: node ${path.relative(
              process.cwd(),
              fileURLToPath(import.meta.url),
            )} down --dir ${dir}`,
          );
          return 0;
        }
      } catch {
        /* not yet */
      }
      if (Date.now() > deadline) {
        process.stderr.write(`[rack] timed out; log:\n${tail(logs, 40)}\n`);
        return 1;
      }
    }
  }
  const rack = await startRack({
    dir,
    net: opts.net ?? 0,
    fixture: opts.fixture ? path.resolve(opts.fixture) : DEFAULT_FIXTURE,
    withTalos: opts.withTalos ?? true,
    withRedfish: opts.withRedfish ?? true,
    withAlertmanager: opts.withAlertmanager ?? true,
    withWorkloads: opts.withWorkloads ?? true,
    nodeHeartbeatSeconds: opts.nodeHeartbeatSeconds,
  });
  console.log(`KUBECONFIG=${rack.kubeconfig}`);
  console.log(`rack info: ${path.join(rack.dir, 'rack.json')}`);
  await new Promise(resolve => {
    // Keeps the process alive (the children are unref'd) and reports a process that died.
    const reported = new Set();
    const monitor = setInterval(() => {
      for (const p of rack.processes()) {
        if (!reported.has(p.name) && !isAlive(p.pid)) {
          reported.add(p.name);
          defaultLog(`${p.name} (pid ${p.pid}) exited; see ${p.logFile}`);
        }
      }
    }, 2000);
    let stopping = false;
    const onSignal = async sig => {
      if (stopping) return;
      stopping = true;
      clearInterval(monitor);
      defaultLog(`${sig}: stopping the rack`);
      await rack.stop();
      fs.rmSync(path.join(dir, 'rack.pid'), { force: true });
      resolve();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    process.on('SIGHUP', onSignal);
  });
  return 0;
}

if (
  process.argv[1] &&
  path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)
) {
  main(process.argv.slice(2)).then(
    code => process.exit(code),
    e => {
      console.error(`[rack] ${e.message}`);
      process.exit(1);
    },
  );
}
