import {
  ConflictError,
  InputError,
  isError,
  NotAllowedError,
  NotFoundError,
  ServiceUnavailableError,
} from '@backstage/errors';
import { STATUS_CODES } from 'node:http';

/** A `meta.k8s.io/v1` Status, as the apiserver sends it with an error. */
export interface KubeStatus {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
    retryAfterSeconds?: number;
  };
}

/**
 * An error answer of the apiserver: the HTTP status and the Status object it
 * sent. `message` is the apiserver's own text.
 */
export class KubeApiError extends Error {
  readonly statusCode: number;
  readonly status: KubeStatus;

  constructor(statusCode: number, status: KubeStatus) {
    super(
      status.message ||
        `${statusCode} ${
          STATUS_CODES[statusCode] ?? 'error'
        } from the apiserver`,
    );
    this.name = 'KubeApiError';
    this.statusCode = statusCode;
    this.status = status;
  }

  /** The machine-readable reason, e.g. `NotFound`, `AlreadyExists`, `Expired`. */
  get reason(): string | undefined {
    return this.status.reason;
  }

  /** Builds the error from a response body that may or may not be a Status. */
  static fromResponse(statusCode: number, body: string): KubeApiError {
    let status: KubeStatus = {};
    try {
      const parsed = JSON.parse(body);
      if (parsed && typeof parsed === 'object') status = parsed;
    } catch {
      const text = body.trim().slice(0, 500);
      if (text) status = { message: text };
    }
    return new KubeApiError(statusCode, { ...status, code: statusCode });
  }
}

const BACKSTAGE_ERROR_NAMES = new Set([
  'InputError',
  'AuthenticationError',
  'NotAllowedError',
  'NotFoundError',
  'ConflictError',
  'NotModifiedError',
  'NotImplementedError',
  'ServiceUnavailableError',
  'ForwardedError',
]);

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function parseBody(body: unknown): KubeStatus | undefined {
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body);
      return parsed && typeof parsed === 'object' ? parsed : { message: body };
    } catch {
      return body ? { message: body } : undefined;
    }
  }
  if (body && typeof body === 'object') return body as KubeStatus;
  return undefined;
}

/**
 * Finds the apiserver's answer in an error: a {@link KubeApiError}, a
 * client-node `ApiException` (`code` and `body`), an error with a numeric
 * `statusCode`, or any of these as the `cause` of a wrapping error (as
 * {@link toBackstageError} leaves them). Undefined for network errors.
 */
export function kubeErrorStatus(error: unknown): KubeStatus | undefined {
  for (let e: any = error, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (e instanceof KubeApiError) return e.status;
    if (typeof e !== 'object') return undefined;
    if (typeof e.code === 'number' && 'body' in e) {
      const status = parseBody(e.body) ?? {};
      return { ...status, code: e.code };
    }
    if (typeof e.statusCode === 'number') {
      return { code: e.statusCode, message: e.message, reason: e.reason };
    }
  }
  return undefined;
}

function isNetworkError(error: unknown): boolean {
  for (let e: any = error, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (typeof e?.code === 'string' && NETWORK_CODES.has(e.code)) return true;
    if (e?.name === 'AbortError' || e?.name === 'TimeoutError') return true;
    if (typeof e?.message === 'string' && /socket hang up/.test(e.message)) {
      return true;
    }
  }
  return false;
}

/** Sets `cause` without Backstage's "; caused by" suffix on the message. */
function withCause<E extends Error>(error: E, cause: unknown): E {
  if (cause !== undefined) (error as { cause?: unknown }).cause = cause;
  return error;
}

/**
 * Maps an apiserver error to the `@backstage/errors` class a backend route
 * answers with: 400/422/413/415 to InputError, 403 to NotAllowedError, 404
 * to NotFoundError, 409/410 to ConflictError, and an unreachable, failing or
 * throttling cluster (401, 429, 5xx, network errors) to
 * ServiceUnavailableError. The message is the apiserver's own; `cause` is a
 * {@link KubeApiError} with the status code and Status (so
 * {@link kubeErrorStatus} still finds them). Backstage errors pass through
 * unchanged; errors that are neither pass through as they are.
 */
export function toBackstageError(error: unknown): Error {
  if (isError(error) && BACKSTAGE_ERROR_NAMES.has(error.name)) {
    return error as Error;
  }
  const status = kubeErrorStatus(error);
  if (!status) {
    if (isNetworkError(error)) {
      return withCause(
        new ServiceUnavailableError(
          `cluster unreachable: ${
            isError(error) ? error.message : String(error)
          }`,
        ),
        error,
      );
    }
    return isError(error) ? (error as Error) : new Error(String(error));
  }
  const code = status.code ?? 0;
  const message =
    status.message || `${code} ${STATUS_CODES[code] ?? 'error'}`.trim();
  const cause =
    error instanceof KubeApiError ? error : new KubeApiError(code, status);
  switch (code) {
    case 400:
    case 413:
    case 415:
    case 422:
      return withCause(new InputError(message), cause);
    case 403:
      return withCause(new NotAllowedError(message), cause);
    case 404:
      return withCause(new NotFoundError(message), cause);
    case 409:
    case 410:
      return withCause(new ConflictError(message), cause);
    case 401:
      return withCause(
        new ServiceUnavailableError(
          `the cluster rejected Rackside's credentials: ${message}`,
        ),
        cause,
      );
    default:
      if (code === 429 || code >= 500) {
        return withCause(new ServiceUnavailableError(message), cause);
      }
      return cause;
  }
}
