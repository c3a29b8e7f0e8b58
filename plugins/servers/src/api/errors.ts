import { ResponseError } from '@backstage/errors';

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
