import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { actionsRegistryServiceMock } from '@backstage/backend-test-utils/alpha';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import { createConditionAuthorizer } from '@backstage/plugin-permission-node';
import { serverPermissionRules } from '@rackside/plugin-servers-node';
import { registerServersActions } from '.';
import { PreflightTokens } from '../service/preflight';
import { AuthorizedServersService as ServersService } from '../servers/AuthorizedServersService';
import { staticClusterRegistry } from '../service/clusterRegistry';
import { FakeCluster, fakeNode, fakePod } from '../testing/fakeCluster';

const REASON = 'replace the failed disk in bay 3';

function setup(
  denied: string[] = [],
  conditional: Record<string, PolicyDecision> = {},
) {
  const cluster = new FakeCluster('plant-a', [
    fakeNode('cp-1', { controlPlane: true }),
    fakeNode('cp-2', { controlPlane: true }),
    fakeNode('cp-3', { controlPlane: true, ready: false }),
    fakeNode('worker-1'),
  ]);
  cluster.pods.set('worker-1', [fakePod('web-1', 'worker-1')]);
  const audited: Array<{ outcome: string; meta: any; options: any }> = [];
  const service = new ServersService({
    clusters: staticClusterRegistry([cluster]),
    permissions: mockServices.permissions.mock({
      authorize: async requests =>
        requests.map(r => ({
          result: denied.includes(r.permission.name)
            ? AuthorizeResult.DENY
            : AuthorizeResult.ALLOW,
        })) as any,
      authorizeConditional: async requests =>
        requests.map(
          r =>
            conditional[r.permission.name] ?? {
              result: denied.includes(r.permission.name)
                ? AuthorizeResult.DENY
                : AuthorizeResult.ALLOW,
            },
        ) as any,
    }),
    auditor: mockServices.auditor.mock({
      createEvent: async options => ({
        success: async o => {
          audited.push({ outcome: 'success', meta: o?.meta, options });
        },
        fail: async o => {
          audited.push({ outcome: 'fail', meta: o.meta, options });
        },
      }),
    }),
    logger: mockServices.logger.mock(),
    reasonPolicy: { minLength: 10, maxLength: 500 },
    preflightTokens: new PreflightTokens('test'),
    applyConditions: createConditionAuthorizer(
      Object.values(serverPermissionRules),
    ),
  });
  const registry = actionsRegistryServiceMock();
  registerServersActions(registry, service);
  return { cluster, registry, audited };
}

const alice = mockCredentials.user('user:default/alice');

