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
  return error?.status === 400 && namesField(error.message, field)
    ? error.message
    : undefined;
}

/** Whether the message starts with the field, or names it after ": ", as a whole word. */
function namesField(message: string, field: string): boolean {
  const wholeWordAt = (at: number) =>
    !/\w/.test(message.charAt(at + field.length));
  if (message.startsWith(field) && wholeWordAt(0)) return true;
  const named = `: ${field}`;
  for (
    let at = message.indexOf(named);
    at !== -1;
    at = message.indexOf(named, at + 1)
  ) {
    if (wholeWordAt(at + 2)) return true;
  }
  return false;
}
