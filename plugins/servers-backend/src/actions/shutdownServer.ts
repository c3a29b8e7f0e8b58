import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersEdgeService } from '../servers/ServersService';
import type { AgentPolicy } from './agentPolicy';
import {
  PREFLIGHT_REQUEST_FIELDS,
  registerServerVerbAction,
} from './serverVerbAction';

export function registerShutdownServerAction(
  registry: ActionsRegistryService,
  service: ServersEdgeService,
  policy?: AgentPolicy,
) {
  registerServerVerbAction(
    registry,
    service,
    {
      verb: 'shutdown',
      name: 'shutdown-server',
      title: 'Shut a server down',
      description:
        'Shuts a server down through its power channel after draining it. Takes the token of a shutdown pre-flight the caller reviewed and the node name typed out; refused when it would drop the control plane below quorum, or when the channel cannot power it back on (unless the rack is attended).',
      attributes: { destructive: true, idempotent: false },
      fields: PREFLIGHT_REQUEST_FIELDS,
    },
    policy,
  );
}
