import { InputError, NotFoundError } from '@backstage/errors';
import {
  isTerminalReclaimPhase,
  type MachineReclaim,
  type ReclaimConfirmedResponse,
} from '@rackside/plugin-servers-common';
import { StateConflictError, withConflictRetry } from '../checks';
import type {
  ConfirmReclaimCommand,
  MachineActionResult,
  MachineCommandContext,
  MachineGrant,
} from '../MachinesService';
import { settleReclaimAddresses } from '../reclaimAddresses';

/** Why a reclaim cannot be confirmed now, or undefined when it can. */
function notConfirmable(
  reclaim: MachineReclaim,
  now: Date,
): string | undefined {
  const name = reclaim.metadata.name;
  if (reclaim.spec.confirmUUID) {
    return `reclaim ${name} is confirmed already`;
  }
  const phase = reclaim.status?.phase ?? 'Pending';
  if (isTerminalReclaimPhase(phase)) {
    const result = reclaim.status?.result;
    return `reclaim ${name} is ${phase}${
      result ? `: ${result}` : ''
    }; it cannot be confirmed`;
  }
  if (phase !== 'AwaitingConfirmation' || !reclaim.status?.machineUUID) {
    return `reclaim ${name} is ${phase}: the operator has not read the machine's UUID yet; confirm once it shows`;
  }
  const expiresAt = reclaim.status?.expiresAt;
  if (expiresAt && Date.parse(expiresAt) <= now.getTime()) {
    return `reclaim ${name} expired at ${expiresAt}; create a new request`;
  }
  return undefined;
}

/**
 * `POST /clusters/:cluster/reclaims/:name/confirm` (`machines:reclaim`): the typed
 * UUID. It must equal (ignoring case) the UUID the operator read through the foreign
 * talosconfig; then `spec.confirmUUID` is set and the operator sends the reset. A
 * wrong UUID is a 400 and writes nothing.
 */
export async function confirmReclaim(
  ctx: MachineCommandContext,
  _user: string,
  command: ConfirmReclaimCommand,
  { state }: MachineGrant,
  learnt: Record<string, unknown>,
): Promise<MachineActionResult<ReclaimConfirmedResponse>> {
  const { name } = command;
  const confirmed = await withConflictRetry(async () => {
    const reclaim = await state.freshReclaim(name).catch(error => {
      if (NotFoundError.is(error)) {
        throw new NotFoundError(
          `no reclaim request named ${name} in cluster ${state.cluster}`,
        );
      }
      throw error;
    });
    learnt.address = reclaim.spec.address;
    learnt.machineUUID = reclaim.status?.machineUUID ?? null;
    const problem = notConfirmable(reclaim, new Date());
    if (problem) throw new StateConflictError(problem);
    const machineUUID = reclaim.status!.machineUUID!;
    if (command.uuid.toLowerCase() !== machineUUID.toLowerCase()) {
      throw new InputError(
        `uuid does not match the UUID of the machine at ${reclaim.spec.address}: nothing was reset; check it and type it again`,
      );
    }
    // The operator's own reading, so its comparison cannot trip on case.
    return state.updateReclaim({
      ...reclaim,
      spec: { ...reclaim.spec, confirmUUID: machineUUID },
    });
  });

  try {
    const settled = await settleReclaimAddresses(
      state,
      confirmed.spec.targetCluster,
      confirmed.spec.address,
    );
    learnt.addressAppended = settled.appended;
    learnt.addressesRemoved = settled.removed;
  } catch (error) {
    // Best effort (decision 0002): the next create or confirm tries again.
    ctx.logger.warn(
      `reclaim ${name}: discovery address clean-up in ${confirmed.spec.targetCluster} failed: ${error}`,
    );
  }
  return { answer: { name }, outcome: 'confirmed' };
}
