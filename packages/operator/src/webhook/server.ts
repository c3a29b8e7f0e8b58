/*
 * The operator's validating admission webhook: an HTTPS server in the operator process
 * (every replica serves it, leader or not), answering AdmissionReview v1 for
 * MachineReclaims at /validate-machinereclaims (decision.ts). The SubjectAccessReview is
 * made with the operator's identity (subjectaccessreviews create) for the requesting user.
 *
 * TLS: a certificate and key from files (the chart, e.g. from cert-manager), or a
 * self-signed CA and serving certificate made at start for the given hosts (tests and the
 * demo), whose CA is the caBundle to register the ValidatingWebhookConfiguration with.
 * Files are watched and reloaded into the running server (setSecureContext) when they
 * change, so a renewed certificate is served to new connections without a restart.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { ResourceClient } from '@rackside/plugin-servers-node';
import { X509Certificate } from 'node:crypto';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { createSecureContext } from 'node:tls';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  MACHINE_RECLAIM_VERB,
  machineReclaimResource,
} from '@rackside/plugin-servers-common';
import { selfSignedServingCertificate } from './certificates';
import {
  reviewMachineReclaim,
  type AccessReviewPort,
  type AdmissionRequest,
} from './decision';

export const WEBHOOK_PATH = '/validate-machinereclaims';

/** AdmissionReview bodies are small; the apiserver caps objects at a few MiB. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface WebhookTls {
  certPem: string;
  keyPem: string;
  /** The CA that issued certPem, when the operator made it (self-signed). */
  caPem?: string;
}

/** TLS from files, or self-signed for `hosts`. */
export async function webhookTls(options: {
  certFile?: string;
  keyFile?: string;
  hosts: readonly string[];
}): Promise<WebhookTls> {
  if (options.certFile || options.keyFile) {
    if (!options.certFile || !options.keyFile) {
      throw new Error(
        'the webhook needs both --webhook-cert-file and --webhook-key-file',
      );
    }
    return {
      certPem: fs.readFileSync(options.certFile, 'utf8'),
      keyPem: fs.readFileSync(options.keyFile, 'utf8'),
    };
  }
  const made = await selfSignedServingCertificate(options.hosts);
  return { certPem: made.certPem, keyPem: made.keyPem, caPem: made.caPem };
}

