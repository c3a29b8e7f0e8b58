/*
 * `spec.approval`: the second person's say on a request (docs/approvals.md). The Backstage
 * backend writes it whole at creation when a rule of `servers.approvals.rules` selects the
 * request (held: `required`, who may approve, until when, at which rung the requester
 * acknowledged the impact), then once more with the decision. The chart's admission policy
 * lets no one else write it; the CEL rules here keep what was asked fixed and a decision
 * final, whoever writes.
 */
import { z } from 'zod';
import { reasonSchema, timestampSchema } from './common';
import {
  kube,
  uniqueList,
  withRules,
  type CelRule,
  type CheckedCelRule,
} from './kube';
import { PREFLIGHT_CEREMONY_LEVELS, preflightSchema } from './preflight';

/** The most approvers one rule (and so one request) names. */
export const MAX_APPROVERS = 50;

/** A rule's name: shown to users, unique in config. */
export const approvalRuleNameSchema = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);

/** A catalog entity ref of a user or a group, in full: `user:default/alice`, `group:default/oncall`. */
export const approverRefSchema = z
  .string()
  .min(1)
  .max(255)
  .regex(
    /^(user|group):[a-zA-Z0-9][-a-zA-Z0-9._]*\/[a-zA-Z0-9][-a-zA-Z0-9._]*$/,
  );

/** A catalog entity ref of a user, in full: who decided (only a person decides). */
export const deciderRefSchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^user:[a-zA-Z0-9][-a-zA-Z0-9._]*\/[a-zA-Z0-9][-a-zA-Z0-9._]*$/);

const rungSchema = z.enum(PREFLIGHT_CEREMONY_LEVELS);

/** CEL: the rank of a rung on the ladder, as a map literal indexed by the rung. */
function celRank(rung: string): string {
  const entries = PREFLIGHT_CEREMONY_LEVELS.map(
    (level, index) => `'${level}': ${index}`,
  ).join(', ');
  return `{${entries}}[${rung}]`;
}

const rankOf = (rung: (typeof PREFLIGHT_CEREMONY_LEVELS)[number]) =>
  PREFLIGHT_CEREMONY_LEVELS.indexOf(rung);

/** The fields the backend writes when it holds a request; what was asked, never changed. */
export const APPROVAL_REQUEST_FIELDS = [
  'required',
  'rule',
  'approvers',
  'expiresAt',
  'requestedRung',
] as const;

/** The fields of a decision, each written once. */
export const APPROVAL_DECISION_FIELDS = [
  'approvedBy',
  'approvedAt',
  'approvedRung',
  'approverPreflight',
  'rejectedBy',
  'rejectedAt',
  'rejectReason',
] as const;

/** `spec.approval` of a NodeMaintenance or a MaintenancePlan (written only by the Backstage backend). */
export const approvalSchema = withRules(
  z.object({
    required: z
      .boolean()
      .describe(
        'The request is held until approvedBy is set; the operator touches nothing before.',
      ),
    rule: approvalRuleNameSchema.describe(
      'The name of the servers.approvals.rules entry that selected the request.',
    ),
    approvers: uniqueList(
      z.array(approverRefSchema).min(1).max(MAX_APPROVERS),
    ).describe(
      'Who may approve: catalog refs of users, or of groups whose members may.',
    ),
    expiresAt: timestampSchema.describe(
      'Not approved by then: the request ends (Refused, or a plan Failed), nothing sent.',
    ),
    requestedRung: rungSchema.describe(
      'The ceremony rung the requester acknowledged; an approval at a higher rung now is refused (ask again).',
    ),
    approvedBy: deciderRefSchema
      .optional()
      .describe('Who approved (set once).'),
    approvedAt: timestampSchema.optional().describe('When it was approved.'),
    approvedRung: rungSchema
      .optional()
      .describe(
        "The rung of the approver's fresh pre-flight, never above requestedRung; the check at send compares the rung then with it.",
      ),
    approverPreflight: preflightSchema
      .optional()
      .describe('The pre-flight snapshot the approver saw and acknowledged.'),
    rejectedBy: deciderRefSchema
      .optional()
      .describe('Who rejected (set once); the request ends.'),
    rejectedAt: timestampSchema.optional().describe('When it was rejected.'),
    rejectReason: reasonSchema
      .optional()
      .describe("Why, in the rejecter's words."),
  }),
  [
    {
      rule: '!has(self.approvedBy) || !has(self.rejectedBy)',
      message: 'an approval is approved or rejected, never both',
      check: a => a.approvedBy === undefined || a.rejectedBy === undefined,
    },
    {
      rule: 'self.required || (!has(self.approvedBy) && !has(self.rejectedBy))',
      message: 'only a required approval is decided',
      check: a =>
        a.required ||
        (a.approvedBy === undefined && a.rejectedBy === undefined),
    },
    {
      rule: 'has(self.approvedBy) == has(self.approvedAt) && has(self.approvedBy) == has(self.approvedRung) && (has(self.approvedBy) || !has(self.approverPreflight))',
      message:
        'approvedBy, approvedAt and approvedRung are set together, and approverPreflight only with them',
      check: a =>
        (a.approvedBy === undefined) === (a.approvedAt === undefined) &&
        (a.approvedBy === undefined) === (a.approvedRung === undefined) &&
        (a.approvedBy !== undefined || a.approverPreflight === undefined),
    },
    {
      rule: 'has(self.rejectedBy) == has(self.rejectedAt) && has(self.rejectedBy) == has(self.rejectReason)',
      message: 'rejectedBy, rejectedAt and rejectReason are set together',
      check: a =>
        (a.rejectedBy === undefined) === (a.rejectedAt === undefined) &&
        (a.rejectedBy === undefined) === (a.rejectReason === undefined),
    },
    {
      rule: `!has(self.approvedRung) || ${celRank(
        'self.approvedRung',
      )} <= ${celRank('self.requestedRung')}`,
      message: 'approvedRung is never above requestedRung',
      fieldPath: '.approvedRung',
      check: a =>
        a.approvedRung === undefined ||
        rankOf(a.approvedRung) <= rankOf(a.requestedRung),
    },
  ],
).describe(
  "A second person's approval of the request (docs/approvals.md), written only by the Rackside backend: what was asked, then the decision.",
);

