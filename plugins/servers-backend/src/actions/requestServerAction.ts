import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import { SERVER_ACTIONS } from '@rackside/plugin-servers-common';
import type { ServersService } from '../service/ServersService';
import { userCredentials } from './userCredentials';

export function registerRequestServerAction(
  registry: ActionsRegistryService,
  service: ServersService,
) {
  registry.register({
    name: 'request-server-action',
    title: 'Request a server action',
    description:
      'Requests cordon, uncordon (return to service), drain, reboot, shutdown, power-on or maintenance-abandon of a server, recorded on a NodeMaintenance that the Rackside operator carries out. It takes what the Servers page asks for: a reason (the deployment reason policy applies), the token of a pre-flight the caller reviewed (drain, reboot, shutdown) and the node name typed out (reboot, shutdown, and any action spending the last quorum margin). Refused below quorum; audited with who and why.',
    attributes: { destructive: true },
    schema: {
      input: z =>
        z.object({
          cluster: z.string().describe('The cluster name'),
          node: z.string().describe('The Node name'),
          action: z
            .enum(SERVER_ACTIONS as unknown as [string, ...string[]])
            .describe('What to do'),
          reason: z.string().describe('Why, in the requester’s words'),
          preflightToken: z
            .string()
            .optional()
            .describe('The token of preflight-server-action'),
          typedName: z
            .string()
            .optional()
            .describe('The node name, typed out as confirmation'),
          deleteEmptyDirData: z.boolean().optional(),
          force: z.boolean().optional(),
          allowNodeLocalData: z.boolean().optional(),
        }),
      output: z =>
        z.object({
          maintenance: z
            .string()
            .describe('The NodeMaintenance created or changed'),
        }),
    },
    action: async ({ input, credentials }) => {
      const { cluster, node, action, ...body } = input;
      const result = await service.requestAction(userCredentials(credentials), {
        cluster,
        node,
        action,
        body,
      });
      return { output: { maintenance: result.name } };
    },
  });
}
