import { examples } from './fixtures';
import {
  approvalNotByRequester,
  approvalSchema,
  planApprovalRules,
} from './approval';
import { maintenancePlanCrd } from './maintenancePlan';
import { nodeMaintenanceCrd, nodeMaintenanceSchema } from './nodeMaintenance';
import { renderCrd } from './crd';

const HELD = {
  required: true,
  rule: 'power-verbs',
  approvers: ['group:default/plant-engineers'],
  expiresAt: '2099-01-01T00:00:00Z',
  requestedRung: 'typed-name' as const,
};
const DECISION = {
  approvedBy: 'user:default/engineer',
  approvedAt: '2026-08-04T10:05:00Z',
  approvedRung: 'typed-name' as const,
};
const REJECTION = {
  rejectedBy: 'user:default/engineer',
  rejectedAt: '2026-08-04T10:05:00Z',
  rejectReason: 'not during the freeze',
};

function messages(value: unknown): string[] {
  const result = approvalSchema.safeParse(value);
  return (result.error?.issues ?? []).map(issue => issue.message);
}

// The same cases e2e/rack/test/approval-admission.test.mjs sends to the apiserver: zod and
// the CRD's CEL rules reach the same verdict.
describe('approvalSchema', () => {
  it('takes a held approval, an approved one and a rejected one', () => {
    expect(messages(HELD)).toEqual([]);
    expect(messages({ ...HELD, ...DECISION })).toEqual([]);
    expect(messages({ ...HELD, ...REJECTION })).toEqual([]);
    expect(messages({ ...HELD, requestedRung: 'hazard', ...DECISION })).toEqual(
      [],
    );
  });

  it('refuses an approval above the rung the requester acknowledged', () => {
    expect(messages({ ...HELD, ...DECISION, approvedRung: 'hazard' })).toEqual([
      'approvedRung is never above requestedRung',
    ]);
    expect(
      messages({
        ...HELD,
        requestedRung: 'reason',
        ...DECISION,
        approvedRung: 'preflight',
      }),
    ).toEqual(['approvedRung is never above requestedRung']);
  });

  it('refuses both an approval and a rejection', () => {
    expect(messages({ ...HELD, ...DECISION, ...REJECTION })).toEqual([
      'an approval is approved or rejected, never both',
    ]);
  });

  it('refuses a decision missing its time, rung or reason', () => {
    expect(
      messages({
        ...HELD,
        approvedBy: DECISION.approvedBy,
        approvedRung: 'reason',
      }),
    ).toContain(
      'approvedBy, approvedAt and approvedRung are set together, and approverPreflight only with them',
    );
    expect(messages({ ...HELD, rejectedBy: REJECTION.rejectedBy })).toContain(
      'rejectedBy, rejectedAt and rejectReason are set together',
    );
    expect(
      messages({
        ...HELD,
        approverPreflight: { takenAt: DECISION.approvedAt, ceremony: 'reason' },
      }),
    ).toContain(
      'approvedBy, approvedAt and approvedRung are set together, and approverPreflight only with them',
    );
  });

  it('refuses a decision on an approval that is not required', () => {
    expect(messages({ ...HELD, required: false, ...DECISION })).toEqual([
      'only a required approval is decided',
    ]);
  });

  it('takes only a user as the one who decides, and user or group refs as approvers', () => {
    expect(
      approvalSchema.safeParse({
        ...HELD,
        ...DECISION,
        approvedBy: 'group:default/plant-engineers',
      }).success,
    ).toBe(false);
    expect(
      approvalSchema.safeParse({ ...HELD, approvers: ['component:default/x'] })
        .success,
    ).toBe(false);
    expect(approvalSchema.safeParse({ ...HELD, approvers: [] }).success).toBe(
      false,
    );
    expect(
      approvalSchema.safeParse({
        ...HELD,
        approvers: Array.from({ length: 51 }, (_, i) => `user:default/u${i}`),
      }).success,
    ).toBe(false);
    expect(
      approvalSchema.safeParse({
        ...HELD,
        approvers: ['user:default/a', 'user:default/a'],
      }).success,
    ).toBe(false);
    expect(
      approvalSchema.safeParse({ ...HELD, rule: 'Power Verbs' }).success,
    ).toBe(false);
  });

  it('refuses, on a request, a decision by its own requester whatever the case', () => {
    const spec = (approval: object, requestedBy = 'user:default/Engineer') => ({
      ...examples.nodeMaintenance(),
      spec: { ...examples.nodeMaintenance().spec, requestedBy, approval },
    });
    const refusal = (value: unknown) =>
      (nodeMaintenanceSchema.safeParse(value).error?.issues ?? []).map(
        issue => `${issue.path.join('.')}: ${issue.message}`,
      );
    expect(refusal(spec({ ...HELD, ...DECISION }))).toEqual([
      'spec.approval: the requester cannot approve or reject their own request',
    ]);
    expect(refusal(spec({ ...HELD, ...REJECTION }))).toEqual([
      'spec.approval: the requester cannot approve or reject their own request',
    ]);
    expect(
      refusal(spec({ ...HELD, ...DECISION }, 'user:default/guest')),
    ).toEqual([]);
    expect(refusal(spec(HELD))).toEqual([]);
  });

  it('is part of a NodeMaintenance spec', () => {
    const nm = nodeMaintenanceSchema.parse({
      ...examples.nodeMaintenance(),
      spec: { ...examples.nodeMaintenance().spec, approval: HELD },
    });
    expect(nm.spec.approval).toEqual(HELD);
    expect(
      nodeMaintenanceSchema.safeParse({
        ...examples.nodeMaintenance(),
        spec: {
          ...examples.nodeMaintenance().spec,
          approval: { ...HELD, ...DECISION, approvedRung: 'hazard' },
        },
      }).success,
    ).toBe(false);
  });
});

