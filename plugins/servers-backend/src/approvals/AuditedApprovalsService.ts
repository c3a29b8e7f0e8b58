/*
 * Every call of the approvals feature is an auditor event, opened before the permission
 * checks so a denied call or an unknown cluster fails its event instead of leaving none:
 * the list and a view as `server-read` (low; a view records the state it saw, so an
 * expiry seen is on record), a decision as `server-approval` (high) with the request, the
 * decision and the reason, ending `approved` or `rejected`, or failing with the refusal's
 * outcome (`denied`, `conflict`, `expired`, `rung-grew`, ...). A decision the edge refused
 * (no user, a body that does not parse) is recorded as the same event (auditRefused).
 */
import type { AuditorService } from '@backstage/backend-plugin-api';
import type {
  ApprovalDecidedResponse,
  ApprovalListResponse,
  ApprovalView,
} from '@rackside/plugin-servers-common';
import {
  audited,
  auditRefused,
  type AuditedOptions,
  type Refusal,
} from '../lib/audited';
import { APPROVAL_SEVERITY, READ_SEVERITY } from '../lib/auditSeverity';
import type { UserCredentials } from '../lib/credentials';
import type {
  ApprovalCallContext,
  ApprovalListQuery,
  ApprovalRef,
  ApprovalsEdgeService,
  ApprovalsService,
  ApprovalTarget,
  DecideApprovalCommand,
} from './ApprovalsService';

/** A string field of the body as sent, bounded, or null when it is not one. */
function sentString(sent: unknown, field: string, max = 1024) {
  const value = (sent as Record<string, unknown> | null | undefined)?.[field];
  return typeof value === 'string' ? value.slice(0, max) : null;
}

export class AuditedApprovalsService implements ApprovalsEdgeService {
  constructor(
    private readonly inner: ApprovalsService,
    private readonly auditor: AuditorService,
  ) {}

  /** The event of a decision: what its target says, before any check. */
  private decisionAudit(
    target: ApprovalTarget,
    actor: string | null,
    request: ApprovalCallContext['request'],
  ): AuditedOptions {
    return {
      auditor: this.auditor,
      eventId: 'server-approval',
      severityLevel: APPROVAL_SEVERITY,
      request,
      meta: {
        actor,
        cluster: target.cluster,
        kind: target.kind,
        name: target.name,
        decision: sentString(target.body, 'decision', 16),
        reason: sentString(target.body, 'reason'),
      },
    };
  }

  private read<T>(
    credentials: UserCredentials,
    call: ApprovalCallContext | undefined,
    target: Record<string, string>,
    run: (call: ApprovalCallContext) => Promise<T>,
  ): Promise<T> {
    return audited(
      {
        auditor: this.auditor,
        eventId: 'server-read',
        severityLevel: READ_SEVERITY,
        request: call?.request,
        meta: {
          actor: credentials.principal.userEntityRef,
          ...target,
          via: call?.via ?? 'http',
        },
      },
      record => run({ ...call, learnt: record.extra }),
    );
  }

  listForMe(
    credentials: UserCredentials,
    query: ApprovalListQuery,
    call?: ApprovalCallContext,
  ): Promise<ApprovalListResponse> {
    return this.read(credentials, call, { read: 'approvals' }, recorded =>
      this.inner.listForMe(credentials, query, recorded),
    );
  }

  getApproval(
    credentials: UserCredentials,
    ref: ApprovalRef,
    call?: ApprovalCallContext,
  ): Promise<ApprovalView> {
    return this.read(
      credentials,
      call,
      {
        read: 'approval',
        cluster: ref.cluster,
        kind: ref.kind,
        name: ref.name,
      },
      recorded => this.inner.getApproval(credentials, ref, recorded),
    );
  }

  decide(
    credentials: UserCredentials,
    command: DecideApprovalCommand,
    call?: ApprovalCallContext,
  ): Promise<ApprovalDecidedResponse> {
    const audit = this.decisionAudit(
      { ...command, body: command.body },
      credentials.principal.userEntityRef,
      call?.request,
    );
    return audited(audit, async record => {
      const result = await this.inner.decide(credentials, command, {
        ...call,
        learnt: record.extra,
      });
      record.outcome = result.state;
      return result;
    });
  }

  /**
   * Records a decision the edge refused before this service saw it: no user (actor
   * null, outcome `unauthenticated`), or a body that does not parse.
   */
  auditRefused(
    target: ApprovalTarget,
    error: Error,
    refusal: Refusal,
  ): Promise<void> {
    return auditRefused(
      this.decisionAudit(target, refusal.actor, refusal.request),
      error,
    );
  }
}
