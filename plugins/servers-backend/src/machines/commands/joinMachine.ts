import { InputError, NotFoundError } from '@backstage/errors';
import {
  joinMachineBodySchema,
  SMBIOS_UUID_REGEX,
  type JoinMachineResponse,
} from '@rackside/plugin-servers-common';
import { parseRequestBody } from '../lib/requestBody';
import type { MachinesState } from '../cluster/machinesTypes';
import {
  requireReason,
  StateConflictError,
  withConflictRetry,
  type ActionResult,
  type MachineActionRequest,
  type MachinesServiceOptions,
} from './context';

/**
 * `POST /clusters/:cluster/machines/:uuid/join` (`machines:add`): sets `spec.join`
 * (who, why, when) on a Pending TalosMachine; the operator then applies the join
 * config over the maintenance connection.
 */
export async function joinMachine(
  ctx: MachinesServiceOptions,
  state: MachinesState,
  request: MachineActionRequest,
): Promise<ActionResult> {
  const { credentials, params, body: rawBody } = request;
  const uuid = params.uuid.toLowerCase();
  if (!SMBIOS_UUID_REGEX.test(uuid)) {
    throw new InputError(
      `uuid: ${params.uuid} is not an SMBIOS UUID (a TalosMachine is named by one)`,
    );
  }
  const body = parseRequestBody(joinMachineBodySchema, rawBody);
  requireReason(ctx, body.reason);
  const flag = {
    by: credentials.principal.userEntityRef,
    reason: body.reason.trim(),
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
  const answer: JoinMachineResponse = { name: uuid };
  return { status: 200, body: answer, outcome: 'join-requested' };
}
