import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersService } from '../servers/ServersService';
import type { AgentPolicy } from './agentPolicy';
import { REQUEST_FIELDS, registerServerVerbAction } from './serverVerbAction';

export function registerPowerOnServerAction(
  registry: ActionsRegistryService,
  service: ServersService,
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
      attributes: { destructive: false, idempotent: false },
      fields: REQUEST_FIELDS,
    },
    policy,
  );
}
