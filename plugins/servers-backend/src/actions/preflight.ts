import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import { PREFLIGHT_ACTIONS } from '@rackside/plugin-servers-common';
import { NotAllowedError } from '@backstage/errors';
import type { ServersService } from '../servers/ServersService';
import {
  agentDrainRefusal,
  DEFAULT_AGENT_POLICY,
  type AgentPolicy,
} from './agentPolicy';
import { userCredentials } from './userCredentials';

export function registerPreflightAction(
  registry: ActionsRegistryService,
  service: ServersService,
  policy: AgentPolicy = DEFAULT_AGENT_POLICY,
) {
  registry.register({
    name: 'preflight-server-action',
    title: 'Pre-flight a drain, reboot or shutdown',
    description:
      'Shows what a drain, reboot or shutdown of a server would do now: the pods it would evict, the pods it would refuse and why, DaemonSet pods left in place, the disruption budgets in the way, the quorum effect and the ceremony. The returned token binds this impact for the caller: drain-server, reboot-server and shutdown-server take it (with the same drain options), and refuse it once the impact changed. Needs the permission of the action on the server and user credentials; writes nothing.',
    attributes: { readOnly: true, idempotent: true },
    schema: {
      // The data-loss options only where servers.actions.allowDataLossDrain opens them;
      // passthrough, so a call that sets them anyway is refused by name.
      input: z =>
        z
          .object({
            cluster: z.string().describe('The cluster name'),
            node: z.string().describe('The Node name'),
            action: z
              .enum(PREFLIGHT_ACTIONS)
              .describe('The action to pre-flight'),
            ...(policy.allowDataLossDrain
              ? {
                  deleteEmptyDirData: z
                    .boolean()
                    .optional()
                    .describe(
                      'Evict pods with emptyDir volumes (their data is lost)',
                    ),
                  force: z
                    .boolean()
                    .optional()
                    .describe('Evict pods that no controller recreates'),
                }
              : {}),
            allowNodeLocalData: z
              .boolean()
              .optional()
              .describe(
                'Evict pods whose data is on the node (they cannot run elsewhere until it is back)',
              ),
          })
          .passthrough(),
      output: z => z.object({ preflight: z.record(z.unknown()) }),
    },
    action: async ({ input, credentials }) => {
      const asked = input as Record<string, unknown>;
      const refusal = agentDrainRefusal(
        policy,
        asked,
        input.action,
        input.node,
      );
      if (refusal) throw new NotAllowedError(refusal);
      return {
        output: {
          preflight: (await service.preflight(
            userCredentials(credentials),
            {
              cluster: input.cluster,
              node: input.node,
              action: input.action,
              options: {
                deleteEmptyDirData: asked.deleteEmptyDirData === true,
                force: asked.force === true,
                allowNodeLocalData: input.allowNodeLocalData === true,
              },
            },
            { via: 'actions' },
          )) as unknown as Record<string, unknown>,
        },
      };
    },
  });
}
