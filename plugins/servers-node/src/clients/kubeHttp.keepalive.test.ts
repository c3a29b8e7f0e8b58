/*
 * One keep-alive connection per cluster: sequential requests of KubeHttp (and of
 * client-node's generated clients after shareKeepAliveAgents) reuse one TLS connection
 * instead of a handshake each; clients with other tokens for the same cluster share it and
 * still send their own token; a connection the server closed while idle is not a failed
 * request. Handshakes are counted by the server (`secureConnection`).
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { TEST_BMC_CERT_PEM, TEST_BMC_KEY_PEM, TEST_CA_PEM } from '../testing';
import { shareKeepAliveAgents } from './agents';
import { KubeHttp } from './kubeHttp';

let server: https.Server;
let url: string;
let handshakes = 0;
const sockets = new Set<Socket>();
const tokens: string[] = [];

beforeAll(async () => {
  server = https.createServer(
    { cert: TEST_BMC_CERT_PEM, key: TEST_BMC_KEY_PEM },
    (req, res) => {
      tokens.push(req.headers.authorization ?? '');
      const body = JSON.stringify({
        kind: 'Namespace',
        apiVersion: 'v1',
        metadata: { name: 'default' },
      });
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    },
  );
  server.on('secureConnection', socket => {
    handshakes++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise(resolve => server.close(resolve));
});

beforeEach(() => {
  handshakes = 0;
  tokens.length = 0;
  // Each test starts without pooled connections.
  for (const socket of sockets) socket.destroy();
});

function kubeConfig(token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: url,
        caData: Buffer.from(TEST_CA_PEM).toString('base64'),
      },
    ],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

// First, while nothing is pooled: node-fetch (client-node's own clients) has no retry for a
// pooled connection the server closed, which later tests provoke on purpose.
it("client-node's generated clients share the agent after shareKeepAliveAgents", async () => {
  const core = shareKeepAliveAgents(kubeConfig('token-c')).makeApiClient(
    CoreV1Api,
  );
  for (let i = 0; i < 20; i++) {
    const ns = await core.readNamespace({ name: 'default' });
    expect(ns.metadata?.name).toBe('default');
  }
  expect(handshakes).toBe(1);
});

it('50 sequential requests make one TLS handshake', async () => {
  const http = new KubeHttp(kubeConfig('token-a'));
  for (let i = 0; i < 50; i++) {
    const ns = await http.request<{ metadata: { name: string } }>({
      method: 'GET',
      path: '/api/v1/namespaces/default',
    });
    expect(ns.metadata.name).toBe('default');
  }
  expect(tokens).toHaveLength(50);
  expect(handshakes).toBe(1);
});

it('clients with other tokens share the connection and each sends its own token', async () => {
  const a = new KubeHttp(kubeConfig('token-a'));
  const b = new KubeHttp(kubeConfig('token-b'));
  for (let i = 0; i < 10; i++) {
    await a.request({ method: 'GET', path: '/api/v1/namespaces/default' });
    await b.request({ method: 'GET', path: '/api/v1/namespaces/default' });
  }
  expect(handshakes).toBe(1);
  expect(tokens).toEqual(
    Array.from({ length: 10 }, () => [
      'Bearer token-a',
      'Bearer token-b',
    ]).flat(),
  );
});

it('requests at the same time open connections side by side, then reuse them', async () => {
  const http = new KubeHttp(kubeConfig('token-a'));
  const burst = () =>
    Promise.all(
      Array.from({ length: 4 }, () =>
        http.request({ method: 'GET', path: '/api/v1/namespaces/default' }),
      ),
    );
  await burst();
  const first = handshakes;
  expect(first).toBeGreaterThanOrEqual(1);
  expect(first).toBeLessThanOrEqual(4);
  await burst();
  await burst();
  expect(handshakes).toBe(first);
});

it('a pooled connection the server closed is not a failed request (idempotent ones are sent again)', async () => {
  const http = new KubeHttp(kubeConfig('token-a'));
  for (let i = 0; i < 30; i++) {
    // The server drops every idle connection, as an apiserver's idle timeout or a load
    // balancer does; the next request may be written into the closing socket.
    for (const socket of sockets) socket.destroy();
    const ns = await http.request<{ metadata: { name: string } }>({
      method: 'GET',
      path: '/api/v1/namespaces/default',
    });
    expect(ns.metadata.name).toBe('default');
  }
});
