import { STATUS_CODES } from 'node:http';
import type { PowerFailureOutcome } from '../types';

/**
 * A failed Redfish request. The message names the BMC (its origin) and the request path
 * and, when the BMC answered, the HTTP status and the BMC's own message. It never holds
 * a credential: addresses with user info are refused up front, and headers are never
 * part of a message.
 */
export class RedfishError extends Error {
  /** The BMC's origin, e.g. `https://10.0.5.21`. */
  readonly bmc: string;
  /** The HTTP status, when the BMC answered. */
  readonly status?: number;
  /** Whether the BMC may have acted on the request (see {@link PowerFailureOutcome}). */
  readonly outcome: PowerFailureOutcome;

  constructor(options: {
    bmc: string;
    message: string;
    status?: number;
    outcome: PowerFailureOutcome;
    cause?: unknown;
  }) {
    super(
      options.message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'RedfishError';
    this.bmc = options.bmc;
    this.status = options.status;
    this.outcome = options.outcome;
  }
}

/** The BMC's explanation from a Redfish error body (`error.@Message.ExtendedInfo` or `error.message`). */
export function redfishErrorText(body: unknown): string | undefined {
  const error = (body as { error?: Record<string, unknown> } | undefined)
    ?.error;
  if (!error || typeof error !== 'object') return undefined;
  const extended = error['@Message.ExtendedInfo'];
  if (Array.isArray(extended)) {
    const messages = extended
      .map(info => (info as { Message?: unknown })?.Message)
      .filter((m): m is string => typeof m === 'string' && m !== '');
    if (messages.length > 0) return messages.join('; ').slice(0, 500);
  }
  return typeof error.message === 'string'
    ? error.message.slice(0, 500)
    : undefined;
}

export function statusText(status: number): string {
  return `${status} ${STATUS_CODES[status] ?? ''}`.trim();
}

/** Error codes of a connection that never carried the request. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/** The innermost error code of a fetch failure (undici wraps the socket error in `cause`). */
export function networkErrorCode(error: unknown): string | undefined {
  let current: any = error;
  let code: string | undefined;
  for (let depth = 0; current && depth < 5; depth++) {
    if (typeof current.code === 'string') code = current.code;
    current = current.cause;
  }
  return code;
}

/** Whether a network failure left the request unsent (safe to say the BMC did nothing). */
export function networkFailureOutcome(error: unknown): PowerFailureOutcome {
  const code = networkErrorCode(error);
  return code && NOT_SENT_CODES.has(code) ? 'notSent' : 'unknown';
}

/** A short description of a network failure, without anything from the request. */
export function networkErrorText(error: unknown): string {
  const code = networkErrorCode(error);
  let current: any = error;
  let message = '';
  for (let depth = 0; current && depth < 5; depth++) {
    if (typeof current.message === 'string' && current.message !== '') {
      message = current.message;
    }
    current = current.cause;
  }
  if (code && !message.includes(code)) return `${code}: ${message}`;
  return message || 'network error';
}
