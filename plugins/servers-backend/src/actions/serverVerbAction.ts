import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import {
  actionRequestBodySchema,
  serverActionPermissions,
  type ActionRequestBodyField,
  type ServerAction,
} from '@rackside/plugin-servers-common';
import { NotAllowedError } from '@backstage/errors';
import { refusedAudited } from '../lib/audited';
import {
  parseActionCommand,
  type ActionTarget,
  type ServersEdgeService,
} from '../servers/ServersService';
import { registryFields } from './registryInput';
import { userCredentials } from './userCredentials';
import {
  agentDrainRefusal,
  agentFields,
  agentPrincipal,
  agentRefusal,
  DEFAULT_AGENT_POLICY,
  type AgentPolicy,
} from './agentPolicy';

/** One server action as a registered action (one file per action names its spec). */
export interface ServerVerbActionSpec {
  /** The route's `:action`, and so the permission, ceremony and guard applied. */
  verb: ServerAction;
  name: string;
  title: string;
  description: string;
  /** The hints MCP clients show (readOnly is false for every request). */
  attributes: { destructive: boolean; idempotent: boolean };
  /** Which fields of the route's body this action takes. */
  fields: readonly ActionRequestBodyField[];
}

/** The fields every action request takes; the pre-flight ones add the drain options. */
export const REQUEST_FIELDS = ['reason', 'typedName'] as const;
export const PREFLIGHT_REQUEST_FIELDS = [
  'reason',
  'preflightToken',
  'typedName',
  'deleteEmptyDirData',
  'force',
  'allowNodeLocalData',
] as const;

/**
 * Registers one server action: its input is the cluster, the node and the route's
 * body fields, parsed into the same typed command as the route's and handed to the same
 * `ServersService.requestAction` (the
 * permission on the server, the reason policy, the guard, the capability rule, the
 * ceremony and the pre-flight token), audited with `via: 'actions'`.
 */
export function registerServerVerbAction(
  registry: ActionsRegistryService,
  service: ServersEdgeService,
  spec: ServerVerbActionSpec,
  policy: AgentPolicy = DEFAULT_AGENT_POLICY,
) {
  const permission = serverActionPermissions[spec.verb].name;
  registry.register({
    name: spec.name,
    title: spec.title,
    description: `${spec.description} Needs the permission ${permission} on the server and user credentials; refused (nothing written) when a check fails; audited with who, why and the NodeMaintenance. Requests at the typed-name rung (reboot, shutdown) and the hazard rung, and the drain options that lose data (force, deleteEmptyDirData), are for a person in the portal unless the deployment allows agents (servers.actions.allowPowerVerbs, servers.actions.allowHazard, servers.actions.allowDataLossDrain).`,
    attributes: { readOnly: false, ...spec.attributes },
    schema: {
      // Passthrough: a field the policy does not offer reaches the action, which refuses
      // it by name instead of the registry dropping it and acting without it.
      input: z =>
        z
          .object({
            cluster: z.string().describe('The cluster name (list-clusters)'),
            node: z.string().describe('The Node name'),
            ...registryFields(
              z,
              actionRequestBodySchema,
              agentFields(policy, spec.fields),
            ),
          })
          .passthrough(),
      output: z =>
        z.object({
          maintenance: z
            .string()
            .describe('The NodeMaintenance created or changed'),
          created: z
            .boolean()
            .describe(
              'true: a new NodeMaintenance; false: a request on the open one',
            ),
          approval: z
            .object({
              rule: z.string(),
              approvers: z.array(z.string()),
              expiresAt: z.string(),
            })
            .optional()
            .describe(
              'Present when a rule holds the new maintenance: nothing touches the server until a person named here approves it in the portal (no agent can approve)',
            ),
        }),
    },
    action: async ({ input, credentials }) => {
      const { cluster, node, ...body } = input as {
        cluster: string;
        node: string;
      } & Record<string, unknown>;
      const user = userCredentials(credentials);
      const refusal = agentDrainRefusal(policy, body, spec.verb, node);
      if (refusal) throw new NotAllowedError(refusal);
      const principal = agentPrincipal(user);
      const target: ActionTarget = {
        cluster,
        node,
        action: spec.verb,
        ...(typeof body.reason === 'string' ? { reason: body.reason } : {}),
        via: 'actions',
        principal,
      };
      // Parsed once, here at the edge; a body that does not parse is audited as the
      // route audits it.
      const command = await refusedAudited(
        service,
        target,
        { actor: user.principal.userEntityRef },
        () =>
          parseActionCommand(target, body, {
            principal,
            refusal: (level, action) =>
              agentRefusal(policy, level, action, node),
          }),
      );
      const result = await service.requestAction(user, command);
      return {
        output: {
          maintenance: result.name,
          created: result.status === 201,
          ...(result.approval ? { approval: result.approval } : {}),
        },
      };
    },
  });
}
