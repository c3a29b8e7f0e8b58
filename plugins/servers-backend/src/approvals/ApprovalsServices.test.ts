/*
 * The approvals feature's layers on their own: the default service answers nothing it was
 * not granted (a caller wired around AuthorizedApprovalsService by mistake writes no
 * decision); the permission layer answers an unknown cluster with 404 before asking
 * anything, `servers:read` denied outright with 403, and `servers:approve` refused on a
 * node of a visible request with 403 naming it, before the inner service is called.
 */
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { NotAllowedError, NotFoundError } from '@backstage/errors';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { ServerPermissions } from '../access/serverPermissions';
import { NO_APPROVALS } from '../approval/heldApproval';
import { staticClusterRegistry } from '../cluster/clusterRegistry';
import { PreflightTokens } from '../preflight/tokens';
import { FakeCluster, fakeMaintenance, fakeNode } from '../testing/fakeCluster';
import type { ApprovalsService } from './ApprovalsService';
import { AuthorizedApprovalsService } from './AuthorizedApprovalsService';
import { DefaultApprovalsService } from './DefaultApprovalsService';

const APPROVER = 'user:default/approver';

function heldCluster(): FakeCluster {
  return new FakeCluster(
    'plant-a',
    [fakeNode('worker-1'), fakeNode('worker-2')],
    [
      fakeMaintenance('worker-1-drain-x', 'worker-1', 'drain', undefined, {
        approval: {
          required: true,
          rule: 'drains',
          approvers: [APPROVER],
          expiresAt: new Date(Date.now() + 3600_000).toISOString(),
          requestedRung: 'preflight',
        },
      }),
    ],
  );
}

const context = {
  preflightTokens: new PreflightTokens('test'),
  planPreflights: {
    now: async () => {
      throw new Error('no plan here');
    },
    verify: () => {
      throw new Error('no plan here');
    },
  },
  userInfo: mockServices.userInfo(),
  notifier: NO_APPROVALS.notifier,
};

const ref = {
  cluster: 'plant-a',
  kind: 'maintenance' as const,
  name: 'worker-1-drain-x',
};

describe('DefaultApprovalsService without a grant', () => {
  const credentials = mockCredentials.user(APPROVER);

  it('refuses the list, the view and a decision, writing nothing', async () => {
    const cluster = heldCluster();
    const service = new DefaultApprovalsService(context);
    await expect(service.listForMe(credentials, { for: 'me' })).rejects.toThrow(
      NotAllowedError,
    );
    await expect(service.getApproval(credentials, ref)).rejects.toThrow(
      /no permission decision was made/,
    );
    await expect(
      service.decide(credentials, {
        ...ref,
        body: { decision: 'reject', reason: 'no' },
      }),
    ).rejects.toThrow(/no permission decision was made/);
    expect(cluster.writes).toBe(0);
  });

  it('decides with a grant on the cluster: the refusals above are the missing grant', async () => {
    const cluster = heldCluster();
    const service = new DefaultApprovalsService(context);
    const scope = await new ServerPermissions({
      permissions: mockServices.permissions.mock({
        authorizeConditional: async () => [
          { result: AuthorizeResult.ALLOW } as any,
        ],
      }),
      applyConditions: () => true,
    }).readScope(credentials);
    const answer = await service.decide(
      credentials,
      { ...ref, body: { decision: 'reject', reason: 'not this week' } },
      { grants: [{ cluster, scope, approveRefusedOn: () => [] }] },
    );
    expect(answer).toEqual({ state: 'rejected' });
    expect(cluster.approvalWrites).toHaveLength(1);
  });
});

describe('AuthorizedApprovalsService', () => {
  /** The permission layer over an inner service that records what reached it. */
  function layer(
    decide: (permission: string) => AuthorizeResult,
    cluster = heldCluster(),
  ) {
    const reached: string[] = [];
    const inner: ApprovalsService = {
      listForMe: async () => {
        reached.push('listForMe');
        return { items: [] };
      },
      getApproval: async () => {
        reached.push('getApproval');
        return {} as any;
      },
      decide: async () => {
        reached.push('decide');
        return { state: 'approved' };
      },
    };
    const asked: string[] = [];
    const permissions = mockServices.permissions.mock({
      authorizeConditional: async requests =>
        requests.map(r => {
          asked.push(r.permission.name);
          return { result: decide(r.permission.name) } as any;
        }),
    });
    const service = new AuthorizedApprovalsService(
      inner,
      new ServerPermissions({
        permissions,
        applyConditions: () => true,
        readDecisionReuseMs: 0,
      }),
      staticClusterRegistry([cluster]),
    );
    return { service, reached, asked };
  }
  const credentials = mockCredentials.user(APPROVER);
  const body = { decision: 'approve' as const, reason: 'ok' };

  it('answers an unknown cluster with 404 before asking any permission', async () => {
    const { service, reached, asked } = layer(() => AuthorizeResult.ALLOW);
    await expect(
      service.decide(credentials, { ...ref, cluster: 'nowhere', body }),
    ).rejects.toThrow(NotFoundError);
    await expect(
      service.getApproval(credentials, { ...ref, cluster: 'nowhere' }),
    ).rejects.toThrow(NotFoundError);
    expect(asked).toEqual([]);
    expect(reached).toEqual([]);
  });

  it('is 403 when servers:read is denied outright', async () => {
    const { service, reached } = layer(name =>
      name === 'servers:read' ? AuthorizeResult.DENY : AuthorizeResult.ALLOW,
    );
    await expect(service.decide(credentials, { ...ref, body })).rejects.toThrow(
      /servers:read/,
    );
    await expect(service.listForMe(credentials, { for: 'me' })).rejects.toThrow(
      /servers:read/,
    );
    expect(reached).toEqual([]);
  });

  it('is 403 naming the nodes without servers:approve, before the inner service; the view and list still reach it', async () => {
    const { service, reached } = layer(name =>
      name === 'servers:approve' ? AuthorizeResult.DENY : AuthorizeResult.ALLOW,
    );
    await expect(service.decide(credentials, { ...ref, body })).rejects.toThrow(
      'you are not allowed to approve requests on worker-1 (servers:approve)',
    );
    expect(reached).toEqual([]);
    await service.getApproval(credentials, ref);
    await service.listForMe(credentials, { for: 'me' });
    expect(reached).toEqual(['getApproval', 'listForMe']);
  });

  it('leaves a request it cannot find to the inner layer (its 404)', async () => {
    const { service, reached } = layer(() => AuthorizeResult.ALLOW);
    await service.decide(credentials, { ...ref, name: 'nope', body });
    expect(reached).toEqual(['decide']);
  });
});
