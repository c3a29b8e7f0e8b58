// Talos emulator and Redfish BMCs of the simulated rack.
//   node --test e2e/rack/test/talos.test.mjs
//
// 1. `go test` of e2e/rack/talosemu (gRPC client side in Go, fake client-go clientset):
//    maintenance TLS, mTLS, "certificate required", COSI SystemInformation, reboot/shutdown/
//    reset/apply and their Node effects.
// 2. Against a full rack (real kube-apiserver + kwok + emulator + sushy-tools; needs
//    e2e/rack/build.sh): gRPC from Node's own http2 (no npm deps) over maintenance TLS and
//    mTLS, a reboot that flips the Node NotReady -> Ready with a new bootID, and a Redfish
//    ForceOff that makes the Node NotReady (then On makes it Ready), an Upgrade that reboots
//    into the image's version (Version and the Node's osImage) and one that rolls back. Skipped when the rack's
//    binaries are missing, unless RACKSIDE_REQUIRE_RACK=1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const NET = Number(process.env.RACK_TALOS_TEST_NET ?? 151);
const sleep = ms => new Promise(r => setTimeout(r, ms));

// ------------------------------------------------------------------------------------------
// Minimal gRPC unary client over node:http2 and a tiny protobuf reader/writer.

function pbString(field, s) {
  const b = Buffer.from(s);
  return Buffer.concat([varint((field << 3) | 2), varint(b.length), b]);
}
function varint(n) {
  const out = [];
  while (n > 127) {
    out.push((n & 127) | 128);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}
/** Decodes one message level: {field: [Buffer|number, ...]} */
function pbFields(buf) {
  const out = {};
  let i = 0;
  const rv = () => {
    let n = 0;
    let s = 0;
    for (;;) {
      const b = buf[i++];
      n += (b & 127) * 2 ** s;
      if (b < 128) return n;
      s += 7;
    }
  };
  while (i < buf.length) {
    const key = rv();
    const f = Math.floor(key / 8);
    const wt = key & 7;
    let v;
    if (wt === 0) v = rv();
    else if (wt === 2) {
      const l = rv();
      v = buf.subarray(i, i + l);
      i += l;
    } else if (wt === 1) {
      v = buf.subarray(i, i + 8);
      i += 8;
    } else if (wt === 5) {
      v = buf.subarray(i, i + 4);
      i += 4;
    } else throw new Error(`wire type ${wt}`);
    (out[f] ||= []).push(v);
  }
  return out;
}

function talosCreds(talosconfig) {
  const tc = fs.readFileSync(talosconfig, 'utf8');
  const ctx = {};
  for (const k of ['ca', 'crt', 'key'])
    ctx[k] = Buffer.from(
      new RegExp(`^\\s+${k}: (\\S+)$`, 'm').exec(tc)[1],
      'base64',
    ).toString();
  assert.match(ctx.key, /-----BEGIN ED25519 PRIVATE KEY-----/);
  // Node's OpenSSL wants the standard PKCS#8 label.
  ctx.key = ctx.key.replaceAll('ED25519 PRIVATE KEY', 'PRIVATE KEY');
  return ctx;
}

/** Unary gRPC call; resolves {code, message, body}; rejects on connection/TLS errors. */
function grpcCall(address, method, reqBytes, { creds, metadata = {} } = {}) {
  return new Promise((resolve, reject) => {
    const opts = creds
      ? {
          ca: creds.ca,
          cert: creds.crt,
          key: creds.key,
          servername: undefined,
          checkServerIdentity: () => undefined,
        }
      : { rejectUnauthorized: false };
    const session = http2.connect(`https://${address}:50000`, {
      ...opts,
      ALPNProtocols: ['h2'],
    });
    const done = (fn, v) => {
      session.close();
      fn(v);
    };
    session.on('error', e => done(reject, e));
    const frame = Buffer.alloc(5 + reqBytes.length);
    frame.writeUInt32BE(reqBytes.length, 1);
    reqBytes.copy(frame, 5);
    const req = session.request({
      ':method': 'POST',
      ':path': method,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...metadata,
    });
    const chunks = [];
    let headers = {};
    req.on('response', h => (headers = h));
    req.on('data', c => chunks.push(c));
    req.on('trailers', t => (headers = { ...headers, ...t }));
    req.on('error', e => done(reject, e));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const msg =
        body.length >= 5
          ? body.subarray(5, 5 + body.readUInt32BE(1))
          : Buffer.alloc(0);
      done(resolve, {
        code: Number(headers['grpc-status'] ?? -1),
        message: decodeURIComponent(headers['grpc-message'] ?? ''),
        body: msg,
      });
    });
    req.end(frame);
  });
}

