/*
 * The intents as the maintenance rows read them: which drain, and the verb each sends.
 */
import type { MaintenanceIntent } from '@rackside/plugin-servers-common';
import type { PowerSendVerb } from './types';

/** Intents whose maintenance drains the node after cordoning it. */
export const DRAINING_INTENTS: readonly MaintenanceIntent[] = [
  'drain',
  'reboot',
  'shutdown',
  'upgrade',
  'firmware',
];

/**
 * The power verb an intent sends once drained, as the capability rule names it: an
 * upgrade ends with the reboot Talos makes into the new version (upgradeRows.ts), a
 * firmware update with the reset that applies it (firmwareRows.ts).
 */
export const VERB_OF_INTENT: Partial<
  Record<MaintenanceIntent, 'reboot' | 'shutdown'>
> = {
  reboot: 'reboot',
  shutdown: 'shutdown',
  upgrade: 'reboot',
  // A firmware update is applied with a reset (firmwareRows.ts).
  firmware: 'reboot',
};

/** Where the verb an intent sends is recorded (`status.power`), once drained. */
export const RECORD_OF_INTENT: Partial<
  Record<MaintenanceIntent, PowerSendVerb>
> = {
  reboot: 'reboot',
  shutdown: 'shutdown',
  upgrade: 'upgrade',
  firmware: 'firmware',
};
