import { ConflictError, InputError, NotAllowedError } from '@backstage/errors';
import {
  cutList,
  isTerminalPlanPhase,
  planAuthorizationAt,
  renewalAcknowledgement,
  rungGrewPast,
  serverActionPermissions,
  type Approval,
  type PreflightCeremonyLevel,
  type PlanRenewedResponse,
} from '@rackside/plugin-servers-common';
import type { ClusterState, PlanObject } from '../../cluster/types';
import { checkReason } from '../../lib/reasonPolicy';
import {
  approvalNodesOf,
  heldApprovalFor,
  heldApprovalResponse,
  highestRung,
  NO_APPROVALS,
  type ApprovalPolicy,
} from '../../approval/heldApproval';
import { PreflightConflictError } from '../../preflight/preflight';
import type { ClusterSnapshot } from '../../cluster/types';
import {
  acknowledgementOf,
  verifyPlanAcknowledgement,
  withAcknowledgement,
} from '../planAcknowledgement';
import {
  computePlanPreflight,
  installOfPlan,
  planNodes,
  signPlanPreflight,
} from '../planPreflight';
import type {
  PlanCommandContext,
  PlanGrant,
  RenewPlanCommand,
} from '../PlansService';
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
 *
 * A renewal is a new acknowledgement (docs/plans.md, "Renewing a plan"): when a remaining
 * step is at the hazard rung, or above the rung it was acknowledged at
 * (servers-common's renewalAcknowledgement), the renewer sends the token of their own
 * plan pre-flight of the remaining steps and types the hazard names, checked as a
 * creation's (planAcknowledgement.ts); their rungs then replace the creator's for those
 * steps, and the plan's acknowledgements record it. A token sent when none is needed is
 * checked and recorded all the same.
 */
export async function renewPlan(
  ctx: PlanCommandContext,
  actor: string,
  command: RenewPlanCommand,
  grant: PlanGrant,
): Promise<PlanRenewedResponse> {
  const { cluster } = grant;
  const { body, plan: name } = command;
  const reasonProblem = checkReason(ctx.reasonPolicy, body.reason);
  if (reasonProblem) throw new InputError(reasonProblem);
  const { plans, snap } = await readablePlans(grant.scope, cluster);
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
  const acknowledgement = await renewedAcknowledgement(
    ctx,
    actor,
    cluster,
    snap,
    grant,
    plan,
    refused,
    body,
  );
  const authorization = planAuthorizationAt(
    actor,
    new Date(),
    ctx.config.authorizationHours,
    [...(plan.spec.authorization?.excluded ?? []), ...refused],
  );
  const policy = ctx.approvals ?? NO_APPROVALS;
  const approval = acknowledgement
    ? renewedApproval(policy, snap, plan, acknowledgement.rungs)
    : undefined;
  await cluster.updatePlanSpec!(name, current => {
    if (isTerminalPlanPhase(current.status?.phase) || current.spec.cancel) {
      throw new ConflictError(
        `plan ${name} ended while it was renewed: there is nothing to renew`,
      );
    }
    if (!acknowledgement) return { ...current.spec, authorization };
    return {
      ...current.spec,
      authorization,
      acknowledged: { ...current.spec.acknowledged, ...acknowledgement.rungs },
      acknowledgements: withAcknowledgement(
        current.spec.acknowledgements,
        acknowledgement,
      ),
      ...(approval ? { approval } : {}),
    };
  });
  if (approval) {
    await policy.notifier.held(
      {
        cluster: cluster.name,
        kind: 'plan',
        name,
        intent: plan.spec.intent,
        nodes: stepsOf(plan).map(s => s.name),
        requestedBy: actor,
        reason: body.reason.trim(),
      },
      approval,
    );
    return {
      name,
      until: authorization.until,
      approval: heldApprovalResponse(approval),
    };
  }
  return { name, until: authorization.until };
}

/**
 * The new, undecided approval a renewal puts on the plan (docs/approvals.md), or
 * undefined to keep what it has: when a rule holds the plan at the rungs now
 * acknowledged and the plan had no approval, or its approval covers a lower rung (the
 * rung grew: the approval given, or asked, no longer covers what the steps would do).
 */
function renewedApproval(
  policy: ApprovalPolicy,
  snap: ClusterSnapshot,
  plan: PlanObject,
  rungs: Record<string, PreflightCeremonyLevel>,
): Approval | undefined {
  const rung = highestRung(
    Object.values({ ...plan.spec.acknowledged, ...rungs }),
  );
  const held = heldApprovalFor(policy, {
    action: 'plan',
    intent: plan.spec.intent,
    rung,
    nodes: approvalNodesOf(
      snap,
      stepsOf(plan).map(s => s.name),
    ),
    planSize: stepsOf(plan).length,
  });
  if (!held) return undefined;
  const existing = plan.spec.approval;
  if (
    existing?.required &&
    !rungGrewPast(existing.approvedRung ?? existing.requestedRung, rung)
  ) {
    return undefined;
  }
  return held;
}

/**
 * The renewer's acknowledgement of the remaining steps, or undefined when they need none
 * and sent none. Throws (writing nothing) when one is needed and missing (400 naming the
 * steps and why), stale or changed (409 with the new pre-flight), already used for an
 * acknowledgement of this plan (409), or a hazard name is not typed (400).
 */
async function renewedAcknowledgement(
  ctx: PlanCommandContext,
  actor: string,
  cluster: ClusterState,
  snap: ClusterSnapshot,
  grant: PlanGrant,
  plan: PlanObject,
  refused: readonly string[],
  body: { preflightToken?: string; typedNames?: string[] },
) {
  const present = new Set(snap.nodes.map(n => n.metadata?.name ?? ''));
  // Absent nodes are Skipped by the operator: there is nothing of theirs to acknowledge.
  const remaining = notStartedNodes(plan).filter(
    n => !refused.includes(n) && present.has(n),
  );
  if (remaining.length === 0) return undefined;
  const planned = planNodes(cluster.name, snap, grant.scope.filter, remaining);
  ctx.preflights.take(actor);
  const current = await computePlanPreflight(
    cluster,
    snap,
    grant.scope,
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
  const verdict = renewalAcknowledgement(
    plan.spec,
    current.nodes.map(n => ({ node: n.node, rung: n.ceremony.level })),
  );
  if (!body.preflightToken) {
    if (!verdict.needed) return undefined;
    throw new InputError(
      `ceremony not met: renewing puts the remaining steps on your authority: ${verdict.reasons.join(
        '; ',
      )}. Take the plan pre-flight of the remaining servers (${cutList(
        planned.map(n => n.name),
      )}) and send its preflightToken${
        verdict.hazard.length > 0
          ? `, with ${cutList(verdict.hazard)} typed in typedNames`
          : ''
      }.`,
    );
  }
  const { takenAt } = verifyPlanAcknowledgement(
    ctx,
    actor,
    current,
    body.preflightToken,
    body.typedNames ?? [],
  );
  // A pre-flight acknowledges once: not again, and not one older than the last on record.
  const last = plan.spec.acknowledgements?.at(-1);
  if (last && Date.parse(takenAt) <= Date.parse(last.preflightTakenAt)) {
    throw new PreflightConflictError(
      `this plan pre-flight was acknowledged already (by ${last.by} at ${last.at}), or is older than that: take the plan pre-flight of the remaining servers again`,
      signPlanPreflight(ctx.preflightTokens, current, actor),
    );
  }
  return acknowledgementOf(actor, 'renew', current, takenAt);
}
