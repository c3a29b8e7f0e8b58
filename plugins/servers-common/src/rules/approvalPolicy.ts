/*
 * The two-person rule (docs/approvals.md): which requests need a second person, where a
 * request's approval stands, who may give it, and when an approval no longer covers the
 * impact. The backend applies all four when it holds a request and when it takes a
 * decision; the operator reads the state and the rung again before it acts; the portal
 * renders what the backend will answer.
 */
import type { Approval } from '../resources/approval';
import {
  PREFLIGHT_CEREMONY_LEVELS,
  type PreflightCeremonyLevel,
} from '../resources/preflight';

/** How long a held request waits for its approval when the rule does not say. */
export const DEFAULT_APPROVAL_EXPIRES_AFTER_MINUTES = 240;

/** A node's role as a rule selects it. */
export type ApprovalNodeRole = 'control-plane' | 'worker';

/** Which requests a rule selects: every key given must match (AND); none given matches all. */
export type ApprovalRuleSelector = {
  /** 'cordon' | 'drain' | 'reboot' | 'shutdown' | 'power-on' | 'plan'. */
  actions?: string[];
  /** Maintenance or plan intents (cordon, drain, reboot, shutdown). */
  intents?: string[];
  /** The request's rung is this one or higher. */
  rungAtLeast?: PreflightCeremonyLevel;
  /** One node of the request carries every pair. */
  nodeLabels?: Record<string, string>;
  /** One node of the request has one of these roles. */
  roles?: ApprovalNodeRole[];
  /** A plan of at least this many nodes (a single request never matches). */
  planSizeAtLeast?: number;
};

/** One entry of `servers.approvals.rules`. */
export type ApprovalRule = {
  /** Unique, [a-z0-9-], shown to users. */
  name: string;
  select: ApprovalRuleSelector;
  /** Catalog refs: 'user:default/alice', 'group:default/platform-oncall'. */
  approvers: string[];
  expiresAfterMinutes: number;
};

/** What a rule is matched against: the request as it is about to be created. */
export type ApprovalSubject = {
  action: string;
  intent?: string;
  /** The highest rung the requester acknowledged (a plan: of any of its steps). */
  rung: PreflightCeremonyLevel;
  nodes: {
    name: string;
    labels: Record<string, string>;
    role: ApprovalNodeRole;
  }[];
  planSize?: number;
};

const rankOf = (rung: PreflightCeremonyLevel | 'refused'): number =>
  rung === 'refused'
    ? PREFLIGHT_CEREMONY_LEVELS.length
    : PREFLIGHT_CEREMONY_LEVELS.indexOf(rung);

function selects(select: ApprovalRuleSelector, subject: ApprovalSubject) {
  if (select.actions && !select.actions.includes(subject.action)) return false;
  if (
    select.intents &&
    (subject.intent === undefined || !select.intents.includes(subject.intent))
  ) {
    return false;
  }
  if (
    select.rungAtLeast !== undefined &&
    rankOf(subject.rung) < rankOf(select.rungAtLeast)
  ) {
    return false;
  }
  const labels = select.nodeLabels;
  if (
    labels &&
    !subject.nodes.some(node =>
      Object.entries(labels).every(
        ([key, value]) =>
          Object.prototype.hasOwnProperty.call(node.labels, key) &&
          node.labels[key] === value,
      ),
    )
  ) {
    return false;
  }
  const roles = select.roles;
  if (roles && !subject.nodes.some(node => roles.includes(node.role))) {
    return false;
  }
  if (
    select.planSizeAtLeast !== undefined &&
    (subject.planSize === undefined ||
      subject.planSize < select.planSizeAtLeast)
  ) {
    return false;
  }
  return true;
}

/** The first rule (config order) that selects the request, or undefined. */
export function approvalRuleFor(
  rules: readonly ApprovalRule[],
  subject: ApprovalSubject,
): ApprovalRule | undefined {
  return rules.find(rule => selects(rule.select, subject));
}

/** Where a request's approval stands. */
export type ApprovalState =
  | 'none'
  | 'awaiting'
  | 'approved'
  | 'rejected'
  | 'expired';

/**
 * What a request's spec.approval says at `now`. A rejection wins over anything else; an
 * approval given before expiresAt stands after it; an undecided one is expired from
 * expiresAt on (an unreadable expiresAt counts as expired: nothing runs on it).
 */
export function approvalState(
  approval: Approval | undefined,
  now: Date,
): ApprovalState {
  if (!approval?.required) return 'none';
  if (approval.rejectedBy !== undefined) return 'rejected';
  if (approval.approvedBy !== undefined) return 'approved';
  const expiresAt = Date.parse(approval.expiresAt);
  if (Number.isNaN(expiresAt) || now.getTime() >= expiresAt) return 'expired';
  return 'awaiting';
}

/** Catalog refs compare without case, as the catalog compares them. */
const sameRef = (a: string, b: string) =>
  a.toLocaleLowerCase('en-US') === b.toLocaleLowerCase('en-US');

/** Who is asking to approve, as the backend's credentials say. */
export type ApproverPrincipalType = 'user' | 'service' | 'agent' | 'none';

/**
 * Who may approve: the reason they may not, or undefined when allowed. Never the requester,
 * never a non-user principal (an MCP agent, a service token); the approver must be named
 * in `approvers` directly or through one of `ownershipRefs` (the user's catalog ownership
 * entity refs, i.e. their groups). The state of the approval (decided, expired) is
 * {@link approvalState}'s, not this.
 */
export function approverRefusal(args: {
  approval: Approval;
  requestedBy: string | undefined;
  approverRef: string | undefined;
  ownershipRefs: readonly string[];
  principalType: ApproverPrincipalType;
}): string | undefined {
  const { approval, requestedBy, approverRef, ownershipRefs, principalType } =
    args;
  if (principalType === 'agent') {
    return 'an MCP agent cannot approve: only a person signed in as a user can';
  }
  if (principalType !== 'user' || !approverRef) {
    return 'only a person signed in as a user can approve';
  }
  if (requestedBy !== undefined && sameRef(requestedBy, approverRef)) {
    return 'the requester cannot approve their own request';
  }
  const named = [approverRef, ...ownershipRefs].some(ref =>
    approval.approvers.some(approver => sameRef(approver, ref)),
  );
  if (!named) {
    return `${approverRef} is not among the approvers of rule ${
      approval.rule
    } (${approval.approvers.join(', ')})`;
  }
  return undefined;
}

/** Whether the rung now is above the one the approval covers (refused now: it is). */
export function rungGrewPast(
  acknowledged: PreflightCeremonyLevel,
  now: PreflightCeremonyLevel | 'refused',
): boolean {
  return rankOf(now) > rankOf(acknowledged);
}
