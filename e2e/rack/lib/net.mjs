// Loopback address plan shared by both halves of the simulated rack.
//
// A rack has a network number `net` (0..200). Machine `host` (last octet, 1..254) of that rack
// listens on 127.0.<10+net>.<host>; the whole 127.0.0.0/8 block is loopback on Linux, so no
// setup is needed and several racks (one per test file) can run side by side.
// Kubernetes control-plane processes (etcd, kube-apiserver, ...) stay on 127.0.0.1 with free ports.
//
// Who uses which networks, so that scripts/test.sh's two lanes (run side by side) never
// put two racks on one network. A claim writes ~/.cache/rackside/nets/<net>.lock with the
// claimer's pid; a fixed network is one only its suite uses.
//   0         the demo (scripts/demo.sh) and redfish-update.test.mjs       lane A
//   1..99     Jest's rack suites, claimed (packages/rack-testing net.ts)   lane A
//   100..149  browser tests that claim (e2e/tests/harness.mjs claimRackNet)
//             and the install guide, 120..149 the benches, claimed          lane B
//   150..159  the rack's node --test suites, fixed (RACK_TEST_NET_*)        lane A
//   160..189  approvals.test.mjs, claimed (e2e/rack/lib/rackPortal.mjs)     lane A
//   190..200  browser tests at their fixed offset (RACKSIDE_E2E_NET)        lane B

import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A TCP port free on `host` now (the kernel's choice; whoever binds it next gets it). */
export function freePort(host = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export const MIN_NET = 0;
export const MAX_NET = 200;

export function checkNet(net) {
  const n = Number(net);
  if (!Number.isInteger(n) || n < MIN_NET || n > MAX_NET) {
    throw new Error(
      `rack net must be an integer in ${MIN_NET}..${MAX_NET}, got ${net}`,
    );
  }
  return n;
}

/** Address of machine `host` (last octet) in rack `net`: 127.0.<10+net>.<host>. */
export function machineAddress(net, host) {
  const n = checkNet(net);
  const h = Number(host);
  if (!Number.isInteger(h) || h < 1 || h > 254)
    throw new Error(`machine host must be 1..254, got ${host}`);
  return `127.0.${10 + n}.${h}`;
}

/** Inverse of machineAddress: {net, host} for an address of the plan, or null. */
export function parseMachineAddress(addr) {
  const m = /^127\.0\.(\d+)\.(\d+)$/.exec(String(addr));
  if (!m) return null;
  const net = Number(m[1]) - 10;
  const host = Number(m[2]);
  if (net < MIN_NET || net > MAX_NET || host < 1 || host > 254) return null;
  return { net, host };
}

/** Whether process `pid` is alive (EPERM: alive, another user's). */
export function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Where the network locks live: `<RACKSIDE_CACHE or ~/.cache/rackside>/nets`. */
export function netLockDir() {
  return path.join(
    process.env.RACKSIDE_CACHE || path.join(os.homedir(), '.cache', 'rackside'),
    'nets',
  );
}

/**
 * Claims the first rack network of `first`..`last` no live process holds (its lock file
 * written with this process's pid; a lock whose owner died is taken over). Answers
 * `{ net, release() }`.
 */
export function claimNetIn(first, last) {
  const dir = netLockDir();
  fs.mkdirSync(dir, { recursive: true });
  for (let n = first; n <= last; n++) {
    const file = path.join(dir, `${n}.lock`);
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
    } catch {
      const owner = Number(fs.readFileSync(file, 'utf8').trim());
      if (owner && processAlive(owner)) continue;
      fs.writeFileSync(file, String(process.pid));
    }
    return { net: n, release: () => fs.rmSync(file, { force: true }) };
  }
  throw new Error(`no free rack network in ${dir} (${first}..${last})`);
}
