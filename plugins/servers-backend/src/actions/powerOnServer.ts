import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersEdgeService } from '../servers/ServersService';
import type { AgentPolicy } from './agentPolicy';
import { REQUEST_FIELDS, registerServerVerbAction } from './serverVerbAction';

export function registerPowerOnServerAction(
  registry: ActionsRegistryService,
  service: ServersEdgeService,
  policy?: AgentPolicy,
) {
  registerServerVerbAction(
    registry,
    service,
    {
      verb: 'power-on',
      name: 'power-on-server',
      title: 'Power a server on',
      description:
        'Powers a server that Rackside shut down back on through its power channel: a request on its open shutdown maintenance.',
      // Destructive: powering a server on starts whatever it runs (and rejoins it to its
      // cluster) where someone may have turned it off on purpose; MCP clients ask first.
      attributes: { destructive: true, idempotent: false },
      fields: REQUEST_FIELDS,
    },
    policy,
  );
}
