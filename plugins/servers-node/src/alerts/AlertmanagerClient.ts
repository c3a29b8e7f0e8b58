import { InputError } from '@backstage/errors';
import type { AlertMatcher } from '@rackside/plugin-servers-common';
import fs from 'node:fs';
import { Agent, fetch } from 'undici';
import {
  BoundedReadError,
  readBoundedJson,
  readBoundedText,
} from '../http/boundedBody';

/** How to reach one Alertmanager (docs/alerts.md, "Set-up"). */
export interface AlertmanagerAccess {
  /** Its origin and path prefix, e.g. `https://alertmanager.monitoring:9093`. */
  url: string;
  /** PEM CA bundle; absent means the system trust store. */
  caData?: string;
  /** Bearer token. */
  token?: string;
  /** A file holding the bearer token (a mounted Secret), read on every request so a rotated token is used at once. */
  tokenFile?: string;
  /** Per request, covering the headers and the whole body; default 5 s. */
  timeoutMs?: number;
}

/** An alert as `GET /api/v2/alerts` returns it (the fields Rackside reads). */
export interface AlertmanagerAlert {
  fingerprint: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  startsAt: string;
  endsAt?: string;
  status: {
    /** `suppressed` when silenced or inhibited. */
    state: 'active' | 'suppressed' | 'unprocessed';
    silencedBy: string[];
    inhibitedBy: string[];
  };
}

/** Whether a value is a flat map of texts, as Alertmanager's labels and annotations are. */
function isTextMap(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.values(value).every(v => typeof v === 'string');
}

function isTextList(value: unknown): boolean {
  return Array.isArray(value) && value.every(v => typeof v === 'string');
}

/**
 * Why one alert of an answer is not what Alertmanager's API gives, or undefined. Checked
 * one level deep, so it is linear: labels and annotations are flat maps of texts there,
 * and a value nested 100,000 deep (200 KB of a hostile answer) overflowed the stack of
 * every JSON.stringify and template downstream (the backend's refresh rejected).
 */
function alertProblem(alert: unknown): string | undefined {
  if (!alert || typeof alert !== 'object' || Array.isArray(alert)) {
    return 'not an object';
  }
  const a = alert as Record<string, unknown>;
  if (typeof a.fingerprint !== 'string') return 'fingerprint must be a text';
  if (!isTextMap(a.labels)) return 'labels must be texts';
  if (a.annotations !== undefined && !isTextMap(a.annotations)) {
    return 'annotations must be texts';
  }
  if (typeof a.startsAt !== 'string') return 'startsAt must be a text';
  if (
    a.endsAt !== undefined &&
    a.endsAt !== null &&
    typeof a.endsAt !== 'string'
  ) {
    return 'endsAt must be a text';
  }
  const status = a.status as Record<string, unknown> | undefined;
  if (
    !status ||
    typeof status !== 'object' ||
    typeof status.state !== 'string' ||
    !isTextList(status.silencedBy) ||
    !isTextList(status.inhibitedBy)
  ) {
    return 'status must be {state, silencedBy, inhibitedBy}';
  }
  return undefined;
}

/** A silence as `GET /api/v2/silences` returns it. */
export interface AlertmanagerSilence {
  id: string;
  matchers: AlertMatcher[];
  startsAt: string;
  endsAt: string;
  updatedAt?: string;
  createdBy: string;
  comment: string;
  status: { state: 'active' | 'pending' | 'expired' };
}

/** What `POST /api/v2/silences` takes: with `id`, it updates that silence. */
export interface AlertmanagerSilenceRequest {
  id?: string;
  matchers: AlertMatcher[];
  startsAt: string;
  endsAt: string;
  createdBy: string;
  comment: string;
}

/**
 * Alertmanager could not be asked: refused, timed out while the headers or the body
 * arrived, TLS, a status other than 2xx, an answer past its byte cap or not JSON, the
 * token file unreadable. Every failure of the client is this one type. Callers treat it
 * as "unknown": a maintenance's own steps go on, an alert gate and a healthy return hold
 * (docs/alerts.md, "When Alertmanager cannot be read").
 */
export class AlertmanagerUnreachableError extends Error {
  name = 'AlertmanagerUnreachableError';
}

/**
 * The cap on the lists of alerts and silences Alertmanager answers (docs/alerts.md,
 * "Limits"): a large cluster's (an alert is about 1 KiB; 16 MiB holds some 16,000).
 */
export const ALERTMANAGER_LIST_MAX_BYTES = 16 * 1024 * 1024;
/** The cap on any other answer of Alertmanager's (a silence's id). */
export const ALERTMANAGER_MAX_BYTES = 1024 * 1024;
const ALERTMANAGER_ERROR_MAX_BYTES = 64 * 1024;

/** A failure's words: undici's cause (ECONNREFUSED, a TLS error) or its own message. */
function failureText(error: unknown): string {
  const cause = (error as { cause?: Error } | undefined)?.cause;
  return cause?.message ?? (error as Error)?.message ?? String(error);
}

/** The subset of the API v2 that Rackside uses; a fake implements it in unit tests. */
export interface AlertmanagerApi {
  /** Alerts matching every filter matcher (Alertmanager ANDs them), silenced ones included. */
  alerts(filter?: readonly string[]): Promise<AlertmanagerAlert[]>;
  /** Silences matching every filter matcher, expired ones included. */
  silences(filter?: readonly string[]): Promise<AlertmanagerSilence[]>;
  /** Creates (or, with `id`, updates) a silence; returns its id (a new one if Alertmanager replaced it). */
  putSilence(silence: AlertmanagerSilenceRequest): Promise<string>;
  /** Expires a silence; an unknown or already expired one is not an error. */
  expireSilence(id: string): Promise<void>;
}