/** A request's approval. */
export type Approval = z.infer<typeof approvalSchema>;

/** CEL, on the parent of an approval: each decision field at `old` is unchanged at `now`. */
function decisionsKept(old: string, now: string): string {
  return APPROVAL_DECISION_FIELDS.map(
    field =>
      `(!has(${old}.${field}) || (has(${now}.${field}) && ${now}.${field} == ${old}.${field}))`,
  ).join(' && ');
}

/** CEL: the fields of the request at `old` are unchanged at `now`. */
function requestKept(old: string, now: string): string {
  return APPROVAL_REQUEST_FIELDS.map(
    field => `${now}.${field} == ${old}.${field}`,
  ).join(' && ');
}

/**
 * `spec.approval` of a NodeMaintenance: what was asked is fixed at creation (with the
 * spec rule {@link approvalFixedAtCreation}), each decision field is set once.
 */
export const nodeMaintenanceApprovalSchema = kube(approvalSchema, {
  validations: [
    ...APPROVAL_REQUEST_FIELDS.map(field => ({
      rule: `self.${field} == oldSelf.${field}`,
      message: `approval.${field} is fixed at creation`,
      fieldPath: `.${field}`,
    })),
    ...APPROVAL_DECISION_FIELDS.map(field => ({
      rule: `!has(oldSelf.${field}) || (has(self.${field}) && self.${field} == oldSelf.${field})`,
      message: `approval.${field} can be set once: it cannot be changed or removed once set`,
      fieldPath: `.${field}`,
    })),
  ],
});

const lowerAscii = (text: string) =>
  text.replace(/[A-Z]/g, letter => letter.toLowerCase());

/**
 * CEL rule for the spec of a request: whoever approved or rejected it is not who asked for
 * it (refs compared without case, as the catalog compares them). The backend refuses that
 * first (`approverRefusal`); the apiserver holds it for any writer.
 */
export const approvalNotByRequester: CheckedCelRule<{
  requestedBy?: string;
  approval?: Pick<Approval, 'approvedBy' | 'rejectedBy'>;
}> = {
  rule: '!has(self.approval) || !has(self.requestedBy) || ((!has(self.approval.approvedBy) || self.approval.approvedBy.lowerAscii() != self.requestedBy.lowerAscii()) && (!has(self.approval.rejectedBy) || self.approval.rejectedBy.lowerAscii() != self.requestedBy.lowerAscii()))',
  message: 'the requester cannot approve or reject their own request',
  fieldPath: '.approval',
  check: spec => {
    const requester = spec.requestedBy;
    if (!spec.approval || requester === undefined) return true;
    return [spec.approval.approvedBy, spec.approval.rejectedBy].every(
      decider =>
        decider === undefined || lowerAscii(decider) !== lowerAscii(requester),
    );
  },
};

/** CEL rule for a NodeMaintenance spec: an approval is there from creation or never. */
export const approvalFixedAtCreation: CelRule = {
  rule: 'has(self.approval) == has(oldSelf.approval)',
  message:
    'approval is fixed at creation: it cannot be added or removed afterwards',
  fieldPath: '.approval',
};

/**
 * CEL rules for a MaintenancePlan spec. The approval is never removed; a decision is set
 * once; a renewal (a new `authorization`, which only the backend writes) may add one or
 * replace an undecided or approved one with a new, undecided approval (it raised a rung);
 * a rejection is final.
 */
export function planApprovalRules(): CelRule[] {
  const renewal =
    '(has(self.authorization) && (!has(oldSelf.authorization) || self.authorization != oldSelf.authorization))';
  const old = 'oldSelf.approval';
  const now = 'self.approval';
  return [
    {
      rule: '!has(oldSelf.approval) || has(self.approval)',
      message: 'approval cannot be removed',
      fieldPath: '.approval',
    },
    {
      rule: `has(oldSelf.approval) || !has(self.approval) || ${renewal}`,
      message:
        'approval is added after creation only by a renewal (a new authorization)',
      fieldPath: '.approval',
    },
    {
      rule:
        `!has(${old}) || !has(${now}) || (${requestKept(
          old,
          now,
        )} && ${decisionsKept(old, now)})` +
        ` || (${renewal} && !has(${old}.rejectedBy) && !has(${now}.approvedBy) && !has(${now}.rejectedBy))`,
      message:
        'approval: what was asked is fixed and a decision is set once; only a renewal replaces an unrejected approval, with an undecided one',
      fieldPath: '.approval',
    },
  ];
}
