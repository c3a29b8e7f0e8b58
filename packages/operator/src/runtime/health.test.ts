import type { AddressInfo } from 'node:net';
import { startHealthServer } from './health';

describe('startHealthServer', () => {
  it('answers liveness always and readiness only when ready', async () => {
    let ready = false;
    const server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      isReady: () => ready,
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(503);
      ready = true;
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      expect((await fetch(`${base}/nope`)).status).toBe(404);
    } finally {
      await new Promise(r => server.close(r));
    }
  });
});
