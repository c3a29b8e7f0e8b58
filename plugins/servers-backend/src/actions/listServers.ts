import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersService } from '../servers/ServersService';

export function registerListServersAction(
  registry: ActionsRegistryService,
  service: ServersService,
) {
  registry.register({
    name: 'list-servers',
    title: 'List servers',
    description:
      'Lists the servers (Kubernetes Nodes) of one Rackside cluster the caller may read, with roles, readiness, schedulability, the current maintenance and the actions the caller may request on each now (offered and allowed), each with the ceremony level its request needs; plus the quorum summary. get-server says why an absent action is not offered.',
    attributes: { readOnly: true, idempotent: true },
    schema: {
      input: z =>
        z.object({
          cluster: z.string().describe('The cluster name, as in app-config'),
        }),
      output: z =>
        z.object({
          quorum: z.record(z.unknown()),
          servers: z.array(z.record(z.unknown())),
        }),
    },
    action: async ({ input, credentials }) => {
      const list = await service.listServers(credentials, input.cluster, {
        via: 'actions',
      });
      return {
        output: {
          quorum: list.quorum as Record<string, unknown>,
          servers: list.items as unknown as Record<string, unknown>[],
        },
      };
    },
  });
}
