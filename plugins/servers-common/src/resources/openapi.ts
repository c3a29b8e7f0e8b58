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
  maxProperties?: number;
  items?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  required?: string[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: Array<Record<string, unknown>>;
}

/**
 * Every key a rendered node may carry, in the order it is written (the order of the
 * committed `crds/*.yaml`). A key zod writes that is not here (`anyOf`, `allOf`,
 * `multipleOf`, `readOnly`, ...) has no structural-schema form and is refused.
 */
const KEYS = [
  'description',
  'type',
  'properties',
  'required',
  'items',
  'additionalProperties',
  'enum',
  'minLength',
  'maxLength',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
  'maxProperties',
  'pattern',
  'format',
  'default',
  'nullable',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
] as const satisfies readonly (keyof JSONSchemaProps)[];

const TYPES: ReadonlySet<unknown> = new Set([
  'object',
  'array',
  'string',
  'integer',
  'number',
  'boolean',
]);

/** Why a key zod wrote cannot go into a CRD, for the error message. */
const REFUSED: Record<string, string> = {
  anyOf: 'a union',
  oneOf: 'a union',
  allOf: 'an intersection (or several patterns on one string)',
  not: 'a never',
  $ref: 'a reference',
};

/**
 * The zod checks (`_zod.def.check`, zod 4's documented introspection) that have a
 * structural-schema form, by node type. `custom` (a refinement) is allowed everywhere:
 * the apiserver does not see it, a CEL rule says the same where it matters.
 */
const CHECKS: Record<string, readonly string[]> = {
  string: ['min_length', 'max_length', 'length_equals', 'string_format'],
  number: ['greater_than', 'less_than', 'number_format'],
  array: ['min_length', 'max_length', 'length_equals'],
};

type Json = Record<string, unknown>;
type CheckDef = {
  check: string;
  format?: string;
  pattern?: RegExp;
};

/** A readable place for errors: `Kind.spec.field[]` from zod's JSON Schema path. */
function whereOf(root: string, path: readonly (string | number)[]): string {
  let out = root;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i];
    if (segment === 'properties') out += `.${path[++i]}`;
    else if (segment === 'items') out += '[]';
    else if (segment === 'additionalProperties') out += '.*';
    else out += `/${segment}`;
  }
  return out;
}

/** The checks of a node; a format schema (`z.iso.datetime()`) is its own first check. */
function checksOf(def: z.core.$ZodTypeDef): CheckDef[] {
  const own = 'check' in def ? [def as unknown as CheckDef] : [];
  return [
    ...own,
    ...(def.checks ?? []).map(c => c._zod.def as unknown as CheckDef),
  ];
}

/** Refuses a check the CRD would silently drop (zod would then accept less than the apiserver). */
function refuseUnrenderedChecks(
  def: z.core.$ZodTypeDef,
  json: Json,
  where: string,
) {
  for (const check of checksOf(def)) {
    if (check.check === 'custom') continue;
    if (!CHECKS[def.type]?.includes(check.check)) {
      throw new Error(
        `${where}: ${def.type} check ${check.check} has no OpenAPI form here`,
      );
    }
    if (check.check === 'number_format' && check.format !== 'safeint') {
      throw new Error(
        `${where}: number format ${check.format} is not supported`,
      );
    }
    if (check.check !== 'string_format') continue;
    if (check.format === 'regex') {
      if (check.pattern?.flags) {
        throw new Error(`${where}: regex flags are not supported`);
      }
    } else if (check.format === 'datetime') {
      // zod writes the pattern it checks the format with next to `format: date-time`;
      // the apiserver checks the format itself.
      if (json.pattern === check.pattern?.source) delete json.pattern;
    } else {
      throw new Error(
        `${where}: string check ${check.format} has no OpenAPI form here`,
      );
    }
  }
}

/** What the generic JSON Schema of one node needs to be a Kubernetes structural schema. */
function structural(def: z.core.$ZodTypeDef, json: Json, where: string) {
  switch (def.type) {
    case 'pipe':
    case 'transform':
      throw new Error(
        `${where}: transforms cannot be rendered as a structural schema (input and output would differ)`,
      );
    case 'intersection':
      throw new Error(
        `${where}: an intersection cannot be rendered as a structural schema (write one object)`,
      );
    case 'unknown':
    case 'any':
      json['x-kubernetes-preserve-unknown-fields'] = true;
      break;
    case 'object': {
      const { shape, catchall: rest } = def as z.core.$ZodObjectDef;
      // Required: a field that does not accept undefined. (zod's JSON Schema also
      // requires `unknown()` fields, which accept a missing key.)
      const required = Object.keys(shape).filter(
        key => !z.safeParse(shape[key], undefined).success,
      );
      if (required.length) json.required = required;
      else delete json.required;
      const catchall = rest?._zod.def.type;
      if (catchall === 'unknown') {
        // passthrough(): the apiserver keeps the fields it does not know.
        delete json.additionalProperties;
        json['x-kubernetes-preserve-unknown-fields'] = true;
      } else if (catchall === 'never') {
        // strict(): the apiserver prunes unknown fields anyway.
        delete json.additionalProperties;
      } else if (catchall !== undefined) {
        throw new Error(`${where}: catchall is not supported`);
      }
      break;
    }
    case 'record':
      if ((def as z.core.$ZodRecordDef).keyType._zod.def.type !== 'string') {
        throw new Error(`${where}: record keys must be strings`);
      }
      break;
    case 'number':
      // int() is a safe integer in zod; a CRD's integer is an int64 with no such bounds.
      if (json.minimum === Number.MIN_SAFE_INTEGER) delete json.minimum;
      if (json.maximum === Number.MAX_SAFE_INTEGER) delete json.maximum;
      break;
    case 'literal': {
      const { values } = def as z.core.$ZodLiteralDef<z.core.util.Literal>;
      if (values.every(v => typeof v === 'number' && Number.isInteger(v))) {
        json.type = 'integer';
      }
      break;
    }
    case 'readonly':
      delete json.readOnly;
      break;
    default:
  }
  refuseUnrenderedChecks(def, json, where);
}

