/*
 * The PowerProvider controller, declared for the builder (runtime/controller): the
 * reconciler of reconciler.ts on the one PowerProvider `default`, woken by any change of
 * it. It exposes the channel as the maintenance rows read it (PowerPort) and the send at
 * the edge (PowerSendPort, powerSend.ts), which startOperator hands to the NodeMaintenance
 * controller. Its start waits for its first pass, so an admission never refuses a reboot
 * only because the channel was not built yet.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  POWER_PROVIDER_NAME,
  powerProviderResource,
  type PowerProvider,
} from '@rackside/plugin-servers-common';
import { ResourceClient } from '@rackside/plugin-servers-node';
import type { PowerPort, PowerSendPort } from '../maintenance/types';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import type { OperatorCaches } from '../runtime/caches';
import { OPERATOR_FIELD_MANAGER } from '../runtime/kube/fieldManager';
import type { SecretReader } from '../runtime/kube/secrets';
import { NotLeadingError } from '../runtime/leaderElection';
import type { OperatorMetrics } from '../runtime/metrics';
import { ChannelPowerSend } from './powerSend';
import { PowerProviderReconciler, type PowerDeadlines } from './reconciler';

export interface PowerProviderControllerOptions {
  /** Leader-gated: every write asks the elector right before it goes out. */
  kubeConfig: KubeConfig;
  caches: Pick<OperatorCaches, 'providers' | 'bmcs'>;
  secrets: SecretReader;
  metrics: OperatorMetrics;
  deadlines?: Partial<PowerDeadlines>;
}

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
  const { kubeConfig: kc, caches, metrics, secrets } = options;
  const { providers, bmcs } = caches;
  const log = ports.log;
  const client = new ResourceClient<PowerProvider>(kc, powerProviderResource, {
    fieldManager: OPERATOR_FIELD_MANAGER,
  });
  const provider = new PowerProviderReconciler(
    {
      provider: () => providers.get(POWER_PROVIDER_NAME),
      bmc: name => bmcs.get(name),
      secrets,
      writeStatus: async (p, status) => {
        await client.patchStatus(
          p.metadata.name,
          { status },
          { type: 'merge' },
        );
      },
      log,
      // Asked again right before each Redfish Reset POST.
      mayAct: () => {
        if (!ports.leading()) throw new NotLeadingError('send');
      },
    },
    {
      rebootSeconds: options.deadlines?.rebootSeconds ?? 900,
      unansweredSeconds: options.deadlines?.unansweredSeconds ?? 300,
    },
  );

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
    send: new ChannelPowerSend(provider, {
      leading: ports.leading,
      bmc: name => bmcs.get(name),
      onSent: (verb, channel) => metrics.powerVerbsSent.inc({ verb, channel }),
      log,
    }),
    provider,
  };
}
