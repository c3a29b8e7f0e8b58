import { NotFoundError } from '@backstage/errors';
import type { JoinMachineResponse } from '@rackside/plugin-servers-common';
import {
  requireReason,
  StateConflictError,
  withConflictRetry,
} from '../checks';
import type {
  JoinMachineCommand,
  MachineActionResult,
  MachineCommandContext,
  MachineGrant,
} from '../MachinesService';

/**
 * `POST /clusters/:cluster/machines/:uuid/join` (`machines:add`): sets `spec.join`
 * (who, why, when) on a Pending TalosMachine; the operator then applies the join
 * config over the maintenance connection.
 */
export async function joinMachine(
  ctx: MachineCommandContext,
  user: string,
  command: JoinMachineCommand,
  { state }: MachineGrant,
): Promise<MachineActionResult<JoinMachineResponse>> {
  const { uuid } = command;
  requireReason(ctx, command.reason);
  const flag = {
    by: user,
    reason: command.reason.trim(),
    at: new Date().toISOString(),
  };
  await withConflictRetry(async () => {
    const machine = await state.freshTalosMachine(uuid).catch(error => {
      if (NotFoundError.is(error)) {
        throw new NotFoundError(
          `no machine ${uuid} in cluster ${state.cluster}`,
        );
      }
      throw error;
    });
    if (machine.spec.join) {
      throw new StateConflictError(
        `machine ${uuid} is already being added: asked by ${
          machine.spec.join.by
        }${machine.spec.join.at ? ` at ${machine.spec.join.at}` : ''}`,
      );
    }
    const phase = machine.status?.phase ?? 'Pending';
    if (phase !== 'Pending') {
      throw new StateConflictError(
        `machine ${uuid} is ${phase}; only a Pending machine (in maintenance mode) can be added`,
      );
    }
    await state.updateTalosMachine({
      ...machine,
      spec: { ...machine.spec, join: flag },
    });
  });
  return { answer: { name: uuid }, outcome: 'join-requested' };
}
