/*
 * The PowerProvider controller, declared for the builder (runtime/controller): the
 * reconciler of reconciler.ts on the one PowerProvider `default` over its ports
 * (ports.ts), woken by any change of it. It exposes the channel as the maintenance rows
 * read it (PowerPort) and the send at the edge (PowerSendPort, powerSend.ts), which
 * startOperator hands to the NodeMaintenance controller. Its start waits for its first
 * pass, so an admission never refuses a reboot only because the channel was not built yet.
 */
import { POWER_PROVIDER_NAME } from '@rackside/plugin-servers-common';
import type { PowerPort, PowerSendPort } from '../maintenance/types';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import {
  kubePowerProviderPorts,
  type PowerProviderControllerOptions,
} from './ports';
import type { PowerProviderReconciler } from './reconciler';

export type { PowerProviderControllerOptions };

export interface PowerProviderController extends Controller {
  /** The channel as the maintenance rows read it. */
  readonly channel: PowerPort;
  /** The one send of a recorded verb (leader-gated). */
  readonly send: PowerSendPort;
  /** The reconciler itself: the BMC health reader and scrub of the ServerBMC kind. */
  readonly provider: PowerProviderReconciler;
}

export function createPowerProviderController(
  options: PowerProviderControllerOptions,
  ports: ControllerPorts,
): PowerProviderController {
  const { providers } = options.caches;
  const { provider, send } = kubePowerProviderPorts(options, ports);

  const controller = buildController(
    {
      kind: 'PowerProvider',
      reconcile: () => provider.reconcile(),
      watches: wake =>
        (['add', 'update', 'delete'] as const).map(event =>
          providers.on(event, () => wake.enqueue(POWER_PROVIDER_NAME)),
        ),
      keys: () => [POWER_PROVIDER_NAME],
      awaitFirstPass: true,
      onStopped: () => provider.stop(),
    },
    { ...ports, workers: 1 },
  );
  return {
    ...controller,
    channel: provider.channelPort(),
    send,
    provider,
  };
}
