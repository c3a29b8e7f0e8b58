/*
 * The intents as the maintenance rows read them: which drain, and the verb each sends.
 */
import type { MaintenanceIntent } from '@rackside/plugin-servers-common';

/** Intents whose maintenance drains the node after cordoning it. */
export const DRAINING_INTENTS: readonly MaintenanceIntent[] = [
  'drain',
  'reboot',
  'shutdown',
];

/** The power verb an intent sends once drained. */
export const VERB_OF_INTENT: Partial<
  Record<MaintenanceIntent, 'reboot' | 'shutdown'>
> = { reboot: 'reboot', shutdown: 'shutdown' };
