/*
 * `POST /clusters/:cluster/plans/:name/{pause,resume,cancel}`: after `servers:plan` (the
 * control and the body were parsed at the edge), the reason policy and the plan as the
 * caller may see it, then the flag on the plan's spec (409 where it does not apply).
 */
import { ConflictError, InputError } from '@backstage/errors';
import {
  isPlanPaused,
  isTerminalPlanPhase,
  type PlanControl,
} from '@rackside/plugin-servers-common';
import type { PlanObject } from '../../cluster/types';
import { checkReason } from '../../lib/reasonPolicy';
import type {
  ControlPlanCommand,
  PlanCommandContext,
  PlanGrant,
} from '../PlansService';
import { readablePlanOr404, readablePlans } from '../planView';

export async function controlPlan(
  ctx: PlanCommandContext,
  actor: string,
  command: ControlPlanCommand,
  grant: PlanGrant,
): Promise<{ name: string }> {
  const { cluster } = grant;
  const { body, plan: name } = command;
  const reasonProblem = checkReason(ctx.reasonPolicy, body.reason);
  if (reasonProblem) throw new InputError(reasonProblem);
  const { plans } = await readablePlans(grant.scope, cluster);
  readablePlanOr404(plans, cluster.name, name);
  const at = new Date();
  await cluster.updatePlanSpec!(name, current =>
    controlled(current, command.control, {
      by: actor,
      reason: body.reason.trim(),
      at,
    }),
  );
  return { name };
}

/** The spec after a pause, resume or cancel; 409 where it does not apply. */
export function controlled(
  plan: PlanObject,
  control: PlanControl,
  flag: { by: string; reason: string; at: Date },
): PlanObject['spec'] {
  const { spec, status } = plan;
  const phase = status?.phase;
  if (isTerminalPlanPhase(phase)) {
    throw new ConflictError(
      `plan ${plan.metadata.name} is ${phase}: there is nothing to ${control}`,
    );
  }
  if (spec.cancel) {
    throw new ConflictError(
      `plan ${plan.metadata.name} was cancelled by ${spec.cancel.by}`,
    );
  }
  const paused = isPlanPaused(spec);
  const stamp = (after?: string) => {
    // Later than the toggle it replaces (the CRD orders pauses and resumes by at).
    const floor = after ? Date.parse(after) + 1 : 0;
    return new Date(Math.max(flag.at.getTime(), floor)).toISOString();
  };
  switch (control) {
    case 'pause':
      if (paused) {
        throw new ConflictError(
          `plan ${plan.metadata.name} is paused already (by ${spec.pause!.by})`,
        );
      }
      return {
        ...spec,
        pause: {
          by: flag.by,
          reason: flag.reason,
          at: stamp(
            [spec.pause?.at, spec.resume?.at].filter(Boolean).sort().pop(),
          ),
        },
      };
    case 'resume':
      if (!paused) {
        throw new ConflictError(`plan ${plan.metadata.name} is not paused`);
      }
      return {
        ...spec,
        resume: { by: flag.by, reason: flag.reason, at: stamp(spec.pause!.at) },
      };
    case 'cancel':
    default:
      return {
        ...spec,
        cancel: {
          by: flag.by,
          reason: flag.reason,
          at: flag.at.toISOString(),
        },
      };
  }
}
