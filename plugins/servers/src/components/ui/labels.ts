import type { ServerAction } from '@rackside/plugin-servers-common';

/** How an action is named on its button and dialog. */
export const ACTION_LABELS: Record<ServerAction, string> = {
  cordon: 'Cordon',
  uncordon: 'Return to service',
  'maintenance-abandon': 'Abandon maintenance',
  drain: 'Drain',
  reboot: 'Reboot',
  shutdown: 'Shut down',
  'power-on': 'Power on',
  upgrade: 'Upgrade Talos',
  firmware: 'Update firmware',
};

/** What an action does, for its dialog. */
export const ACTION_DESCRIPTIONS: Record<ServerAction, string> = {
  cordon:
    'Marks the node unschedulable. Running pods stay; new pods go elsewhere.',
  uncordon:
    'Ends the maintenance and makes the node schedulable again (as it was before).',
  'maintenance-abandon':
    'Gives up the maintenance: restores the schedulability from before and sends no power verb.',
  drain: 'Cordons the node and evicts its pods, respecting disruption budgets.',
  reboot:
    'Drains the node, then asks its power channel to reboot it. Rackside waits until the node is back (Ready with a new boot ID), then returns it to service.',
  shutdown:
    'Drains the node, then asks its power channel to shut it down. The node stays off until it is powered on again.',
  'power-on':
    'Asks the power channel (the BMC) to switch the node on; once it is Ready it returns to service.',
  upgrade:
    'Drains the node, then asks Talos to install the chosen installer image and reboot. Rackside waits until the node is back on the new version, then returns it to service.',
  firmware:
    "Drains the node, then asks its BMC to install the firmware image and reset. Rackside waits until the BMC's firmware inventory reports the new version, then returns it to service.",
};
