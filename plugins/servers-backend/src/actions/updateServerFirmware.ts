import type { ActionsRegistryService } from '@backstage/backend-plugin-api/alpha';
import type { ServersEdgeService } from '../servers/ServersService';
import type { AgentPolicy } from './agentPolicy';
import {
  PREFLIGHT_REQUEST_FIELDS,
  registerServerVerbAction,
} from './serverVerbAction';

/**
 * The firmware update of one server's BMC as a registered action: the same request as
 * `POST .../actions/firmware`. At the typed-name rung like a reboot, so an agent is
 * refused unless `servers.actions.allowPowerVerbs` is set.
 */
export function registerUpdateServerFirmwareAction(
  registry: ActionsRegistryService,
  service: ServersEdgeService,
  policy?: AgentPolicy,
) {
  registerServerVerbAction(
    registry,
    service,
    {
      verb: 'firmware',
      name: 'update-server-firmware',
      title: "Update a server's firmware",
      description:
        "Drains a server, then asks its BMC (Redfish UpdateService) to fetch and install a firmware image and reset; done when the BMC's firmware inventory reports a new version. Takes the token of a firmware pre-flight the caller reviewed (it shows the inventory as last read) and the node name typed out; refused when the image URI's origin is outside the deployment's allowed sources (servers.upgrades.firmwareSources), when the power channel is not a BMC's, or when it would drop the control plane below quorum.",
      attributes: { destructive: true, idempotent: false },
      fields: [
        ...PREFLIGHT_REQUEST_FIELDS,
        'imageURI',
        'targets',
        'applyTime',
        'version',
        'checksum',
      ],
    },
    policy,
  );
}
