/*
 * Reconciles the PowerProvider `default` (docs/architecture.md, "Power channels"): builds the deployment's power
 * channel from the spec and its Secrets, and writes to status what the product may offer
 * (the capability rule of servers-common, so shutdown only where it is recoverable) with a
 * Ready condition. The maintenance rows read the channel through `channelPort()`; the one
 * send of a recorded verb is ChannelPowerSend (powerSend.ts), the PowerSendPort at the edge.
 */
import {
  advertise,
  invoke,
  invokeFirmware,
  nodeFactsFromNode,
  type PowerAdvertisement,
  type PowerProvider,
  type PowerProviderStatus,
  type ServerBMC,
} from '@rackside/plugin-servers-common';
import {
  RedfishPowerChannel,
  type BmcHealthReader,
  TalosPowerChannel,
  type PowerChannel,
  type PowerNode,
} from '@rackside/plugin-servers-node';
import type { PowerPort } from '../maintenance/types';
import type { NodeView } from '../runtime/nodeView';
import type { SecretReader } from '../runtime/kube/secrets';
import { withoutBmcAddresses } from './bmcAddresses';
import { ImageChecksums } from './imageChecksums';
import {
  channelStatus,
  channelTable,
  keyOf,
  stateOf,
  type BuildOutcome,
} from './table';

export interface PowerProviderPorts {
  provider(): PowerProvider | undefined;
  bmc(nodeName: string): ServerBMC | undefined;
  secrets: SecretReader;
  writeStatus(
    provider: PowerProvider,
    status: PowerProviderStatus,
  ): Promise<void>;
  log?(message: string): void;
  /**
   * Asked right before each Redfish Reset POST, after its reads, login and rate-limit
   * wait: throws when this replica may no longer act (it lost its leadership).
   */
  mayAct?(): void;
  /**
   * The credentials of a firmware source, read fresh from the Secret the chart names when
   * the channel acts (docs/upgrades.md, "Credentials for a source"); absent: none.
   */
  firmwareSourceCredentials?(
    origin: string,
  ): Promise<{ username: string; password: string } | undefined>;
  /** PEM CA bundle the firmware sources' certificates are checked against; absent: the system's. */
  firmwareSourceCaBundle?: string;
}

export interface PowerDeadlines {
  rebootSeconds: number;
  unansweredSeconds: number;
  /** From the accepted upgrade to the node back on its target (maintenance/upgradeRows.ts). */
  upgradeSeconds?: number;
}

/** A Node as a power channel addresses it. */
export function powerNodeOf(
  node: NodeView | undefined,
  name: string,
): PowerNode {
  return {
    name,
    address: node?.status?.addresses?.find(a => a.type === 'InternalIP')
      ?.address,
    systemUUID: node?.status?.nodeInfo?.systemUUID,
  };
}

function nameOf(node: NodeView | undefined): string {
  return node?.metadata?.name ?? '';
}

export class PowerProviderReconciler {
  private channel: PowerChannel | undefined;
  /** The spec the channel was built from (generation), so a change rebuilds it. */
  private builtFor: string | undefined;
  /** Firmware images' sha256, fetched by the channel in the background. */
  private readonly checksums = new ImageChecksums(async imageURI => {
    const channel = this.channel;
    if (!channel?.firmwareImageChecksum) {
      throw new Error(
        `the ${channel?.type ?? 'none'} channel fetches no firmware image`,
      );
    }
    return channel.firmwareImageChecksum(imageURI);
  });

  constructor(
    private readonly ports: PowerProviderPorts,
    private readonly deadlines: PowerDeadlines,
  ) {}

  /**
   * Brings the channel and the PowerProvider's status in line with its spec: runs the
   * row of the channel's state (table.ts) and does what it decides.
   */
  async reconcile(): Promise<void> {
    const provider = this.ports.provider();
    const state = stateOf(provider, {
      key: this.builtFor,
      open: this.channel !== undefined,
    });
    const decision = channelTable[state];
    if (decision.kind === 'done') return;
    await this.channel?.close().catch(() => undefined);
    this.channel = undefined;
    this.builtFor = keyOf(provider);
    if (decision.kind === 'close' || !provider) return;
    let outcome: BuildOutcome;
    try {
      this.channel = await this.build(provider);
      outcome = { ok: true };
    } catch (error) {
      outcome = { ok: false, message: (error as Error).message };
      this.ports.log?.(
        `PowerProvider: The ${provider.spec.type} channel cannot be used: ${outcome.message}`,
      );
    }
    await this.ports.writeStatus(
      provider,
      channelStatus(provider, outcome, new Date().toISOString()),
    );
  }

