import type { DescribedError } from '../../api';

/**
 * The message of a 400 about one field of the machine routes, which name the
 * field first or after a prefix (`invalid request body: reason: ...`): a form
 * shows it under that field instead of below the form.
 */
export function fieldErrorOf(
  error: DescribedError | undefined,
  field: string,
): string | undefined {
  return error?.status === 400 &&
    new RegExp(`(^|: )${field}\\b`).test(error.message)
    ? error.message
    : undefined;
}
