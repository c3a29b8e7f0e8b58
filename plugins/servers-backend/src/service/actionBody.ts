/*
 * The body of an action request, once: the route `POST .../actions/:action` validates
 * it with {@link actionBodySchema}, and each registered action builds its input from the
 * same fields ({@link actionBodyFields}, with the zod the actions registry hands over),
 * so an MCP client is asked for exactly what the Servers page sends.
 */
import { z as zod } from 'zod/v3';

/** The zod namespace (the registry passes its own copy of the same zod 3 API). */
export type Zod = typeof zod;

/** The fields of an action body, described for the actions registry's JSON schema. */
export function actionBodyFields(z: Zod) {
  return {
    reason: z
      .string({
        required_error: 'reason is required',
        invalid_type_error: 'reason must be a string',
      })
      .describe(
        'Why, in the requester’s words; the deployment reason policy applies (by default 10 to 500 characters)',
      ),
    preflightToken: z
      .string({ invalid_type_error: 'preflightToken must be a string' })
      .max(4096)
      .optional()
      .describe(
        'The token of the pre-flight the caller reviewed (preflight-server-action); drain, reboot and shutdown need it',
      ),
    typedName: z
      .string({ invalid_type_error: 'typedName must be a string' })
      .max(253)
      .optional()
      .describe(
        'The node name typed out as confirmation: reboot and shutdown need it, and so does any action that spends the last quorum margin',
      ),
    deleteEmptyDirData: z
      .boolean({ invalid_type_error: 'deleteEmptyDirData must be a boolean' })
      .optional()
      .describe(
        'Evict pods with emptyDir volumes (their data is lost); as in the pre-flight',
      ),
    force: z
      .boolean({ invalid_type_error: 'force must be a boolean' })
      .optional()
      .describe(
        'Evict pods that no controller recreates; as in the pre-flight',
      ),
    allowNodeLocalData: z
      .boolean({ invalid_type_error: 'allowNodeLocalData must be a boolean' })
      .optional()
      .describe(
        'Evict pods whose data is on the node (they cannot run elsewhere until it is back); as in the pre-flight',
      ),
  };
}

/** The names of the body fields. */
export type ActionBodyField = keyof ReturnType<typeof actionBodyFields>;

/** The body of an action request (the routes' contract; actions take the same fields). */
export const actionBodySchema = zod.object(actionBodyFields(zod));

/** A parsed action body. */
export type ActionBody = zod.infer<typeof actionBodySchema>;
