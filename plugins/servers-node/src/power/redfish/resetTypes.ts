import type { PowerChannelVerb } from '../types';

/**
 * ResetType preferences per verb, best first. A reboot and a power-on may fall back to
 * the forced form (the machine gets there either way); a shutdown may not: a machine
 * losing power mid-write is the caller's decision, made by sending `forceOff`.
 */
export const RESET_TYPE_PREFERENCES: Record<
  PowerChannelVerb,
  readonly string[]
> = {
  reboot: ['GracefulRestart', 'ForceRestart'],
  shutdown: ['GracefulShutdown'],
  forceOff: ['ForceOff'],
  powerOn: ['On', 'ForceOn'],
};

/**
 * The ResetType for a verb, from what the BMC allows. `allowed` undefined means the BMC
 * published no list (neither `@Redfish.AllowableValues` nor an ActionInfo): Redfish then
 * allows every value of the schema's enum, so the first preference is used. Returns
 * undefined when the BMC allows none of the verb's types.
 */
export function chooseResetType(
  verb: PowerChannelVerb,
  allowed: readonly string[] | undefined,
): string | undefined {
  const preferences = RESET_TYPE_PREFERENCES[verb];
  if (allowed === undefined) return preferences[0];
  return preferences.find(type => allowed.includes(type));
}

/** What a BMC reports as PowerState, read as where it is heading. */
export function readPowerState(value: unknown): 'On' | 'Off' | undefined {
  switch (value) {
    case 'On':
    case 'PoweringOn':
      return 'On';
    case 'Off':
    case 'PoweringOff':
      return 'Off';
    default:
      return undefined;
  }
}
