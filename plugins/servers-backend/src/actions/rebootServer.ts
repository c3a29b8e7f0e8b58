import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersEdgeService } from '../servers/ServersService';
import type { AgentPolicy } from './agentPolicy';
import {
  PREFLIGHT_REQUEST_FIELDS,
  registerServerVerbAction,
} from './serverVerbAction';

export function registerRebootServerAction(
  registry: ActionsRegistryService,
  service: ServersEdgeService,
  policy?: AgentPolicy,
) {
  registerServerVerbAction(
    registry,
    service,
    {
      verb: 'reboot',
      name: 'reboot-server',
      title: 'Reboot a server',
      description:
        'Reboots a server through its power channel after draining it. Takes the token of a reboot pre-flight the caller reviewed and the node name typed out; refused when it would drop the control plane below quorum, or when the channel offers no reboot for it.',
      attributes: { destructive: true, idempotent: false },
      fields: PREFLIGHT_REQUEST_FIELDS,
    },
    policy,
  );
}
