import { type PowerVerb } from '@rackside/plugin-servers-common';

/** The words of the action and plan dialogs' ceremony, and what they say the backend did. */

/** The acknowledgement a pre-flight asks for. */
export const ACKNOWLEDGEMENT = 'I have reviewed this impact';

/** Shown above a pre-flight the backend sent back because the impact changed. */
export const IMPACT_CHANGED = 'The impact changed since you looked';

/** The drain options, each with the plain warning of what it gives up (the plan dialog's too). */
export const DRAIN_OPTIONS = [
  {
    option: 'deleteEmptyDirData',
    label: 'Also evict pods with emptyDir volumes',
    warning: 'Data in emptyDir volumes is lost.',
  },
  {
    option: 'force',
    label: 'Also evict pods without a controller',
    warning: 'Pods without a controller are not recreated.',
  },
  {
    option: 'allowNodeLocalData',
    label: 'Also evict pods with data on this node',
    warning:
      'Data on this node will be unavailable until the node returns: these pods cannot run anywhere else until then.',
  },
] as const;

/** The hint of the hazard tier, where the reason must be typed out. */
export const TYPED_REASON_HINT =
  'Type the reason out yourself: spending the last of the quorum margin is recorded in your own words.';

/** Under a 409: the backend refused and wrote nothing. */
export const NOTHING_CHANGED = 'Nothing was changed.';

/**
 * How a machine comes back after a shutdown, for the shutdown dialog: through
 * power-on where the channel can switch it on, otherwise by a person at the
 * rack (a shutdown is offered without power-on only where the rack is
 * declared attended).
 */
export function shutdownReturnText(
  node: string,
  powerVerbs: readonly PowerVerb[] | undefined,
): string {
  if (!powerVerbs) {
    return `${node} stays off until it is powered on: through its BMC where the power channel can, otherwise by a person at the rack.`;
  }
  if (powerVerbs.includes('power-on')) {
    return `To bring ${node} back, use Power on on its row: Rackside asks its BMC to switch it on and returns it to service once it is Ready.`;
  }
  return `This power channel cannot switch ${node} back on: a person at the rack has to power it on. It returns to service once it is Ready.`;
}
