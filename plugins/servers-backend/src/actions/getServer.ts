import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersService } from '../servers/ServersService';

export function registerGetServerAction(
  registry: ActionsRegistryService,
  service: ServersService,
) {
  registry.register({
    name: 'get-server',
    title: 'Get a server',
    description:
      'Gets one server of a Rackside cluster: its facts, current maintenance with drain progress, and for every action whether it is offered (and if not, why), allowed for the caller, and the ceremony it needs.',
    attributes: { readOnly: true, idempotent: true },
    schema: {
      input: z =>
        z.object({
          cluster: z.string().describe('The cluster name'),
          node: z.string().describe('The Node name'),
        }),
      output: z => z.object({ server: z.record(z.unknown()) }),
    },
    action: async ({ input, credentials }) => ({
      output: {
        server: (await service.getServer(
          credentials,
          input.cluster,
          input.node,
          { via: 'actions' },
        )) as unknown as Record<string, unknown>,
      },
    }),
  });
}
