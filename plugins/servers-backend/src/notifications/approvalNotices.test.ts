import { mockServices } from '@backstage/backend-test-utils';
import type { Approval } from '@rackside/plugin-servers-common';
import type { ApprovalRequestRef } from '../approval/notices';
import {
  approvalAsked,
  approvalAwaited,
  approvalDecided,
  approvalNotifier,
} from './approvalNotices';
import type { ServersNotification } from './notifier';

const reboot: ApprovalRequestRef = {
  cluster: 'plant-a',
  kind: 'maintenance',
  name: 'worker-3-reboot-abc',
  intent: 'reboot',
  nodes: ['worker-3'],
  requestedBy: 'user:default/Alice',
  reason: 'replace the failed disk in bay 3',
};

const plan: ApprovalRequestRef = {
  ...reboot,
  kind: 'plan',
  name: 'reboot-plan-1',
  nodes: ['worker-1', 'worker-2', 'worker-3'],
};

const held: Approval = {
  required: true,
  rule: 'storage-power',
  approvers: ['group:default/storage', 'user:default/bob'],
  expiresAt: '2026-12-07T16:02:00Z',
  requestedRung: 'typed-name',
};

describe('approval notifications', () => {
  it('asks the approvers, with the request page', () => {
    expect(approvalAsked(reboot, held)).toEqual({
      recipients: ['group:default/storage', 'user:default/bob'],
      link: '/servers/maintenances/plant-a/worker-3-reboot-abc',
      scope: 'approval:worker-3-reboot-abc',
      topic: 'Approvals',
      severity: 'high',
      title: 'Approval asked: the reboot of worker-3 (plant-a)',
      description:
        'user:default/Alice asks for the reboot of worker-3 (plant-a): replace the failed disk in bay 3. Rule storage-power holds it until one of storage, bob approves it with a fresh pre-flight; it expires at 2026-12-07 16:02 UTC.',
    });
    expect(approvalAsked(plan, held).link).toBe(
      '/servers/plans/plant-a/reboot-plan-1',
    );
    expect(approvalAsked(plan, held).title).toBe(
      'Approval asked: the reboot plan of 3 servers (plant-a)',
    );
  });

  it('tells the requester whom the request awaits', () => {
    expect(approvalAwaited(reboot, held)).toMatchObject({
      recipients: ['user:default/alice'],
      severity: 'normal',
      title:
        'The reboot of worker-3 (plant-a) awaits approval from storage, bob',
    });
  });

  it('tells the requester who decided, and why a rejection', () => {
    expect(
      approvalDecided(reboot, {
        ...held,
        approvedBy: 'user:default/bob',
        approvedAt: '2026-12-07T13:00:00Z',
        approvedRung: 'typed-name',
      }),
    ).toMatchObject({
      recipients: ['user:default/alice'],
      severity: 'normal',
      title:
        'The reboot of worker-3 (plant-a) was approved by user:default/bob',
    });
    expect(
      approvalDecided(reboot, {
        ...held,
        rejectedBy: 'user:default/bob',
        rejectedAt: '2026-12-07T13:00:00Z',
        rejectReason: 'not during the audit week',
      }),
    ).toMatchObject({
      severity: 'high',
      title:
        'The reboot of worker-3 (plant-a) was rejected by user:default/bob',
      description:
        'not during the audit week. Rejected at 2026-12-07 13:00 UTC; nothing was done to the servers.',
    });
    expect(approvalDecided(reboot, held)).toBeUndefined();
  });

  it('sends both notices of a held request, and logs one it could not send without throwing', async () => {
    const sent: ServersNotification[] = [];
    const logger = mockServices.logger.mock();
    const notifier = approvalNotifier(
      {
        async notify(n) {
          if (n.severity === 'high') throw new Error('notifications down');
          sent.push(n);
        },
      },
      logger,
    );
    await expect(notifier.held(reboot, held)).resolves.toBeUndefined();
    expect(sent.map(n => n.recipients)).toEqual([['user:default/alice']]);
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringMatching(/could not send "Approval asked/),
    );
  });
});
