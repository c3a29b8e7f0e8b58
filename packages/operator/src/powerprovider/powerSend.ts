/*
 * The maintenance kind's PowerSendPort at the edge: sends one recorded power verb on the
 * channel the PowerProvider reconciler built (reconciler.ts) and answers what became of
 * it. startOperator hands it to the NodeMaintenance controller; only its reconciler
 * calls it, after the verb is recorded (decision 0001: a verb is sent once, never
 * retried on its own).
 *
 * Leader-gated twice: here, before anything goes out, and again by the Redfish channel
 * right before its Reset POST (mayAct in reconciler.ts), after its reads and login.
 */
import {
  PowerChannelError,
  type PowerChannel,
  type PowerNode,
  type PowerVerbReceipt,
} from '@rackside/plugin-servers-node';
import type {
  FirmwareRequest,
  ServerBMC,
  UpgradeRequest,
} from '@rackside/plugin-servers-common';
import type {
  PowerSendPort,
  PowerSendVerb,
  SendOutcome,
} from '../maintenance/types';
import type { NodeView } from '../runtime/nodeView';
import { NotLeadingError } from '../runtime/leaderElection';
import { withoutBmcAddresses } from './bmcAddresses';
import { powerNodeOf } from './reconciler';

/** What the send reads of the PowerProvider reconciler. */
export interface BuiltChannel {
  /** The channel built for the current spec, if any. */
  currentChannel(): PowerChannel | undefined;
  /** The PowerOffConfirmed readback, undefined where it is off. */
  readback(): unknown;
}

export interface ChannelPowerSendOptions {
  /** Whether this replica leads now: a follower sends nothing. */
  leading(): boolean;
  /** The node's ServerBMC (its address is left out of what is recorded). */
  bmc(nodeName: string): ServerBMC | undefined;
  /** A verb the channel accepted (rackside_power_verbs_sent_total). */
  onSent?(verb: PowerSendVerb, channel: string): void;
  log?(message: string): void;
}

/**
 * The channel's call for a verb; undefined where the channel cannot make it. An upgrade
 * goes over the Talos API (the talos channel's talosconfig, after its identity check),
 * with the image the maintenance asks for.
 */
function callOf(
  channel: PowerChannel | undefined,
  verb: PowerSendVerb,
  upgrade: UpgradeRequest | undefined,
  firmware: FirmwareRequest | undefined,
): ((node: PowerNode) => Promise<PowerVerbReceipt>) | undefined {
  if (!channel) return undefined;
  switch (verb) {
    case 'powerOn':
      return channel.powerOn?.bind(channel);
    case 'upgrade': {
      const send = channel.upgrade?.bind(channel);
      return send && upgrade ? node => send(node, upgrade) : undefined;
    }
    case 'firmware': {
      // SimpleUpdate (or a push) on the node's BMC: the redfish channel only.
      const send = channel.firmwareUpdate?.bind(channel);
      return send && firmware ? node => send(node, firmware) : undefined;
    }
    default:
      return channel[verb].bind(channel);
  }
}

export class ChannelPowerSend implements PowerSendPort {
  constructor(
    private readonly built: BuiltChannel,
    private readonly options: ChannelPowerSendOptions,
  ) {}

  async send(
    verb: PowerSendVerb,
    node: NodeView | undefined,
    upgrade?: UpgradeRequest,
    firmware?: FirmwareRequest,
  ): Promise<SendOutcome> {
    if (!this.options.leading()) throw new NotLeadingError('send');
    const channel = this.built.currentChannel();
    const name = node?.metadata?.name ?? '';
    const call = callOf(channel, verb, upgrade, firmware);
    if (!channel || !call) {
      return {
        ok: false,
        outcome: 'notSent',
        message: `the power channel cannot ${verb} (${
          channel ? channel.type : 'none configured'
        })`,
      };
    }
    // The full text goes to the operator's log; status, history and notifications
    // get it without the BMC's address.
    const recorded = (text: string) => {
      if (channel.type !== 'redfish') return text;
      const scrubbed = withoutBmcAddresses(
        text,
        this.options.bmc(name)?.spec.address,
      );
      if (scrubbed !== text) {
        this.options.log?.(`PowerProvider: ${verb} of ${name}: ${text}`);
      }
      return scrubbed;
    };
    try {
      const receipt = await call(powerNodeOf(node, name));
      this.options.onSent?.(verb, channel.type);
      return {
        ok: true,
        receipt: {
          acceptedAt: receipt.acceptedAt,
          detail: recorded(receipt.detail),
          ...(receipt.taskUri !== undefined
            ? { taskUri: receipt.taskUri }
            : {}),
        },
        // Read back only where the readback is on (a window of 0 turns it off).
        confirmsPowerOff:
          verb === 'shutdown' && this.built.readback() !== undefined,
      };
    } catch (error) {
      return {
        ok: false,
        outcome: error instanceof PowerChannelError ? error.outcome : 'unknown',
        message: recorded((error as Error).message),
      };
    }
  }
}