describe('the registered actions', () => {
  it('registers the reads and one action per server verb, with their hints', async () => {
    const { registry } = setup();
    const { actions } = await registry.list();
    const hints = Object.fromEntries(
      actions.map(a => [
        a.name,
        [
          a.attributes.readOnly,
          a.attributes.destructive,
          a.attributes.idempotent,
        ],
      ]),
    );
    // [readOnly, destructive, idempotent]
    expect(hints).toEqual({
      'list-clusters': [true, false, true],
      'list-servers': [true, false, true],
      'get-server': [true, false, true],
      'preflight-server-action': [true, false, true],
      'list-maintenances': [true, false, true],
      'cordon-server': [false, false, false],
      'uncordon-server': [false, false, false],
      'drain-server': [false, true, false],
      'reboot-server': [false, true, false],
      'shutdown-server': [false, true, false],
      'power-on-server': [false, false, false],
      'abandon-server-maintenance': [false, true, false],
    });
    // The requests ask for the route's body fields, the pre-flight ones for the token.
    const inputOf = (name: string) =>
      actions.find(a => a.name === name)!.schema.input as any;
    expect(Object.keys(inputOf('cordon-server').properties).sort()).toEqual([
      'cluster',
      'node',
      'reason',
      'typedName',
    ]);
    expect(inputOf('cordon-server').required.sort()).toEqual([
      'cluster',
      'node',
      'reason',
    ]);
    expect(Object.keys(inputOf('reboot-server').properties).sort()).toEqual([
      'allowNodeLocalData',
      'cluster',
      'deleteEmptyDirData',
      'force',
      'node',
      'preflightToken',
      'reason',
      'typedName',
    ]);
  });

  it('lists servers with the same offers the route gives', async () => {
    const { registry } = setup(['servers:cordon']);
    const { output } = await registry.invoke({
      id: 'test:list-servers',
      input: { cluster: 'plant-a' },
      credentials: alice,
    });
    const servers = (output as any).servers;
    expect(servers.map((s: any) => s.name)).toEqual([
      'cp-1',
      'cp-2',
      'cp-3',
      'worker-1',
    ]);
    // Only what the caller may request now: cordon is denied, drain allowed.
    const w1 = servers.find((s: any) => s.name === 'worker-1');
    expect(w1.actions).toEqual({ drain: 'preflight' });
  });

  it('applies a conditional action decision to each server (one decision per action, not per server)', async () => {
    const { registry } = setup([], {
      'servers:cordon': {
        result: AuthorizeResult.CONDITIONAL,
        pluginId: 'servers',
        resourceType: 'server',
        conditions: {
          not: { rule: 'IS_CONTROL_PLANE', resourceType: 'server', params: {} },
        },
      } as PolicyDecision,
    });
    const { output } = await registry.invoke({
      id: 'test:list-servers',
      input: { cluster: 'plant-a' },
      credentials: alice,
    });
    const allowed = Object.fromEntries(
      (output as any).servers.map((s: any) => [
        s.name,
        s.actions.cordon === 'reason',
      ]),
    );
    expect(allowed).toEqual({
      'cp-1': false,
      'cp-2': false,
      'cp-3': false,
      'worker-1': true,
    });
  });

  it('drains through pre-flight and request, with the token, audited', async () => {
    const { registry, cluster, audited } = setup();
    const pre = await registry.invoke({
      id: 'test:preflight-server-action',
      input: { cluster: 'plant-a', node: 'worker-1', action: 'drain' },
      credentials: alice,
    });
    const preflight = (pre.output as any).preflight;
    expect(preflight.evict.map((p: any) => p.name)).toEqual(['web-1']);
    const { output } = await registry.invoke({
      id: 'test:drain-server',
      input: {
        cluster: 'plant-a',
        node: 'worker-1',
        reason: REASON,
        preflightToken: preflight.token,
      },
      credentials: alice,
    });
    // The pre-flight is a read: audited low, via the actions registry.
    expect(audited[0]).toMatchObject({
      outcome: 'success',
      options: {
        eventId: 'server-read',
        severityLevel: 'low',
        meta: {
          actor: 'user:default/alice',
          read: 'preflight',
          node: 'worker-1',
          via: 'actions',
        },
      },
    });
    expect((output as any).maintenance).toMatch(/^worker-1-drain-/);
    expect((output as any).created).toBe(true);
    expect(cluster.created[0].spec).toMatchObject({
      intent: 'drain',
      requestedBy: 'user:default/alice',
      preflight: { token: preflight.token },
    });
    // Said to come through the actions registry (MCP), graded as the route grades it.
    expect(audited.at(-1)).toMatchObject({
      outcome: 'success',
      options: {
        eventId: 'server-action',
        severityLevel: 'medium',
        meta: { via: 'actions' },
      },
      meta: {
        actor: 'user:default/alice',
        action: 'drain',
        via: 'actions',
        maintenance: (output as any).maintenance,
      },
    });
  });

  it('applies the same checks: permission, reason policy, ceremony, guard; nothing written', async () => {
    const { registry, cluster, audited } = setup(['servers:cordon']);
    const request = (action: string, input: object) =>
      registry.invoke({
        id: `test:${action}-server`,
        input: { cluster: 'plant-a', node: 'worker-1', ...input } as any,
        credentials: alice,
      });
    await expect(request('cordon', { reason: REASON })).rejects.toThrow(
      /not allowed to cordon worker-1 \(servers:cordon\)/,
    );
    await expect(request('uncordon', { reason: 'short' })).rejects.toThrow(
      /at least 10/,
    );
    await expect(request('drain', { reason: REASON })).rejects.toThrow(
      /pre-flight token/,
    );
    // cp-3 is not Ready: rebooting cp-1 would drop below quorum.
    await expect(
      request('reboot', {
        node: 'cp-1',
        reason: REASON,
        typedName: 'cp-1',
        preflightToken: 'x',
      }),
    ).rejects.toThrow(/quorum/);
    expect(cluster.writes).toBe(0);
    expect(audited.map(a => [a.meta.action, a.meta.outcome])).toEqual([
      ['cordon', 'denied'],
      ['uncordon', 'invalid'],
      ['drain', 'invalid'],
      ['reboot', 'refused'],
    ]);
    // Every attempt says it came through the actions registry; a power verb is high.
    expect(audited.map(a => a.meta.via)).toEqual([
      'actions',
      'actions',
      'actions',
      'actions',
    ]);
    expect(audited.map(a => a.options.severityLevel)).toEqual([
      'medium',
      'medium',
      'medium',
      'high',
    ]);
  });

  it('a request or pre-flight needs a person, not a service', async () => {
    const { registry, cluster } = setup();
    await expect(
      registry.invoke({
        id: 'test:cordon-server',
        input: {
          cluster: 'plant-a',
          node: 'worker-1',
          reason: REASON,
        },
        credentials: mockCredentials.service('plugin:catalog'),
      }),
    ).rejects.toThrow(/user credentials/);
    expect(cluster.writes).toBe(0);
  });
});
