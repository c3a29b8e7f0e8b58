/*
 * upgrade-server and update-server-firmware (actions/upgradeServer.ts,
 * actions/updateServerFirmware.ts): the same request as the routes, refused to an agent
 * unless `servers.actions.allowPowerVerbs` is set, and with the same sources, capability
 * and permission checks once it is.
 */
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { actionsRegistryServiceMock } from '@backstage/backend-test-utils/alpha';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { createConditionAuthorizer } from '@backstage/plugin-permission-node';
import { serverPermissionRules } from '@rackside/plugin-servers-node';
import { registerServersActions } from '.';
import { PreflightTokens } from '../preflight/tokens';
import { createServersService } from '../servers/createServersService';
import { staticClusterRegistry } from '../cluster/clusterRegistry';
import {
  FakeCluster,
  fakeNode,
  fakePowerProvider,
} from '../testing/fakeCluster';
import { DEFAULT_AGENT_POLICY, type AgentPolicy } from './agentPolicy';

const REASON = 'roll the plant onto Talos v1.12.0';
const TARGET = 'factory.talos.dev/installer/376567988ad3:v1.12.0';
const FIRMWARE = 'https://firmware.plant.example/bios/r740-2.19.1.exe';

function setup(
  type: 'talos' | 'redfish',
  policy: AgentPolicy = DEFAULT_AGENT_POLICY,
  denied: string[] = [],
) {
  const worker = fakeNode('worker-1');
  worker.status!.nodeInfo!.osImage = 'Talos (v1.11.3)';
  const cluster = new FakeCluster('plant-a', [
    fakeNode('cp-1', { controlPlane: true }),
    fakeNode('cp-2', { controlPlane: true }),
    fakeNode('cp-3', { controlPlane: true }),
    worker,
  ]);
  cluster.provider = fakePowerProvider(type);
  cluster.bmcNodes = ['worker-1'];
  const decide = (name: string) => ({
    result: denied.includes(name)
      ? AuthorizeResult.DENY
      : AuthorizeResult.ALLOW,
  });
  const service = createServersService({
    clusters: staticClusterRegistry([cluster]),
    permissions: mockServices.permissions.mock({
      authorize: async requests =>
        requests.map(r => decide(r.permission.name)) as any,
      authorizeConditional: async requests =>
        requests.map(r => decide(r.permission.name)) as any,
    }),
    auditor: mockServices.auditor.mock(),
    logger: mockServices.logger.mock(),
    reasonPolicy: { minLength: 10, maxLength: 500 },
    preflightTokens: new PreflightTokens('test'),
    upgradeSources: {
      talosImages: ['factory.talos.dev/installer/'],
      firmwareSources: ['https://firmware.plant.example'],
    },
    applyConditions: createConditionAuthorizer(
      Object.values(serverPermissionRules),
    ),
  });
  const registry = actionsRegistryServiceMock();
  registerServersActions(registry, service, policy);
  return { cluster, registry };
}

const alice = mockCredentials.user('user:default/alice');
const POWER_VERBS_ON: AgentPolicy = {
  ...DEFAULT_AGENT_POLICY,
  allowPowerVerbs: true,
};

/** The action `name` on worker-1 with a fresh pre-flight of `action` and the typed name. */
async function invoke(
  registry: ReturnType<typeof setup>['registry'],
  name: string,
  action: string,
  input: object,
) {
  const pre = await registry.invoke({
    id: 'test:preflight-server-action',
    input: { cluster: 'plant-a', node: 'worker-1', action },
    credentials: alice,
  });
  return registry.invoke({
    id: `test:${name}`,
    input: {
      cluster: 'plant-a',
      node: 'worker-1',
      reason: REASON,
      typedName: 'worker-1',
      preflightToken: (pre.output as any).preflight.token,
      ...input,
    },
    credentials: alice,
  });
}

