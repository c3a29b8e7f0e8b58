import type { Approval } from '../resources/approval';
import {
  approvalRuleFor,
  approvalState,
  approverRefusal,
  rungGrewPast,
  type ApprovalRule,
  type ApprovalSubject,
} from './approvalPolicy';

const worker = (name: string, labels: Record<string, string> = {}) => ({
  name,
  labels,
  role: 'worker' as const,
});
const controlPlane = (name: string) => ({
  name,
  labels: { 'node-role.kubernetes.io/control-plane': '' },
  role: 'control-plane' as const,
});

const subject = (over: Partial<ApprovalSubject> = {}): ApprovalSubject => ({
  action: 'reboot',
  intent: 'reboot',
  rung: 'typed-name',
  nodes: [worker('w1')],
  ...over,
});

const rule = (
  name: string,
  select: ApprovalRule['select'],
  approvers = ['group:default/platform-oncall'],
): ApprovalRule => ({ name, select, approvers, expiresAfterMinutes: 240 });

describe('approvalRuleFor', () => {
  it('selects nothing without rules', () => {
    expect(approvalRuleFor([], subject())).toBeUndefined();
  });

  it('selects every request with an empty select', () => {
    const all = rule('all', {});
    expect(approvalRuleFor([all], subject())).toBe(all);
    expect(
      approvalRuleFor([all], subject({ action: 'cordon', rung: 'reason' })),
    ).toBe(all);
  });

  it('takes the first matching rule in config order', () => {
    const hazard = rule('hazard', { rungAtLeast: 'hazard' });
    const reboots = rule('reboots', { actions: ['reboot'] });
    const all = rule('all', {});
    expect(
      approvalRuleFor([hazard, reboots, all], subject({ rung: 'hazard' })),
    ).toBe(hazard);
    expect(approvalRuleFor([hazard, reboots, all], subject())).toBe(reboots);
    expect(
      approvalRuleFor([hazard, reboots, all], subject({ action: 'drain' })),
    ).toBe(all);
  });

  it('selects by action and by intent', () => {
    const shutdowns = rule('shutdowns', { actions: ['shutdown'] });
    expect(approvalRuleFor([shutdowns], subject())).toBeUndefined();
    expect(
      approvalRuleFor(
        [shutdowns],
        subject({ action: 'shutdown', intent: 'shutdown' }),
      ),
    ).toBe(shutdowns);
    const rebootIntent = rule('reboot-intent', { intents: ['reboot'] });
    expect(
      approvalRuleFor(
        [rebootIntent],
        subject({ action: 'plan', intent: 'reboot' }),
      ),
    ).toBe(rebootIntent);
    expect(
      approvalRuleFor([rebootIntent], subject({ intent: undefined })),
    ).toBeUndefined();
  });

  it('orders rungs along the ladder for rungAtLeast', () => {
    const typed = rule('typed', { rungAtLeast: 'typed-name' });
    expect(
      approvalRuleFor([typed], subject({ rung: 'reason' })),
    ).toBeUndefined();
    expect(
      approvalRuleFor([typed], subject({ rung: 'preflight' })),
    ).toBeUndefined();
    expect(approvalRuleFor([typed], subject({ rung: 'typed-name' }))).toBe(
      typed,
    );
    expect(approvalRuleFor([typed], subject({ rung: 'hazard' }))).toBe(typed);
  });

  it('needs one node carrying every label pair, not the pairs spread over nodes', () => {
    const storage = rule('storage', {
      nodeLabels: { 'rackside.dev/storage': 'ceph', zone: 'a' },
    });
    expect(
      approvalRuleFor(
        [storage],
        subject({
          nodes: [
            worker('w1', { 'rackside.dev/storage': 'ceph', zone: 'b' }),
            worker('w2', { 'rackside.dev/storage': 'none', zone: 'a' }),
          ],
        }),
      ),
    ).toBeUndefined();
    expect(
      approvalRuleFor(
        [storage],
        subject({
          nodes: [
            worker('w1'),
            worker('w2', { 'rackside.dev/storage': 'ceph', zone: 'a' }),
          ],
        }),
      ),
    ).toBe(storage);
  });

  it('never matches a label through the prototype of the labels object', () => {
    const odd = rule('odd', { nodeLabels: { toString: 'x' } });
    expect(approvalRuleFor([odd], subject())).toBeUndefined();
  });

  it('selects by role when one node of the request has it', () => {
    const cp = rule('cp', { roles: ['control-plane'] });
    expect(approvalRuleFor([cp], subject())).toBeUndefined();
    expect(
      approvalRuleFor(
        [cp],
        subject({ nodes: [worker('w1'), controlPlane('cp1')] }),
      ),
    ).toBe(cp);
  });

  it('selects plans by size, and never a single request', () => {
    const big = rule('big', { planSizeAtLeast: 40 });
    expect(approvalRuleFor([big], subject())).toBeUndefined();
    expect(
      approvalRuleFor([big], subject({ action: 'plan', planSize: 39 })),
    ).toBeUndefined();
    expect(
      approvalRuleFor([big], subject({ action: 'plan', planSize: 40 })),
    ).toBe(big);
  });

  it('needs every given key to match (AND)', () => {
    const both = rule('both', {
      actions: ['reboot'],
      roles: ['control-plane'],
    });
    expect(approvalRuleFor([both], subject())).toBeUndefined();
    expect(
      approvalRuleFor(
        [both],
        subject({ action: 'drain', nodes: [controlPlane('cp1')] }),
      ),
    ).toBeUndefined();
    expect(
      approvalRuleFor([both], subject({ nodes: [controlPlane('cp1')] })),
    ).toBe(both);
  });
});

