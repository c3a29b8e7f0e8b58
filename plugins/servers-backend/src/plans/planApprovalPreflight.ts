/*
 * The plans feature's side of the approval port (approval/planPreflightPort.ts): the plan
 * pre-flight of a plan's remaining steps for an approver, and its acknowledgement checked
 * exactly as a creation's and a renewal's are (planAcknowledgement.ts). Each approver's
 * view takes from the same per-user limit as the plan pre-flights (`preflights`): it
 * computes one.
 */
import type { PlanPreflightPort } from '../approval/planPreflightPort';
import type { PlanPreflightLimiter } from '../preflight/planPreflightLimiter';
import type { PreflightTokens } from '../preflight/tokens';
import { notStartedNodes } from './commands/renewPlan';
import { verifyPlanAcknowledgement } from './planAcknowledgement';
import {
  computePlanPreflight,
  installOfPlan,
  planNodes,
  signPlanPreflight,
} from './planPreflight';

export function planApprovalPreflights(
  preflightTokens: PreflightTokens,
  preflights: PlanPreflightLimiter,
): PlanPreflightPort {
  return {
    async now(cluster, snap, scope, plan, user) {
      preflights.take(user);
      const present = new Set(snap.nodes.map(n => n.metadata?.name ?? ''));
      // Absent nodes are Skipped by the operator: nothing of theirs to approve.
      const remaining = notStartedNodes(plan).filter(n => present.has(n));
      const planned = planNodes(cluster.name, snap, scope.filter, remaining);
      const impact = await computePlanPreflight(
        cluster,
        snap,
        scope,
        plan.spec.intent,
        planned,
        plan.spec.maxParallel ?? 1,
        {
          deleteEmptyDirData: plan.spec.drain?.deleteEmptyDirData === true,
          force: plan.spec.drain?.force === true,
          allowNodeLocalData: plan.spec.drain?.allowNodeLocalData === true,
        },
        installOfPlan(plan.spec),
      );
      return signPlanPreflight(preflightTokens, impact, user);
    },
    verify(current, user, token, typedNames) {
      const { token: _token, ...impact } = current;
      return verifyPlanAcknowledgement(
        { preflightTokens },
        user,
        impact,
        token,
        typedNames,
      );
    },
  };
}
