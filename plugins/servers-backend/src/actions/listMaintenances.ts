import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersService } from '../servers/ServersService';

export function registerListMaintenancesAction(
  registry: ActionsRegistryService,
  service: ServersService,
) {
  registry.register({
    name: 'list-maintenances',
    title: 'List maintenances',
    description:
      'Lists the NodeMaintenances of a Rackside cluster (newest first), optionally of one node: phase, progress, conditions, who asked and why, and the phase history.',
    attributes: { readOnly: true, idempotent: true },
    schema: {
      input: z =>
        z.object({
          cluster: z.string().describe('The cluster name'),
          node: z.string().optional().describe('Only this Node'),
        }),
      output: z => z.object({ maintenances: z.array(z.record(z.unknown())) }),
    },
    action: async ({ input, credentials }) => ({
      output: {
        maintenances: (
          await service.listMaintenances(
            credentials,
            input.cluster,
            input.node,
            { via: 'actions' },
          )
        ).items as unknown as Record<string, unknown>[],
      },
    }),
  });
}