const held = (over: Partial<Approval> = {}): Approval => ({
  required: true,
  rule: 'reboots',
  approvers: ['group:default/platform-oncall', 'user:default/carol'],
  expiresAt: '2026-08-04T14:00:00Z',
  requestedRung: 'typed-name',
  ...over,
});

describe('approvalState', () => {
  const before = new Date('2026-08-04T13:59:59.999Z');
  const at = new Date('2026-08-04T14:00:00Z');

  it('is none without an approval or one not required', () => {
    expect(approvalState(undefined, before)).toBe('none');
    expect(approvalState(held({ required: false }), before)).toBe('none');
  });

  it('awaits until expiresAt, and is expired from expiresAt on', () => {
    expect(approvalState(held(), before)).toBe('awaiting');
    expect(approvalState(held(), at)).toBe('expired');
    expect(approvalState(held(), new Date('2026-08-05T00:00:00Z'))).toBe(
      'expired',
    );
  });

  it('counts an unreadable expiresAt as expired', () => {
    expect(approvalState(held({ expiresAt: 'tomorrow' }), before)).toBe(
      'expired',
    );
  });

  it('keeps an approval given in time after expiresAt', () => {
    const approved = held({
      approvedBy: 'user:default/carol',
      approvedAt: '2026-08-04T13:00:00Z',
      approvedRung: 'typed-name',
    });
    expect(approvalState(approved, before)).toBe('approved');
    expect(approvalState(approved, at)).toBe('approved');
  });

  it('lets a rejection win over an approval and over expiry', () => {
    const rejected = held({
      rejectedBy: 'user:default/carol',
      rejectedAt: '2026-08-04T13:00:00Z',
      rejectReason: 'not during the freeze',
    });
    expect(approvalState(rejected, before)).toBe('rejected');
    expect(approvalState(rejected, at)).toBe('rejected');
    // Both written (the schema refuses it; a reader still never runs it).
    expect(
      approvalState(
        {
          ...rejected,
          approvedBy: 'user:default/dave',
          approvedAt: '2026-08-04T13:00:00Z',
          approvedRung: 'typed-name',
        },
        before,
      ),
    ).toBe('rejected');
  });
});

