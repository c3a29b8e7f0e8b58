import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { actionsRegistryServiceMock } from '@backstage/backend-test-utils/alpha';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import { createConditionAuthorizer } from '@backstage/plugin-permission-node';
import { serverPermissionRules } from '@rackside/plugin-servers-node';
import { registerServersActions } from '.';
import { PreflightTokens } from '../preflight/tokens';
import { createServersService } from '../servers/createServersService';
import { staticClusterRegistry } from '../cluster/clusterRegistry';
import {
  FakeCluster,
  fakeNode,
  fakePod,
  fakePowerProvider,
} from '../testing/fakeCluster';
import type { AgentPolicy } from './agentPolicy';

/** A talos channel: it offers reboot. */
const REASON = 'replace the failed disk in bay 3';

function setup(
  denied: string[] = [],
  conditional: Record<string, PolicyDecision> = {},
  extra: { policy?: AgentPolicy; allReady?: boolean; power?: boolean } = {},
) {
  const cluster = new FakeCluster('plant-a', [
    fakeNode('cp-1', { controlPlane: true }),
    fakeNode('cp-2', { controlPlane: true }),
    fakeNode('cp-3', { controlPlane: true, ready: extra.allReady === true }),
    fakeNode('worker-1'),
  ]);
  if (extra.power) cluster.provider = fakePowerProvider('talos');
  cluster.pods.set('worker-1', [fakePod('web-1', 'worker-1')]);
  const audited: Array<{ outcome: string; meta: any; options: any }> = [];
  const service = createServersService({
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
  registerServersActions(registry, service, extra.policy);
  return { cluster, registry, audited };
}

const alice = mockCredentials.user('user:default/alice');

/** Every flag of servers.actions off: the default. */
const AGENT_POLICY_OFF: AgentPolicy = {
  allowHazard: false,
  allowPowerVerbs: false,
  allowDataLossDrain: false,
};

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
      // Powering a server on starts whatever it runs: MCP clients ask before it.
      'power-on-server': [false, true, false],
      'abandon-server-maintenance': [false, true, false],
      // Each changes what runs on the machine, then reboots it.
      'upgrade-server': [false, true, false],
      'update-server-firmware': [false, true, false],
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
    // Without servers.actions.allowDataLossDrain, no request offers force or
    // deleteEmptyDirData (they lose data), and neither does the pre-flight.
    for (const name of [
      'drain-server',
      'reboot-server',
      'shutdown-server',
      'preflight-server-action',
    ]) {
      const fields = Object.keys(inputOf(name).properties);
      expect({ name, fields }).toEqual({
        name,
        fields: expect.not.arrayContaining(['force']),
      });
      expect(fields).not.toContain('deleteEmptyDirData');
      expect(fields).toContain('allowNodeLocalData');
    }
    expect(Object.keys(inputOf('reboot-server').properties).sort()).toEqual([
      'allowNodeLocalData',
      'cluster',
      'node',
      'preflightToken',
      'reason',
      'typedName',
    ]);
  });

  it('offers force and deleteEmptyDirData to agents only where servers.actions.allowDataLossDrain says so', async () => {
    const open = setup(
      [],
      {},
      { policy: { ...AGENT_POLICY_OFF, allowDataLossDrain: true } },
    );
    const { actions } = await open.registry.list();
    const inputOf = (name: string) =>
      actions.find(a => a.name === name)!.schema.input as any;
    for (const name of [
      'drain-server',
      'reboot-server',
      'preflight-server-action',
    ]) {
      expect(Object.keys(inputOf(name).properties)).toEqual(
        expect.arrayContaining(['force', 'deleteEmptyDirData']),
      );
    }
    // Opened, a drain with force goes through the same checks and is written.
    const pre = await open.registry.invoke({
      id: 'test:preflight-server-action',
      input: {
        cluster: 'plant-a',
        node: 'worker-1',
        action: 'drain',
        force: true,
      },
      credentials: alice,
    });
    await open.registry.invoke({
      id: 'test:drain-server',
      input: {
        cluster: 'plant-a',
        node: 'worker-1',
        reason: REASON,
        preflightToken: (pre.output as any).preflight.token,
        force: true,
      },
      credentials: alice,
    });
    expect(open.cluster.created[0].spec.drain).toMatchObject({ force: true });
  });

  it('refuses a call with force or deleteEmptyDirData by default, with a clear error; nothing written', async () => {
    const { registry, cluster } = setup();
    const pre = await registry.invoke({
      id: 'test:preflight-server-action',
      input: { cluster: 'plant-a', node: 'worker-1', action: 'drain' },
      credentials: alice,
    });
    const token = (pre.output as any).preflight.token;
    for (const option of ['force', 'deleteEmptyDirData']) {
      // What was seen: the option was taken as asked (a drain that loses data).
      const refused = await registry
        .invoke({
          id: 'test:drain-server',
          input: {
            cluster: 'plant-a',
            node: 'worker-1',
            reason: REASON,
            preflightToken: token,
            [option]: true,
          } as any,
          credentials: alice,
        })
        .then(
          () => undefined,
          (e: Error) => e,
        );
      expect(refused?.message).toContain(
        `drain of worker-1 with ${option} loses data: `,
      );
      expect(refused?.message).toContain('servers.actions.allowDataLossDrain');
      await expect(
        registry.invoke({
          id: 'test:preflight-server-action',
          input: {
            cluster: 'plant-a',
            node: 'worker-1',
            action: 'drain',
            [option]: true,
          } as any,
          credentials: alice,
        }),
      ).rejects.toThrow(/servers\.actions\.allowDataLossDrain/);
    }
    expect(cluster.writes).toBe(0);
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

  describe('what an agent may not do on its own', () => {
    /** A reboot through the registry with the pre-flight and the typed name, as an agent would. */
    async function agentReboot(
      registry: ReturnType<typeof setup>['registry'],
      node: string,
      credentials = alice,
    ) {
      const pre = await registry.invoke({
        id: 'test:preflight-server-action',
        input: { cluster: 'plant-a', node, action: 'reboot' },
        credentials,
      });
      return registry.invoke({
        id: 'test:reboot-server',
        input: {
          cluster: 'plant-a',
          node,
          reason: REASON,
          typedName: node,
          preflightToken: (pre.output as any).preflight.token,
        },
        credentials,
      });
    }

    it('refuses a hazard reboot with the typed name and token: a person must do it in the portal; audited with via and principal; nothing written', async () => {
      const { registry, cluster, audited } = setup(
        [],
        {},
        { allReady: true, power: true },
      );
      const mcp = mockCredentials.user('user:default/alice', {
        actor: { subject: 'plugin:mcp-actions' },
      } as any);
      await expect(agentReboot(registry, 'cp-1', mcp)).rejects.toThrow(
        /reboot of cp-1 consumes the last quorum margin \(hazard\): a person must do it in the portal/,
      );
      expect(cluster.writes).toBe(0);
      expect(audited.at(-1)).toMatchObject({
        outcome: 'fail',
        options: { eventId: 'server-action', severityLevel: 'high' },
        meta: {
          actor: 'user:default/alice',
          action: 'reboot',
          node: 'cp-1',
          outcome: 'denied',
          via: 'actions',
        },
      });
      expect([
        'user:default/alice',
        'user:default/alice via plugin:mcp-actions',
      ]).toContain(audited.at(-1)!.meta.principal);
      // allowPowerVerbs alone does not open the hazard rung.
      const open = setup(
        [],
        {},
        {
          power: true,
          allReady: true,
          policy: { ...AGENT_POLICY_OFF, allowPowerVerbs: true },
        },
      );
      await expect(agentReboot(open.registry, 'cp-1')).rejects.toThrow(
        /a person must do it in the portal/,
      );
      expect(open.cluster.writes).toBe(0);
    });

    it('refuses a typed-name reboot unless servers.actions.allowPowerVerbs is true; allowed, it is requested with the same checks', async () => {
      const denied = setup([], {}, { power: true });
      await expect(agentReboot(denied.registry, 'worker-1')).rejects.toThrow(
        /reboot of worker-1 needs the node's name typed by a person: do it in the portal.*allowPowerVerbs/,
      );
      expect(denied.cluster.writes).toBe(0);
      expect(denied.audited.at(-1)!.meta).toMatchObject({
        outcome: 'denied',
        via: 'actions',
        principal: 'user:default/alice',
      });

      const allowed = setup(
        [],
        {},
        {
          power: true,
          policy: { ...AGENT_POLICY_OFF, allowPowerVerbs: true },
        },
      );
      const { output } = await agentReboot(allowed.registry, 'worker-1');
      expect((output as any).created).toBe(true);
      expect(allowed.cluster.created[0].spec).toMatchObject({
        intent: 'reboot',
        requestedBy: 'user:default/alice',
      });
      expect(allowed.audited.at(-1)).toMatchObject({
        outcome: 'success',
        meta: { via: 'actions', principal: 'user:default/alice' },
      });
      // The hazard rung, opened on purpose, with both flags.
      const hazard = setup(
        [],
        {},
        {
          power: true,
          allReady: true,
          policy: {
            ...AGENT_POLICY_OFF,
            allowPowerVerbs: true,
            allowHazard: true,
          },
        },
      );
      await agentReboot(hazard.registry, 'cp-1');
      expect(hazard.cluster.created[0].spec).toMatchObject({
        intent: 'reboot',
        preflight: { ceremony: 'hazard' },
      });
    });

    it('lower rungs (cordon, drain) stay open to agents', async () => {
      const { registry, cluster } = setup();
      await registry.invoke({
        id: 'test:cordon-server',
        input: { cluster: 'plant-a', node: 'worker-1', reason: REASON },
        credentials: alice,
      });
      expect(cluster.created[0].spec.intent).toBe('cordon');
    });
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
