import { z } from 'zod';
import { parseRequestBody } from './requestBody';

function messageOf(schema: z.ZodType, body: unknown): string {
  try {
    parseRequestBody(schema, body);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('parsed');
}

describe('parseRequestBody', () => {
  const schema = z.strictObject({
    reason: z.string(),
    intent: z.enum(['drain', 'reboot']).optional(),
    count: z.number().int().min(1).optional(),
    nodes: z.array(z.string().max(3)).min(1).max(2).optional(),
    own: z.string({ error: 'own must be a string' }).optional(),
  });

  it.each([
    [{}, 'reason: Required'],
    [{ reason: 7 }, 'reason: Expected string, received number'],
    [{ reason: 'r', extra: 1 }, "body: Unrecognized key(s) in object: 'extra'"],
    [
      { reason: 'r', intent: 'x' },
      "intent: Invalid enum value. Expected 'drain' | 'reboot', received 'x'",
    ],
    [{ reason: 'r', count: 1.5 }, 'count: Expected integer, received float'],
    [
      { reason: 'r', count: 0 },
      'count: Number must be greater than or equal to 1',
    ],
    [
      { reason: 'r', nodes: [] },
      'nodes: Array must contain at least 1 element(s)',
    ],
    [
      { reason: 'r', nodes: ['abcd'] },
      'nodes.0: String must contain at most 3 character(s)',
    ],
    [{ reason: 'r', own: 1 }, 'own: own must be a string'],
    [[], 'body: Expected object, received array'],
  ])('answers %j with the API’s wording', (body, message) => {
    expect(messageOf(schema, body)).toBe(`invalid request body: ${message}`);
  });

  it('reads an absent body as {}', () => {
    expect(parseRequestBody(z.object({}), undefined)).toEqual({});
  });
});
