/*
 * Where a caller stands before a held request (docs/approvals.md), in the order a
 * decision checks it: the request held at all, its approval still awaited (not decided,
 * not expired), the request not ended, `servers:approve` on every node (as the grant
 * says), and the person (servers-common's approverRefusal: never the requester, only a
 * user named by the rule directly or through a group). The view shows the first refusal
 * as `whyNot`; a decision throws it.
 */
import { ConflictError, NotAllowedError } from '@backstage/errors';
import {
  approvalState,
  approverRefusal,
  serversApprovePermission,
  type ApprovalState,
} from '@rackside/plugin-servers-common';
import type { UserCredentials } from '../lib/credentials';
import type { ApprovalCommandContext, ApprovalGrant } from './ApprovalsService';
import { ApprovalExpiredError } from './errors';
import type { HeldRequest } from './heldRequest';

/** The approval's state, and the error of the first check the caller fails, if any. */
export interface Standing {
  state: ApprovalState;
  refusal?: Error;
}

/** The user's catalog ownership refs (their groups); none when the catalog does not know them. */
export async function ownershipRefsOf(
  ctx: ApprovalCommandContext,
  credentials: UserCredentials,
): Promise<string[]> {
  try {
    return (await ctx.userInfo.getUserInfo(credentials)).ownershipEntityRefs;
  } catch {
    return [credentials.principal.userEntityRef];
  }
}

export async function standingOf(
  ctx: ApprovalCommandContext,
  credentials: UserCredentials,
  grant: ApprovalGrant,
  request: HeldRequest,
  now: Date,
  /** The caller's ownership refs, when already read (a list reads them once). */
  ownershipRefs?: readonly string[],
): Promise<Standing> {
  const { approval } = request;
  const state = approvalState(approval, now);
  const what = `${request.ref.kind} ${request.ref.name}`;
  if (!approval || state === 'none') {
    return {
      state,
      refusal: new ConflictError(`${what} is not held for approval`),
    };
  }
  if (state === 'approved') {
    return {
      state,
      refusal: new ConflictError(
        `${what} was approved already, by ${approval.approvedBy} at ${approval.approvedAt}`,
      ),
    };
  }
  if (state === 'rejected') {
    return {
      state,
      refusal: new ConflictError(
        `${what} was rejected already, by ${approval.rejectedBy} at ${approval.rejectedAt}`,
      ),
    };
  }
  if (state === 'expired') {
    return {
      state,
      refusal: new ApprovalExpiredError(
        `the approval of ${what} expired at ${approval.expiresAt}: the request ends without it; the requester must ask again`,
      ),
    };
  }
  if (request.ended) {
    return {
      state,
      refusal: new ConflictError(
        `${what} has ended: there is nothing to approve`,
      ),
    };
  }
  const refusedOn = grant.approveRefusedOn(request.nodes);
  if (refusedOn.length > 0) {
    return {
      state,
      refusal: new NotAllowedError(
        `you are not allowed to approve requests on ${refusedOn.join(', ')} (${
          serversApprovePermission.name
        })`,
      ),
    };
  }
  const refused = approverRefusal({
    approval,
    requestedBy: request.requestedBy,
    approverRef: credentials.principal.userEntityRef,
    ownershipRefs: ownershipRefs ?? (await ownershipRefsOf(ctx, credentials)),
    principalType: 'user',
  });
  if (refused) return { state, refusal: new NotAllowedError(refused) };
  return { state };
}
