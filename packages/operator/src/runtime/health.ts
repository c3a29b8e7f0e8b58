import http from 'node:http';

export interface HealthServerOptions {
  port: number;
  host?: string;
  /** Ready means: leader election settled and caches synced. */
  isReady: () => boolean;
  /** Prometheus text exposition, when metrics are wired. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
}

/**
 * /healthz (the process is alive), /readyz (it can do its job) and /metrics.
 * Kept separate from the controllers so probes answer even while a
 * reconcile is busy.
 */
export function startHealthServer(
  options: HealthServerOptions,
): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    } else if (path === '/readyz') {
      const ready = options.isReady();
      res
        .writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' })
        .end(ready ? 'ok' : 'not ready');
    } else if (path === '/metrics' && options.metrics) {
      const { contentType, body } = await options.metrics();
      res.writeHead(200, { 'content-type': contentType }).end(body);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () =>
      resolve(server),
    );
  });
}
