// Redfish BMCs of the simulated rack: sushy-tools (PyPI, fake driver) with one ComputerSystem
// per machine that has `bmc: true` in the fixture, linked to the Talos emulator's machines.
//
//   import { startRedfish } from './lib/redfish.mjs';
//   const r = await startRedfish({ dir, net, fixture, talos, log });
//   r.url, r.caFile, r.username, r.password, r.systems['worker-1'] -> '/redfish/v1/Systems/<uuid>'
//
// * sushy-tools is installed by e2e/rack/redfish/install.sh into a cached venv.
// * Systems: id = the machine's SMBIOS UUID, Name = the fixture node name (spare-<host> for a
//   spare, <cluster>-<host> for a foreign machine). All start PowerState On.
// * Basic auth against a bcrypt htpasswd file (rounds=4: sushy checks it on every request).
// * HTTPS with a CA made for this rack (DIR/redfish/tls/ca.crt), TLS 1.2 (sushy's choice), on
//   127.0.0.1:<free port>; `tls: false` serves plain http instead.
// * State in a fresh SUSHY_EMULATOR_STATE_DIR (DIR/redfish/state) on every start.
// * Link (POST /redfish/link on the emulator's control API): sushy's external notifier PUTs
//   every power change to the emulator, which then polls that system every 500 ms until the
//   change has landed (sushy applies a pending Reset 1 to 11 s later, on a read) and powers the
//   machine off/on to match; a 10 s safety poll covers the rest. A Talos Shutdown is mirrored
//   to the BMC as ForceOff.
// * Everyone talks to the health proxy in front of sushy (lib/redfishHealth.mjs): hardware
//   health, and firmware updates with their tasks (lib/redfishUpdate.mjs); its control API
//   is `healthControlUrl`.
// Plain ESM, no npm dependencies.

import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import { freePort } from './net.mjs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHealthProxy } from './redfishHealth.mjs';
import {
  buildTalosEmulator,
  spawnRecorded,
  DEFAULT_FIXTURE,
} from './talos.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const INSTALL = path.resolve(here, '..', 'redfish', 'install.sh');
const sleep = ms => new Promise(r => setTimeout(r, ms));

/** Installs (or reuses) the sushy-tools venv; returns its path. */
export function installSushy({ log = () => {} } = {}) {
  const r = spawnSync('bash', [INSTALL], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.status !== 0) throw new Error(`redfish install failed:\n${r.stderr}`);
  if (r.stderr.trim()) log(r.stderr.trim());
  return r.stdout.trim().split('\n').pop();
}