/** Checks an Alertmanager URL: http(s), no credentials in it, no query. */
export function parseAlertmanagerUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InputError(`Alertmanager URL is not a URL: ${url}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new InputError(`Alertmanager URL must be http(s): ${url}`);
  }
  if (parsed.username || parsed.password) {
    throw new InputError(
      'Alertmanager URL carries user info; give a bearer token instead',
    );
  }
  if (parsed.search || parsed.hash) {
    throw new InputError(
      `Alertmanager URL must not have a query or fragment: ${url}`,
    );
  }
  return parsed;
}

/** A client of Alertmanager's API v2 over undici (CA bundle and bearer token optional). */
export class AlertmanagerClient implements AlertmanagerApi {
  readonly #base: string;
  readonly #agent: Agent;
  readonly #token?: string;
  readonly #tokenFile?: string;
  readonly #timeoutMs: number;

  constructor(access: AlertmanagerAccess) {
    const url = parseAlertmanagerUrl(access.url);
    this.#base = `${url.origin}${url.pathname.replace(/\/+$/, '')}/api/v2`;
    this.#agent = new Agent({
      connect: access.caData
        ? { ca: access.caData, rejectUnauthorized: true }
        : {},
    });
    this.#token = access.token;
    this.#tokenFile = access.tokenFile;
    this.#timeoutMs = access.timeoutMs ?? 5000;
  }

  #bearerToken(method: string, path: string): string | undefined {
    if (!this.#tokenFile) return this.#token;
    try {
      return fs.readFileSync(this.#tokenFile, 'utf8').trim();
    } catch (error) {
      throw new AlertmanagerUnreachableError(
        `Alertmanager ${method} ${path}: cannot read the token file: ${
          (error as Error).message
        }`,
      );
    }
  }

  async #request(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<unknown> {
    const what = `Alertmanager ${method} ${path}`;
    try {
      return await this.#exchange(method, path, body, what);
    } catch (error) {
      // One type for every way a call can fail (docs/alerts.md, "When Alertmanager cannot
      // be read"): callers decide on "unreachable" and nothing else, so a stall mid-body
      // or a cap crossed can never escape as a raw abort and skip a maintenance's step.
      if (error instanceof AlertmanagerUnreachableError) throw error;
      // The reader's message names the request already.
      const message =
        error instanceof BoundedReadError
          ? error.message
          : `${what}: ${failureText(error)}`;
      throw new AlertmanagerUnreachableError(message, { cause: error });
    }
  }

  async #exchange(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body: unknown,
    what: string,
  ): Promise<unknown> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const token = this.#bearerToken(method, path);
    if (token) headers.authorization = `Bearer ${token}`;
    // One deadline for the whole exchange: the headers and the body after them.
    const signal = AbortSignal.timeout(this.#timeoutMs);
    const response = await fetch(`${this.#base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: this.#agent,
      signal,
    });
    const limits = {
      source: what,
      maxBytes:
        method === 'GET' ? ALERTMANAGER_LIST_MAX_BYTES : ALERTMANAGER_MAX_BYTES,
      signal,
    };
    if (!response.ok) {
      const text = await readBoundedText(response, {
        ...limits,
        maxBytes: ALERTMANAGER_ERROR_MAX_BYTES,
      }).catch(() => '');
      // The silence to expire is gone or already expired: what the caller wanted holds.
      if (method === 'DELETE' && response.status === 404) return undefined;
      throw new AlertmanagerUnreachableError(
        `${what}: ${response.status} ${text.slice(0, 200)}`,
      );
    }
    return readBoundedJson(response, limits);
  }

  async alerts(filter: readonly string[] = []): Promise<AlertmanagerAlert[]> {
    const query = filter.map(f => `filter=${encodeURIComponent(f)}`).join('&');
    const answer = await this.#request(
      'GET',
      `/alerts${query ? `?${query}` : ''}`,
    );
    if (!Array.isArray(answer)) {
      throw new AlertmanagerUnreachableError(
        'Alertmanager GET /alerts: not a list',
      );
    }
    answer.forEach((alert, index) => {
      const problem = alertProblem(alert);
      if (problem) {
        throw new AlertmanagerUnreachableError(
          `Alertmanager GET /alerts: alert ${index} of the answer is malformed: ${problem}`,
        );
      }
    });
    return answer as AlertmanagerAlert[];
  }

  async silences(
    filter: readonly string[] = [],
  ): Promise<AlertmanagerSilence[]> {
    const query = filter.map(f => `filter=${encodeURIComponent(f)}`).join('&');
    const answer = await this.#request(
      'GET',
      `/silences${query ? `?${query}` : ''}`,
    );
    if (!Array.isArray(answer)) {
      throw new AlertmanagerUnreachableError(
        'Alertmanager GET /silences: not a list',
      );
    }
    return answer as AlertmanagerSilence[];
  }

  async putSilence(silence: AlertmanagerSilenceRequest): Promise<string> {
    const answer = (await this.#request('POST', '/silences', silence)) as
      | { silenceID?: string }
      | undefined;
    if (!answer?.silenceID) {
      throw new AlertmanagerUnreachableError(
        'Alertmanager POST /silences: no silenceID in the answer',
      );
    }
    return answer.silenceID;
  }

  async expireSilence(id: string): Promise<void> {
    await this.#request('DELETE', `/silence/${encodeURIComponent(id)}`);
  }

  /** Closes the connection pool. */
  async close(): Promise<void> {
    await this.#agent.close();
  }
}
