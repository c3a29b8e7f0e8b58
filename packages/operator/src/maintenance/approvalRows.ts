/*
 * The approval rows of the NodeMaintenance table (table.ts; docs/approvals.md). A request
 * that a rule of `servers.approvals.rules` selected carries `spec.approval`, and is held
 * in AwaitingApproval, touching nothing of its node (no cordon, no Event on the Node, no
 * silence), until a second person approves it; a rejection or the expiry ends it Refused.
 * What the approval says is read from the object on every pass (servers-common
 * `approvalState`), so an operator restarted while a request awaits keeps holding it.
 *
 * An approval covers the rung its approver saw (`approvedRung`): admission (admitRow.ts)
 * and the check right before a power verb is recorded (powerRows.ts) refuse a request
 * whose rung now grew past it (servers-common `rungGrewPast`), as they refuse one above
 * the rung its requester acknowledged.
 */
import {
  type Approval,
  approvalState,
  type ApprovalState,
  type CeremonyLevel,
  cutList,
  type NodeMaintenance,
  rungGrewPast,
} from '@rackside/plugin-servers-common';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import { isoOf } from '../runtime/lifecycle/table';
import { refuse } from './guardCheck';
import type { Decision, MachinePorts, Row } from './types';

/** The approvers a message names before "and N more". */
const APPROVERS_NAMED = 5;

/**
 * A timer may fire a little before the instant it was set for; the wait for the expiry
 * asks to be woken this long after it, so the pass it wakes finds the approval expired.
 */
const EXPIRY_SLACK_MS = 1000;

/**
 * The longest wait for an expiry: a far one is looked at again hourly (from the cache,
 * no apiserver request), and a timer never overflows (setTimeout holds 24.8 days).
 */
const LONGEST_WAIT_MS = 60 * 60_000;

/** What the request's approval says at the ports' clock. */
export function approvalStateOf(
  nm: NodeMaintenance,
  ports: MachinePorts,
): ApprovalState {
  return approvalState(nm.spec.approval, new Date(ports.now()));
}

/** "awaiting approval from group:default/oncall (rule big-reboots) until <time>". */
export function awaitingText(approval: Approval): string {
  return `awaiting approval from ${cutList(
    approval.approvers,
    APPROVERS_NAMED,
  )} (rule ${approval.rule}) until ${approval.expiresAt}`;
}

/** "Approved by user:default/bob at the typed-name rung". */
export function approvedText(approval: Approval): string {
  return `Approved by ${approval.approvedBy} at the ${
    approval.approvedRung ?? approval.requestedRung
  } rung`;
}

/** The Refused decision of a request whose approval ended it: rejected, or expired. */
function endedByApproval(
  nm: NodeMaintenance,
  state: 'rejected' | 'expired',
): Decision {
  const approval = nm.spec.approval!;
  const what = `${nm.spec.intent} of ${nm.spec.nodeName} refused`;
  const untouched = `nothing was done to ${nm.spec.nodeName}`;
  const reason =
    state === 'rejected'
      ? `${what}: rejected by ${approval.rejectedBy}: ${approval.rejectReason} (${untouched})`
      : `${what}: approval expired at ${approval.expiresAt} before ${cutList(
          approval.approvers,
          APPROVERS_NAMED,
        )} approved it (rule ${approval.rule}); ${untouched}`;
  const cut = reason.slice(0, 4096);
  return refuse(cut, 'approval', { reason: cut });
}

/**
 * At (new), before admission: a request awaiting approval is held, one whose approval
 * was rejected or expired before the operator saw it is Refused. Undefined: admission
 * goes on (no approval required, or approved already: admitRow.ts names the approver).
 */
export function holdForApproval(
  nm: NodeMaintenance,
  ports: MachinePorts,
): Decision | undefined {
  const state = approvalStateOf(nm, ports);
  if (state === 'none' || state === 'approved') return undefined;
  if (state === 'awaiting') {
    return {
      kind: 'transition',
      to: 'AwaitingApproval',
      message: `${nm.spec.intent} of ${
        nm.spec.nodeName
      } held, nothing done to the node: ${awaitingText(nm.spec.approval!)}`,
    };
  }
  return endedByApproval(nm, state);
}

/**
 * Abandon or return to service while awaiting approval: the node was never touched, so
 * the request ends Complete at once, nothing restored and nothing sent.
 */
export const withdrawnWhileAwaiting: Row = async (nm, ports) => {
  const at = isoOf(ports);
  const untouched = `nothing was done to ${nm.spec.nodeName}`;
  if (nm.spec.abandon) {
    return {
      kind: 'transition',
      to: 'Complete',
      message: `Abandoned by ${nm.spec.abandon.by} while awaiting approval: ${nm.spec.abandon.reason}; ${untouched}`,
      status: { abandoned: true, returnedAt: at, completedAt: at },
      event: { type: 'Normal', reason: MaintenanceReason.Abandoned },
    };
  }
  const back = nm.spec.returnToService!;
  return {
    kind: 'transition',
    to: 'Complete',
    message: `Return to service requested by ${back.by} while awaiting approval: ${back.reason}; ${untouched}`,
    status: { returnedAt: at, completedAt: at },
  };
};

/**
 * AwaitingApproval: waits (woken by the approval's write, or at its expiry); approved,
 * the request goes through the whole admission from the cluster as it is now (`admit`,
 * the row of (new)); rejected or expired, it is Refused. Nothing touches the node here.
 */
export function awaitingApproval(admit: Row): Row {
  return async (nm, ports) => {
    if (nm.spec.returnToService) return withdrawnWhileAwaiting(nm, ports);
    const state = approvalStateOf(nm, ports);
    switch (state) {
      case 'approved':
        return admit(nm, ports);
      case 'rejected':
      case 'expired':
        return endedByApproval(nm, state);
      case 'awaiting': {
        const expiresAt = Date.parse(nm.spec.approval!.expiresAt);
        return {
          kind: 'wait',
          message: awaitingText(nm.spec.approval!),
          requeueAfterMs:
            Math.min(LONGEST_WAIT_MS, Math.max(0, expiresAt - ports.now())) +
            EXPIRY_SLACK_MS,
        };
      }
      case 'none':
      default: {
        // The schema keeps an approval from creation to the end; one that is gone (no
        // admission policy, no CRD rules) is not taken as approval.
        const reason = `${nm.spec.intent} of ${nm.spec.nodeName} refused: it was held for approval and its spec.approval is gone; nothing was done to ${nm.spec.nodeName}. Create it again.`;
        return refuse(reason, 'approval', { reason });
      }
    }
  };
}

/**
 * Why a request held for approval may not go on at `rungNow` (the ceremony rung of the
 * guard's verdict now), or undefined when it may: it carries no approval, or its approver
 * approved that rung. Asked at admission and right before a power verb is recorded.
 */
export function whyAboveApproved(
  nm: NodeMaintenance,
  ports: MachinePorts,
  rungNow: CeremonyLevel,
): string | undefined {
  const approval = nm.spec.approval;
  const state = approvalStateOf(nm, ports);
  if (state === 'none') return undefined;
  if (state !== 'approved') {
    return `its approval is ${state}: nothing runs that was not approved`;
  }
  const approved = approval!.approvedRung ?? approval!.requestedRung;
  if (rungGrewPast(approved, rungNow)) {
    return `the rung now is ${rungNow}, above the ${approved} rung ${
      approval!.approvedBy
    } approved; ask for approval again`;
  }
  return undefined;
}
