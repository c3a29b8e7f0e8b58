import { actionRequestBodySchema } from '@rackside/plugin-servers-common';
import { z as z3 } from 'zod/v3';
import { registryFields } from './registryInput';

describe('registryFields', () => {
  const input = z3.object(
    registryFields(z3, actionRequestBodySchema, [
      'reason',
      'typedName',
      'force',
    ]),
  );

  it('asks for the fields of the route’s body, with their bounds and descriptions', () => {
    const { shape } = input;
    expect(Object.keys(shape)).toEqual(['reason', 'typedName', 'force']);
    expect(shape.reason.isOptional()).toBe(false);
    expect(shape.typedName.isOptional()).toBe(true);
    expect(shape.force.isOptional()).toBe(true);
    expect(shape.reason.description).toBe(
      actionRequestBodySchema.shape.reason.description,
    );
    expect(
      input.safeParse({ reason: 'r', typedName: 'x'.repeat(254) }).success,
    ).toBe(false);
    expect(input.safeParse({ reason: 'r', force: true }).success).toBe(true);
  });

  it('answers a wrong type with the message of the route’s body', () => {
    const messageOf = (body: unknown) =>
      input.safeParse(body).error?.issues[0]?.message;
    expect(messageOf({})).toBe('reason is required');
    expect(messageOf({ reason: 5 })).toBe('reason must be a string');
    expect(messageOf({ reason: 'r', force: 'yes' })).toBe(
      'force must be a boolean',
    );
  });
});
