import { InputError, NotFoundError } from '@backstage/errors';
import {
  confirmReclaimBodySchema,
  isTerminalReclaimPhase,
  type MachineReclaim,
  type ReclaimConfirmedResponse,
} from '@rackside/plugin-servers-common';
import { parseRequestBody } from '../lib/requestBody';
import type { MachinesState } from '../cluster/machinesTypes';
import {
  StateConflictError,
  withConflictRetry,
  type ActionResult,
  type MachineActionRequest,
  type MachinesServiceOptions,
} from './context';
import { settleReclaimAddresses } from './reclaimAddresses';

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
  ctx: MachinesServiceOptions,
  state: MachinesState,
  request: MachineActionRequest,
): Promise<ActionResult> {
  const { params, extra, body: rawBody } = request;
  const { name } = params;
  const body = parseRequestBody(confirmReclaimBodySchema, rawBody);
  const confirmed = await withConflictRetry(async () => {
    const reclaim = await state.freshReclaim(name).catch(error => {
      if (NotFoundError.is(error)) {
        throw new NotFoundError(
          `no reclaim request named ${name} in cluster ${state.cluster}`,
        );
      }
      throw error;
    });
    extra.address = reclaim.spec.address;
    extra.machineUUID = reclaim.status?.machineUUID ?? null;
    const problem = notConfirmable(reclaim, new Date());
    if (problem) throw new StateConflictError(problem);
    const machineUUID = reclaim.status!.machineUUID!;
    if (body.uuid.toLowerCase() !== machineUUID.toLowerCase()) {
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
    extra.addressAppended = settled.appended;
    extra.addressesRemoved = settled.removed;
  } catch (error) {
    // Best effort (decision 0002): the next create or confirm tries again.
    ctx.logger.warn(
      `reclaim ${name}: discovery address clean-up in ${confirmed.spec.targetCluster} failed: ${error}`,
    );
  }
  const answer: ReclaimConfirmedResponse = { name };
  return { status: 200, body: answer, outcome: 'confirmed' };
}
