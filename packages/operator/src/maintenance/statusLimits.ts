/*
 * A NodeMaintenance's status within its schema (crds/rackside.dev_nodemaintenances.yaml):
 * status.message holds at most 4,096 characters. The reconciler cuts a message to it before
 * the write, and a row that compares a new message with the stored one compares the cut
 * one, or an over-long message would differ from its stored self and be written on every
 * wake.
 */

/** status.message: maxLength in the CRD. */
export const MAINTENANCE_MESSAGE_MAX = 4096;

/** A message as status.message stores it. */
export function fitMaintenanceMessage(message: string): string {
  return message.slice(0, MAINTENANCE_MESSAGE_MAX);
}