describe('upgrade-server', () => {
  it('is refused to an agent unless servers.actions.allowPowerVerbs is true; nothing written', async () => {
    const { registry, cluster } = setup('talos');
    await expect(
      invoke(registry, 'upgrade-server', 'upgrade', { image: TARGET }),
    ).rejects.toThrow(
      /upgrade of worker-1 needs the node's name typed by a person: do it in the portal/,
    );
    expect(cluster.writes).toBe(0);
  });

  it('with allowPowerVerbs, creates the upgrade as the route does', async () => {
    const { registry, cluster } = setup('talos', POWER_VERBS_ON);
    const { output } = await invoke(registry, 'upgrade-server', 'upgrade', {
      image: TARGET,
    });
    expect(output).toEqual({
      maintenance: expect.stringMatching(/^worker-1-upgrade-/),
      created: true,
    });
    expect(cluster.created[0].spec).toMatchObject({
      intent: 'upgrade',
      upgrade: { image: TARGET },
      requestedBy: 'user:default/alice',
    });
  });

  it('with allowPowerVerbs still refuses an image outside the list, and a caller without servers:upgrade', async () => {
    const open = setup('talos', POWER_VERBS_ON);
    await expect(
      invoke(open.registry, 'upgrade-server', 'upgrade', {
        image: 'factory.talos.dev.evil.example/installer/x:v1.12.0',
      }),
    ).rejects.toThrow(
      /not in the allowed list.*servers\.upgrades\.talosImages/,
    );
    expect(open.cluster.writes).toBe(0);
    const denied = setup('talos', POWER_VERBS_ON, ['servers:upgrade']);
    await expect(
      denied.registry.invoke({
        id: 'test:upgrade-server',
        input: {
          cluster: 'plant-a',
          node: 'worker-1',
          reason: REASON,
          typedName: 'worker-1',
          image: TARGET,
        },
        credentials: alice,
      }),
    ).rejects.toThrow(/servers:upgrade/);
    expect(denied.cluster.writes).toBe(0);
  });

  it("does not offer Talos's force, which needs the hazard ceremony of a person", async () => {
    const { registry } = setup('talos', POWER_VERBS_ON);
    const { actions } = await registry.list();
    const input = actions.find(a => a.name === 'upgrade-server')!.schema
      .input as any;
    expect(Object.keys(input.properties).sort()).toEqual(
      [
        'allowNodeLocalData',
        'cluster',
        'image',
        'node',
        'preflightToken',
        'reason',
        'stage',
        'typedName',
      ].sort(),
    );
  });
});

describe('update-server-firmware', () => {
  it('is refused to an agent unless servers.actions.allowPowerVerbs is true; nothing written', async () => {
    const { registry, cluster } = setup('redfish');
    await expect(
      invoke(registry, 'update-server-firmware', 'firmware', {
        imageURI: FIRMWARE,
      }),
    ).rejects.toThrow(/needs the node's name typed by a person/);
    expect(cluster.writes).toBe(0);
  });

  it('with allowPowerVerbs, creates the update with its targets; refuses a source with user info and a talos channel', async () => {
    const { registry, cluster } = setup('redfish', POWER_VERBS_ON);
    const { actions } = await registry.list();
    const input = actions.find(a => a.name === 'update-server-firmware')!.schema
      .input as any;
    expect(input.properties.targets).toMatchObject({
      type: 'array',
      items: { type: 'string' },
    });
    await expect(
      invoke(registry, 'update-server-firmware', 'firmware', {
        imageURI: 'https://firmware.plant.example@evil.example/bios.exe',
      }),
    ).rejects.toThrow(/user info/);
    expect(cluster.writes).toBe(0);
    await invoke(registry, 'update-server-firmware', 'firmware', {
      imageURI: FIRMWARE,
      targets: ['BIOS'],
    });
    expect(cluster.created[0].spec).toMatchObject({
      intent: 'firmware',
      firmware: { imageURI: FIRMWARE, targets: ['BIOS'] },
    });

    const talos = setup('talos', POWER_VERBS_ON);
    await expect(
      invoke(talos.registry, 'update-server-firmware', 'firmware', {
        imageURI: FIRMWARE,
      }),
    ).rejects.toThrow(/power channel is talos/);
    expect(talos.cluster.writes).toBe(0);
  });
});
