import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersEdgeService } from '../servers/ServersService';
import type { AgentPolicy } from './agentPolicy';
import { REQUEST_FIELDS, registerServerVerbAction } from './serverVerbAction';

export function registerAbandonServerMaintenanceAction(
  registry: ActionsRegistryService,
  service: ServersEdgeService,
  policy?: AgentPolicy,
) {
  registerServerVerbAction(
    registry,
    service,
    {
      verb: 'maintenance-abandon',
      name: 'abandon-server-maintenance',
      title: 'Abandon a server maintenance',
      description:
        'Abandons the open maintenance of a server: the operator stops it where it is (a drain stops evicting; the node stays cordoned until it is returned to service).',
      attributes: { destructive: true, idempotent: false },
      fields: REQUEST_FIELDS,
    },
    policy,
  );
}
