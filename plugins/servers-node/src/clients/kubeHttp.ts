import type { KubeConfig } from '@kubernetes/client-node';
import http from 'node:http';
import https from 'node:https';
import { isSharedAgent, keepAliveAgent } from './agents';
import { KubeApiError } from './errors';

/** Query parameters of a request; undefined values are left out. */
export type KubeQuery = Record<string, string | number | boolean | undefined>;

/** One request to the apiserver. */
export interface KubeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** API path without query, e.g. `/api/v1/nodes`. */
  path: string;
  query?: KubeQuery;
  /** Sent as JSON. */
  body?: unknown;
  /** Defaults to `application/json` when there is a body. */
  contentType?: string;
  signal?: AbortSignal;
}

/** Methods sent again when a pooled connection turns out closed before any answer. */
const IDEMPOTENT = new Set<KubeRequest['method']>(['GET', 'PUT', 'DELETE']);

/** A streaming request in flight (a watch). */
export interface KubeStream {
  /**
   * Settles when the stream is over: resolves when the server ended it or it
   * was aborted, rejects with a {@link KubeApiError} (non-200 answer) or a
   * network / idle-timeout error.
   */
  done: Promise<void>;
  /** Closes the connection; `done` resolves. Safe to call more than once. */
  abort(): void;
}

/** Options of {@link KubeHttp.stream}. */
export interface KubeStreamOptions {
  /** Called with each newline-terminated line of the body. Throwing ends the stream with that error. */
  onLine(line: string): void;
  /** Called once the server answered 200. */
  onOpen?(): void;
  /** Ends the stream with an error when no byte arrived for this long. */
  idleTimeoutMs?: number;
}

/** The error a stream ends with when the server went silent. */
export class StreamIdleError extends Error {
  constructor(ms: number) {
    super(`no data from the apiserver for ${ms} ms`);
    this.name = 'StreamIdleError';
  }
}

/**
 * Plain-JSON HTTP access to one apiserver, authenticated from a client-node
 * KubeConfig (certificates, tokens, exec and token-file credentials are
 * re-read per request, so rotated tokens are picked up). Answers are the
 * apiserver's JSON untouched: no Date conversion, no model classes.
 */
export class KubeHttp {
  readonly kubeConfig: KubeConfig;
  private readonly timeoutMs: number;

  constructor(kubeConfig: KubeConfig, options: { timeoutMs?: number } = {}) {
    this.kubeConfig = kubeConfig;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  private async prepare(req: KubeRequest, accept = 'application/json') {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/+$/, '') + req.path);
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { Accept: accept };
    let payload: Buffer | undefined;
    if (req.body !== undefined) {
      payload = Buffer.from(JSON.stringify(req.body));
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const options: https.RequestOptions = { method: req.method, headers };
    await this.kubeConfig.applyToHTTPSOptions(options);
    let agent = options.agent as http.Agent | undefined;
    if (url.protocol === 'http:' && agent instanceof https.Agent) {
      delete options.agent;
      agent.destroy();
      agent = undefined;
    } else if (url.protocol === 'https:') {
      // One keep-alive agent per cluster and TLS identity instead of the new agent (and
      // TLS handshake) client-node makes for each request.
      agent = keepAliveAgent(cluster.server, agent);
      options.agent = agent;
    }
    const perRequest = agent && !isSharedAgent(agent) ? agent : undefined;
    const send = url.protocol === 'http:' ? http.request : https.request;
    return {
      url,
      payload,
      start: (cb: (res: http.IncomingMessage) => void) =>
        send(url, options, cb),
      release: () => perRequest?.destroy(),
    };
  }

  /**
   * Sends a request and resolves with the parsed JSON answer (undefined for
   * an empty body). Non-2xx answers reject with a {@link KubeApiError}.
   */
  async request<R = unknown>(req: KubeRequest): Promise<R> {
    try {
      return await this.requestOnce<R>(req);
    } catch (error) {
      // A pooled connection the server closed while idle fails on reuse before any
      // answer; the request did not reach the server, so an idempotent one is sent again
      // once (on a new or another pooled connection).
      if (
        (error as { staleConnection?: boolean }).staleConnection &&
        IDEMPOTENT.has(req.method) &&
        !req.signal?.aborted
      ) {
        return await this.requestOnce<R>(req);
      }
      throw error;
    }
  }

