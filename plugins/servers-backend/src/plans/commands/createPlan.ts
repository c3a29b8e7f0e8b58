/*
 * `POST /clusters/:cluster/plans`: the checks of a plan request after its permissions
 * were decided and its body parsed at the edge (the reason policy, what an upgrade or a
 * firmware plan installs against `servers.upgrades`, the nodes as the caller may see them, the
 * capability rule, the spec, the ceremony, then the acknowledgement (planAcknowledgement.ts:
 * the token against a fresh plan pre-flight, the blockers, the hazard names typed), then
 * the MaintenancePlan with its first acknowledgement on record. Throws the error of the
 * first check that fails, having written nothing.
 */
import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import {
  cutList,
  maintenancePlanSpecSchema,
  planAuthorizationAt,
  PLAN_PREFLIGHT_TAKEN_AT,
  RACKSIDE_API_VERSION,
  type PlanCreatedResponse,
} from '@rackside/plugin-servers-common';
import { checkReason } from '../../lib/reasonPolicy';
import {
  checkInstallSource,
  NO_UPGRADE_SOURCES,
} from '../../lib/upgradeSources';
import { parseRequestBody } from '../../lib/requestBody';
import { PreflightConflictError } from '../../preflight/preflight';
import { clusterSnapshot } from '../../cluster/snapshot';
import {
  approvalNodesOf,
  heldApprovalFor,
  heldApprovalResponse,
  highestRung,
  NO_APPROVALS,
} from '../../approval/heldApproval';
import {
  acknowledgementOf,
  verifyPlanAcknowledgement,
} from '../planAcknowledgement';
import {
  acknowledgedRungs,
  computePlanPreflight,
  installOfPlan,
  notOfferedOn,
  planDrainOf,
  planNameFor,
  planTypedCount,
  requestedPlanNodes,
  signPlanPreflight,
  skippedUpFront,
} from '../planPreflight';
import type {
  CreatePlanCommand,
  PlanCommandContext,
  PlanGrant,
} from '../PlansService';

export async function createPlan(
  ctx: PlanCommandContext,
  actor: string,
  command: CreatePlanCommand,
  grant: PlanGrant,
): Promise<PlanCreatedResponse> {
  const { cluster } = grant;
  const { body } = command;
  const reasonProblem = checkReason(ctx.reasonPolicy, body.reason);
  if (reasonProblem) throw new InputError(reasonProblem);
  // What an upgrade or a firmware plan installs: the single request's rule and list.
  const install = installOfPlan(body);
  checkInstallSource(ctx.upgradeSources ?? NO_UPGRADE_SOURCES, install);
  const { scope } = grant;
  const snap = await clusterSnapshot(cluster);
  const planned = requestedPlanNodes(cluster.name, snap, scope, body);
  const drain = planDrainOf(body);
  // The nodes already at an upgrade's target: the operator Skips them up front.
  const skipped = new Set(
    skippedUpFront(snap, body.intent, install, planned).map(n => n.node),
  );
  const acting = planned.filter(n => !skipped.has(n.name));
  // The capability rule, as a single request applies it: a plan whose steps the
  // channel cannot carry out is refused now, not step by step later.
  const notOffered = notOfferedOn(snap, body.intent, acting);
  if (notOffered.length > 0) {
    throw new InputError(
      `${body.intent} is not offered on ${cutList(
        notOffered.map(n => n.name),
      )}: ${notOffered[0].reason}`,
    );
  }
  const spec = {
    intent: body.intent,
    // Every node, those already at the target too: the plan counts them ("3 of 6 at ...").
    nodes: planned.map(n => n.name),
    ...(body.upgrade !== undefined ? { upgrade: body.upgrade } : {}),
    ...(body.firmware !== undefined ? { firmware: body.firmware } : {}),
    ...(body.maxParallel !== undefined
      ? { maxParallel: body.maxParallel }
      : {}),
    ...(body.gates !== undefined ? { gates: body.gates } : {}),
    ...(body.healthyReturn !== undefined
      ? { healthyReturn: body.healthyReturn }
      : {}),
    ...(body.window !== undefined ? { window: body.window } : {}),
    ...(body.failurePolicy !== undefined
      ? { failurePolicy: body.failurePolicy }
      : {}),
    drain,
    reason: body.reason.trim(),
    requestedBy: actor,
  };
  const checked = parseRequestBody(maintenancePlanSpecSchema, spec);
  const maxParallel = checked.maxParallel;

  // Ceremony: reason (above), the acknowledged pre-flight, and for the intents that
  // take a machine down the count of servers it acts on.
  const problems: string[] = [];
  if (!body.preflightToken) {
    problems.push('acknowledge the plan pre-flight (preflightToken).');
  }
  const typedCount = planTypedCount(body.intent, acting.length);
  if (typedCount !== null && body.typedCount !== typedCount) {
    problems.push(
      `type the number of servers to ${body.intent} (${typedCount}) as typedCount.`,
    );
  }
  if (problems.length) {
    throw new InputError(`ceremony not met: ${problems.join(' ')}`);
  }
  const token = body.preflightToken!;

  ctx.preflights.take(actor);
  const current = await computePlanPreflight(
    cluster,
    snap,
    scope,
    body.intent,
    planned,
    maxParallel,
    drain,
    install,
  );
  const { takenAt } = verifyPlanAcknowledgement(
    ctx,
    actor,
    current,
    token,
    body.typedNames ?? [],
  );
  // A rule of servers.approvals.rules may hold the plan (docs/approvals.md), at the
  // highest rung of its steps as acknowledged.
  const policy = ctx.approvals ?? NO_APPROVALS;
  const acknowledged = acknowledgedRungs(current);
  const approval = heldApprovalFor(policy, {
    action: 'plan',
    intent: body.intent,
    rung: highestRung(Object.values(acknowledged)),
    nodes: approvalNodesOf(
      snap,
      planned.map(n => n.name),
    ),
    planSize: planned.length,
  });
  const name = planNameFor(body.intent, token);
  const used = () =>
    new PreflightConflictError(
      `this pre-flight token was used already (plan ${name}): a pre-flight acknowledges one request; review the current pre-flight and acknowledge it again`,
      signPlanPreflight(ctx.preflightTokens, current, actor),
    );
  if (((await cluster.plans?.()) ?? []).some(p => p.metadata.name === name)) {
    throw used();
  }
  try {
    if (!cluster.createPlan) {
      throw new NotFoundError(
        `cluster ${cluster.name} does not serve maintenance plans`,
      );
    }
    await cluster.createPlan({
      apiVersion: RACKSIDE_API_VERSION,
      kind: 'MaintenancePlan',
      metadata: {
        name,
        annotations: { [PLAN_PREFLIGHT_TAKEN_AT]: takenAt },
      },
      spec: {
        ...checked,
        acknowledged,
        ...(approval ? { approval } : {}),
        acknowledgements: [
          acknowledgementOf(actor, 'create', current, takenAt),
        ],
        authorization: planAuthorizationAt(
          actor,
          new Date(),
          ctx.config.authorizationHours,
        ),
      },
    });
  } catch (error) {
    if (ConflictError.is(error)) throw used();
    throw error;
  }
  if (approval) {
    await policy.notifier.held(
      {
        cluster: cluster.name,
        kind: 'plan',
        name,
        intent: body.intent,
        nodes: planned.map(n => n.name),
        requestedBy: actor,
        reason: body.reason.trim(),
      },
      approval,
    );
    return { name, approval: heldApprovalResponse(approval) };
  }
  return { name };
}
