import { InputError, NotFoundError } from '@backstage/errors';
import {
  joinMachineBodySchema,
  machinesAddPermission,
  SMBIOS_UUID_PATTERN,
  type JoinMachineResponse,
} from '@rackside/plugin-servers-common';
import type { Router } from 'express';
import {
  machinesOr404,
  rawString,
  requirePermission,
  requireReason,
  runAudited,
  StateConflictError,
  withConflictRetry,
  type MachinesRouteContext,
} from './context';
import { parseRequestBody } from '../lib/requestBody';

/**
 * `POST /clusters/:cluster/machines/:uuid/join` (`machines:add`): sets `spec.join`
 * (who, why, when) on a Pending TalosMachine; the operator then applies the join
 * config over the maintenance connection.
 */
export function joinMachineRoute(router: Router, ctx: MachinesRouteContext) {
  router.post('/clusters/:cluster/machines/:uuid/join', async (req, res) => {
    const uuid = req.params.uuid.toLowerCase();
    await runAudited(
      ctx,
      req,
      res,
      {
        eventId: 'machine-join',
        severityLevel: 'medium',
        meta: {
          cluster: req.params.cluster,
          machine: uuid,
          reason: rawString(req.body, 'reason'),
        },
      },
      async credentials => {
        const state = machinesOr404(ctx, req.params.cluster);
        await requirePermission(
          ctx,
          credentials,
          machinesAddPermission,
          'add machines',
        );
        if (!new RegExp(SMBIOS_UUID_PATTERN).test(uuid)) {
          throw new InputError(
            `uuid: ${req.params.uuid} is not an SMBIOS UUID (a TalosMachine is named by one)`,
          );
        }
        const body = parseRequestBody(joinMachineBodySchema, req.body);
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
      },
    );
  });
}
