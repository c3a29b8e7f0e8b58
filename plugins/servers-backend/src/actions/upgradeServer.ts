import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersEdgeService } from '../servers/ServersService';
import type { AgentPolicy } from './agentPolicy';
import { registerServerVerbAction } from './serverVerbAction';

/**
 * The Talos upgrade of one server as a registered action: the same request as
 * `POST .../actions/upgrade`. At the typed-name rung like a reboot, so an agent is
 * refused unless `servers.actions.allowPowerVerbs` is set. Talos's `force` is not
 * offered: it needs the hazard ceremony, a person's.
 */
export function registerUpgradeServerAction(
  registry: ActionsRegistryService,
  service: ServersEdgeService,
  policy?: AgentPolicy,
) {
  registerServerVerbAction(
    registry,
    service,
    {
      verb: 'upgrade',
      name: 'upgrade-server',
      title: 'Upgrade Talos on a server',
      description:
        "Drains a server, then asks Talos to install another installer image (its tag the version) and reboot; done when the node is back on that version. Takes the token of an upgrade pre-flight the caller reviewed (it shows the version the node runs now) and the node name typed out; refused when the image is outside the deployment's allowed list (servers.upgrades.talosImages), when the power channel is not talos, when the node already runs that version, or when it would drop the control plane below quorum.",
      attributes: { destructive: true, idempotent: false },
      fields: [
        'reason',
        'preflightToken',
        'typedName',
        'image',
        'stage',
        'deleteEmptyDirData',
        'allowNodeLocalData',
      ],
    },
    policy,
  );
}
