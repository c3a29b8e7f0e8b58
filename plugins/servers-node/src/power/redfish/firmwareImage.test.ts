/*
 * The operator's own fetch of a firmware image (firmwareImage.ts) from a local https
 * server with the test CA: the sha256 computed as it streams in, the source's credentials
 * as basic auth, and what it refuses (a redirect, a body past the cap, a certificate of
 * another CA, an error status), never quoting a credential.
 */
import { createHash } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  OTHER_CA_PEM,
  TEST_BMC_CERT_PEM,
  TEST_BMC_KEY_PEM,
  TEST_CA_PEM,
} from '../../testing/testTls';
import { fetchFirmwareImage, firmwareImageChecksum } from './firmwareImage';

const IMAGE = Buffer.alloc(300_000, 7);
const SHA = `sha256:${createHash('sha256').update(IMAGE).digest('hex')}`;
const CREDENTIALS = { username: 'fw-reader', password: 'n0t-in-any-log' };

let server: https.Server;
let origin: string;
const seen: Array<{ path?: string; authorization?: string }> = [];
const routes = new Map<
  string,
  (req: IncomingMessage, res: ServerResponse) => void
>();

beforeAll(async () => {
  server = https.createServer(
    { cert: TEST_BMC_CERT_PEM, key: TEST_BMC_KEY_PEM },
    (req, res) => {
      seen.push({ path: req.url, authorization: req.headers.authorization });
      const route = routes.get(req.url ?? '');
      if (route) route(req, res);
      else res.writeHead(404).end();
    },
  );
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  routes.set('/bios.bin', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    // In several chunks, as a large image comes.
    for (let at = 0; at < IMAGE.length; at += 64 * 1024) {
      res.write(IMAGE.subarray(at, at + 64 * 1024));
    }
    res.end();
  });
  routes.set('/moved.bin', (_req, res) =>
    res.writeHead(302, { location: '/bios.bin' }).end(),
  );
});
afterAll(async () => {
  await new Promise(resolve => server.close(resolve));
});
beforeEach(() => {
  seen.length = 0;
});

describe('firmwareImageChecksum', () => {
  it('is the sha256 of the image, with the source credentials as basic auth', async () => {
    expect(
      await firmwareImageChecksum(`${origin}/bios.bin`, {
        caBundle: TEST_CA_PEM,
        credentials: CREDENTIALS,
      }),
    ).toBe(SHA);
    expect(seen).toEqual([
      {
        path: '/bios.bin',
        authorization: `Basic ${Buffer.from(
          'fw-reader:n0t-in-any-log',
        ).toString('base64')}`,
      },
    ]);
  });

  it('sends no credentials when the source has none', async () => {
    await firmwareImageChecksum(`${origin}/bios.bin`, {
      caBundle: TEST_CA_PEM,
    });
    expect(seen[0].authorization).toBeUndefined();
  });

  it('refuses a redirect, never following it', async () => {
    await expect(
      firmwareImageChecksum(`${origin}/moved.bin`, {
        caBundle: TEST_CA_PEM,
        credentials: CREDENTIALS,
      }),
    ).rejects.toThrow(/could not be fetched/);
    expect(seen.map(s => s.path)).toEqual(['/moved.bin']);
  });

  it('refuses an image past the cap as it streams in', async () => {
    await expect(
      firmwareImageChecksum(`${origin}/bios.bin`, {
        caBundle: TEST_CA_PEM,
        maxBytes: 100_000,
      }),
    ).rejects.toThrow(/larger than the limit/);
  });

  it('refuses a certificate of another CA, and an error status, never quoting the password', async () => {
    const errors: string[] = [];
    for (const [uri, ca] of [
      [`${origin}/bios.bin`, OTHER_CA_PEM],
      [`${origin}/missing.bin`, TEST_CA_PEM],
    ]) {
      await firmwareImageChecksum(uri, {
        caBundle: ca,
        credentials: CREDENTIALS,
      }).catch(error => errors.push((error as Error).message));
    }
    expect(errors).toHaveLength(2);
    expect(errors[1]).toMatch(/answered HTTP 404/);
    expect(errors.join(' ')).not.toContain(CREDENTIALS.password);
  });

  it('refuses http and user info in the URI', async () => {
    await expect(
      firmwareImageChecksum(`http://127.0.0.1/bios.bin`),
    ).rejects.toThrow(/not a plain https URL/);
    await expect(
      firmwareImageChecksum(`https://u:p@127.0.0.1/bios.bin`),
    ).rejects.toThrow(/not a plain https URL/);
  });
});

describe('fetchFirmwareImage', () => {
  it('fetches the bytes a multipart push uploads, with the credentials', async () => {
    const image = await fetchFirmwareImage(`${origin}/bios.bin`, {
      caBundle: TEST_CA_PEM,
      credentials: CREDENTIALS,
    });
    expect(Buffer.from(image.bytes).equals(IMAGE)).toBe(true);
    expect(image.fileName).toBe('bios.bin');
    expect(seen[0].authorization).toMatch(/^Basic /);
  });
});