/** SubjectAccessReview (authorization.k8s.io/v1) as the requesting user. */
export function subjectAccessReviews(kubeConfig: KubeConfig): AccessReviewPort {
  const client = new ResourceClient<any>(
    kubeConfig,
    {
      group: 'authorization.k8s.io',
      version: 'v1',
      plural: 'subjectaccessreviews',
      kind: 'SubjectAccessReview',
      namespaced: false,
    },
    { timeoutMs: 5000 },
  );
  return {
    async canReclaim(user, target) {
      const review = await client.create({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: {
          user: user.username,
          uid: user.uid,
          groups: user.groups,
          extra: user.extra,
          resourceAttributes: {
            group: machineReclaimResource.group,
            resource: machineReclaimResource.plural,
            verb: MACHINE_RECLAIM_VERB,
            namespace: target.namespace,
            name: target.name,
          },
        },
      });
      return {
        allowed: review.status?.allowed === true,
        reason: review.status?.reason || review.status?.evaluationError,
      };
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, code: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export interface WebhookServer {
  port: number;
  /** SHA-256 fingerprint (colon hex, as X509Certificate prints it) of the certificate served. */
  fingerprint(): string;
  /** When the certificate served expires (ms since the epoch). */
  notAfter(): number;
  /**
   * `reload` (fingerprint) after a changed certificate was loaded; `reloadError` (Error)
   * when the files changed but do not make a usable pair (the old one stays served).
   */
  events: EventEmitter;
  close(): Promise<void>;
}

function fingerprintOf(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256;
}

/**
 * Watches the certificate and key files and calls `load` with their contents when either
 * changes. The directories are watched, not the files: a Kubernetes Secret volume swaps a
 * `..data` symlink to a new directory, which replaces the files the names point at (a
 * watch on the old file would never fire again). Every event re-reads both; a pair that
 * was already loaded is skipped.
 */
function watchCertificateFiles(
  files: { certFile: string; keyFile: string },
  load: (pem: { certPem: string; keyPem: string }) => void,
  fail: (error: Error) => void,
): () => void {
  let pending = false;
  const check = () => {
    // Coalesce the burst of events one swap makes into one read, after the current turn.
    if (pending) return;
    pending = true;
    setImmediate(() => {
      pending = false;
      let pem: { certPem: string; keyPem: string };
      try {
        pem = {
          certPem: fs.readFileSync(files.certFile, 'utf8'),
          keyPem: fs.readFileSync(files.keyFile, 'utf8'),
        };
      } catch (error) {
        fail(error as Error);
        return;
      }
      load(pem);
    });
  };
  const dirs = [
    ...new Set([path.dirname(files.certFile), path.dirname(files.keyFile)]),
  ];
  const watchers = dirs.map(dir => {
    const watcher = fs.watch(dir, { persistent: false }, check);
    watcher.on('error', error => fail(error));
    return watcher;
  });
  // A change between the first read and the watch would otherwise go unseen.
  check();
  return () => watchers.forEach(w => w.close());
}

export async function startWebhookServer(options: {
  tls: WebhookTls;
  /** Reload the certificate from these files when they change (the files `tls` was read from). */
  reloadFrom?: { certFile: string; keyFile: string };
  access: AccessReviewPort;
  port: number;
  host?: string;
  log?: (message: string) => void;
  now?: () => number;
}): Promise<WebhookServer> {
  const log = options.log ?? (() => {});
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'https://webhook');
    if (req.method === 'GET' && url.pathname === '/healthz') {
      send(res, 200, { status: 'ok' });
      return;
    }
    if (url.pathname !== WEBHOOK_PATH) {
      send(res, 404, { message: `no such path: ${url.pathname}` });
      return;
    }
    if (req.method !== 'POST') {
      send(res, 405, { message: 'POST an AdmissionReview' });
      return;
    }
    let review: {
      apiVersion?: string;
      kind?: string;
      request?: AdmissionRequest;
    };
    try {
      review = JSON.parse(await readBody(req));
    } catch (error) {
      send(res, 400, {
        message: `not an AdmissionReview: ${(error as Error).message}`,
      });
      return;
    }
    const request = review?.request;
    if (review?.kind !== 'AdmissionReview' || !request?.uid) {
      send(res, 400, { message: 'not an AdmissionReview with a request uid' });
      return;
    }
    const verdict = await reviewMachineReclaim(
      request,
      options.access,
      options.now,
    );
    log(
      `admission ${request.operation} ${request.namespace ?? ''}/${
        request.name ?? objectName(request.object) ?? ''
      } by ${request.userInfo?.username ?? '?'}: ${
        verdict.allowed ? 'allowed' : `denied: ${verdict.message}`
      }`,
    );
    send(res, 200, {
      apiVersion: review.apiVersion ?? 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: verdict.allowed
        ? { uid: request.uid, allowed: true }
        : {
            uid: request.uid,
            allowed: false,
            status: {
              code: verdict.code,
              reason: verdict.reason,
              message: verdict.message,
            },
          },
    });
  };
  const contextOptions = (pem: { certPem: string; keyPem: string }) => ({
    cert: pem.certPem,
    key: pem.keyPem,
    minVersion: 'TLSv1.2' as const,
  });
  const server = https.createServer(contextOptions(options.tls), (req, res) => {
    handle(req, res).catch(error => {
      log(`admission: ${(error as Error).message}`);
      if (!res.headersSent) send(res, 500, { message: 'internal error' });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const events = new EventEmitter();
  // 'reloadError', not 'error': an EventEmitter throws an 'error' nobody listens to.
  let served = { ...options.tls };
  let fingerprint = fingerprintOf(served.certPem);
  const stopWatching = options.reloadFrom
    ? watchCertificateFiles(
        options.reloadFrom,
        pem => {
          if (pem.certPem === served.certPem && pem.keyPem === served.keyPem) {
            return;
          }
          let next: string;
          try {
            // Throws on a malformed file or a key that does not match the certificate
            // (e.g. the certificate written, the key not yet): keep serving the old pair.
            createSecureContext(contextOptions(pem));
            next = fingerprintOf(pem.certPem);
          } catch (error) {
            log(
              `webhook certificate not reloaded: ${(error as Error).message}`,
            );
            events.emit('reloadError', error);
            return;
          }
          server.setSecureContext(contextOptions(pem));
          served = pem;
          fingerprint = next;
          log(`webhook certificate reloaded (sha256 ${next})`);
          events.emit('reload', next);
        },
        error => {
          log(`webhook certificate not reloaded: ${error.message}`);
          events.emit('reloadError', error);
        },
      )
    : () => {};
  return {
    port: (server.address() as AddressInfo).port,
    fingerprint: () => fingerprint,
    notAfter: () => Date.parse(new X509Certificate(served.certPem).validTo),
    events,
    close: () =>
      new Promise<void>(resolve => {
        stopWatching();
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}

/**
 * The webhook as the operator process runs it (index.ts): TLS from files or self-signed
 * (the CA written to `caOut` for whoever registers the webhook), SubjectAccessReviews
 * with the operator's identity.
 */
export async function serveMachineReclaimWebhook(options: {
  kubeConfig: KubeConfig;
  port: number;
  host: string;
  certFile?: string;
  keyFile?: string;
  certHosts: readonly string[];
  caOut?: string;
  log?: (message: string) => void;
}): Promise<WebhookServer> {
  const tls = await webhookTls({
    certFile: options.certFile,
    keyFile: options.keyFile,
    hosts: options.certHosts,
  });
  if (tls.caPem && options.caOut) {
    fs.writeFileSync(options.caOut, tls.caPem);
  }
  const server = await startWebhookServer({
    tls,
    reloadFrom:
      options.certFile && options.keyFile
        ? { certFile: options.certFile, keyFile: options.keyFile }
        : undefined,
    access: subjectAccessReviews(options.kubeConfig),
    port: options.port,
    host: options.host,
    log: options.log,
  });
  options.log?.(
    `admission webhook on https://${options.host}:${
      server.port
    }${WEBHOOK_PATH} (${
      tls.caPem
        ? `self-signed for ${options.certHosts.join(', ')}${
            options.caOut ? `, CA written to ${options.caOut}` : ''
          }`
        : `certificate from ${options.certFile}, reloaded when it changes`
    })`,
  );
  return server;
}

/** metadata.name of the object an admission request carries, when it has one. */
function objectName(object: unknown): string | undefined {
  const name = (object as { metadata?: { name?: unknown } } | undefined)
    ?.metadata?.name;
  return typeof name === 'string' ? name : undefined;
}
