/*
 * The approvals feature within what each call was granted (ApprovalsService.ts): the
 * list and the view from the watch caches, and the decision as a command (commands/). It
 * never asks the permission framework; a call without a grant is refused, so this
 * service is never reachable around AuthorizedApprovalsService.
 */
import { NotAllowedError } from '@backstage/errors';
import type {
  ApprovalDecidedResponse,
  ApprovalListResponse,
  ApprovalView,
} from '@rackside/plugin-servers-common';
import type { UserCredentials } from '../lib/credentials';
import { approvalsForMe, approvalView } from './approvalView';
import type {
  ApprovalCallContext,
  ApprovalCommandContext,
  ApprovalGrant,
  ApprovalListQuery,
  ApprovalRef,
  ApprovalsService,
  DecideApprovalCommand,
} from './ApprovalsService';
import { decideApproval } from './commands/decideApproval';

/** The grants of the call; none is a refusal (fail closed). */
function grantsOf(call: ApprovalCallContext | undefined): ApprovalGrant[] {
  if (!call?.grants) {
    throw new NotAllowedError('no permission decision was made for this call');
  }
  return call.grants;
}

/** The one cluster's grant of a call on one request. */
function grantOf(
  call: ApprovalCallContext | undefined,
  cluster: string,
): ApprovalGrant {
  const grant = grantsOf(call).find(g => g.cluster.name === cluster);
  if (!grant) {
    throw new NotAllowedError('no cluster was granted for this call');
  }
  return grant;
}

export class DefaultApprovalsService implements ApprovalsService {
  constructor(private readonly ctx: ApprovalCommandContext) {}

  async listForMe(
    credentials: UserCredentials,
    _query: ApprovalListQuery,
    call?: ApprovalCallContext,
  ): Promise<ApprovalListResponse> {
    return approvalsForMe(this.ctx, credentials, grantsOf(call));
  }

  async getApproval(
    credentials: UserCredentials,
    ref: ApprovalRef,
    call?: ApprovalCallContext,
  ): Promise<ApprovalView> {
    return approvalView(
      this.ctx,
      credentials,
      ref,
      grantOf(call, ref.cluster),
      call?.learnt ?? {},
    );
  }

  async decide(
    credentials: UserCredentials,
    command: DecideApprovalCommand,
    call?: ApprovalCallContext,
  ): Promise<ApprovalDecidedResponse> {
    return decideApproval(
      this.ctx,
      credentials,
      command,
      grantOf(call, command.cluster),
      call?.learnt ?? {},
    );
  }
}
