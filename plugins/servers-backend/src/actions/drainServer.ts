import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersEdgeService } from '../servers/ServersService';
import type { AgentPolicy } from './agentPolicy';
import {
  PREFLIGHT_REQUEST_FIELDS,
  registerServerVerbAction,
} from './serverVerbAction';

export function registerDrainServerAction(
  registry: ActionsRegistryService,
  service: ServersEdgeService,
  policy?: AgentPolicy,
) {
  registerServerVerbAction(
    registry,
    service,
    {
      verb: 'drain',
      name: 'drain-server',
      title: 'Drain a server',
      description:
        'Drains a server: cordons it and evicts its pods under their disruption budgets. Takes the token of a drain pre-flight the caller reviewed (preflight-server-action) with the same drain options; a changed impact is refused (conflict) and needs a new pre-flight; one request per token.',
      attributes: { destructive: true, idempotent: false },
      fields: PREFLIGHT_REQUEST_FIELDS,
    },
    policy,
  );
}