const VERSION = '/machine.MachineService/Version';
function versionTag(body) {
  const msg = pbFields(pbFields(body)[1][0]); // messages[0]
  return pbFields(msg[2][0])[1][0].toString(); // version.tag
}

// ------------------------------------------------------------------------------------------

// The emulator's own Go tests run as `go test` in e2e/rack/talosemu (scripts/test.sh).

let rackMod;
let rack;
let talos; // rack.talos, or a standalone emulator (no Kubernetes) when the rack cannot start
let dir;
let skipRack = false;

before(
  async () => {
    rackMod = await import('../rack.mjs');
    const bins = rackMod.binaries();
    const missing = Object.entries(bins)
      .filter(([k]) => !['binRoot', 'k8sDir'].includes(k))
      .some(([, p]) => !fs.existsSync(p));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rack-talos-test-'));
    if (missing && process.env.RACKSIDE_REQUIRE_RACK !== '1') {
      skipRack = 'rack binaries missing (run e2e/rack/build.sh)';
      const { startTalosEmulator } = await import('../lib/talos.mjs');
      talos = await startTalosEmulator({ dir, net: NET, log: () => {} });
      return;
    }
    rack = await rackMod.startRack({
      dir,
      net: NET,
      withTalos: true,
      withRedfish: true,
      withWorkloads: false,
      log: () => {},
    });
    talos = rack.talos;
  },
  { timeout: 900000 },
);

