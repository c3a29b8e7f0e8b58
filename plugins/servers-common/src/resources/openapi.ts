import { z } from 'zod';
import { kubeExtensionsOf, type KubeSchemaExtensions } from './kube';

/** The subset of a CRD's OpenAPI v3 schema (`JSONSchemaProps`) the renderer writes. */
export interface JSONSchemaProps {
  description?: string;
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minItems?: number;
  maxItems?: number;
  items?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  required?: string[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: Array<Record<string, unknown>>;
}

interface Peeled {
  base: z.ZodTypeAny;
  description?: string;
  defaultValue?: unknown;
  hasDefault: boolean;
  nullable: boolean;
  extensions: KubeSchemaExtensions;
}

/** Strips optional/default/nullable/refinement wrappers, collecting what they carry. */
function peel(schema: z.ZodTypeAny): Peeled {
  const out: Peeled = {
    base: schema,
    hasDefault: false,
    nullable: false,
    extensions: {},
  };
  const layers: KubeSchemaExtensions[] = [];
  let current: z.ZodTypeAny = schema;
  for (;;) {
    if (out.description === undefined && current.description) {
      out.description = current.description;
    }
    const ext = kubeExtensionsOf(current);
    if (ext) layers.push(ext);
    if (current instanceof z.ZodOptional) {
      current = current._def.innerType;
    } else if (current instanceof z.ZodNullable) {
      out.nullable = true;
      current = current._def.innerType;
    } else if (current instanceof z.ZodDefault) {
      if (!out.hasDefault) {
        out.hasDefault = true;
        out.defaultValue = current._def.defaultValue();
      }
      current = current._def.innerType;
    } else if (current instanceof z.ZodEffects) {
      if (current._def.effect.type !== 'refinement') {
        throw new Error(
          'transforms cannot be rendered as a structural schema (input and output would differ)',
        );
      }
      current = current._def.schema;
    } else if (current instanceof z.ZodReadonly) {
      current = current._def.innerType;
    } else {
      break;
    }
  }
  out.base = current;
  // Inner layers first, so rules read from the field outwards.
  for (const ext of layers.reverse()) {
    out.extensions = {
      ...out.extensions,
      ...ext,
      validations: [
        ...(out.extensions.validations ?? []),
        ...(ext.validations ?? []),
      ],
    };
  }
  return out;
}

function renderBase(base: z.ZodTypeAny, where: string): JSONSchemaProps {
  if (base instanceof z.ZodObject) {
    const shape = base.shape as Record<string, z.ZodTypeAny>;
    const properties: Record<string, JSONSchemaProps> = {};
    const required: string[] = [];
    for (const [key, value] of Object.entries(shape)) {
      properties[key] = toOpenAPISchema(value, `${where}.${key}`);
      if (!value.isOptional()) required.push(key);
    }
    const result: JSONSchemaProps = { type: 'object', properties };
    if (required.length) result.required = required;
    if (base._def.unknownKeys === 'passthrough') {
      result['x-kubernetes-preserve-unknown-fields'] = true;
    }
    if (!(base._def.catchall instanceof z.ZodNever)) {
      throw new Error(`${where}: catchall is not supported`);
    }
    return result;
  }
  if (base instanceof z.ZodString) {
    const result: JSONSchemaProps = { type: 'string' };
    for (const check of base._def.checks) {
      switch (check.kind) {
        case 'min':
          result.minLength = check.value;
          break;
        case 'max':
          result.maxLength = check.value;
          break;
        case 'length':
          result.minLength = check.value;
          result.maxLength = check.value;
          break;
        case 'regex':
          if (check.regex.flags) {
            throw new Error(`${where}: regex flags are not supported`);
          }
          result.pattern = check.regex.source;
          break;
        case 'datetime':
          result.format = 'date-time';
          break;
        default:
          throw new Error(
            `${where}: string check ${check.kind} has no OpenAPI form here`,
          );
      }
    }
    return result;
  }
  if (base instanceof z.ZodNumber) {
    const result: JSONSchemaProps = { type: 'number' };
    for (const check of base._def.checks) {
      switch (check.kind) {
        case 'int':
          result.type = 'integer';
          break;
        case 'min':
          result.minimum = check.value;
          if (!check.inclusive) result.exclusiveMinimum = true;
          break;
        case 'max':
          result.maximum = check.value;
          if (!check.inclusive) result.exclusiveMaximum = true;
          break;
        default:
          throw new Error(
            `${where}: number check ${check.kind} has no OpenAPI form here`,
          );
      }
    }
    return result;
  }
  if (base instanceof z.ZodBoolean) return { type: 'boolean' };
  if (base instanceof z.ZodEnum) {
    return { type: 'string', enum: [...(base._def.values as string[])] };
  }
  if (base instanceof z.ZodLiteral) {
    const value = base._def.value as unknown;
    const type = typeof value;
    if (type !== 'string' && type !== 'number' && type !== 'boolean') {
      throw new Error(`${where}: literal of type ${type} is not supported`);
    }
    return {
      type:
        type === 'number' && Number.isInteger(value)
          ? 'integer'
          : (type as 'string' | 'number' | 'boolean'),
      enum: [value],
    };
  }
  if (base instanceof z.ZodArray) {
    const result: JSONSchemaProps = {
      type: 'array',
      items: toOpenAPISchema(base._def.type, `${where}[]`),
    };
    if (base._def.minLength) result.minItems = base._def.minLength.value;
    if (base._def.maxLength) result.maxItems = base._def.maxLength.value;
    if (base._def.exactLength) {
      result.minItems = base._def.exactLength.value;
      result.maxItems = base._def.exactLength.value;
    }
    return result;
  }
  if (base instanceof z.ZodRecord) {
    if (!(base._def.keyType instanceof z.ZodString)) {
      throw new Error(`${where}: record keys must be strings`);
    }
    return {
      type: 'object',
      additionalProperties: toOpenAPISchema(base._def.valueType, `${where}.*`),
    };
  }
  if (base instanceof z.ZodUnknown || base instanceof z.ZodAny) {
    return { 'x-kubernetes-preserve-unknown-fields': true };
  }
  throw new Error(
    `${where}: ${base.constructor.name} cannot be rendered as a structural schema`,
  );
}

/**
 * Renders a zod schema as a structural OpenAPI v3 schema for a CRD: type, properties,
 * required, enum, items, format, bounds, default, description, plus the Kubernetes extras
 * attached with `kube()` / `withRules()`. Anything it cannot render faithfully (unions,
 * transforms, intersections) is an error rather than an approximation.
 */
export function toOpenAPISchema(
  schema: z.ZodTypeAny,
  where = '<root>',
): JSONSchemaProps {
  const peeled = peel(schema);
  const body = renderBase(peeled.base, where);
  const ext = peeled.extensions;
  const result: JSONSchemaProps = {};
  if (peeled.description) result.description = peeled.description;
  Object.assign(result, body);
  if (ext.format) result.format = ext.format;
  if (peeled.hasDefault) result.default = peeled.defaultValue;
  if (peeled.nullable) result.nullable = true;
  if (ext.preserveUnknownFields) {
    result['x-kubernetes-preserve-unknown-fields'] = true;
  }
  if (ext.listType) result['x-kubernetes-list-type'] = ext.listType;
  if (ext.listMapKeys) result['x-kubernetes-list-map-keys'] = ext.listMapKeys;
  if (ext.mapType) result['x-kubernetes-map-type'] = ext.mapType;
  if (ext.validations?.length) {
    result['x-kubernetes-validations'] = ext.validations.map(rule => ({
      ...rule,
    }));
  }
  return result;
}
