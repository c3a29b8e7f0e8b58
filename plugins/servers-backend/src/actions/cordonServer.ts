import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersEdgeService } from '../servers/ServersService';
import type { AgentPolicy } from './agentPolicy';
import { REQUEST_FIELDS, registerServerVerbAction } from './serverVerbAction';

export function registerCordonServerAction(
  registry: ActionsRegistryService,
  service: ServersEdgeService,
  policy?: AgentPolicy,
) {
  registerServerVerbAction(
    registry,
    service,
    {
      verb: 'cordon',
      name: 'cordon-server',
      title: 'Cordon a server',
      description:
        'Cordons a server (no new pods are scheduled on it; running pods stay), recorded on a new NodeMaintenance that the Rackside operator carries out. Undone with uncordon-server.',
      attributes: { destructive: false, idempotent: false },
      fields: REQUEST_FIELDS,
    },
    policy,
  );
}
