/*
 * The `advance` rule that holds a plan for a second person (table.ts, ADVANCE_RULES;
 * docs/approvals.md). A plan that a rule of `servers.approvals.rules` selected carries
 * `spec.approval`: no step starts until it is approved (AwaitingApproval), and a renewal
 * that raised a rung replaces it with a new, undecided one, which holds the plan again:
 * nothing new starts, running steps go on. Rejected or expired, the plan stops and ends
 * Failed once no step is open. What the approval says is read from the plan on every pass
 * (servers-common `approvalState`), so a restart holds it just the same.
 */
import { approvalState, cutList } from '@rackside/plugin-servers-common';
import { PlanReason } from '../runtime/lifecycle/reasons';
import { openText, phased, settle, stop } from './advanceHelpers';
import { type AdvanceRule, untilThen } from './types';

/** The approvers a message names before "and N more". */
const APPROVERS_NAMED = 5;

/**
 * A timer may fire a little before the instant it was set for; the wait for the expiry
 * asks to be woken this long after it, so the pass it wakes finds the approval expired.
 */
const EXPIRY_SLACK_MS = 1000;

export const approvalRule: AdvanceRule = a => {
  const approval = a.plan.spec.approval;
  const state = approvalState(approval, new Date(a.now));
  if (state === 'none' || !approval) return undefined;
  const approvers = cutList(approval.approvers, APPROVERS_NAMED);
  switch (state) {
    case 'rejected':
      return stop(
        a,
        'ApprovalRejected',
        `approval rejected by ${approval.rejectedBy}: ${approval.rejectReason}`,
      );
    case 'expired':
      return stop(
        a,
        'ApprovalExpired',
        `approval expired at ${approval.expiresAt} before ${approvers} approved it (rule ${approval.rule})`,
      );
    case 'approved': {
      // Said once, when the hold ends; then the other rules decide as without approval.
      if (a.plan.status?.phase !== 'AwaitingApproval') return undefined;
      const message = `approved by ${approval.approvedBy} at the ${
        approval.approvedRung ?? approval.requestedRung
      } rung`;
      return settle(
        a,
        phased(a.status, a.open.length ? 'Running' : 'Pending', message),
        undefined,
        { type: 'Normal', reason: PlanReason.Approved, message },
      );
    }
    case 'awaiting':
    default: {
      const message = `awaiting approval from ${approvers} (rule ${approval.rule}) until ${approval.expiresAt}`;
      return settle(
        a,
        phased(
          a.status,
          'AwaitingApproval',
          a.open.length
            ? `${message}; nothing new starts, running: ${openText(a.open)}`
            : `${message}; no step starts before`,
        ),
        untilThen(Date.parse(approval.expiresAt), a.now) + EXPIRY_SLACK_MS,
        a.plan.status?.phase === 'AwaitingApproval'
          ? undefined
          : { type: 'Normal', reason: PlanReason.AwaitingApproval, message },
      );
    }
  }
};
