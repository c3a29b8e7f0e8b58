import { z } from 'zod';

/**
 * Kubernetes-only facts about a schema node that zod cannot express: CEL rules, list
 * semantics, formats. They live next to the zod schema (see {@link kube} and
 * {@link withRules}) and the CRD renderer ({@link toOpenAPISchema}) reads them back, so a
 * field and its rules are written in one place.
 */

/** One `x-kubernetes-validations` entry. */
export interface CelRule {
  /** The CEL expression; `self` is the value at this node, `oldSelf` the previous one. */
  rule: string;
  message?: string;
  messageExpression?: string;
  /** JSONPath (`.field`) the error is reported at, relative to this node. */
  fieldPath?: string;
  reason?:
    | 'FieldValueInvalid'
    | 'FieldValueForbidden'
    | 'FieldValueRequired'
    | 'FieldValueDuplicate';
  optionalOldSelf?: boolean;
}

/**
 * A CEL rule plus, for a rule that does not look at `oldSelf`, the same predicate in
 * TypeScript: zod then checks it too, and the integration tests prove the two agree.
 */
export interface CheckedCelRule<T> extends CelRule {
  check?: (self: T) => boolean;
}

/** The `x-kubernetes-*` and other extras of one schema node. */
export interface KubeSchemaExtensions {
  validations?: CelRule[];
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  mapType?: 'granular' | 'atomic';
  preserveUnknownFields?: boolean;
  /**
   * `x-kubernetes-int-or-string`: the node is an integer or a string (a zod union of
   * the two, e.g. a drain budget `2` or `"25%"`); the only union a CRD schema allows.
   */
  intOrString?: boolean;
  /** An OpenAPI format the zod checks do not imply (e.g. `int64`). */
  format?: string;
  /**
   * `maxProperties` of a map (a zod record, which has no such check): bounds its size,
   * and with it the cost the apiserver estimates for CEL rules that compare it.
   */
  maxProperties?: number;
}

/**
 * The extras live in a zod registry of their own, keyed by schema instance. zod 4 links
 * a schema derived by `.describe()`, `.min()`, `.refine()`, ... to the one it came from
 * (its parent), and a registry lookup inherits the parent's entry, so the extras survive
 * chaining after `kube()`. (A schema rebuilt from scratch, `.extend()` or `.passthrough()`,
 * has no parent: put `kube()` after those.)
 */
const kubeExtensions = z.registry<KubeSchemaExtensions>();

function merge(
  a: KubeSchemaExtensions | undefined,
  b: KubeSchemaExtensions,
): KubeSchemaExtensions {
  return {
    ...a,
    ...b,
    validations: [...(a?.validations ?? []), ...(b.validations ?? [])],
  };
}

/**
 * Returns a copy of `schema` that carries Kubernetes extras (merged with any it already
 * had). The copy is a new instance, so a shared schema is never changed for its users.
 */
export function kube<T extends z.ZodType>(
  schema: T,
  extensions: KubeSchemaExtensions,
): T {
  const copy = schema.clone();
  kubeExtensions.add(copy, merge(kubeExtensions.get(schema), extensions));
  return copy;
}

/** The extras of this schema node (its own, or inherited from the schema it was derived from). */
export function kubeExtensionsOf(
  schema: z.core.$ZodType,
): KubeSchemaExtensions | undefined {
  return kubeExtensions.get(schema);
}

function pathOf(fieldPath: string | undefined): (string | number)[] {
  if (!fieldPath) return [];
  return fieldPath
    .split('.')
    .filter(Boolean)
    .map(part => (/^\d+$/.test(part) ? Number(part) : part));
}

/**
 * Attaches CEL rules to a schema. Rules with a `check` are also enforced by zod (a
 * transition rule, one that reads `oldSelf`, cannot be: it needs the previous object).
 */
export function withRules<T extends z.ZodType>(
  schema: T,
  rules: CheckedCelRule<z.output<T>>[],
): T {
  for (const rule of rules) {
    if (rule.check && /\boldSelf\b/.test(rule.rule)) {
      throw new Error(
        `transition rule cannot have a TypeScript check: ${rule.rule}`,
      );
    }
  }
  const checked = rules.filter(rule => rule.check);
  const refined = schema.superRefine((value, ctx) => {
    for (const rule of checked) {
      if (!rule.check!(value)) {
        ctx.addIssue({
          code: 'custom',
          message: rule.message ?? `failed rule: ${rule.rule}`,
          path: pathOf(rule.fieldPath),
        });
      }
    }
  });
  return kube(refined, {
    validations: rules.map(({ check: _check, ...rule }) => rule),
  });
}

/**
 * A list the apiserver keeps unique: `x-kubernetes-list-type: set` (no `keys`), or `map`
 * keyed by `keys`. zod checks the same uniqueness, so both reject a duplicate.
 */
export function uniqueList<T extends z.ZodArray<z.ZodType>>(
  schema: T,
  keys?: string[],
): T {
  const keyOf = (item: unknown): string =>
    keys
      ? JSON.stringify(keys.map(k => (item as Record<string, unknown>)[k]))
      : JSON.stringify(item);
  return kube(
    schema.superRefine((items, ctx) => {
      const seen = new Set<string>();
      (items as unknown[]).forEach((item, index) => {
        const key = keyOf(item);
        if (seen.has(key)) {
          ctx.addIssue({
            code: 'custom',
            message: `Duplicate value: ${key}`,
            path: [index],
          });
        }
        seen.add(key);
      });
    }),
    keys ? { listType: 'map', listMapKeys: keys } : { listType: 'set' },
  );
}

/**
 * CEL rule: the field can never change once the object exists. For a required field, put
 * it on the field itself; for an optional one use {@link fixedAtCreation} on the parent.
 */
export function immutable(what: string): CelRule {
  return { rule: 'self == oldSelf', message: `${what} is immutable` };
}

/**
 * CEL rule for a parent object: its optional `field` is fixed at creation (cannot be
 * added, removed or changed later).
 */
export function fixedAtCreation(field: string, what = field): CelRule {
  return {
    rule: `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`,
    message: `${what} is immutable: it cannot be added, changed or removed after creation`,
    fieldPath: `.${field}`,
  };
}

/**
 * CEL rule for a parent object: its optional `field` may be set once, later than
 * creation, and then never changed or removed.
 */
export function setOnce(field: string, what = field): CelRule {
  return {
    rule: `!has(oldSelf.${field}) || (has(self.${field}) && self.${field} == oldSelf.${field})`,
    message: `${what} can be set once: it cannot be changed or removed once set`,
    fieldPath: `.${field}`,
  };
}

/**
 * CEL rule for a status: once `phase` is one of `terminal`, it never changes again.
 */
export function terminalPhaseIsFinal(
  terminal: readonly string[],
  what: string,
): CelRule {
  const list = terminal.map(phase => `'${phase}'`).join(', ');
  return {
    rule: `!has(oldSelf.phase) || !(oldSelf.phase in [${list}]) || (has(self.phase) && self.phase == oldSelf.phase)`,
    message: `${what} in a terminal phase (${terminal.join(
      ', ',
    )}) cannot change phase`,
    fieldPath: '.phase',
  };
}
