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
  reboot: 'Drains the node and reboots it.',
  shutdown: 'Drains the node and powers it off.',
  'power-on': 'Powers the node back on.',
};
