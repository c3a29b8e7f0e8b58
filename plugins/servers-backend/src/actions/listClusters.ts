import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersService } from '../servers/ServersService';

export function registerListClustersAction(
  registry: ActionsRegistryService,
  service: ServersService,
) {
  registry.register({
    name: 'list-clusters',
    title: 'List server clusters',
    description:
      'Lists the Rackside clusters the caller may read: name (what the other server actions take as cluster), title, how many servers the caller may read, the control-plane quorum summary and the power verbs the cluster’s power channel offers.',
    attributes: { readOnly: true, idempotent: true },
    schema: {
      input: z => z.object({}),
      output: z => z.object({ clusters: z.array(z.record(z.unknown())) }),
    },
    action: async ({ credentials }) => ({
      output: {
        clusters: (await service.listClusters(credentials, { via: 'actions' }))
          .items as unknown as Record<string, unknown>[],
      },
    }),
  });
}