after(async () => {
  if (rack) await rack.stop();
  else if (talos) await talos.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const machineOf = name => talos.machines.find(m => m.name === name);
const spare = () => talos.machines.find(m => m.mode === 'maintenance');

async function node(name) {
  return rack.kube.get(`/api/v1/nodes/${name}`);
}
const isReady = n =>
  n.status.conditions?.some(c => c.type === 'Ready' && c.status === 'True');

async function waitFor(what, fn, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

test('Version over maintenance TLS (no client cert) and SMBIOS UUID over COSI', async () => {
  const m = spare();
  const v = await grpcCall(m.address, VERSION, Buffer.alloc(0));
  assert.equal(v.code, 0, v.message);
  assert.equal(versionTag(v.body), 'v1.13.9');
  const req = Buffer.concat([
    pbString(1, 'hardware'),
    pbString(2, 'SystemInformations.hardware.talos.dev'),
    pbString(3, 'systeminformation'),
  ]);
  const g = await grpcCall(m.address, '/cosi.resource.State/Get', req);
  assert.equal(g.code, 0, g.message);
  const spec = pbFields(pbFields(pbFields(g.body)[1][0])[2][0]); // resource.spec
  const protoSpec = pbFields(spec[1][0]);
  assert.equal(protoSpec[5][0].toString(), m.uuid);
});

test('configured machine needs mTLS; without a client cert the handshake fails', async () => {
  const m = machineOf('cp-1');
  const creds = talosCreds(talos.talosconfigs['plant-a']);
  const v = await grpcCall(m.address, VERSION, Buffer.alloc(0), { creds });
  assert.equal(v.code, 0, v.message);
  await assert.rejects(
    grpcCall(m.address, VERSION, Buffer.alloc(0)),
    /certificate required/,
  );
  // plant-a's CA does not accept a plant-old machine's server certificate.
  const foreign = talos.machines.find(x => x.cluster === 'plant-old');
  await assert.rejects(
    grpcCall(foreign.address, VERSION, Buffer.alloc(0), { creds }),
    /certificate|self.signed|verify/i,
  );
});

test('rack: Reboot makes the Node NotReady, then Ready with a new bootID', async t => {
  assert.ok(!skipRack, skipRack);
  const m = machineOf('worker-3');
  const before = await node('worker-3');
  const bootID = before.status.nodeInfo.bootID;
  const creds = talosCreds(talos.talosconfigs['plant-a']);
  const r = await grpcCall(
    m.address,
    '/machine.MachineService/Reboot',
    Buffer.alloc(0),
    { creds },
  );
  assert.equal(r.code, 0, r.message);
  const actor = pbFields(pbFields(r.body)[1][0])[2][0].toString();
  assert.ok(actor.length > 0, 'actor_id');
  await waitFor(
    'worker-3 NotReady',
    async () => {
      const n = await node('worker-3');
      return (
        !isReady(n) &&
        n.metadata.annotations?.['rack.rackside.dev/power'] === 'off'
      );
    },
    10000,
  );
  const after = await waitFor(
    'worker-3 Ready again',
    async () => {
      const n = await node('worker-3');
      return (
        isReady(n) &&
        !n.metadata.annotations?.['rack.rackside.dev/power'] &&
        n.status.nodeInfo.bootID !== bootID &&
        n
      );
    },
    20000,
  );
  assert.equal(after.status.nodeInfo.systemUUID, m.uuid);
  const counts = await talos.counts();
  assert.equal(counts[m.uuid].reboot, 1);
});

test('rack: Redfish ForceOff makes the Node NotReady; On brings it back', async t => {
  assert.ok(!skipRack, skipRack);
  assert.ok(rack.redfish, 'redfish not started');
  const sys = rack.redfish.systems['worker-4'];
  assert.ok(sys, 'worker-4 has a BMC');
  const r = await rack.redfish.request(
    'POST',
    `${sys}/Actions/ComputerSystem.Reset`,
    { ResetType: 'ForceOff' },
  );
  assert.ok([200, 202, 204].includes(r.status), `reset ${r.status}`);
  await waitFor(
    'worker-4 NotReady',
    async () => {
      const n = await node('worker-4');
      return (
        !isReady(n) &&
        n.metadata.annotations?.['rack.rackside.dev/power'] === 'off'
      );
    },
    30000,
  );
  assert.equal((await rack.redfish.request('GET', sys)).body.PowerState, 'Off');
  const on = await rack.redfish.request(
    'POST',
    `${sys}/Actions/ComputerSystem.Reset`,
    { ResetType: 'On' },
  );
  assert.ok([200, 202, 204].includes(on.status));
  await waitFor(
    'worker-4 Ready',
    async () => isReady(await node('worker-4')),
    30000,
  );
  const m = machineOf('worker-4');
  const counts = await talos.counts();
  assert.equal(counts[m.uuid].powerOff, 1);
  assert.equal(counts[m.uuid].powerOn, 1);
});

function pbVarint(field, n) {
  return Buffer.concat([varint(field << 3), varint(n)]);
}
function pbBytes(field, b) {
  return Buffer.concat([varint((field << 3) | 2), varint(b.length), b]);
}

test('rack: Shutdown keeps the Node NotReady until power-on', async t => {
  assert.ok(!skipRack, skipRack);
  const m = machineOf('worker-5');
  const creds = talosCreds(talos.talosconfigs['plant-a']);
  const r = await grpcCall(
    m.address,
    '/machine.MachineService/Shutdown',
    Buffer.alloc(0),
    { creds },
  );
  assert.equal(r.code, 0, r.message);
  await waitFor(
    'worker-5 NotReady',
    async () => !isReady(await node('worker-5')),
    10000,
  );
  await sleep(3000); // kwok must leave it alone
  assert.equal(isReady(await node('worker-5')), false);
  await assert.rejects(
    grpcCall(m.address, VERSION, Buffer.alloc(0), { creds }),
  );
  await talos.power(m.uuid, 'on');
  await waitFor(
    'worker-5 Ready',
    async () => isReady(await node('worker-5')),
    15000,
  );
  const counts = (await talos.counts())[m.uuid];
  assert.equal(counts.shutdown, 1);
  assert.equal(counts.powerOn, 1);
});

test('rack: foreign machine: EtcdMemberList, Reset to maintenance, ApplyConfiguration joins plant-a', async t => {
  assert.ok(!skipRack, skipRack);
  const oldCreds = talosCreds(talos.talosconfigs['plant-old']);
  const worker = talos.machines.find(
    x => x.cluster === 'plant-old' && x.role === 'worker',
  );
  const cp = talos.machines.find(
    x => x.cluster === 'plant-old' && x.role === 'controlplane',
  );
  const members = await grpcCall(
    cp.address,
    '/machine.MachineService/EtcdMemberList',
    Buffer.alloc(0),
    { creds: oldCreds },
  );
  assert.equal(members.code, 0, members.message);
  assert.equal((pbFields(pbFields(members.body)[1][0])[3] || []).length, 1);

  const wipe = label =>
    pbBytes(3, Buffer.concat([pbString(1, label), pbVarint(2, 1)]));
  const reset = Buffer.concat([
    pbVarint(1, 1),
    pbVarint(2, 1),
    wipe('STATE'),
    wipe('EPHEMERAL'),
  ]);
  const r = await grpcCall(
    worker.address,
    '/machine.MachineService/Reset',
    reset,
    { creds: oldCreds },
  );
  assert.equal(r.code, 0, r.message);
  await waitFor(
    'maintenance mode',
    async () => {
      try {
        return (
          (await grpcCall(worker.address, VERSION, Buffer.alloc(0))).code === 0
        );
      } catch {
        return false;
      }
    },
    15000,
  );
  const config =
    'version: v1alpha1\nmachine:\n  type: worker\n  network:\n    hostname: worker-7\ncluster:\n  clusterName: plant-a\n';
  const apply = Buffer.concat([
    pbBytes(1, Buffer.from(config)),
    pbVarint(4, 1),
  ]);
  const a = await grpcCall(
    worker.address,
    '/machine.MachineService/ApplyConfiguration',
    apply,
  );
  assert.equal(a.code, 0, a.message);
  const n = await waitFor(
    'Node worker-7 Ready',
    async () => {
      try {
        const n = await node('worker-7');
        return isReady(n) && n;
      } catch {
        return false;
      }
    },
    20000,
  );
  assert.equal(n.status.nodeInfo.systemUUID, worker.uuid);
  assert.equal(n.metadata.annotations['kwok.x-k8s.io/node'], 'fake');
  const s = await talos.machine(worker.uuid);
  assert.equal(s.cluster, 'plant-a');
  assert.equal(s.mode, 'configured');
  assert.deepEqual([s.counts.reset, s.counts.apply], [1, 1]);
});

test('rack: Upgrade reboots into the new version (Version, osImage); a failing image rolls back', async t => {
  assert.ok(!skipRack, skipRack);
  const m = machineOf('worker-6');
  const creds = talosCreds(talos.talosconfigs['plant-a']);
  await talos.setUpgrade({ delayMs: 300, failing: [] });
  const start = await node('worker-6');
  assert.equal(start.status.nodeInfo.osImage, 'Talos (v1.13.9)');
  // Waits for a reboot of worker-6 (NotReady, then Ready with another boot ID): its osImage.
  const rebootOsImage = async bootID => {
    await waitFor(
      'worker-6 NotReady',
      async () => !isReady(await node('worker-6')),
      10000,
    );
    const n = await waitFor(
      'worker-6 Ready with a new bootID',
      async () => {
        const n = await node('worker-6');
        return (
          isReady(n) &&
          !n.metadata.annotations?.['rack.rackside.dev/power'] &&
          n.status.nodeInfo.bootID !== bootID &&
          n
        );
      },
      20000,
    );
    return n.status.nodeInfo.osImage;
  };
  const upgrade = image =>
    grpcCall(
      m.address,
      '/machine.MachineService/Upgrade',
      Buffer.concat([pbString(1, image), pbVarint(2, 1)]), // image, preserve
      { creds },
    );
  const version = async () => {
    try {
      const v = await grpcCall(m.address, VERSION, Buffer.alloc(0), { creds });
      return v.code === 0 && versionTag(v.body);
    } catch {
      return false;
    }
  };

  const bad = await upgrade('ghcr.io/siderolabs/installer');
  assert.equal(bad.code, 3, bad.message); // InvalidArgument: no tag, no version
  assert.match(bad.message, /installer image/);

  const image = 'ghcr.io/siderolabs/installer:v1.14.0';
  const r = await upgrade(image);
  assert.equal(r.code, 0, r.message);
  const msg = pbFields(pbFields(r.body)[1][0]);
  assert.equal(msg[2][0].toString(), 'Upgrade request received');
  assert.ok(msg[3][0].toString().length > 0, 'actor_id');
  assert.equal(
    await rebootOsImage(start.status.nodeInfo.bootID),
    'Talos (v1.14.0)',
  );
  await waitFor('Version v1.14.0', async () => (await version()) === 'v1.14.0');

  const failing = 'ghcr.io/siderolabs/installer:v1.15.0';
  await talos.failUpgrade(failing);
  const before = (await node('worker-6')).status.nodeInfo.bootID;
  const f = await upgrade(failing);
  assert.equal(f.code, 0, f.message);
  assert.equal(await rebootOsImage(before), 'Talos (v1.14.0)');
  await waitFor(
    'Version still v1.14.0',
    async () => (await version()) === 'v1.14.0',
  );

  const h = await talos.upgrades('worker-6');
  assert.equal(h.count, 3);
  assert.deepEqual(h.images, ['ghcr.io/siderolabs/installer', image, failing]);
  assert.deepEqual(
    h.requests.map(x => x.result),
    ['refused', 'installed', 'rolledBack'],
  );
  assert.equal((await talos.counts())[m.uuid].upgrade, 3);
  assert.equal((await talos.counts())[m.uuid].reboot, 0);
});