  private async requestOnce<R>(req: KubeRequest): Promise<R> {
    const prepared = await this.prepare(req);
    let onAbort: (() => void) | undefined;
    try {
      return await new Promise<R>((resolve, reject) => {
        let answered = false;
        const request = prepared.start(res => {
          answered = true;
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const code = res.statusCode ?? 0;
            if (code < 200 || code >= 300) {
              reject(KubeApiError.fromResponse(code, text));
              return;
            }
            if (!text) {
              resolve(undefined as R);
              return;
            }
            try {
              resolve(JSON.parse(text));
            } catch (error) {
              reject(
                new Error(
                  `invalid JSON from ${req.method} ${req.path}: ${
                    (error as Error).message
                  }`,
                ),
              );
            }
          });
        });
        request.setTimeout(this.timeoutMs, () =>
          request.destroy(
            Object.assign(
              new Error(
                `${req.method} ${req.path} timed out after ${this.timeoutMs} ms`,
              ),
              { code: 'ETIMEDOUT' },
            ),
          ),
        );
        request.on('error', (error: NodeJS.ErrnoException) => {
          if (
            request.reusedSocket &&
            !answered &&
            (error.code === 'ECONNRESET' || error.code === 'EPIPE')
          ) {
            Object.assign(error, { staleConnection: true });
          }
          reject(error);
        });
        if (req.signal) {
          if (req.signal.aborted) request.destroy(abortError());
          onAbort = () => request.destroy(abortError());
          req.signal.addEventListener('abort', onAbort, { once: true });
        }
        request.end(prepared.payload);
      });
    } finally {
      // A long-lived signal (one per watch cache) must not collect listeners.
      if (onAbort) req.signal?.removeEventListener('abort', onAbort);
      prepared.release();
    }
  }

  /**
   * Opens a long-lived GET (a watch) and hands over its body line by line.
   * Returns at once; the connection is made in the background.
   */
  stream(req: KubeRequest, options: KubeStreamOptions): KubeStream {
    let request: http.ClientRequest | undefined;
    let aborted = false;
    let settle: { resolve(): void; reject(e: unknown): void } | undefined;
    let idleTimer: NodeJS.Timeout | undefined;
    let release: (() => void) | undefined;

    const finish = (error?: unknown) => {
      if (!settle) return;
      const s = settle;
      settle = undefined;
      if (idleTimer) clearTimeout(idleTimer);
      request?.destroy();
      release?.();
      if (error && !aborted) s.reject(error);
      else s.resolve();
    };
    const touch = () => {
      if (!options.idleTimeoutMs) return;
      if (idleTimer) clearTimeout(idleTimer);
      idleTimer = setTimeout(
        () => finish(new StreamIdleError(options.idleTimeoutMs!)),
        options.idleTimeoutMs,
      );
    };

    const done = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });

    this.prepare(req).then(
      prepared => {
        release = prepared.release;
        if (!settle) {
          // Aborted (or failed) while the credentials were being prepared.
          prepared.release();
          return;
        }
        touch();
        request = prepared.start(res => {
          const code = res.statusCode ?? 0;
          if (code !== 200) {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('error', finish);
            res.on('end', () =>
              finish(
                KubeApiError.fromResponse(
                  code,
                  Buffer.concat(chunks).toString('utf8'),
                ),
              ),
            );
            return;
          }
          res.socket?.setKeepAlive(true, 30_000);
          options.onOpen?.();
          res.setEncoding('utf8');
          let buffer = '';
          res.on('data', (chunk: string) => {
            touch();
            buffer += chunk;
            let nl = buffer.indexOf('\n');
            while (nl >= 0 && settle) {
              const line = buffer.slice(0, nl);
              buffer = buffer.slice(nl + 1);
              if (line.trim()) {
                try {
                  options.onLine(line);
                } catch (error) {
                  finish(error);
                  return;
                }
              }
              nl = buffer.indexOf('\n');
            }
          });
          res.on('error', finish);
          res.on('aborted', () =>
            finish(
              Object.assign(new Error('watch connection reset'), {
                code: 'ECONNRESET',
              }),
            ),
          );
          res.on('end', () => finish());
          res.on('close', () =>
            finish(
              res.complete
                ? undefined
                : Object.assign(new Error('watch connection closed'), {
                    code: 'ECONNRESET',
                  }),
            ),
          );
        });
        request.on('error', finish);
        request.end();
      },
      error => finish(error),
    );

    return {
      done,
      abort: () => {
        aborted = true;
        finish();
      },
    };
  }
}

function abortError(): Error {
  const error = new Error('request aborted');
  error.name = 'AbortError';
  return error;
}
