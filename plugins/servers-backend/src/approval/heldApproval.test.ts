import { fakeNode } from '../testing/fakeCluster';
import {
  approvalNodesOf,
  heldApprovalFor,
  heldApprovalResponse,
  highestRung,
  NO_APPROVALS,
} from './heldApproval';

const now = new Date('2026-12-07T12:00:00Z');
const subject = {
  action: 'reboot',
  intent: 'reboot',
  rung: 'typed-name' as const,
  nodes: [{ name: 'cp-1', labels: {}, role: 'control-plane' as const }],
};

describe('heldApprovalFor', () => {
  it('holds nothing without rules, or when no rule selects the request', () => {
    expect(heldApprovalFor(NO_APPROVALS, subject)).toBeUndefined();
    expect(
      heldApprovalFor(
        {
          rules: [
            {
              name: 'plans',
              select: { actions: ['plan'] },
              approvers: ['user:default/a'],
              expiresAfterMinutes: 60,
            },
          ],
        },
        subject,
      ),
    ).toBeUndefined();
  });

  it('answers the first selecting rule as an undecided spec.approval at the acknowledged rung', () => {
    const rules = [
      {
        name: 'workers',
        select: { roles: ['worker' as const] },
        approvers: ['user:default/a'],
        expiresAfterMinutes: 10,
      },
      {
        name: 'control-plane',
        select: { roles: ['control-plane' as const] },
        approvers: ['group:default/oncall'],
        expiresAfterMinutes: 90,
      },
      {
        name: 'everything',
        select: {},
        approvers: ['user:default/b'],
        expiresAfterMinutes: 240,
      },
    ];
    const approval = heldApprovalFor({ rules, now: () => now }, subject);
    expect(approval).toEqual({
      required: true,
      rule: 'control-plane',
      approvers: ['group:default/oncall'],
      expiresAt: '2026-12-07T13:30:00.000Z',
      requestedRung: 'typed-name',
    });
    expect(heldApprovalResponse(approval)).toEqual({
      rule: 'control-plane',
      approvers: ['group:default/oncall'],
      expiresAt: '2026-12-07T13:30:00.000Z',
    });
    expect(heldApprovalResponse(undefined)).toBeUndefined();
  });
});

describe('the subject of a rule', () => {
  it('takes the highest rung of a plan’s steps', () => {
    expect(highestRung([])).toBe('reason');
    expect(highestRung(['preflight', 'hazard', 'typed-name'])).toBe('hazard');
  });

  it('names the nodes with their labels and roles, leaving out ones the cluster no longer has', () => {
    const snap = {
      nodes: [
        fakeNode('cp-1', { controlPlane: true }),
        fakeNode('worker-1', { labels: { zone: 'a' } }),
      ],
    };
    expect(approvalNodesOf(snap, ['worker-1', 'gone', 'cp-1'])).toEqual([
      {
        name: 'worker-1',
        labels: { 'kubernetes.io/hostname': 'worker-1', zone: 'a' },
        role: 'worker',
      },
      {
        name: 'cp-1',
        labels: {
          'kubernetes.io/hostname': 'cp-1',
          'node-role.kubernetes.io/control-plane': '',
        },
        role: 'control-plane',
      },
    ]);
  });
});
