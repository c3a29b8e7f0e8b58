/*
 * The webhook serves a renewed certificate without a restart: the files are replaced the
 * way a Kubernetes Secret volume replaces them (a new timestamped directory, the `..data`
 * symlink swapped by a rename), and a new TLS connection sees the new certificate. Bad
 * states on the way (a key that does not match, a half-written file) keep the old pair.
 */
import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { startWebhookServer, type WebhookServer } from './server';
import {
  createCertificateAuthority,
  issueCertificate,
  type IssuedCertificate,
} from './certificates';

const HOST = '127.0.0.1';

/** A Secret volume: <dir>/tls.crt -> ..data/tls.crt, ..data -> ..<generation>. */
class SecretVolume {
  private generation = 0;
  constructor(readonly dir: string) {}

  get certFile() {
    return path.join(this.dir, 'tls.crt');
  }
  get keyFile() {
    return path.join(this.dir, 'tls.key');
  }

  /** Writes a new generation and swaps ..data to it atomically, as the kubelet does. */
  write(files: { certPem: string; keyPem: string }) {
    const name = `..gen_${++this.generation}`;
    fs.mkdirSync(path.join(this.dir, name));
    fs.writeFileSync(path.join(this.dir, name, 'tls.crt'), files.certPem);
    fs.writeFileSync(path.join(this.dir, name, 'tls.key'), files.keyPem);
    fs.symlinkSync(name, path.join(this.dir, '..data_tmp'));
    fs.renameSync(
      path.join(this.dir, '..data_tmp'),
      path.join(this.dir, '..data'),
    );
    for (const file of ['tls.crt', 'tls.key']) {
      if (!fs.existsSync(path.join(this.dir, file))) {
        fs.symlinkSync(path.join('..data', file), path.join(this.dir, file));
      }
    }
  }
}

/** The fingerprint of the certificate a new TLS connection is served. */
function servedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: HOST, port, ca, servername: undefined });
    socket.once('secureConnect', () => {
      const peer = socket.getPeerX509Certificate();
      socket.end();
      if (!peer) reject(new Error('no peer certificate'));
      else resolve(peer.fingerprint256);
    });
    socket.once('error', reject);
  });
}

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

let dir: string;
let volume: SecretVolume;
let caPem: string;
let first: IssuedCertificate;
let second: IssuedCertificate;
let third: IssuedCertificate;
let server: WebhookServer;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-reload-'));
  volume = new SecretVolume(dir);
  const ca = await createCertificateAuthority('reload-test-ca');
  const issue = () =>
    issueCertificate(ca, { commonName: HOST, usage: 'server', hosts: [HOST] });
  [first, second, third] = await Promise.all([issue(), issue(), issue()]);
  caPem = ca.certPem;
  volume.write(first);
  server = await startWebhookServer({
    tls: first,
    reloadFrom: { certFile: volume.certFile, keyFile: volume.keyFile },
    host: HOST,
    port: 0,
    access: { canReclaim: async () => ({ allowed: true }) },
  });
});

afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('serves the files it started with', async () => {
  expect(await servedFingerprint(server.port, caPem)).toBe(
    fingerprint(first.certPem),
  );
  expect(server.fingerprint()).toBe(fingerprint(first.certPem));
});

it('a swapped Secret volume is served to the next connection, without a restart', async () => {
  const reloaded = once(server.events, 'reload');
  volume.write(second);
  const [loaded] = await reloaded;
  expect(loaded).toBe(fingerprint(second.certPem));
  expect(await servedFingerprint(server.port, caPem)).toBe(
    fingerprint(second.certPem),
  );
  expect(fingerprint(second.certPem)).not.toBe(fingerprint(first.certPem));
});

it('a certificate with the wrong key, or a truncated one, is refused and the old pair stays served', async () => {
  for (const broken of [
    { certPem: third.certPem, keyPem: second.keyPem },
    { certPem: third.certPem.slice(0, 100), keyPem: third.keyPem },
  ]) {
    const refused = once(server.events, 'reloadError');
    volume.write(broken);
    await refused;
    expect(await servedFingerprint(server.port, caPem)).toBe(
      fingerprint(second.certPem),
    );
  }
  // Once the pair is whole, it is loaded.
  const reloaded = once(server.events, 'reload');
  volume.write(third);
  expect((await reloaded)[0]).toBe(fingerprint(third.certPem));
  expect(await servedFingerprint(server.port, caPem)).toBe(
    fingerprint(third.certPem),
  );
});

it('files replaced in place (not a Secret volume) are reloaded too', async () => {
  const plain = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-plain-'));
  const certFile = path.join(plain, 'tls.crt');
  const keyFile = path.join(plain, 'tls.key');
  fs.writeFileSync(certFile, first.certPem);
  fs.writeFileSync(keyFile, first.keyPem);
  const other = await startWebhookServer({
    tls: first,
    reloadFrom: { certFile, keyFile },
    host: HOST,
    port: 0,
    access: { canReclaim: async () => ({ allowed: true }) },
  });
  try {
    const reloaded = once(other.events, 'reload');
    // Written one after the other: in between the pair does not match, which is skipped.
    fs.writeFileSync(keyFile, second.keyPem);
    fs.writeFileSync(certFile, second.certPem);
    expect((await reloaded)[0]).toBe(fingerprint(second.certPem));
    expect(await servedFingerprint(other.port, caPem)).toBe(
      fingerprint(second.certPem),
    );
  } finally {
    await other.close();
    fs.rmSync(plain, { recursive: true, force: true });
  }
});