describe('approverRefusal', () => {
  const ask = (over: Partial<Parameters<typeof approverRefusal>[0]> = {}) =>
    approverRefusal({
      approval: held(),
      requestedBy: 'user:default/alice',
      approverRef: 'user:default/carol',
      ownershipRefs: [],
      principalType: 'user',
      ...over,
    });

  it('allows a user named directly', () => {
    expect(ask()).toBeUndefined();
  });

  it('allows a member of a named group through ownershipRefs', () => {
    expect(
      ask({
        approverRef: 'user:default/bob',
        ownershipRefs: ['user:default/bob', 'group:default/platform-oncall'],
      }),
    ).toBeUndefined();
  });

  it('refuses a user in none of the approvers, naming the rule and who may', () => {
    const refusal = ask({
      approverRef: 'user:default/eve',
      ownershipRefs: ['user:default/eve', 'group:default/developers'],
    });
    expect(refusal).toContain('user:default/eve');
    expect(refusal).toContain('reboots');
    expect(refusal).toContain('group:default/platform-oncall');
  });

  it('refuses the requester, even named among the approvers or in their group', () => {
    expect(
      ask({
        requestedBy: 'user:default/carol',
        approverRef: 'user:default/carol',
      }),
    ).toBe('the requester cannot approve their own request');
    expect(
      ask({
        requestedBy: 'user:default/bob',
        approverRef: 'user:default/bob',
        ownershipRefs: ['group:default/platform-oncall'],
      }),
    ).toBe('the requester cannot approve their own request');
  });

  it('refuses the requester whatever the case of the ref', () => {
    expect(
      ask({
        requestedBy: 'user:default/Carol',
        approverRef: 'User:Default/carol',
      }),
    ).toBe('the requester cannot approve their own request');
  });

  it('matches approvers without case, as the catalog does', () => {
    expect(
      ask({
        approverRef: 'user:default/bob',
        ownershipRefs: ['group:default/Platform-Oncall'],
      }),
    ).toBeUndefined();
  });

  it('refuses an MCP agent and a service token, even carrying an approver ref', () => {
    expect(ask({ principalType: 'agent' })).toMatch(/MCP agent/);
    expect(ask({ principalType: 'service' })).toMatch(/signed in as a user/);
    expect(ask({ principalType: 'none' })).toMatch(/signed in as a user/);
  });

  it('refuses a user principal without a ref', () => {
    expect(ask({ approverRef: undefined })).toMatch(/signed in as a user/);
    expect(ask({ approverRef: '' })).toMatch(/signed in as a user/);
  });

  it('does not count a group the approver is not in because it owns something', () => {
    // ownershipRefs are the caller's own; a ref that only resembles an approver does not count.
    expect(
      ask({
        approverRef: 'user:default/mallory',
        ownershipRefs: ['group:default/platform-oncall-readonly'],
      }),
    ).toBeDefined();
  });

  it('allows anyone named when the request has no recorded requester', () => {
    expect(ask({ requestedBy: undefined })).toBeUndefined();
  });
});

describe('rungGrewPast', () => {
  it('is true only for a higher rung on the ladder', () => {
    expect(rungGrewPast('typed-name', 'typed-name')).toBe(false);
    expect(rungGrewPast('typed-name', 'preflight')).toBe(false);
    expect(rungGrewPast('typed-name', 'reason')).toBe(false);
    expect(rungGrewPast('typed-name', 'hazard')).toBe(true);
    expect(rungGrewPast('reason', 'preflight')).toBe(true);
    expect(rungGrewPast('preflight', 'typed-name')).toBe(true);
    expect(rungGrewPast('hazard', 'hazard')).toBe(false);
  });

  it('counts a refusal now as above every rung', () => {
    expect(rungGrewPast('hazard', 'refused')).toBe(true);
    expect(rungGrewPast('reason', 'refused')).toBe(true);
  });
});
