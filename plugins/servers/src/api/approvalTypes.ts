import type {
  CeremonyLevel,
  PlanPreflightResponse,
  PreflightCeremonyLevel,
  PreflightResponse,
} from '@rackside/plugin-servers-common';

/*
 * The approvals routes' shapes as the portal reads them (docs/approvals.md). The
 * backend's own types are servers-common's approvalsApi.ts; these say only what the
 * portal reads, so a field the portal does not show never breaks it.
 */

/** What an approval is asked of: a maintenance of one server, or a maintenance plan. */
export type ApprovalSubjectKind = 'maintenance' | 'plan';

/** What a request's `spec.approval` says now. */
export type ApprovalStateName =
  | 'none'
  | 'awaiting'
  | 'approved'
  | 'rejected'
  | 'expired';

/** The pre-flight snapshot a requester acknowledged (a NodeMaintenance's `spec.preflight`). */
export interface AcknowledgedSnapshot {
  takenAt: string;
  ceremony: PreflightCeremonyLevel;
  pods?: { namespace: string; name: string }[];
  blockingPDBs?: { namespace: string; name: string }[];
  quorum?: { members: number; quorum: number; ready: number; margin: number };
}

/** The acknowledgement of a plan: the rung of each node's step. */
export interface AcknowledgedPlan {
  /** When the pre-flight the requester acknowledged was taken. */
  takenAt?: string;
  rungs: Record<string, PreflightCeremonyLevel>;
}

/** One request awaiting the caller's approval (`GET /approvals?for=me`). */
export interface ApprovalItem {
  kind: ApprovalSubjectKind;
  cluster: string;
  name: string;
  /** The action (cordon, drain, reboot, shutdown) or the plan's intent. */
  action: string;
  nodes: string[];
  reason?: string;
  requestedBy?: string;
  createdAt?: string;
  rule: string;
  approvers: string[];
  expiresAt: string;
  requestedRung: PreflightCeremonyLevel;
}

/** `GET /approvals?for=me`. */
export interface ApprovalListResponse {
  items: ApprovalItem[];
}

/**
 * `GET /clusters/:cluster/{maintenances,plans}/:name/approval`: the approval, the impact
 * the requester acknowledged, a fresh pre-flight (its token binds an approval), and
 * whether the caller may approve.
 */
export interface ApprovalView {
  state: ApprovalStateName;
  rule: string;
  approvers: string[];
  expiresAt: string;
  requestedBy?: string;
  requestedRung: PreflightCeremonyLevel;
  acknowledged?: AcknowledgedSnapshot | AcknowledgedPlan;
  /** The pre-flight now (a server's, or a plan's); absent once decided. */
  now?: PreflightResponse | PlanPreflightResponse;
  rungNow?: CeremonyLevel;
  mayApprove: boolean;
  whyNot?: string;
  approvedBy?: string;
  approvedAt?: string;
  rejectedBy?: string;
  rejectedAt?: string;
  rejectReason?: string;
}

/** The body of `POST /clusters/:cluster/{maintenances,plans}/:name/approval`. */
export interface ApprovalDecisionBody {
  decision: 'approve' | 'reject';
  reason: string;
  /** The fresh pre-flight's token (approve). */
  preflightToken?: string;
  /** The node's name typed out, at the hazard rung (approve). */
  typedName?: string;
}

/** The answer of a decision. */
export interface ApprovalDecisionResponse {
  state: ApprovalStateName;
}