describe('the CRDs', () => {
  const specOf = (crd: ReturnType<typeof renderCrd>) =>
    crd.spec.versions[0].schema.openAPIV3Schema.properties!.spec;

  it("keep a NodeMaintenance's request fixed and each decision field set once", () => {
    const spec = specOf(renderCrd(nodeMaintenanceCrd));
    expect(spec['x-kubernetes-validations']).toContainEqual({
      rule: 'has(self.approval) == has(oldSelf.approval)',
      message:
        'approval is fixed at creation: it cannot be added or removed afterwards',
      fieldPath: '.approval',
    });
    const rules = spec.properties!.approval['x-kubernetes-validations']!.map(
      v => v.rule,
    );
    for (const field of [
      'required',
      'rule',
      'approvers',
      'expiresAt',
      'requestedRung',
    ]) {
      expect(rules).toContain(`self.${field} == oldSelf.${field}`);
    }
    for (const field of ['approvedBy', 'rejectedBy', 'approverPreflight']) {
      expect(rules).toContain(
        `!has(oldSelf.${field}) || (has(self.${field}) && self.${field} == oldSelf.${field})`,
      );
    }
  });

  it("give a MaintenancePlan's approval to renewals only, never replacing a rejection", () => {
    const spec = specOf(renderCrd(maintenancePlanCrd));
    const rules = spec['x-kubernetes-validations']!.map(v => v.rule);
    for (const rule of [...planApprovalRules(), approvalNotByRequester]) {
      expect(rules).toContain(rule.rule);
    }
    // The plan's own approval node has no transition rule: a renewal replaces it whole.
    expect(
      spec.properties!.approval['x-kubernetes-validations']!.some(v =>
        /oldSelf/.test(String(v.rule)),
      ),
    ).toBe(false);
    const replace = planApprovalRules()[2].rule;
    expect(replace).toContain('!has(oldSelf.approval.rejectedBy)');
    expect(replace).toContain(
      '!has(self.approval.approvedBy) && !has(self.approval.rejectedBy)',
    );
  });
});
