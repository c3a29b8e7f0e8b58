// The benchmarks' Kubernetes client: the rack's tiny client with more sockets (bulk
// creates run 32 to 64 requests at a time), paged lists, and a streaming watch that
// timestamps each event when it arrives.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import { kubeClient } from '../../e2e/rack/rack.mjs';

const METADATA_ONLY =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

/**
 * The Kubernetes username of a client certificate: its subject's CN (the apiserver's
 * x509 authenticator). What the attribution admission policy
 * (charts/rackside/templates/admission-policies.yaml) holds spec.requestedBy to.
 */
export function certificateUsername(certFile) {
  const { subject } = new X509Certificate(fs.readFileSync(certFile));
  const cn = /^CN=(.*)$/m.exec(subject)?.[1];
  if (!cn) throw new Error(`${certFile}: no CN in its subject (${subject})`);
  return cn;
}

/**
 * Admin client of a rack from its rack.json info. `username` is who the apiserver takes
 * it for: a NodeMaintenance or MaintenancePlan it writes names it in spec.requestedBy.
 */
export function adminKube(info, { maxSockets = 64 } = {}) {
  const kube = kubeClient({
    server: info.server,
    caFile: info.caFile,
    certFile: info.adminCertFile,
    keyFile: info.adminKeyFile,
    maxSockets,
    timeoutMs: 120_000,
  });
  const agent = new https.Agent({
    ca: fs.readFileSync(info.caFile),
    cert: fs.readFileSync(info.adminCertFile),
    key: fs.readFileSync(info.adminKeyFile),
    keepAlive: true,
  });

  /** Every item of a collection, 500 a page; `metadataOnly` asks for metadata alone. */
  async function listAll(
    collection,
    query = {},
    { metadataOnly = false } = {},
  ) {
    const items = [];
    let cont;
    let resourceVersion;
    do {
      const params = new URLSearchParams({ ...query, limit: '500' });
      if (cont) params.set('continue', cont);
      const r = await kube.request(
        'GET',
        `${collection}?${params}`,
        undefined,
        {
          headers: metadataOnly ? { accept: METADATA_ONLY } : {},
        },
      );
      if (r.status !== 200)
        throw new Error(
          `GET ${collection}: ${r.status} ${r.body?.message ?? ''}`,
        );
      const page = r.body;
      items.push(...(page.items ?? []));
      cont = page.metadata?.continue;
      resourceVersion = page.metadata?.resourceVersion;
    } while (cont);
    return { items, resourceVersion };
  }

  /** How many objects a collection holds (metadata-only pages of 500). */
  async function countAll(collection, query = {}) {
    let n = 0;
    let cont;
    do {
      const params = new URLSearchParams({ ...query, limit: '500' });
      if (cont) params.set('continue', cont);
      const r = await kube.request(
        'GET',
        `${collection}?${params}`,
        undefined,
        {
          headers: { accept: METADATA_ONLY },
        },
      );
      if (r.status !== 200)
        throw new Error(`GET ${collection}: ${r.status} ${r.body?.message}`);
      n += (r.body.items ?? []).length;
      cont = r.body.metadata?.continue;
    } while (cont);
    return n;
  }

  /**
   * Watches `collection` from `resourceVersion`; calls onEvent(type, object, receivedAtMs)
   * for each event. `stop()` closes it. `ended` resolves when the server closes it.
   */
  function watch(collection, { resourceVersion, query = {}, onEvent }) {
    const u = new URL(info.server);
    const params = new URLSearchParams({
      ...query,
      watch: '1',
      allowWatchBookmarks: 'true',
      timeoutSeconds: '3600',
    });
    if (resourceVersion) params.set('resourceVersion', resourceVersion);
    let req;
    const ended = new Promise((resolve, reject) => {
      req = https.request(
        {
          host: u.hostname,
          port: u.port,
          path: `${collection}?${params}`,
          method: 'GET',
          agent,
          headers: { accept: 'application/json' },
        },
        res => {
          if (res.statusCode !== 200) {
            reject(new Error(`watch ${collection}: ${res.statusCode}`));
            res.resume();
            return;
          }
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', chunk => {
            const at = performance.timeOrigin + performance.now();
            buffer += chunk;
            let nl;
            while ((nl = buffer.indexOf('\n')) >= 0) {
              const line = buffer.slice(0, nl);
              buffer = buffer.slice(nl + 1);
              if (!line.trim()) continue;
              const event = JSON.parse(line);
              if (event.type === 'ERROR') {
                reject(
                  new Error(
                    `watch ${collection}: ${event.object?.message ?? 'error'}`,
                  ),
                );
                return;
              }
              onEvent(event.type, event.object, at);
            }
          });
          res.on('end', resolve);
          res.on('error', resolve);
        },
      );
      req.on('error', error =>
        error.code === 'ECONNRESET' ? resolve() : reject(error),
      );
      req.end();
    });
    ended.catch(() => {});
    return {
      ended,
      stop() {
        req.destroy();
      },
    };
  }

  return {
    ...kube,
    username: certificateUsername(info.adminCertFile),
    listAll,
    countAll,
    watch,
    close() {
      kube.close();
      agent.destroy();
    },
  };
}