/** Small Redfish client: JSON over http(s) with Basic auth and an optional CA. */
export function redfishRequest(
  base,
  { username, password, caFile },
  method,
  p,
  body,
) {
  const url = new URL(p, base);
  const mod = url.protocol === 'https:' ? https : http;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = mod.request(
      url,
      {
        method,
        ca: caFile ? fs.readFileSync(caFile) : undefined,
        headers: {
          authorization:
            'Basic ' +
            Buffer.from(`${username}:${password}`).toString('base64'),
          accept: 'application/json',
          ...(payload
            ? {
                'content-type': 'application/json',
                'content-length': Buffer.byteLength(payload),
              }
            : {}),
        },
        timeout: 10000,
      },
      res => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', c => (data += c));
        res.on('end', () => {
          let json = null;
          try {
            json = data ? JSON.parse(data) : null;
          } catch {
            json = data;
          }
          resolve({ status: res.statusCode, body: json });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

function fixtureSystems(fx) {
  const out = [];
  for (const n of fx.nodes || []) {
    if (!n.virtual && n.machine?.bmc)
      out.push({ uuid: n.machine.uuid, name: n.name, host: n.machine.host });
  }
  for (const s of fx.spares || [])
    if (s.bmc)
      out.push({
        uuid: s.uuid,
        name: s.name || `spare-${s.host}`,
        host: s.host,
      });
  for (const m of fx.foreign?.machines || []) {
    if (m.bmc)
      out.push({
        uuid: m.uuid,
        name: m.name || `${fx.foreign.cluster || 'plant-old'}-${m.host}`,
        host: m.host,
      });
  }
  return out;
}

function loadFixtureFile(file) {
  // JSON works directly; YAML needs a parser: ask the emulator's own loader through a fixture.json
  // written by lib/talos.mjs when available.
  const text = fs.readFileSync(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(
      `startRedfish: pass the parsed fixture object (got only ${file})`,
    );
  }
}

const py = s => JSON.stringify(s); // JSON strings are valid Python string literals

/**
 * @param {object} o
 * @param {string} o.dir       rack directory
 * @param {number} o.net       rack network number (informational; BMCs live on 127.0.0.1)
 * @param {object} [o.fixture] parsed fixture (else DIR/talos/fixture.json)
 * @param {object} [o.talos]   what startTalosEmulator returned (else DIR/talos/talosemu.json)
 * @param {boolean} [o.tls=true]
 */
export async function startRedfish({
  dir,
  net: rackNet = 0,
  fixture,
  talos,
  log = () => {},
  tls = true,
} = {}) {
  if (!dir) throw new Error('startRedfish: dir is required');
  dir = path.resolve(dir);
  const fx =
    fixture && typeof fixture === 'object'
      ? fixture
      : loadFixtureFile(path.join(dir, 'talos', 'fixture.json'));
  const venv = installSushy({ log });
  const rfDir = path.join(dir, 'redfish');
  const stateDir = path.join(rfDir, 'state');
  fs.rmSync(stateDir, { recursive: true, force: true });
  fs.mkdirSync(stateDir, { recursive: true });

  const username = 'rackside';
  const password = crypto.randomBytes(12).toString('hex');
  const htpasswd = path.join(rfDir, 'htpasswd');
  const h = spawnSync(
    path.join(venv, 'bin', 'python'),
    [
      '-c',
      'import bcrypt,sys; print(sys.argv[1] + ":" + bcrypt.hashpw(sys.argv[2].encode(), bcrypt.gensalt(rounds=4)).decode())',
      username,
      password,
    ],
    { encoding: 'utf8' },
  );
  if (h.status !== 0) throw new Error(`htpasswd: ${h.stderr}`);
  fs.writeFileSync(htpasswd, h.stdout, { mode: 0o600 });

  let caFile;
  let certFile;
  let keyFile;
  if (tls) {
    const tlsDir = path.join(rfDir, 'tls');
    const g = spawnSync(
      buildTalosEmulator({ log }),
      [
        'gen-tls',
        '--dir',
        tlsDir,
        '--ip',
        '127.0.0.1',
        '--name',
        `rackside-redfish-net${rackNet}`,
      ],
      {
        encoding: 'utf8',
      },
    );
    if (g.status !== 0) throw new Error(`gen-tls: ${g.stderr}`);
    caFile = path.join(tlsDir, 'ca.crt');
    certFile = path.join(tlsDir, 'server.crt');
    keyFile = path.join(tlsDir, 'server.key');
  }

  const systems = fixtureSystems(fx);
  const port = await freePort();
  // The emulator's control API: the linker lives there, and sushy's external notifier tells it
  // at once about every power change (so it polls only while a change is pending).
  let controlUrl = talos?.controlUrl;
  if (!controlUrl) {
    try {
      controlUrl = JSON.parse(
        fs.readFileSync(path.join(dir, 'talos', 'talosemu.json'), 'utf8'),
      ).controlUrl;
    } catch {
      controlUrl = null;
    }
  }
  const notify = controlUrl ? 'True' : 'False';
  const conf = [
    '# generated by e2e/rack/lib/redfish.mjs',
    `SUSHY_EMULATOR_LISTEN_IP = ${py('127.0.0.1')}`,
    `SUSHY_EMULATOR_LISTEN_PORT = ${port}`,
    `SUSHY_EMULATOR_AUTH_FILE = ${py(htpasswd)}`,
    'SUSHY_EMULATOR_FAKE_DRIVER = True',
    ...(controlUrl
      ? [`EXTERNAL_NOTIFICATION_URL = ${py(`${controlUrl}/redfish/notify`)}`]
      : []),
    `SUSHY_EMULATOR_STATE_DIR = ${py(stateDir)}`,
    ...(tls
      ? [
          `SUSHY_EMULATOR_SSL_CERT = ${py(certFile)}`,
          `SUSHY_EMULATOR_SSL_KEY = ${py(keyFile)}`,
        ]
      : []),
    'SUSHY_EMULATOR_FAKE_SYSTEMS = [',
    ...systems.map(
      s =>
        `    {'uuid': ${py(s.uuid)}, 'name': ${py(
          s.name,
        )}, 'power_state': 'On', 'external_notifier': ${notify}, ` +
        `'nics': [{'mac': ${py(macFor(s.uuid))}, 'ip': ${py(
          `127.0.${10 + rackNet}.${s.host}`,
        )}}]},`,
    ),
    ']',
    '',
  ].join('\n');
  const confFile = path.join(rfDir, 'emulator.conf');
  fs.writeFileSync(confFile, conf);

  const sushyBin = path.join(venv, 'bin', 'sushy-emulator');
  const proc = spawnRecorded(
    dir,
    'redfish',
    path.join(venv, 'bin', 'python'),
    [sushyBin, '--config', confFile],
    {
      recorded: sushyBin,
      env: { SUSHY_EMULATOR_CONFIG: confFile, PYTHONUNBUFFERED: '1' },
    },
  );
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const creds = { username, password, caFile };
  const deadline = Date.now() + 60000;
  for (;;) {
    proc.check();
    try {
      const r = await redfishRequest(url, creds, 'GET', '/redfish/v1/Systems');
      if (r.status === 200 && (r.body?.Members || []).length === systems.length)
        break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) {
      await proc.stop();
      throw new Error(
        `sushy-emulator not ready after 60s (see ${proc.logFile})`,
      );
    }
    await sleep(200);
  }

  const systemPaths = Object.fromEntries(
    systems.map(s => [s.name, `/redfish/v1/Systems/${s.uuid}`]),
  );
  const byUuid = Object.fromEntries(
    systems.map(s => [s.uuid, `/redfish/v1/Systems/${s.uuid}`]),
  );

  // Link to the Talos emulator's machines.
  let linked = false;
  if (controlUrl && systems.length) {
    const res = await fetch(`${controlUrl}/redfish/link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        url,
        username,
        password,
        caFile: caFile || '',
        systems: byUuid,
        // safety poll; notifications drive the link
        intervalNs: 10e9,
      }),
    });
    if (!res.ok)
      throw new Error(`redfish link: ${res.status} ${await res.text()}`);
    linked = true;
  } else {
    log(
      'redfish: no Talos emulator to link to (BMC power changes reach no machine)',
    );
  }
  // The BMC address everyone uses: the health proxy in front of sushy (lib/redfishHealth.mjs);
  // the Talos link above talks to sushy directly.
  const health = await startHealthProxy({
    upstream: url,
    username,
    password,
    certFile,
    keyFile,
    caFile,
    systems: systems.map(s => s.uuid),
  });
  log(
    `redfish: ${systems.length} BMCs at ${
      health.url
    } (health proxy; sushy at ${url})${
      linked ? ', linked to the Talos emulator' : ''
    }`,
  );

  return {
    url: health.url,
    sushyUrl: url,
    healthControlUrl: health.controlUrl,
    caFile,
    username,
    password,
    systems: systemPaths,
    systemsByUuid: byUuid,
    configFile: confFile,
    pid: proc.pid,
    logFile: proc.logFile,
    request: (method, p, body) =>
      redfishRequest(health.url, creds, method, p, body),
    async stop() {
      await health.stop();
      if (linked) {
        try {
          await fetch(`${controlUrl}/redfish/link`, { method: 'DELETE' });
        } catch {
          /* emulator already gone */
        }
      }
      await proc.stop();
    },
  };
}

function macFor(uuid) {
  const h = crypto.createHash('sha256').update(uuid).digest();
  return [
    '52',
    '54',
    ...[...h.subarray(0, 4)].map(b => b.toString(16).padStart(2, '0')),
  ].join(':');
}

export { DEFAULT_FIXTURE };