  private async build(
    provider: PowerProvider,
  ): Promise<PowerChannel | undefined> {
    const { spec } = provider;
    switch (spec.type) {
      case 'none':
        return undefined;
      case 'talos': {
        const talosconfig = await this.ports.secrets.read(
          spec.talos!.secretRef,
        );
        return new TalosPowerChannel({ talosconfig });
      }
      case 'redfish': {
        const redfish = spec.redfish!;
        const caBundle = redfish.caBundleRef
          ? await this.ports.secrets.read(redfish.caBundleRef)
          : undefined;
        // Fail early on unreadable default credentials, not at the first verb.
        await this.credentials(redfish.credentialsSecretRef);
        return new RedfishPowerChannel({
          mayAct: this.ports.mayAct?.bind(this.ports),
          sourceCredentials: this.ports.firmwareSourceCredentials?.bind(
            this.ports,
          ),
          sourceCaBundle: this.ports.firmwareSourceCaBundle,
          tls: caBundle
            ? { caBundle }
            : { insecureSkipVerify: redfish.insecureSkipVerify },
          resolveBmc: async node => {
            const bmc = this.ports.bmc(node.name);
            if (!bmc) {
              throw new Error(
                `no ServerBMC named ${node.name}: the redfish channel does not know its BMC`,
              );
            }
            return {
              address: bmc.spec.address,
              systemPath: bmc.spec.systemPath ?? bmc.status?.systemPath,
              credentials: await this.credentials(
                bmc.spec.credentialsSecretRef ?? redfish.credentialsSecretRef,
              ),
            };
          },
        });
      }
      default:
        return undefined;
    }
  }

  private async credentials(ref: {
    namespace?: string;
    name: string;
    usernameKey: string;
    passwordKey: string;
  }) {
    const [username, password] = await Promise.all([
      this.ports.secrets.read({ ...ref, key: ref.usernameKey }),
      this.ports.secrets.read({ ...ref, key: ref.passwordKey }),
    ]);
    return { username, password };
  }

  /**
   * What the channel this process built can do, with the spec's attendedRack: the
   * authoritative source for the operator (the status it wrote may lag in the cache).
   */
  private advertisement(): PowerAdvertisement {
    const provider = this.ports.provider();
    return advertise(this.channel ? provider!.spec.type : 'none', {
      attendedRack: provider?.spec.attendedRack ?? false,
    });
  }

  /** The channel built for the current spec; undefined when none is (or none is usable). */
  currentChannel(): PowerChannel | undefined {
    return this.channel;
  }

  /** The PowerOffConfirmed readback, or undefined where the channel does not read back. */
  readback() {
    const provider = this.ports.provider();
    const redfish = provider?.spec.redfish;
    if (!this.channel?.capabilities.confirmsPowerOff || !redfish) {
      return undefined;
    }
    if (redfish.readbackWindowSeconds === 0) return undefined;
    return {
      windowSeconds: redfish.readbackWindowSeconds,
      intervalSeconds: redfish.readbackIntervalSeconds,
    };
  }

  /** What the maintenance rows read of the channel (sending is powerSend.ts's). */
  channelPort(): PowerPort {
    return {
      check: (verb, node) => {
        const name = node?.metadata?.name ?? '';
        return invoke(
          this.advertisement(),
          verb,
          node ? nodeFactsFromNode(node) : undefined,
          { hasServerBmc: this.ports.bmc(name) !== undefined },
        );
      },
      checkFirmware: (node, updateService) => {
        const name = node?.metadata?.name ?? '';
        return invokeFirmware(
          this.advertisement(),
          node ? nodeFactsFromNode(node) : undefined,
          { hasServerBmc: this.ports.bmc(name) !== undefined, updateService },
        );
      },
      channelType: () => this.channel?.type,
      powerState: async node => {
        const channel = this.channel;
        if (!channel?.powerState || !node?.metadata?.name) return undefined;
        return channel.powerState(powerNodeOf(node, node.metadata.name));
      },
      readback: () => this.readback(),
      talosVersion: async node => {
        const channel = this.channel;
        if (!channel?.talosVersion) {
          throw new Error(
            `the ${channel?.type ?? 'none'} channel reads no Talos version`,
          );
        }
        return channel.talosVersion(powerNodeOf(node, nameOf(node)));
      },
      firmware: {
        offered: async node => {
          const channel = this.channel;
          if (!channel?.firmwareOffered) return false;
          return channel.firmwareOffered(powerNodeOf(node, nameOf(node)));
        },
        inventory: async node => {
          const channel = this.channel;
          if (!channel?.firmwareInventory) {
            throw new Error(
              `the ${channel?.type ?? 'none'} channel reads no firmware`,
            );
          }
          return channel.firmwareInventory(powerNodeOf(node, nameOf(node)));
        },
        checksum: imageURI => this.checksums.read(imageURI),
        task: async (node, taskUri) => {
          const channel = this.channel;
          if (!channel?.firmwareTask) {
            throw new Error(
              `the ${channel?.type ?? 'none'} channel reads no firmware task`,
            );
          }
          return channel.firmwareTask(powerNodeOf(node, nameOf(node)), taskUri);
        },
      },
      deadlines: this.deadlines,
    };
  }

  /**
   * The health reader of a node's BMC, or undefined when the channel is not redfish
   * (only the redfish channel reaches BMCs: decision 0001). Throws when the BMC cannot be
   * located (no ServerBMC, unreadable credentials, no system with the node's UUID).
   */
  async healthReader(
    node: NodeView | undefined,
    name: string,
  ): Promise<BmcHealthReader | undefined> {
    const channel = this.channel;
    if (!(channel instanceof RedfishPowerChannel)) return undefined;
    return channel.healthReader(powerNodeOf(node, name));
  }

  /** A message with the BMC's address left out (status and Events are widely read). */
  scrub(name: string, text: string): string {
    return withoutBmcAddresses(text, this.ports.bmc(name)?.spec.address);
  }

  async stop(): Promise<void> {
    await this.channel?.close().catch(() => undefined);
    this.channel = undefined;
  }
}
