import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import { staticClusterRegistry } from '../cluster/clusterRegistry';
import { FakeCluster, fakeNode } from '../testing/fakeCluster';
import { PreflightTokens } from '../preflight/tokens';
import { createServersService } from '../servers/createServersService';
import {
  DEFAULT_READ_DECISION_REUSE_MS,
  readDecisionKeyOf,
  ReuseWindow,
} from './readDecisions';

describe('ReuseWindow', () => {
  it('asks once per key within the window, shares a question in flight, and asks again after it', async () => {
    let now = 0;
    let asked = 0;
    const window = new ReuseWindow<number>(1000, () => now);
    const ask = () => Promise.resolve(++asked);
    const [a, b] = await Promise.all([
      window.get('u', ask),
      window.get('u', ask),
    ]);
    expect([a, b, asked]).toEqual([1, 1, 1]);
    now = 999;
    expect(await window.get('u', ask)).toBe(1);
    expect(await window.get('v', ask)).toBe(2);
    now = 1000;
    expect(await window.get('u', ask)).toBe(3);
    // The old answers went with the miss: only u's new one and v's are kept.
    expect(window.size).toBe(2);
  });

  it('keeps no failed answer, and with no key or a window of 0 always asks', async () => {
    let asked = 0;
    const window = new ReuseWindow<number>(1000, () => 0);
    await expect(
      window.get('u', () =>
        Promise.reject(new Error('permission backend down')),
      ),
    ).rejects.toThrow('down');
    expect(await window.get('u', () => Promise.resolve(++asked))).toBe(1);
    expect(await window.get(undefined, () => Promise.resolve(++asked))).toBe(2);
    expect(await window.get(undefined, () => Promise.resolve(++asked))).toBe(3);
    const off = new ReuseWindow<number>(0, () => 0);
    expect(await off.get('u', () => Promise.resolve(++asked))).toBe(4);
    expect(await off.get('u', () => Promise.resolve(++asked))).toBe(5);
  });

  it('names a user by who, on whose behalf and the token expiry; a service is never reused', () => {
    const alice = mockCredentials.user('user:default/alice');
    const bob = mockCredentials.user('user:default/bob');
    expect(readDecisionKeyOf(alice)).toBeDefined();
    expect(readDecisionKeyOf(alice)).not.toEqual(readDecisionKeyOf(bob));
    const renewed = { ...alice, expiresAt: new Date(Date.now() + 3600_000) };
    expect(readDecisionKeyOf(renewed)).not.toEqual(readDecisionKeyOf(alice));
    expect(readDecisionKeyOf(mockCredentials.service())).toBeUndefined();
  });
});

describe('AuthorizedServersService read decisions', () => {
  let now: number;
  let cordon: AuthorizeResult.ALLOW | AuthorizeResult.DENY;
  let conditionalCalls: number;
  let authorizeCalls: number;
  let service: ReturnType<typeof createServersService>;

  beforeEach(() => {
    now = 0;
    cordon = AuthorizeResult.ALLOW;
    conditionalCalls = 0;
    authorizeCalls = 0;
    service = createServersService({
      clusters: staticClusterRegistry([
        new FakeCluster('plant-a', [fakeNode('worker-1')]),
      ]),
      permissions: mockServices.permissions.mock({
        authorizeConditional: async requests => {
          conditionalCalls += 1;
          return requests.map(r => ({
            result:
              r.permission.name === 'servers:cordon'
                ? cordon
                : AuthorizeResult.ALLOW,
          })) as PolicyDecision[];
        },
        authorize: async requests => {
          authorizeCalls += 1;
          return requests.map(() => ({ result: cordon }));
        },
      }) as any,
      auditor: mockServices.auditor.mock(),
      logger: mockServices.logger.mock(),
      reasonPolicy: { minLength: 10, maxLength: 500 },
      preflightTokens: new PreflightTokens('secret'),
      applyConditions: () => true,
      now: () => now,
    });
  });

  const offersCordon = async (credentials = mockCredentials.user()) =>
    'cordon' in
    (await service.listServers(credentials, 'plant-a')).items[0].actions;

  it('the clusters and the lists of a burst share one question; a revoked permission shows in the list after the window', async () => {
    await service.listClusters(mockCredentials.user());
    expect(await offersCordon()).toBe(true);
    expect(await offersCordon()).toBe(true);
    expect(conditionalCalls).toBe(1);
    cordon = AuthorizeResult.DENY;
    now = DEFAULT_READ_DECISION_REUSE_MS - 1;
    expect(await offersCordon()).toBe(true);
    now = DEFAULT_READ_DECISION_REUSE_MS;
    expect(await offersCordon()).toBe(false);
    expect(conditionalCalls).toBe(2);
    // Another user asks for themselves.
    expect(await offersCordon(mockCredentials.user('user:default/other'))).toBe(
      false,
    );
    expect(conditionalCalls).toBe(3);
  });

  it('an action is authorized afresh even while the list still offers it', async () => {
    const credentials = mockCredentials.user();
    expect(await offersCordon(credentials)).toBe(true);
    cordon = AuthorizeResult.DENY;
    expect(await offersCordon(credentials)).toBe(true);
    await expect(
      service.requestAction(credentials, {
        cluster: 'plant-a',
        node: 'worker-1',
        action: 'cordon',
        body: { reason: 'replace the fan in rack 4' },
      }),
    ).rejects.toMatchObject({ name: 'NotAllowedError' });
    expect(authorizeCalls).toBe(1);
  });
});
