/*
 * The plans service under the permission decorator answers nothing it was not granted:
 * called directly (a caller wired around AuthorizedPlansService by mistake), every read
 * and every request is refused and nothing is written.
 */
import { mockCredentials } from '@backstage/backend-test-utils';
import { NotAllowedError } from '@backstage/errors';
import { RACKSIDE_API_VERSION } from '@rackside/plugin-servers-common';
import { PreflightTokens } from '../preflight/tokens';
import { FakeCluster, fakeNode } from '../testing/fakeCluster';
import { DEFAULT_PLANS_CONFIG } from './config';
import { DefaultPlansService } from './DefaultPlansService';
import { PlanPreflightLimiter } from '../preflight/planPreflightLimiter';

function service() {
  const cluster = new FakeCluster('plant-a', [fakeNode('worker-1')]);
  cluster.planList.push({
    apiVersion: RACKSIDE_API_VERSION,
    kind: 'MaintenancePlan',
    metadata: {
      name: 'drain-plan-1',
      creationTimestamp: '2026-12-01T00:00:00Z',
    },
    spec: {
      intent: 'drain',
      nodes: ['worker-1'],
      reason: 'replace the failed disk in bay 3',
      requestedBy: 'user:default/mock',
    },
  } as never);
  const plans = new DefaultPlansService({
    reasonPolicy: { minLength: 0, maxLength: 500 },
    preflightTokens: new PreflightTokens('test'),
    config: DEFAULT_PLANS_CONFIG,
    preflights: new PlanPreflightLimiter(20),
  });
  return { cluster, plans };
}

describe('DefaultPlansService without a grant', () => {
  const user = mockCredentials.user();
  const reason = { reason: 'replace the failed disk in bay 3' };

  it('refuses every read', async () => {
    const { plans } = service();
    await expect(plans.listPlans(user, 'plant-a', {})).rejects.toThrow(
      NotAllowedError,
    );
    await expect(
      plans.getPlan(user, 'plant-a', 'drain-plan-1'),
    ).rejects.toThrow(NotAllowedError);
    await expect(
      plans.planPreflight(user, 'plant-a', {
        intent: 'drain',
        nodes: ['worker-1'],
        maxParallel: 1,
        options: {
          deleteEmptyDirData: false,
          force: false,
          allowNodeLocalData: false,
        },
        install: {},
      }),
    ).rejects.toThrow(NotAllowedError);
  });

  it('refuses every request and writes nothing', async () => {
    const { cluster, plans } = service();
    await expect(
      plans.createPlan(user, {
        cluster: 'plant-a',
        body: {
          intent: 'drain',
          nodes: ['worker-1'],
          ...reason,
          preflightToken: 'x',
        },
      }),
    ).rejects.toThrow(/no permission decision was made/);
    await expect(
      plans.controlPlan(user, {
        cluster: 'plant-a',
        plan: 'drain-plan-1',
        control: 'pause',
        body: reason,
      }),
    ).rejects.toThrow(/no permission decision was made/);
    await expect(
      plans.renewPlan(user, {
        cluster: 'plant-a',
        plan: 'drain-plan-1',
        body: reason,
      }),
    ).rejects.toThrow(/no permission decision was made/);
    expect(cluster.writes).toBe(0);
  });

  it('writes with a grant on the cluster: the refusals above are the missing grant', async () => {
    const { cluster, plans } = service();
    const scope = { filter: () => true } as never;
    await plans.controlPlan(
      user,
      {
        cluster: 'plant-a',
        plan: 'drain-plan-1',
        control: 'pause',
        body: reason,
      },
      { grant: { cluster, scope } },
    );
    expect(cluster.writes).toBe(1);
  });
});
