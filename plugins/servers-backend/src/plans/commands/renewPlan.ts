import { ConflictError, InputError, NotAllowedError } from '@backstage/errors';
import {
  cutList,
  isTerminalPlanPhase,
  planAuthorizationAt,
  planRenewBodySchema,
  serverActionPermissions,
} from '@rackside/plugin-servers-common';
import { clusterOr404 } from '../../cluster/clusterRegistry';
import type { PlanObject } from '../../cluster/types';
import { checkReason } from '../../lib/reasonPolicy';
import { parseRequestBody } from '../../lib/requestBody';
import type { PlanCommandContext, PlanGrant } from '../PlansService';
import { readablePlanOr404, readablePlans, stepsOf } from '../planView';

/** The nodes of a plan a renewal covers: not yet started, not excluded before. */
export function notStartedNodes(plan: PlanObject): string[] {
  return stepsOf(plan)
    .filter(s => s.phase === 'Pending')
    .map(s => s.name)
    .filter(n => !plan.spec.authorization?.excluded?.includes(n));
}

/**
 * `POST /clusters/:cluster/plans/:name/renew`: the plan's authority checked again for
 * the caller (`servers:plan`, the intent's permission and, for data-loss drain options,
 * `servers:drain-data` on every node not yet started), then a new lease. Nodes the
 * caller may not act on: 403 naming them, nothing written; with `skipRefused: true` the
 * lease is renewed without them and their steps are Skipped.
 */
export async function renewPlan(
  ctx: PlanCommandContext,
  actor: string,
  clusterName: string,
  name: string,
  rawBody: unknown,
  grant: PlanGrant,
): Promise<{ name: string; until: string }> {
  const cluster = clusterOr404(ctx.clusters, clusterName);
  const body = parseRequestBody(planRenewBodySchema, rawBody);
  const reasonProblem = checkReason(ctx.reasonPolicy, body.reason);
  if (reasonProblem) throw new InputError(reasonProblem);
  const { plans } = await readablePlans(grant.scope, cluster);
  const plan = readablePlanOr404(plans, cluster.name, name);
  if (isTerminalPlanPhase(plan.status?.phase) || plan.spec.cancel) {
    throw new ConflictError(
      `plan ${name} is ${
        plan.spec.cancel ? 'cancelled' : plan.status?.phase
      }: there is nothing to renew`,
    );
  }
  // The nodes not yet started on which the caller may not act, as the decorator found
  // them (a data-loss drain option refused on any other was a 403 there).
  const refused = grant.refused ?? [];
  if (refused.length > 0 && !body.skipRefused) {
    throw new NotAllowedError(
      `you may not ${plan.spec.intent} ${cutList(refused)} (${
        serverActionPermissions[plan.spec.intent].name
      }): renew with skipRefused to renew without them (their steps are skipped), or ask someone who may`,
    );
  }
  const authorization = planAuthorizationAt(
    actor,
    new Date(),
    ctx.config.authorizationHours,
    [...(plan.spec.authorization?.excluded ?? []), ...refused],
  );
  await cluster.updatePlanSpec!(name, current => {
    if (isTerminalPlanPhase(current.status?.phase) || current.spec.cancel) {
      throw new ConflictError(
        `plan ${name} ended while it was renewed: there is nothing to renew`,
      );
    }
    return { ...current.spec, authorization };
  });
  return { name, until: authorization.until };
}
