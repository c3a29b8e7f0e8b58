/*
 * What the approval routes read (docs/approvals.md): one request's approval beside its
 * impact now (a fresh pre-flight whose token is issued to the caller, the token an
 * approval takes), and the requests awaiting an approval the caller may give.
 */
import { NotFoundError } from '@backstage/errors';
import {
  approvalState,
  rungGrewPast,
  type ApprovalItem,
  type ApprovalListResponse,
  type ApprovalView,
} from '@rackside/plugin-servers-common';
import { clusterSnapshot } from '../cluster/snapshot';
import type { UserCredentials } from '../lib/credentials';
import type {
  ApprovalCommandContext,
  ApprovalGrant,
  ApprovalRef,
} from './ApprovalsService';
import { ApprovalRungGrewError } from './errors';
import {
  cachedRequest,
  cachedRequests,
  freshRequest,
  noRequest,
  visibleRequest,
  type HeldRequest,
} from './heldRequest';
import { impactNow } from './impactNow';
import { ownershipRefsOf, standingOf } from './standing';

/** The decision on record of an approval. */
function decisionOf(request: HeldRequest): ApprovalView['decision'] {
  const a = request.approval;
  if (a?.approvedBy) {
    return { decision: 'approve', by: a.approvedBy, at: a.approvedAt };
  }
  if (a?.rejectedBy) {
    return {
      decision: 'reject',
      by: a.rejectedBy,
      at: a.rejectedAt,
      reason: a.rejectReason,
    };
  }
  return undefined;
}

export async function approvalView(
  ctx: ApprovalCommandContext,
  credentials: UserCredentials,
  ref: ApprovalRef,
  grant: ApprovalGrant,
  learnt: Record<string, unknown>,
): Promise<ApprovalView> {
  const now = ctx.now?.() ?? new Date();
  const snap = await clusterSnapshot(grant.cluster);
  // Just created, the watch may not have brought it yet: ask the apiserver.
  const request =
    (await cachedRequest(grant.cluster, ref)) ??
    (await freshRequest(grant.cluster, ref));
  if (!request || !visibleRequest(request, snap, grant.scope)) {
    throw noRequest(ref);
  }
  const approval = request.approval;
  if (!approval?.required) {
    throw new NotFoundError(`${ref.kind} ${ref.name} is not held for approval`);
  }
  const standing = await standingOf(ctx, credentials, grant, request, now);
  learnt.state = standing.state;
  // The impact now only while there is something to decide; a decided or expired one
  // shows what was asked and decided.
  const awaiting = standing.state === 'awaiting' && !request.ended;
  const current = awaiting
    ? await impactNow(
        ctx,
        grant,
        snap,
        request,
        credentials.principal.userEntityRef,
      )
    : undefined;
  const rungNow =
    current?.rungNow ?? approval.approvedRung ?? approval.requestedRung;
  const grew =
    current && rungGrewPast(approval.requestedRung, current.rungNow)
      ? new ApprovalRungGrewError(approval.requestedRung, current.rungNow)
      : undefined;
  const whyNot = standing.refusal?.message ?? grew?.message;
  return {
    cluster: ref.cluster,
    kind: ref.kind,
    name: ref.name,
    state: standing.state,
    rule: approval.rule,
    approvers: [...approval.approvers],
    expiresAt: approval.expiresAt,
    ...(request.requestedBy ? { requestedBy: request.requestedBy } : {}),
    requestedRung: approval.requestedRung,
    ...(request.acknowledged ? { acknowledged: request.acknowledged } : {}),
    ...(current && current.kind !== 'cordon' ? { now: current.shown } : {}),
    rungNow,
    mayApprove: whyNot === undefined,
    ...(whyNot ? { whyNot } : {}),
    ...(decisionOf(request) ? { decision: decisionOf(request) } : {}),
  };
}

/** The requests awaiting an approval the caller may give, soonest to expire first. */
export async function approvalsForMe(
  ctx: ApprovalCommandContext,
  credentials: UserCredentials,
  grants: readonly ApprovalGrant[],
): Promise<ApprovalListResponse> {
  const now = ctx.now?.() ?? new Date();
  const ownershipRefs = await ownershipRefsOf(ctx, credentials);
  const items: ApprovalItem[] = [];
  for (const grant of grants) {
    const [snap, requests] = await Promise.all([
      clusterSnapshot(grant.cluster),
      cachedRequests(grant.cluster),
    ]);
    for (const request of requests) {
      const approval = request.approval;
      if (!approval || approvalState(approval, now) !== 'awaiting') continue;
      if (request.ended || !visibleRequest(request, snap, grant.scope))
        continue;
      const standing = await standingOf(
        ctx,
        credentials,
        grant,
        request,
        now,
        ownershipRefs,
      );
      if (standing.refusal) continue;
      items.push({
        cluster: grant.cluster.name,
        kind: request.ref.kind,
        name: request.ref.name,
        intent: request.intent,
        nodes: request.nodes,
        ...(request.requestedBy ? { requestedBy: request.requestedBy } : {}),
        reason: request.reason,
        ...(request.createdAt ? { createdAt: request.createdAt } : {}),
        rule: approval.rule,
        approvers: [...approval.approvers],
        expiresAt: approval.expiresAt,
        requestedRung: approval.requestedRung,
      });
    }
  }
  items.sort((a, b) => Date.parse(a.expiresAt) - Date.parse(b.expiresAt));
  return { items };
}
