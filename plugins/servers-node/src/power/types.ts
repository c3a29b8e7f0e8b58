import {
  advertise,
  type PowerAdvertisement,
} from '@rackside/plugin-servers-common';

/**
 * The power channels (docs/architecture.md, "Power channels"): what the operator calls to reboot, shut
 * down and power on a node, and to observe the machine afterwards.
 *
 * A channel sends a verb exactly once per call and never retries it on its own: the
 * operator records its intent before calling and, after a crash or an `unknown`
 * outcome, resolves what happened by observing (boot ID, BMC PowerState), never by
 * sending again.
 */

/** The channel types that can act (`PowerProvider.spec.type` other than `none`). */
export type PowerChannelType = 'talos' | 'redfish';

/** A verb a channel sends. `forceOff` is the escalation after a graceful shutdown. */
export type PowerChannelVerb = 'reboot' | 'shutdown' | 'forceOff' | 'powerOn';

/**
 * What a channel can observe of a machine's power. Transitional BMC states are read as
 * where they are heading (PoweringOn is On, PoweringOff is Off).
 */
export type ObservedPowerState = 'On' | 'Off';

/** The node a verb is for, as the operator knows it from the Kubernetes Node. */
export interface PowerNode {
  /** The Node name: the key a channel looks its machine up by, and the name in messages. */
  name: string;
  /** The node's InternalIP: where its Talos API listens (talos channel). */
  address?: string;
  /** `status.nodeInfo.systemUUID`, the SMBIOS UUID (finds a BMC's system when no path is set). */
  systemUUID?: string;
}

/** A Talos upgrade as a channel sends it (a NodeMaintenance's `spec.upgrade`). */
export interface PowerUpgradeRequest {
  /** The installer image; its tag is the version it installs. */
  image: string;
  /** Install on the next reboot instead of at once. */
  stage?: boolean;
  /** Skip Talos's etcd health check before upgrading a control-plane member. */
  force?: boolean;
}

/** A Redfish firmware update as a channel sends it (a NodeMaintenance's `spec.firmware`). */
export interface PowerFirmwareRequest {
  /** The https URL the BMC fetches (or the channel fetches for a multipart push). */
  imageURI: string;
  targets?: string[];
  applyTime?: 'Immediate' | 'OnReset';
  /** `sha256:<64 hex>`: the bytes a multipart push uploads are checked against it. */
  checksum?: string;
}

/** One bounded look at a firmware update's task on the BMC. */
export interface FirmwareTaskReading {
  /** Redfish TaskState (New, Running, Completed, Exception, ...), cut to 64 characters. */
  state: string;
  /** The task ended (successfully or not). */
  finished: boolean;
  /** It ended without applying: Exception, Killed, Cancelled, or TaskStatus Critical. */
  failed: boolean;
  percent?: number;
  /** The task's messages, at most 8, each cut to 1024 characters. */
  messages: string[];
  /** Its messages ask for a reset to apply the update (ResetRequired, AwaitToActivate). */
  resetRequired: boolean;
}

/** One FirmwareInventory member: its link (or Id), name and version. */
export interface PowerFirmwareComponent {
  id: string;
  name: string;
  version: string;
}

/** What a channel reports once the machine or its BMC accepted a verb. */
export interface PowerVerbReceipt {
  channel: PowerChannelType;
  verb: PowerChannelVerb | 'upgrade' | 'firmware';
  /** The task monitor of an accepted firmware update ('' when the BMC named none). */
  taskUri?: string;
  node: string;
  /** When the acceptance arrived (ISO 8601). */
  acceptedAt: string;
  /** What was accepted, for status and Events: e.g. `actor 3f2c...`, `ResetType GracefulRestart (HTTP 204)`. */
  detail: string;
}

/** The channel's part of {@link PowerAdvertisement}: what it can do, not whether a person is at the rack. */
export type PowerChannelCapabilities = Pick<
  PowerAdvertisement,
  'reboot' | 'shutdown' | 'powerOn' | 'confirmsPowerOff'
>;

