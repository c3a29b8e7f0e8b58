import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersEdgeService } from '../servers/ServersService';
import type { AgentPolicy } from './agentPolicy';
import { REQUEST_FIELDS, registerServerVerbAction } from './serverVerbAction';

export function registerUncordonServerAction(
  registry: ActionsRegistryService,
  service: ServersEdgeService,
  policy?: AgentPolicy,
) {
  registerServerVerbAction(
    registry,
    service,
    {
      verb: 'uncordon',
      name: 'uncordon-server',
      title: 'Return a server to service (uncordon)',
      description:
        'Returns a cordoned or drained server to service: a request on its open maintenance (or a new one for a node cordoned outside Rackside), which the operator carries out by uncordoning it.',
      attributes: { destructive: false, idempotent: false },
      fields: REQUEST_FIELDS,
    },
    policy,
  );
}
