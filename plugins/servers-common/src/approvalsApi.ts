/*
 * The approval routes of `/api/servers` (docs/approvals.md): what the backend answers
 * about a request held for a second person's approval, and the body of a decision. The
 * portal renders these; the backend answers them (its `approvals/` feature).
 */
import { z } from 'zod';
import { missingOr } from './requestBodies';
import type { PreflightResponse } from './api';
import type { PlanPreflightResponse } from './plansApi';
import type {
  NodeMaintenancePreflight,
  PreflightCeremonyLevel,
} from './resources/nodeMaintenance';
import type { PlanAcknowledgement } from './resources/maintenancePlan';
import type { ApprovalState } from './rules/approvalPolicy';
import type { CeremonyLevel } from './rules/types';

/** The kinds of request an approval holds: a NodeMaintenance or a MaintenancePlan. */
export const APPROVAL_REQUEST_KINDS = ['maintenance', 'plan'] as const;
/** A kind of request an approval holds. */
export type ApprovalRequestKind = (typeof APPROVAL_REQUEST_KINDS)[number];

/** What an approver decides. */
export const APPROVAL_DECISIONS = ['approve', 'reject'] as const;
/** An approver's decision. */
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

/** The longest reason an approver may give (the CRD's reason bound). */
export const APPROVAL_REASON_MAX = 1024;

/** The body of `POST /clusters/:cluster/{maintenances,plans}/:name/approval`. */
export const approvalDecisionBodySchema = z.strictObject(
  {
    decision: z
      .enum(APPROVAL_DECISIONS, {
        error: 'decision must be approve or reject',
      })
      .describe('approve or reject'),
    reason: z
      .string({
        error: missingOr('reason is required', 'reason must be a string'),
      })
      .trim()
      .min(1, { error: 'reason is required' })
      .max(APPROVAL_REASON_MAX, {
        error: `reason must be at most ${APPROVAL_REASON_MAX} characters`,
      })
      .describe('Why, in the approver’s words (recorded on the request)'),
    preflightToken: z
      .string({ error: 'preflightToken must be a string' })
      .max(4096)
      .optional()
      .describe(
        'The token of the fresh pre-flight of the approval view (issued to the approver); approve needs it when the request has a pre-flight',
      ),
    typedName: z
      .string({ error: 'typedName must be a string' })
      .max(253)
      .optional()
      .describe(
        'At the hazard rung: the node name (a maintenance) typed out as confirmation',
      ),
    typedNames: z
      .array(z.string({ error: 'typedNames must be strings' }).max(253), {
        error: 'typedNames must be an array of node names',
      })
      .max(500)
      .optional()
      .describe('At the hazard rung of a plan: each hazard step’s node name'),
  },
  {
    error: issue =>
      issue.code === 'unrecognized_keys'
        ? `unknown field(s): ${(issue as { keys?: string[] }).keys?.join(', ')}`
        : 'the body must be a JSON object',
  },
);

/** A decision as sent. */
export type ApprovalDecisionBody = z.input<typeof approvalDecisionBodySchema>;

/** One request awaiting an approval the caller may give (`GET /approvals?for=me`). */
export interface ApprovalItem {
  cluster: string;
  kind: ApprovalRequestKind;
  /** The NodeMaintenance's or the MaintenancePlan's name. */
  name: string;
  /** What it does: cordon, drain, reboot or shutdown. */
  intent: string;
  /** Its nodes (a maintenance: one). */
  nodes: string[];
  requestedBy?: string;
  reason: string;
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

/** A decision on record. */
export interface ApprovalDecisionRecord {
  decision: ApprovalDecision;
  by: string;
  at?: string;
  /** The rejection's reason. */
  reason?: string;
}

/**
 * `GET /clusters/:cluster/{maintenances,plans}/:name/approval`: the impact the requester
 * acknowledged beside the impact now (a fresh pre-flight, its token issued to the caller),
 * and whether the caller may approve.
 */
export interface ApprovalView {
  cluster: string;
  kind: ApprovalRequestKind;
  name: string;
  state: ApprovalState;
  rule: string;
  approvers: string[];
  expiresAt: string;
  requestedBy?: string;
  requestedRung: PreflightCeremonyLevel;
  /**
   * What the requester acknowledged: a maintenance's pre-flight snapshot, or a plan's
   * latest acknowledgement (absent for a cordon, which has no pre-flight).
   */
  acknowledged?: NodeMaintenancePreflight | PlanAcknowledgement;
  /**
   * The pre-flight now, with its token issued to the caller: the server pre-flight of a
   * maintenance, the plan pre-flight of a plan's steps not yet started. Absent for a
   * cordon, and once the approval is decided or expired.
   */
  now?: PreflightResponse | PlanPreflightResponse;
  /** The rung the request is at now (`refused` when it could not go ahead now). */
  rungNow: CeremonyLevel;
  mayApprove: boolean;
  /** Why the caller may not approve, when they may not. */
  whyNot?: string;
  /** The decision, once made. */
  decision?: ApprovalDecisionRecord;
}

/** The answer of a decision (200). */
export interface ApprovalDecidedResponse {
  state: ApprovalState;
}

/** The 409 of an approval refused because the request's rung grew: ask again. */
export interface ApprovalRungGrewResponse {
  error: { name: string; message: string };
  requestedRung: PreflightCeremonyLevel;
  rungNow: CeremonyLevel;
}
