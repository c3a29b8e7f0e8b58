import type { ServerAction } from '../permissions';
import type { NodeFacts } from './quorum';
import { VIRTUAL_NODE_LABEL } from './quorum';

/**
 * The capability rule (docs/architecture.md, "Power channels", decision 0001 section 4,
 * docs/decisions). A channel advertises what it can do; {@link offerFor} decides what the product
 * offers, and {@link invoke} refuses whatever {@link offerFor} would not offer, so the
 * UI, the backend and the operator apply one rule.
 */

/** The power channel a deployment configures (`PowerProvider.spec.type`). */
export const POWER_PROVIDER_TYPES = ['none', 'talos', 'redfish'] as const;

/** A power channel type. */
export type PowerProviderType = (typeof POWER_PROVIDER_TYPES)[number];

/** The power verbs, named as their action routes. */
export const POWER_VERBS = [
  'reboot',
  'shutdown',
  'power-on',
] as const satisfies readonly ServerAction[];

/** A power verb. */
export type PowerVerb = (typeof POWER_VERBS)[number];

/** Whether an action is one of the {@link POWER_VERBS}. */
export function isPowerVerb(action: string): action is PowerVerb {
  return (POWER_VERBS as readonly string[]).includes(action);
}

/**
 * What the configured channel can do (`PowerProvider.status`) plus the deployment's
 * declaration that a person is at the rack (`spec.attendedRack`).
 */
export interface PowerAdvertisement {
  type: PowerProviderType;
  reboot: boolean;
  shutdown: boolean;
  powerOn: boolean;
  /** The channel can observe that the machine reached off (a BMC can; Talos cannot). */
  confirmsPowerOff: boolean;
  attendedRack: boolean;
}

/**
 * What is known of the node's machine beyond its Node: whether a ServerBMC names its BMC
 * (a BMC channel reaches only those nodes; Talos reaches every node at its address).
 * Absent: not known, not checked.
 */
export interface PowerReach {
  hasServerBmc?: boolean;
}

/** The answer of {@link invoke}. */
export type InvokeResult = { ok: true } | { ok: false; reason: string };

/**
 * What a channel type advertises, honestly: Talos can reboot and shut down gracefully but
 * a powered-off machine serves no API, so it never powers on and cannot see the machine
 * off; a BMC over Redfish keeps answering while the machine is dark, so it can do all
 * three and confirm the power-off; no channel advertises nothing. The operator writes this
 * to `PowerProvider.status`.
 */
export function advertise(
  type: PowerProviderType,
  options: { attendedRack: boolean },
): PowerAdvertisement {
  const { attendedRack } = options;
  switch (type) {
    case 'talos':
      return {
        type,
        reboot: true,
        shutdown: true,
        powerOn: false,
        confirmsPowerOff: false,
        attendedRack,
      };
    case 'redfish':
      return {
        type,
        reboot: true,
        shutdown: true,
        powerOn: true,
        confirmsPowerOff: true,
        attendedRack,
      };
    default:
      return {
        type: 'none',
        reboot: false,
        shutdown: false,
        powerOn: false,
        confirmsPowerOff: false,
        attendedRack,
      };
  }
}

/**
 * Why a verb is not offered, or undefined when it is. This is the rule itself; both
 * {@link offerFor} and {@link invoke} go through it.
 *
 * A shutdown is offered only where it is recoverable: the channel can power the machine
 * back on, or a person has declared they are at the rack. Otherwise it turns a remote
 * action into a drive to the plant.
 */
