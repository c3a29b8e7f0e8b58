/*
 * A request created held (docs/approvals.md): the servers feature's action request and
 * the plans feature's creation and renewal ask here whether a rule of
 * `servers.approvals.rules` selects the request (servers-common's approvalRuleFor, with
 * the rung the requester acknowledged and the request's nodes), and write what this
 * answers into `spec.approval` of the object they create, in the same create. Without
 * rules, or when no rule selects it, nothing changes.
 */
import {
  approvalRuleFor,
  nodeFactsFromNode,
  PREFLIGHT_CEREMONY_LEVELS,
  type Approval,
  type ApprovalRule,
  type ApprovalSubject,
  type HeldApprovalResponse,
  type PreflightCeremonyLevel,
} from '@rackside/plugin-servers-common';
import type { NodeObject } from '@rackside/plugin-servers-node';
import type { ClusterSnapshot } from '../cluster/types';
import type { ApprovalNotifier } from './notices';

/** The approval settings every feature that creates a request is handed (plugin.ts). */
export interface ApprovalPolicy {
  /** `servers.approvals.rules`, in order. */
  rules: readonly ApprovalRule[];
  /** Tells the approvers and the requester; the feature calls it after its write. */
  notifier: ApprovalNotifier;
  /** The clock (tests); now if unset. */
  now?: () => Date;
}

/** No rules: nothing is held (and nobody told). */
export const NO_APPROVALS: ApprovalPolicy = {
  rules: [],
  notifier: { held: async () => {}, decided: async () => {} },
};

/** A node of a request as a rule selects it: its name, labels and role. */
export function approvalNodeOf(
  node: NodeObject,
): ApprovalSubject['nodes'][number] {
  const facts = nodeFactsFromNode(node);
  return {
    name: facts.name,
    labels: { ...(node.metadata?.labels ?? {}) },
    role: facts.controlPlane ? 'control-plane' : 'worker',
  };
}

/** The nodes of `names` the snapshot has, as a rule selects them. */
export function approvalNodesOf(
  snap: Pick<ClusterSnapshot, 'nodes'>,
  names: readonly string[],
): ApprovalSubject['nodes'] {
  const byName = new Map(snap.nodes.map(n => [n.metadata?.name ?? '', n]));
  return names.flatMap(name => {
    const node = byName.get(name);
    return node ? [approvalNodeOf(node)] : [];
  });
}

/** The higher of rungs (`reason` for none). */
export function highestRung(
  rungs: Iterable<PreflightCeremonyLevel>,
): PreflightCeremonyLevel {
  let highest = 0;
  for (const rung of rungs) {
    highest = Math.max(highest, PREFLIGHT_CEREMONY_LEVELS.indexOf(rung));
  }
  return PREFLIGHT_CEREMONY_LEVELS[highest];
}

/**
 * The `spec.approval` of a request a rule selects, undecided, expiring
 * `expiresAfterMinutes` from now; undefined when no rule selects it.
 */
export function heldApprovalFor(
  policy: Pick<ApprovalPolicy, 'rules' | 'now'>,
  subject: ApprovalSubject,
): Approval | undefined {
  const rule = approvalRuleFor(policy.rules, subject);
  if (!rule) return undefined;
  const now = policy.now?.() ?? new Date();
  return {
    required: true,
    rule: rule.name,
    approvers: [...rule.approvers],
    expiresAt: new Date(
      now.getTime() + rule.expiresAfterMinutes * 60_000,
    ).toISOString(),
    requestedRung: subject.rung,
  };
}

/** What a creation's answer says of the approval that holds it. */
export function heldApprovalResponse(
  approval: Approval | undefined,
): HeldApprovalResponse | undefined {
  if (!approval?.required) return undefined;
  return {
    rule: approval.rule,
    approvers: [...approval.approvers],
    expiresAt: approval.expiresAt,
  };
}
