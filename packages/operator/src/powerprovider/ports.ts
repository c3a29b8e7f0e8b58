/*
 * The PowerProvider kind's ports at the edge: the reconciler of reconciler.ts on the
 * PowerProvider `default` (its status writes, its Secrets, the elector asked again right
 * before each Redfish Reset POST), and what it offers the other kinds: the channel as the
 * maintenance rows read it (PowerPort), the one send of a recorded verb (PowerSendPort,
 * powerSend.ts) and the BMC channel of the ServerBMC kind. controller.ts declares the
 * controller over them.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  POWER_PROVIDER_NAME,
  powerProviderResource,
  type PowerProvider,
} from '@rackside/plugin-servers-common';
import { ResourceClient } from '@rackside/plugin-servers-node';
import type { OperatorCaches } from '../runtime/caches';
import { OPERATOR_FIELD_MANAGER } from '../runtime/kube/fieldManager';
import type { SecretReader } from '../runtime/kube/secrets';
import { NotLeadingError } from '../runtime/leaderElection';
import type { OperatorLog } from '../runtime/logger';
import type { OperatorMetrics } from '../runtime/metrics';
import type { FirmwareSourceCredentialsLookup } from './firmwareSourceCredentials';
import { ChannelPowerSend } from './powerSend';
import { PowerProviderReconciler, type PowerDeadlines } from './reconciler';

export interface PowerProviderControllerOptions {
  /** Leader-gated: every write asks the elector right before it goes out. */
  kubeConfig: KubeConfig;
  caches: Pick<OperatorCaches, 'providers' | 'bmcs'>;
  secrets: SecretReader;
  metrics: OperatorMetrics;
  deadlines?: Partial<PowerDeadlines>;
  /** The firmware sources' credentials, read when the channel acts (firmwareSourceCredentials.ts). */
  firmwareSourceCredentials?: FirmwareSourceCredentialsLookup;
  /** PEM CA bundle of the firmware sources; absent: the system's CAs. */
  firmwareSourceCaBundle?: string;
}

export function kubePowerProviderPorts(
  options: PowerProviderControllerOptions,
  edge: { leading(): boolean; log?: OperatorLog },
): { provider: PowerProviderReconciler; send: ChannelPowerSend } {
  const { kubeConfig: kc, caches, metrics, secrets } = options;
  const { providers, bmcs } = caches;
  const log = edge.log;
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
        if (!edge.leading()) throw new NotLeadingError('send');
      },
      firmwareSourceCredentials: options.firmwareSourceCredentials,
      firmwareSourceCaBundle: options.firmwareSourceCaBundle,
    },
    {
      rebootSeconds: options.deadlines?.rebootSeconds ?? 900,
      unansweredSeconds: options.deadlines?.unansweredSeconds ?? 300,
      upgradeSeconds: options.deadlines?.upgradeSeconds,
    },
  );

  const send = new ChannelPowerSend(provider, {
    leading: edge.leading,
    bmc: name => bmcs.get(name),
    onSent: (verb, channel) => metrics.powerVerbsSent.inc({ verb, channel }),
    log,
  });
  return { provider, send };
}
