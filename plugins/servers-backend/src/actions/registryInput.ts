import { z } from 'zod';
import type { z as registryZod } from 'zod/v3';

/** The zod the actions registry hands over (Backstage writes it against zod 3's API). */
type RegistryZod = typeof registryZod;

interface FieldJson {
  type?: string;
  maxLength?: number;
  maxItems?: number;
  items?: { type?: string };
  description?: string;
}

/**
 * The registry's input fields for some fields of a request-body schema: the registry
 * lists its input as JSON Schema (made with zod 3's API), so each field is rebuilt in
 * the registry's zod from the JSON Schema zod 4 writes of ours (type, bound,
 * description, required), and a wrong type gets the message our schema gives. The
 * action hands its input to the same service as the route, which parses it with our
 * schema: the registry's copy only describes and pre-checks it.
 */
export function registryFields(
  z3: RegistryZod,
  schema: z.ZodObject,
  fields: readonly string[],
): Record<string, registryZod.ZodTypeAny> {
  const json = z.toJSONSchema(schema, { io: 'input' }) as {
    properties: Record<string, FieldJson>;
    required?: string[];
  };
  return Object.fromEntries(
    fields.map(name => {
      const field = json.properties[name];
      const own = schema.shape[name] as z.ZodType;
      const errorMap: registryZod.ZodErrorMap = (issue, ctx) => ({
        message:
          (issue.code === 'invalid_type' &&
            own.safeParse(ctx.data).error?.issues[0]?.message) ||
          ctx.defaultError,
      });
      let built: registryZod.ZodTypeAny;
      if (field?.type === 'string') {
        const text = z3.string({ errorMap });
        built =
          field.maxLength === undefined ? text : text.max(field.maxLength);
      } else if (field?.type === 'boolean') {
        built = z3.boolean({ errorMap });
      } else if (field?.type === 'array' && field.items?.type === 'string') {
        // A list of texts (a firmware update's targets), bounded as ours is.
        const list = z3.array(z3.string(), { errorMap });
        built = field.maxItems === undefined ? list : list.max(field.maxItems);
      } else {
        throw new Error(
          `request body field ${name} (${field?.type}) has no registry form`,
        );
      }
      if (!json.required?.includes(name)) built = built.optional();
      if (field.description) built = built.describe(field.description);
      return [name, built];
    }),
  );
}
