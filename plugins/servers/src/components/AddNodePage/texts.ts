import type {
  MachineReclaimPhase,
  TalosAddressState,
  TalosMachinePhase,
} from '@rackside/plugin-servers-common';

/** The dialog's title (decision 0002). */
export const RECLAIM_DIALOG_TITLE = 'Add a machine from another cluster';
/** The button's name, beside an AlreadyConfigured address and on the machine list. */
export const RESET_AND_ADD = 'Reset and add';

/** What a discovery state means, for a person. */
export const ADDRESS_STATE_TEXT: Record<TalosAddressState, string> = {
  Maintenance: 'In maintenance mode: ready to add',
  AlreadyConfigured: 'Configured by another Talos cluster',
  Member: 'Member of this cluster',
  Unreachable: 'Unreachable',
  NotTalos: 'Not a Talos machine',
  NotAllowed: 'Not probed: outside the allowed networks',
};

export const MACHINE_PHASE_TEXT: Record<TalosMachinePhase, string> = {
  Pending: 'Pending: in maintenance mode, not added',
  Joining: 'Joining: config applied, waiting for its node',
  Joined: 'Joined',
  Failed: 'Failed',
};

export const RECLAIM_PHASE_TEXT: Record<MachineReclaimPhase, string> = {
  Pending: "Reading the machine's UUID through the other cluster's talosconfig",
  AwaitingConfirmation: 'Waiting for you to type the UUID',
  Resetting: 'Sending the reset',
  WaitingForMaintenance:
    'Reset sent: waiting for the machine to come back in maintenance mode',
  Done: 'Done',
  Failed: 'Failed',
  Expired: 'Expired',
  Refused: 'Refused',
};

/** The command a user without `machines:reclaim` can run with the other cluster's talosconfig. */
export function resetCommand(address: string): string {
  return `talosctl --talosconfig <other cluster's talosconfig> -n ${address} reset --graceful --reboot --system-labels-to-wipe STATE --system-labels-to-wipe EPHEMERAL`;
}

/** A timestamp, short and in the browser's locale. */
export function when(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** An SMBIOS UUID, as a person may type it (any case). */
export const UUID_PATTERN =
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