/** The node is `z.union([z.number().int(), z.string()])`, in either order. */
function isIntOrString(def: z.core.$ZodTypeDef): boolean {
  if (def.type !== 'union') return false;
  const types = (def as z.core.$ZodUnionDef).options
    .map(o => o._zod.def.type)
    .sort();
  return types.join() === 'number,string';
}

/** Writes the extras attached with `kube()` / `withRules()` (inner nodes' rules first). */
function applyExtensions(
  def: z.core.$ZodTypeDef,
  json: Json,
  ext: KubeSchemaExtensions,
  where: string,
) {
  if (ext.intOrString) {
    if (!isIntOrString(def)) {
      throw new Error(
        `${where}: int-or-string needs a union of a number and a string`,
      );
    }
    delete json.anyOf;
    json['x-kubernetes-int-or-string'] = true;
  }
  if (ext.format) json.format = ext.format;
  if (ext.maxProperties !== undefined) json.maxProperties = ext.maxProperties;
  if (ext.preserveUnknownFields) {
    json['x-kubernetes-preserve-unknown-fields'] = true;
  }
  if (ext.listType) json['x-kubernetes-list-type'] = ext.listType;
  if (ext.listMapKeys)
    json['x-kubernetes-list-map-keys'] = [...ext.listMapKeys];
  if (ext.mapType) json['x-kubernetes-map-type'] = ext.mapType;
  if (ext.validations?.length) {
    // A wrapper (optional, default, ...) already holds its inner node's rules.
    const inner =
      (json['x-kubernetes-validations'] as Json[] | undefined) ?? [];
    json['x-kubernetes-validations'] = [
      ...inner,
      ...ext.validations.map(rule => ({ ...rule })),
    ];
  }
}

/** Keeps the keys a CRD node may have, in the committed order, refusing any other. */
function normalize(node: Json, where: string): JSONSchemaProps {
  for (const key of Object.keys(node)) {
    if (!(KEYS as readonly string[]).includes(key)) {
      throw new Error(
        `${where}: ${
          REFUSED[key] ?? key
        } cannot be rendered as a structural schema`,
      );
    }
  }
  if (node.type !== undefined && !TYPES.has(node.type)) {
    throw new Error(`${where}: type ${String(node.type)} is not supported`);
  }
  const out: Json = {};
  for (const key of KEYS) {
    if (!(key in node)) continue;
    const value = node[key];
    if (key === 'properties') {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, Json>).map(([name, child]) => [
          name,
          normalize(child, `${where}.${name}`),
        ]),
      );
    } else if (key === 'items') {
      out[key] = normalize(value as Json, `${where}[]`);
    } else if (key === 'additionalProperties') {
      out[key] = normalize(value as Json, `${where}.*`);
    } else {
      out[key] = value;
    }
  }
  return out as JSONSchemaProps;
}

/**
 * Renders a zod schema as a structural OpenAPI v3 schema for a CRD: zod's own JSON Schema
 * (`z.toJSONSchema`, OpenAPI 3.0 target, input side: a defaulted field is not required),
 * made structural by an override per node (preserve-unknown-fields for `unknown()` and
 * `passthrough()`, no `additionalProperties: false`, integer literals, the Kubernetes
 * extras attached with `kube()` / `withRules()`), then checked and put in a fixed key
 * order. Anything it cannot render faithfully (unions other than int-or-string,
 * transforms, intersections, checks with no OpenAPI form) is an error rather than an
 * approximation.
 */
export function toOpenAPISchema(
  schema: z.ZodType,
  where = '<root>',
): JSONSchemaProps {
  const json = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io: 'input',
    unrepresentable: 'throw',
    override: ({ zodSchema, jsonSchema, path }) => {
      const def = zodSchema._zod.def;
      const node = jsonSchema as Json;
      const at = whereOf(where, path);
      structural(def, node, at);
      const ext = kubeExtensionsOf(zodSchema);
      if (ext) applyExtensions(def, node, ext, at);
    },
  });
  return normalize(json as Json, where);
}