/** The capabilities a channel type advertises, from the one rule in servers-common. */
export function channelCapabilities(
  type: PowerChannelType,
): PowerChannelCapabilities {
  const { reboot, shutdown, powerOn, confirmsPowerOff } = advertise(type, {
    attendedRack: false,
  });
  return { reboot, shutdown, powerOn, confirmsPowerOff };
}

/**
 * A power channel. Optional members exist exactly when the channel type can do them:
 * Talos cannot power on or see a dark machine but reads the boot ID; a BMC powers on
 * and reads PowerState but knows nothing of boot IDs.
 */
export interface PowerChannel {
  readonly type: PowerChannelType;
  readonly capabilities: PowerChannelCapabilities;
  /** A graceful restart (Talos Reboot; Redfish GracefulRestart, else ForceRestart). */
  reboot(node: PowerNode): Promise<PowerVerbReceipt>;
  /** A graceful shutdown (Talos Shutdown; Redfish GracefulShutdown). */
  shutdown(node: PowerNode): Promise<PowerVerbReceipt>;
  /** Cut the power (Redfish ForceOff): the caller's escalation when a shutdown does not land. */
  forceOff?(node: PowerNode): Promise<PowerVerbReceipt>;
  /** Power on (Redfish On, else ForceOn). */
  powerOn?(node: PowerNode): Promise<PowerVerbReceipt>;
  /** One read of the machine's power state. */
  powerState?(node: PowerNode): Promise<ObservedPowerState>;
  /** One read of the running kernel's boot ID (changes on every boot). */
  bootId?(node: PowerNode): Promise<string>;
  /**
   * Talos MachineService.Upgrade: install an image and reboot into it (talos only). Sent
   * once, like a verb; the caller judges the version the machine comes back on.
   */
  upgrade?(
    node: PowerNode,
    request: PowerUpgradeRequest,
  ): Promise<PowerVerbReceipt>;
  /**
   * One read of the Talos version the machine runs (MachineService.Version's tag), after
   * the same identity check as a verb (talos only): with the Node's osImage, what says an
   * upgrade landed.
   */
  talosVersion?(node: PowerNode): Promise<string>;
  /**
   * Redfish UpdateService.SimpleUpdate (or a multipart push where only that is offered) on
   * the node's BMC (redfish only). Sent once, like a verb; the receipt names the task.
   */
  firmwareUpdate?(
    node: PowerNode,
    request: PowerFirmwareRequest,
  ): Promise<PowerVerbReceipt>;
  /**
   * The image's `sha256:<64 hex>`, computed as the channel fetches it from its source
   * (bounded, with the source's credentials), before an update is recorded.
   */
  firmwareImageChecksum?(imageURI: string): Promise<string>;
  /** One bounded read of a firmware update's task monitor. */
  firmwareTask?(node: PowerNode, taskUri: string): Promise<FirmwareTaskReading>;
  /** One bounded read of the BMC's FirmwareInventory. */
  firmwareInventory?(node: PowerNode): Promise<PowerFirmwareComponent[]>;
  /** Whether the node's BMC offers an UpdateService that takes an update. */
  firmwareOffered?(node: PowerNode): Promise<boolean>;
  /** Releases connections and sessions. */
  close(): Promise<void>;
}

/**
 * What the caller may conclude from a failed verb:
 * - `notSent`: the request never reached the machine or BMC (no connection, TLS refused);
 * - `refused`: it answered and did not act (an error status, a verb it does not allow);
 * - `unknown`: it may or may not have acted (timeout or connection lost after sending).
 * Only `unknown` needs an observation before anything else happens.
 */
export type PowerFailureOutcome = 'notSent' | 'refused' | 'unknown';

/** A verb or a read that failed. The message names the node and the machine or BMC, never a credential. */
export class PowerChannelError extends Error {
  readonly channel: PowerChannelType;
  readonly node: string;
  readonly outcome: PowerFailureOutcome;
  /** The gRPC status code or HTTP status, when there was one. */
  readonly code?: number;

  constructor(options: {
    channel: PowerChannelType;
    node: string;
    outcome: PowerFailureOutcome;
    message: string;
    code?: number;
    cause?: unknown;
  }) {
    super(
      options.message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'PowerChannelError';
    this.channel = options.channel;
    this.node = options.node;
    this.outcome = options.outcome;
    this.code = options.code;
  }
}
