import { z } from 'zod';
import { fixedAtCreation, immutable, kube, withRules } from './kube';
import { toOpenAPISchema } from './openapi';

describe('toOpenAPISchema', () => {
  it('renders objects with required, optional and defaulted fields', () => {
    const schema = z
      .object({
        name: z.string().min(1).max(10).describe('The name.'),
        count: z.number().int().min(0).max(5).default(2),
        ratio: z.number().gt(0),
        tags: z
          .array(z.enum(['a', 'b']))
          .max(3)
          .optional(),
        labels: z.record(z.string(), z.string()).optional(),
        when: z.iso.datetime({ offset: true }).optional(),
        kind: z.literal('X'),
        free: z.unknown(),
      })
      .describe('Thing.');
    expect(toOpenAPISchema(schema)).toEqual({
      description: 'Thing.',
      type: 'object',
      properties: {
        name: {
          description: 'The name.',
          type: 'string',
          minLength: 1,
          maxLength: 10,
        },
        count: { type: 'integer', minimum: 0, maximum: 5, default: 2 },
        ratio: { type: 'number', minimum: 0, exclusiveMinimum: true },
        tags: {
          type: 'array',
          items: { type: 'string', enum: ['a', 'b'] },
          maxItems: 3,
        },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        when: { type: 'string', format: 'date-time' },
        kind: { type: 'string', enum: ['X'] },
        free: { 'x-kubernetes-preserve-unknown-fields': true },
      },
      required: ['name', 'ratio', 'kind'],
    });
  });

  it('keeps Kubernetes extras through describe(), optional() and checks', () => {
    const field = kube(z.string(), { validations: [immutable('field')] })
      .max(5)
      .describe('F.');
    const list = kube(z.array(z.object({ type: z.string() })), {
      listType: 'map',
      listMapKeys: ['type'],
    })
      .max(4)
      .optional();
    const parent = withRules(
      z.object({ field, list, opt: z.string().optional() }),
      [fixedAtCreation('opt')],
    ).optional();
    const rendered = toOpenAPISchema(parent);
    expect(rendered['x-kubernetes-validations']).toEqual([
      expect.objectContaining({ fieldPath: '.opt' }),
    ]);
    expect(rendered.properties!.field).toEqual({
      description: 'F.',
      type: 'string',
      maxLength: 5,
      'x-kubernetes-validations': [
        { rule: 'self == oldSelf', message: 'field is immutable' },
      ],
    });
    expect(rendered.properties!.list).toMatchObject({
      maxItems: 4,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    });
  });

  it('does not change a shared schema when extras are added to a copy', () => {
    const shared = z.string();
    kube(shared, { format: 'int-or-string' });
    expect(toOpenAPISchema(shared)).toEqual({ type: 'string' });
  });

  it('writes what a structural schema needs, not what JSON Schema would', () => {
    const schema = z.object({
      loose: z.object({ a: z.string() }).loose(),
      strict: z.strictObject({ a: z.string().optional() }),
      port: kube(z.union([z.number().int(), z.string()]), {
        intOrString: true,
      }).describe('A port number or name.'),
      when: z.iso.datetime({ offset: true }),
      count: z.number().int(),
      maybe: z.string().nullable(),
    });
    const rendered = toOpenAPISchema(schema);
    expect(rendered).not.toHaveProperty('$schema');
    expect(rendered.properties).toEqual({
      loose: {
        type: 'object',
        properties: { a: { type: 'string' } },
        required: ['a'],
        'x-kubernetes-preserve-unknown-fields': true,
      },
      strict: { type: 'object', properties: { a: { type: 'string' } } },
      port: {
        description: 'A port number or name.',
        'x-kubernetes-int-or-string': true,
      },
      when: { type: 'string', format: 'date-time' },
      count: { type: 'integer' },
      maybe: { type: 'string', nullable: true },
    });
    // The keys come in one fixed order (the committed CRDs are written in it).
    expect(
      Object.keys(
        toOpenAPISchema(
          kube(z.array(z.string()).max(2).default([]).describe('D.'), {
            listType: 'set',
          }),
        ),
      ),
    ).toEqual([
      'description',
      'type',
      'items',
      'maxItems',
      'default',
      'x-kubernetes-list-type',
    ]);
  });

  it('runs the TypeScript side of a CEL rule in zod', () => {
    const schema = withRules(z.object({ a: z.number(), b: z.number() }), [
      {
        rule: 'self.a <= self.b',
        message: 'a cannot exceed b',
        fieldPath: '.a',
        check: v => v.a <= v.b,
      },
    ]);
    const result = schema.safeParse({ a: 2, b: 1 });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({
      path: ['a'],
      message: 'a cannot exceed b',
    });
    expect(toOpenAPISchema(schema)['x-kubernetes-validations']).toEqual([
      {
        rule: 'self.a <= self.b',
        message: 'a cannot exceed b',
        fieldPath: '.a',
      },
    ]);
  });

  it('refuses a TypeScript check on a transition rule', () => {
    expect(() =>
      withRules(z.string(), [{ rule: 'self == oldSelf', check: () => true }]),
    ).toThrow(/transition rule/);
  });

  it.each([
    ['a union', z.union([z.string(), z.number()])],
    ['a transform', z.string().transform(s => s.length)],
    ['an email check', z.string().email()],
    ['a regex with flags', z.string().regex(/a/i)],
    ['a trim', z.string().trim()],
    ['a multipleOf', z.number().multipleOf(5)],
    ['an intersection', z.intersection(z.object({}), z.object({}))],
    [
      'int-or-string on something else',
      kube(z.string(), { intOrString: true }),
    ],
  ])('refuses %s rather than approximating it', (_what, schema) => {
    expect(() => toOpenAPISchema(schema)).toThrow();
  });
});