function whyNotOffered(
  advertisement: PowerAdvertisement,
  verb: PowerVerb,
  node?: NodeFacts,
  reach: PowerReach = {},
): string | undefined {
  if (advertisement.type === 'none') {
    return 'No power channel is configured (PowerProvider type none).';
  }
  if (node?.virtual) {
    return `${node.name} is a virtual node (${VIRTUAL_NODE_LABEL}=true); it has no power to act on.`;
  }
  if (advertisement.type === 'redfish' && reach.hasServerBmc === false) {
    return `${
      node?.name ?? 'This node'
    } has no ServerBMC: the redfish channel does not know its BMC.`;
  }
  switch (verb) {
    case 'reboot':
      return advertisement.reboot
        ? undefined
        : `The ${advertisement.type} channel does not advertise reboot.`;
    case 'power-on':
      return advertisement.powerOn
        ? undefined
        : `The ${advertisement.type} channel does not advertise power-on.`;
    case 'shutdown':
      if (!advertisement.powerOn && !advertisement.attendedRack) {
        return `Shutdown is offered only where it is recoverable: the ${advertisement.type} channel cannot power the machine back on and the rack is not declared attended (attendedRack).`;
      }
      if (!advertisement.shutdown) {
        return `The ${advertisement.type} channel does not advertise shutdown.`;
      }
      return undefined;
    default:
      return `${String(verb)} is not a power verb.`;
  }
}

/**
 * The power verbs offered for a node (or for the deployment, without one), in the order
 * of {@link POWER_VERBS}. The UI shows exactly these; with no channel, none.
 */
export function offerFor(
  advertisement: PowerAdvertisement,
  node?: NodeFacts,
  reach?: PowerReach,
): PowerVerb[] {
  return POWER_VERBS.filter(
    verb => whyNotOffered(advertisement, verb, node, reach) === undefined,
  );
}

/**
 * Whether the channel may be asked to perform the verb. Decided by {@link offerFor}, so
 * nothing can be invoked that would not have been offered.
 */
export function invoke(
  advertisement: PowerAdvertisement,
  verb: PowerVerb,
  node?: NodeFacts,
  reach?: PowerReach,
): InvokeResult {
  if (offerFor(advertisement, node, reach).includes(verb)) {
    return { ok: true };
  }
  return {
    ok: false,
    reason:
      whyNotOffered(advertisement, verb, node, reach) ??
      `${String(verb)} is not offered.`,
  };
}

/**
 * What is known of a node's BMC for a firmware update: whether it offers an UpdateService
 * (SimpleUpdate or a multipart push). Absent: not read yet, not checked here (the operator
 * reads the BMC again before it sends anything).
 */
export interface FirmwareReach extends PowerReach {
  updateService?: boolean;
}

/**
 * Whether a firmware update (intent `firmware`, docs/upgrades.md) may be asked of a node's
 * channel: only a BMC over Redfish updates firmware, only for a node whose ServerBMC it
 * knows, and only where that BMC offers an UpdateService. A reboot must be possible too:
 * the update is applied with a reset, and judged as one by the guard.
 */
export function invokeFirmware(
  advertisement: PowerAdvertisement,
  node?: NodeFacts,
  reach: FirmwareReach = {},
): InvokeResult {
  const name = node?.name ?? 'This node';
  const notRebootable = whyNotOffered(advertisement, 'reboot', node, reach);
  if (notRebootable) return { ok: false, reason: notRebootable };
  if (advertisement.type !== 'redfish') {
    return {
      ok: false,
      reason: `A firmware update goes through a BMC's Redfish UpdateService, and the power channel is ${advertisement.type}.`,
    };
  }
  if (reach.updateService === false) {
    return {
      ok: false,
      reason: `${name}'s BMC offers no Redfish UpdateService (no SimpleUpdate and no multipart push).`,
    };
  }
  return { ok: true };
}

/**
 * Whether a Talos upgrade (intent `upgrade`, docs/upgrades.md) may be asked of a node's
 * channel: only the talos channel speaks the Talos API with the cluster's credentials,
 * and it must be able to reboot the node (the upgrade ends with one, and the guard judges
 * it as one). The operator refuses the same at the moment it acts.
 */
export function invokeUpgrade(
  advertisement: PowerAdvertisement,
  node?: NodeFacts,
): InvokeResult {
  const notRebootable = whyNotOffered(advertisement, 'reboot', node);
  if (notRebootable) return { ok: false, reason: notRebootable };
  if (advertisement.type !== 'talos') {
    return {
      ok: false,
      reason: `A Talos upgrade goes over the talos power channel, and this deployment's is ${advertisement.type}.`,
    };
  }
  return { ok: true };
}
