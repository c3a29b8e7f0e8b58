import { ResponseError } from '@backstage/errors';
import type { PreflightResponse } from '@rackside/plugin-servers-common';

/**
 * The backend refused a request because the impact it acknowledged changed
 * (409 with the new pre-flight). The dialog shows `preflight` and asks for a
 * fresh acknowledgement.
 *
 * @public
 */
export class PreflightChangedError extends Error {
  readonly name = 'PreflightChangedError';
  /** The pre-flight as it is now. */
  readonly preflight: PreflightResponse;
  /** The 409 itself. */
  readonly cause: ResponseError;

  constructor(
    message: string,
    preflight: PreflightResponse,
    cause: ResponseError,
  ) {
    super(message);
    this.preflight = preflight;
    this.cause = cause;
  }

  /** Works across copies of this package, like `ResponseError.is`. */
  static is(value: unknown): value is PreflightChangedError {
    return (
      value instanceof Error &&
      value.name === 'PreflightChangedError' &&
      typeof (value as PreflightChangedError).preflight === 'object' &&
      (value as PreflightChangedError).preflight !== null
    );
  }
}

/**
 * The backend refused an approval because the impact grew past the rung the requester
 * acknowledged (409 with both rungs): the requester must ask again.
 *
 * @public
 */
export class ApprovalRungGrewError extends Error {
  readonly name = 'ApprovalRungGrewError';
  /** The rung the requester acknowledged. */
  readonly requestedRung: string;
  /** The rung of the impact now. */
  readonly rungNow: string;
  /** The 409 itself. */
  readonly cause: ResponseError;

  constructor(
    message: string,
    rungs: { requestedRung: string; rungNow: string },
    cause: ResponseError,
  ) {
    super(message);
    this.requestedRung = rungs.requestedRung;
    this.rungNow = rungs.rungNow;
    this.cause = cause;
  }

  /** Works across copies of this package, like `ResponseError.is`. */
  static is(value: unknown): value is ApprovalRungGrewError {
    return (
      value instanceof Error &&
      value.name === 'ApprovalRungGrewError' &&
      typeof (value as ApprovalRungGrewError).rungNow === 'string'
    );
  }
}

/** A failed request, described for a person. */
export interface DescribedError {
  /** The backend's own message when there is one. */
  message: string;
  /** The HTTP status, when the error came from the backend. */
  status?: number;
  /** The quorum numbers of a refusal (409 from the guard). */
  quorum?: {
    members: number | null;
    quorum: number | null;
    margin: number | null;
  };
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}

/** The backend's message (and refusal numbers) out of a rejected request. */
export function describeError(error: unknown): DescribedError {
  if (PreflightChangedError.is(error) || ApprovalRungGrewError.is(error)) {
    return { message: error.message, status: 409 };
  }
  if (ResponseError.is(error)) {
    const cause = error.cause as Error & Record<string, unknown>;
    const message = cause?.message || error.message;
    const described: DescribedError = {
      message,
      status: error.statusCode,
    };
    if (
      cause &&
      ('members' in cause || 'quorum' in cause || 'margin' in cause)
    ) {
      described.quorum = {
        members: numberOrNull(cause.members),
        quorum: numberOrNull(cause.quorum),
        margin: numberOrNull(cause.margin),
      };
    }
    return described;
  }
  if (error instanceof Error) return { message: error.message };
  return { message: String(error) };
}
