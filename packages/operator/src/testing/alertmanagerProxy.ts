/*
 * A loopback proxy in front of the rack's Alertmanager for rack tests (docs/alerts.md,
 * "When Alertmanager cannot be read"): it passes requests through, or, switched, behaves as
 * a half-open Alertmanager that sends its response headers and a first byte and then never
 * finishes the body ("stall"), or drops every connection ("refuse").
 */
import http from 'node:http';
import type net from 'node:net';

export type AlertmanagerProxyMode = 'pass' | 'stall' | 'refuse';

export interface AlertmanagerProxy {
  /** The proxy's URL, to give the operator instead of Alertmanager's. */
  url: string;
  /** How the next request is answered (requests under way keep their mode). */
  mode: AlertmanagerProxyMode;
  /** Requests answered with a stall so far. */
  stalled: number;
  /** Requests refused (connection dropped) so far. */
  refused: number;
  stop(): Promise<void>;
}

export async function startAlertmanagerProxy(
  target: string,
): Promise<AlertmanagerProxy> {
  const upstream = new URL(target);
  const sockets = new Set<net.Socket>();
  const proxy: AlertmanagerProxy = {
    url: '',
    mode: 'pass',
    stalled: 0,
    refused: 0,
    stop: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    if (proxy.mode === 'refuse') {
      proxy.refused += 1;
      req.socket.destroy();
      return;
    }
    if (proxy.mode === 'stall') {
      proxy.stalled += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      // The start of a list, then nothing: the body never ends.
      res.write('[');
      return;
    }
    const forward = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: `${upstream.pathname.replace(/\/+$/, '')}${req.url}`,
        method: req.method,
        headers: { ...req.headers, host: upstream.host },
      },
      answer => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => req.socket.destroy());
    req.pipe(forward);
  });
  server.on('connection', socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  proxy.stop = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise(done => server.close(done));
  };
  await new Promise<void>(done => server.listen(0, '127.0.0.1', done));
  proxy.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return proxy;
}
