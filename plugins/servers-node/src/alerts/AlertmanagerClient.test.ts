/*
 * Every way Alertmanager can fail a call is one AlertmanagerUnreachableError (docs/alerts.md,
 * "When Alertmanager cannot be read"), tried against a real HTTP server on 127.0.0.1 that
 * misbehaves: headers then a stall mid-body, no headers at all, a body past its cap, a
 * body that is not JSON, a 500, a port nobody listens on, a token file that is gone.
 */
import http from 'node:http';
import net from 'node:net';
import {
  ALERTMANAGER_LIST_MAX_BYTES,
  AlertmanagerClient,
  AlertmanagerUnreachableError,
} from './AlertmanagerClient';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

let server: http.Server;
let handler: Handler;
let base: string;
/** Connections still open: closed after each test so a stalled answer ends. */
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  server = http.createServer((req, res) => handler(req, res));
  server.on('connection', socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>(done => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
});

afterEach(() => {
  for (const socket of sockets) socket.destroy();
});

afterAll(async () => {
  await new Promise(done => server.close(done));
});

function client(options: { timeoutMs?: number; tokenFile?: string } = {}) {
  return new AlertmanagerClient({ url: base, timeoutMs: 300, ...options });
}

/** The error a call fails with (the test fails if it succeeds). */
async function failure(call: Promise<unknown>): Promise<Error> {
  try {
    await call;
  } catch (error) {
    return error as Error;
  }
  throw new Error('the call succeeded');
}

describe('AlertmanagerClient: every failure is AlertmanagerUnreachableError', () => {
  it('a body that stalls after the headers is given up at the deadline, as the one type', async () => {
    let served!: () => void;
    const sent = new Promise<void>(done => {
      served = done;
    });
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Half a list, then nothing: a half-open Alertmanager or a stalled proxy.
      res.write('[{"fingerprint":"a",');
      served();
    };
    const error = await failure(client().alerts());
    await sent;
    expect(error).toBeInstanceOf(AlertmanagerUnreachableError);
    expect(error.message).toMatch(
      /^Alertmanager GET \/alerts: the answer did not arrive in time/,
    );
  });

  it('no headers at all is given up at the deadline, as the one type', async () => {
    handler = () => {
      // Accept the request and never answer.
    };
    const error = await failure(client().silences());
    expect(error).toBeInstanceOf(AlertmanagerUnreachableError);
    expect(error.message).toMatch(/^Alertmanager GET \/silences: /);
  });

  it('a write whose answer stalls mid-body is the one type too', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"silenceID":');
    };
    const error = await failure(
      client().putSilence({
        matchers: [{ name: 'node', value: 'w', isRegex: false, isEqual: true }],
        startsAt: new Date().toISOString(),
        endsAt: new Date(Date.now() + 60_000).toISOString(),
        createdBy: 'Rackside for jane',
        comment: 'x',
      }),
    );
    expect(error).toBeInstanceOf(AlertmanagerUnreachableError);
    expect(error.message).toMatch(/^Alertmanager POST \/silences: /);
  });

  it('a list past its cap is refused while it streams, naming the limit', async () => {
    const chunk = Buffer.alloc(1024 * 1024, ' ');
    let written = 0;
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      const more = () => {
        while (written <= ALERTMANAGER_LIST_MAX_BYTES + chunk.length) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', more);
            return;
          }
        }
      };
      more();
    };
    const error = await failure(client({ timeoutMs: 10_000 }).alerts());
    expect(error).toBeInstanceOf(AlertmanagerUnreachableError);
    expect(error.message).toContain(
      'larger than the limit of 16,777,216 bytes',
    );
  });

  it('a Content-Length past the cap is refused before the body is read', async () => {
    handler = (_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(ALERTMANAGER_LIST_MAX_BYTES + 1),
      });
      res.write('[');
    };
    const error = await failure(client().alerts());
    expect(error).toBeInstanceOf(AlertmanagerUnreachableError);
    expect(error.message).toContain('Content-Length 16777217');
  });

  it('an answer that is not JSON, or not a list, is the one type', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('<html>proxy error</html>');
    };
    const notJson = await failure(client().alerts());
    expect(notJson).toBeInstanceOf(AlertmanagerUnreachableError);
    expect(notJson.message).toBe(
      'Alertmanager GET /alerts: the answer is not JSON',
    );
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"alerts":[]}');
    };
    const notList = await failure(client().alerts());
    expect(notList).toBeInstanceOf(AlertmanagerUnreachableError);
  });

  it('an alert whose label or annotation is not a text (nested 100,000 deep) is the one type, read in linear time', async () => {
    // 200 KB of JSON: JSON.parse reads it, but every JSON.stringify or template literal
    // downstream (the backend's mapping digest, an alert's name in a message) overflows
    // the stack on it, and the backend's refresh rejected with a RangeError.
    const deep = `${'['.repeat(100_000)}"x"${']'.repeat(100_000)}`;
    const alert = (labels: string, annotations = '{}') =>
      `{"fingerprint":"f1","labels":${labels},"annotations":${annotations},"startsAt":"2026-12-01T00:00:00Z","endsAt":"2026-12-01T01:00:00Z","status":{"state":"active","silencedBy":[],"inhibitedBy":[]}}`;
    for (const body of [
      `[${alert(`{"alertname":"A","node":${deep}}`)}]`,
      `[${alert('{"alertname":"A"}', `{"summary":${deep}}`)}]`,
      `[${alert('{"alertname":"A"}')},${alert('{"alertname":7}')}]`,
      `[${alert('["node"]')}]`,
    ]) {
      handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      };
      const started = process.hrtime.bigint();
      const error = await failure(client().alerts());
      expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(
        1000,
      );
      expect(error).toBeInstanceOf(AlertmanagerUnreachableError);
      expect(error.message).toMatch(
        /^Alertmanager GET \/alerts: alert \d of the answer is malformed: (labels|annotations) must be texts$/,
      );
    }
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`[${alert('{"alertname":"A","node":"worker-1"}')}]`);
    };
    await expect(client().alerts()).resolves.toEqual([
      expect.objectContaining({
        labels: { alertname: 'A', node: 'worker-1' },
      }),
    ]);
  });

  it('a 500 names the status; a 404 on expiring is what the caller wanted', async () => {
    handler = (_req, res) => {
      res.writeHead(500);
      res.end('boom');
    };
    const error = await failure(client().silences());
    expect(error).toBeInstanceOf(AlertmanagerUnreachableError);
    expect(error.message).toBe('Alertmanager GET /silences: 500 boom');
    handler = (_req, res) => {
      res.writeHead(404);
      res.end('silence not found');
    };
    await expect(client().expireSilence('gone')).resolves.toBeUndefined();
  });

  it('a port nobody listens on and a missing token file are the one type', async () => {
    const closed = await new Promise<number>(done => {
      const s = net.createServer();
      s.listen(0, '127.0.0.1', () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => done(port));
      });
    });
    const refused = await failure(
      new AlertmanagerClient({ url: `http://127.0.0.1:${closed}` }).alerts(),
    );
    expect(refused).toBeInstanceOf(AlertmanagerUnreachableError);
    expect(refused.message).toMatch(/ECONNREFUSED/);
    const noToken = await failure(
      client({ tokenFile: '/nonexistent/rackside-token' }).alerts(),
    );
    expect(noToken).toBeInstanceOf(AlertmanagerUnreachableError);
    expect(noToken.message).toMatch(/cannot read the token file/);
  });

  it('a good answer is read whole', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[{"id":"s1"}]');
    };
    await expect(client().silences()).resolves.toEqual([{ id: 's1' }]);
  });
});
