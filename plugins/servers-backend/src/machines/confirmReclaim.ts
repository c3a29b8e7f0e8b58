import { InputError, NotFoundError } from '@backstage/errors';
import {
  confirmReclaimBodySchema,
  isTerminalReclaimPhase,
  machinesReclaimPermission,
  type MachineReclaim,
  type ReclaimConfirmedResponse,
} from '@rackside/plugin-servers-common';
import type { Router } from 'express';
import { RECLAIM_SEVERITY } from '../service/auditSeverity';
import {
  machinesOr404,
  rawString,
  requirePermission,
  runAudited,
  StateConflictError,
  withConflictRetry,
  type MachinesRouteContext,
} from './context';
import { parseRequestBody } from '../lib/requestBody';
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
export function confirmReclaimRoute(router: Router, ctx: MachinesRouteContext) {
  router.post('/clusters/:cluster/reclaims/:name/confirm', async (req, res) => {
    const { name } = req.params;
    await runAudited(
      ctx,
      req,
      res,
      {
        eventId: 'machine-reclaim-confirm',
        severityLevel: RECLAIM_SEVERITY,
        meta: {
          cluster: req.params.cluster,
          reclaim: name,
          typedUUID: rawString(req.body, 'uuid', 64),
        },
      },
      async (credentials, extra) => {
        const state = machinesOr404(ctx, req.params.cluster);
        await requirePermission(
          ctx,
          credentials,
          machinesReclaimPermission,
          'reset and add machines another cluster holds',
        );
        const body = parseRequestBody(confirmReclaimBodySchema, req.body);
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
          // Best effort (ADR 0107): the next create or confirm tries again.
          ctx.logger.warn(
            `reclaim ${name}: discovery address clean-up in ${confirmed.spec.targetCluster} failed: ${error}`,
          );
        }
        const answer: ReclaimConfirmedResponse = { name };
        return { status: 200, body: answer, outcome: 'confirmed' };
      },
    );
  });
}
