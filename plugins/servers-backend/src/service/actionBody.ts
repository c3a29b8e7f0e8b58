/*
 * The body of an action request, once: the route `POST .../actions/:action` validates
 * it with {@link actionBodySchema}, and each registered action builds its input from the
 * same schema (actions/registryInput.ts), so an MCP client is asked for exactly what the
 * Servers page sends.
 */
import { z } from 'zod';
import { missingOr } from '../machines/fields';

/** The body of an action request (the routes' contract; actions take the same fields). */
export const actionBodySchema = z.object({
  reason: z
    .string({
      error: missingOr('reason is required', 'reason must be a string'),
    })
    .describe(
      'Why, in the requester’s words; the deployment reason policy applies (by default 10 to 500 characters)',
    ),
  preflightToken: z
    .string({ error: 'preflightToken must be a string' })
    .max(4096)
    .optional()
    .describe(
      'The token of the pre-flight the caller reviewed (preflight-server-action); drain, reboot and shutdown need it',
    ),
  typedName: z
    .string({ error: 'typedName must be a string' })
    .max(253)
    .optional()
    .describe(
      'The node name typed out as confirmation: reboot and shutdown need it, and so does any action that spends the last quorum margin',
    ),
  deleteEmptyDirData: z
    .boolean({ error: 'deleteEmptyDirData must be a boolean' })
    .optional()
    .describe(
      'Evict pods with emptyDir volumes (their data is lost); as in the pre-flight',
    ),
  force: z
    .boolean({ error: 'force must be a boolean' })
    .optional()
    .describe('Evict pods that no controller recreates; as in the pre-flight'),
  allowNodeLocalData: z
    .boolean({ error: 'allowNodeLocalData must be a boolean' })
    .optional()
    .describe(
      'Evict pods whose data is on the node (they cannot run elsewhere until it is back); as in the pre-flight',
    ),
});

/** The names of the body fields. */
export type ActionBodyField = keyof typeof actionBodySchema.shape;

/** A parsed action body. */
export type ActionBody = z.output<typeof actionBodySchema>;
