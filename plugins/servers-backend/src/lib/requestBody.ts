/*
 * The one request-body parser of the `/api/servers` routes and the registered actions:
 * a zod schema, and a 400 that names the first field that is wrong and says what is
 * wrong with it, never what was sent (a body may carry a credential).
 */
import { InputError } from '@backstage/errors';
import type { z } from 'zod';

/** v3's name of a value's type ("received number"). */
function typeName(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'nan';
    return 'number';
  }
  return typeof value;
}

/** zod 3's words for a bound: "String must contain at least 10 character(s)". */
const BOUND_WORDS: Record<
  string,
  {
    subject: string;
    unit: string;
    exact: string;
    atLeast: string;
    overMin: string;
    atMost: string;
    underMax: string;
  }
> = {
  string: {
    subject: 'String must contain',
    unit: ' character(s)',
    exact: 'exactly',
    atLeast: 'at least',
    overMin: 'over',
    atMost: 'at most',
    underMax: 'under',
  },
  array: {
    subject: 'Array must contain',
    unit: ' element(s)',
    exact: 'exactly',
    atLeast: 'at least',
    overMin: 'more than',
    atMost: 'at most',
    underMax: 'less than',
  },
  number: {
    subject: 'Number must be',
    unit: '',
    exact: 'exactly equal to',
    atLeast: 'greater than or equal to',
    overMin: 'greater than',
    atMost: 'less than or equal to',
    underMax: 'less than',
  },
};

function quoted(values: readonly unknown[]): string {
  return values
    .map(v => (typeof v === 'string' ? `'${v}'` : String(v)))
    .join(' | ');
}

/**
 * The wording of zod's own messages as the API has always answered them (zod 3's), for
 * the issues a body can raise where the schema gives no message of its own. The error
 * bodies are a contract; zod 4 words these differently. `undefined`: zod's message.
 */
export function apiWording(issue: z.core.$ZodRawIssue): string | undefined {
  const { input } = issue;
  switch (issue.code) {
    case 'invalid_type':
      if (input === undefined) return 'Required';
      if (issue.expected === 'int') return 'Expected integer, received float';
      return `Expected ${issue.expected}, received ${typeName(input)}`;
    case 'unrecognized_keys':
      return `Unrecognized key(s) in object: ${issue.keys
        .map(k => `'${k}'`)
        .join(', ')}`;
    case 'invalid_value':
      if (issue.values.length > 1 || typeof input !== typeof issue.values[0]) {
        return typeof input === 'string'
          ? `Invalid enum value. Expected ${quoted(
              issue.values,
            )}, received '${input}'`
          : `Expected ${quoted(issue.values)}, received ${typeName(input)}`;
      }
      return `Invalid literal value, expected ${JSON.stringify(
        issue.values[0],
      )}`;
    case 'too_small':
    case 'too_big': {
      const { exact, inclusive } = issue as typeof issue & { exact?: boolean };
      const small = issue.code === 'too_small';
      const limit = small ? issue.minimum : issue.maximum;
      const words = BOUND_WORDS[issue.origin as string];
      if (!words) return undefined;
      let how = small ? words.overMin : words.underMax;
      if (exact) how = words.exact;
      else if (inclusive) how = small ? words.atLeast : words.atMost;
      return `${words.subject} ${how} ${limit}${words.unit}`;
    }
    case 'invalid_format':
      return issue.format === 'regex' ? 'Invalid' : `Invalid ${issue.format}`;
    case 'custom':
    case 'invalid_union':
      return 'Invalid input';
    default:
      return undefined;
  }
}

/**
 * Parses a request body (absent: `{}`) with `schema`; a 400
 * `invalid request body: <field>: <what is wrong>` otherwise.
 */
export function parseRequestBody<S extends z.ZodType>(
  schema: S,
  body: unknown,
): z.output<S> {
  const parsed = schema.safeParse(body ?? {}, { error: apiWording });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join('.') || 'body';
    throw new InputError(`invalid request body: ${field}: ${issue.message}`);
  }
  return parsed.data;
}
