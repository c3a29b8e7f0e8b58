/*
 * `POST /clusters/:cluster/{maintenances,plans}/:name/approval` (docs/approvals.md): a
 * second person's decision on a held request, after its permissions were decided
 * (`servers:approve` on every node). Checks in order, on the request as the apiserver has
 * it now: the caller may see it (404), where the caller stands (standing.ts: held,
 * awaited, not ended, `servers:approve`, the person), then for an approval the impact
 * now: a rung above the one the requester acknowledged is a 409 with both rungs (the
 * requester asks again), then the approver's own fresh pre-flight token (issued to them
 * for this node or plan, now: 400 / 409 with the new pre-flight as for any request) and,
 * at the hazard rung, the typed name. The decision is written last, on the
 * resourceVersion the checks read: of two approvers at once exactly one write wins.
 */
import { ConflictError, InputError } from '@backstage/errors';
import {
  rungGrewPast,
  type Approval,
  type ApprovalDecidedResponse,
  type PreflightCeremonyLevel,
} from '@rackside/plugin-servers-common';
import { clusterSnapshot } from '../../cluster/snapshot';
import {
  PreflightConflictError,
  preflightRecord,
} from '../../preflight/preflight';
import type {
  ApprovalCommandContext,
  ApprovalGrant,
  DecideApprovalCommand,
} from '../ApprovalsService';
import { ApprovalRungGrewError } from '../errors';
import {
  freshRequest,
  noRequest,
  notifiedRequest,
  visibleRequest,
  type HeldRequest,
} from '../heldRequest';
import { impactNow } from '../impactNow';
import { standingOf } from '../standing';
import type { UserCredentials } from '../../lib/credentials';

export async function decideApproval(
  ctx: ApprovalCommandContext,
  credentials: UserCredentials,
  command: DecideApprovalCommand,
  grant: ApprovalGrant,
  learnt: Record<string, unknown>,
): Promise<ApprovalDecidedResponse> {
  const user = credentials.principal.userEntityRef;
  const now = ctx.now?.() ?? new Date();
  const { cluster } = grant;
  const snap = await clusterSnapshot(cluster);
  const request = await freshRequest(cluster, command);
  if (!request || !visibleRequest(request, snap, grant.scope)) {
    throw noRequest(command);
  }
  const standing = await standingOf(ctx, credentials, grant, request, now);
  if (standing.refusal) {
    learnt.state = standing.state;
    throw standing.refusal;
  }
  const approval = request.approval!;
  const { body } = command;
  let decided: Approval;
  if (body.decision === 'reject') {
    decided = {
      ...approval,
      rejectedBy: user,
      rejectedAt: now.toISOString(),
      rejectReason: body.reason,
    };
  } else {
    decided = {
      ...approval,
      ...(await approvedBy(ctx, grant, snap, request, command, user, now)),
    };
  }
  await write(cluster, request, decided);
  const state = body.decision === 'reject' ? 'rejected' : 'approved';
  learnt.state = state;
  if (decided.approvedRung) learnt.approvedRung = decided.approvedRung;
  await ctx.notifier.decided(notifiedRequest(request), decided);
  return { state };
}

/** The approval's fields once every check of an approval passed. */
async function approvedBy(
  ctx: ApprovalCommandContext,
  grant: ApprovalGrant,
  snap: Awaited<ReturnType<typeof clusterSnapshot>>,
  request: HeldRequest,
  command: DecideApprovalCommand,
  user: string,
  now: Date,
): Promise<
  Pick<
    Approval,
    'approvedBy' | 'approvedAt' | 'approvedRung' | 'approverPreflight'
  >
> {
  const approval = request.approval!;
  const { body } = command;
  const current = await impactNow(ctx, grant, snap, request, user);
  if (rungGrewPast(approval.requestedRung, current.rungNow)) {
    throw new ApprovalRungGrewError(approval.requestedRung, current.rungNow);
  }
  // Not above the requested rung, and not refused (that is above every rung).
  const rung = current.rungNow as PreflightCeremonyLevel;
  const token = body.preflightToken ?? '';
  let approverPreflight: Approval['approverPreflight'];
  if (current.kind === 'cordon') {
    approverPreflight = { takenAt: now.toISOString(), ceremony: rung };
  } else if (!token) {
    throw new InputError(
      'ceremony not met: approving takes the pre-flight again: send the preflightToken of the approval view.',
    );
  } else if (current.kind === 'maintenance') {
    let takenAt: string;
    try {
      ({ takenAt } = ctx.preflightTokens.verify(
        token,
        current.impact,
        user,
        now,
      ));
    } catch (error) {
      // The new pre-flight as the approver may see it, as the view shows it.
      if (error instanceof PreflightConflictError) {
        throw new PreflightConflictError(error.message, current.shown);
      }
      throw error;
    }
    const node = request.nodes[0];
    if (rung === 'hazard' && body.typedName?.trim() !== node) {
      throw new InputError(
        `ceremony not met: this consumes the last of the quorum margin: type the node name (${node}) as typedName.`,
      );
    }
    approverPreflight = preflightRecord({ ...current.impact, takenAt }, token);
  } else {
    const { takenAt } = ctx.planPreflights.verify(
      current.shown,
      user,
      token,
      body.typedNames ?? [],
    );
    approverPreflight = { takenAt, token, ceremony: rung };
  }
  return {
    approvedBy: user,
    approvedAt: now.toISOString(),
    approvedRung: rung,
    approverPreflight,
  };
}

/** The decision, on the resourceVersion the checks read (a ConflictError when it moved). */
async function write(
  cluster: ApprovalGrant['cluster'],
  request: HeldRequest,
  approval: Approval,
): Promise<void> {
  const version = request.resourceVersion ?? '';
  const { name } = request.ref;
  const decide =
    request.ref.kind === 'plan'
      ? cluster.decidePlanApproval?.bind(cluster)
      : cluster.decideMaintenanceApproval?.bind(cluster);
  if (!decide) {
    throw new ConflictError(`cluster ${cluster.name} cannot record approvals`);
  }
  await decide(name, version, approval);
}
