/*
 * Upgrade and firmware plans through the plan routes on a fake cluster (docs/plans.md,
 * "Rolling upgrades"): the attacks first (a firmware URI with user info, an image outside
 * the list, both bodies at once, an intent without its body, force, a user who may reboot
 * but not upgrade), each refused with nothing written; then the pre-flight that skips the
 * nodes already at the target, and what an allowed request writes.
 */
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import { serverConditions } from '@rackside/plugin-servers-node';
import request from 'supertest';
import { staticClusterRegistryFactory } from '../cluster/clusterRegistry';
import {
  FakeCluster,
  fakePowerProvider,
  fakeTalosNode,
} from '../testing/fakeCluster';
import {
  startServersTestBackend,
  type ServersTestBackendOptions,
} from '../testing/testBackend';

// Each test starts a backend; the first start in a cold process is the slow one.
jest.setTimeout(30_000);

const BASE = '/api/servers/clusters/plant-a/plans';
const REASON = 'roll the plant onto Talos v1.12.0';
const TARGET = 'factory.talos.dev/installer/376567988ad3:v1.12.0';
const FIRMWARE = 'https://firmware.plant.example/bios/r740-2.19.1.exe';
const UPGRADES = {
  talosImages: ['factory.talos.dev/installer/'],
  firmwareSources: ['https://firmware.plant.example'],
};

function rack(type: 'talos' | 'redfish' = 'talos'): FakeCluster {
  const cluster = new FakeCluster('plant-a', [
    fakeTalosNode('cp-1', 'v1.11.3', { controlPlane: true }),
    fakeTalosNode('cp-2', 'v1.11.3', { controlPlane: true }),
    fakeTalosNode('cp-3', 'v1.11.3', { controlPlane: true }),
    fakeTalosNode('worker-1', 'v1.11.3', { labels: { zone: 'a' } }),
    fakeTalosNode('worker-2', 'v1.12.0', { labels: { zone: 'a' } }),
    fakeTalosNode('worker-3', 'v1.11.3', { labels: { zone: 'b' } }),
  ]);
  cluster.provider = fakePowerProvider(type);
  if (type === 'redfish')
    cluster.bmcNodes = ['worker-1', 'worker-2', 'worker-3'];
  return cluster;
}

async function start(
  cluster: FakeCluster,
  options: Omit<ServersTestBackendOptions, 'features'> = {},
) {
  return startServersTestBackend({
    ...options,
    config: { upgrades: UPGRADES, ...options.config },
    features: [staticClusterRegistryFactory([cluster])],
  });
}

const upgradeQuery = (nodes: string, image = TARGET) =>
  `intent=upgrade&image=${encodeURIComponent(image)}&nodes=${nodes}`;
const firmwareQuery = (nodes: string, imageURI = FIRMWARE) =>
  `intent=firmware&imageURI=${encodeURIComponent(imageURI)}&nodes=${nodes}`;

async function preflight(server: any, query: string) {
  return request(server).get(`${BASE}/preflight?${query}`);
}

async function tokenFor(server: any, query: string) {
  const res = await preflight(server, query);
  expect(res.status).toBe(200);
  return res.body as { token: string; typedCount: number | null };
}

/** A plan request with a fresh pre-flight of `query`, plus `body`. */
async function createWith(server: any, query: string, body: object) {
  const pre = await tokenFor(server, query);
  return request(server)
    .post(BASE)
    .send({
      reason: REASON,
      preflightToken: pre.token,
      typedCount: pre.typedCount ?? undefined,
      ...body,
    });
}

/** Only servers labelled zone=a (a conditional decision). */
const zoneA = {
  result: AuthorizeResult.CONDITIONAL,
  pluginId: 'servers',
  resourceType: 'server',
  conditions: serverConditions.hasLabel({ label: 'zone', value: 'a' }),
} as PolicyDecision;

describe('an upgrade or firmware plan refused, nothing written', () => {
  it('refuses a firmware URI with user info before an allowed host: 400 naming the list', async () => {
    const cluster = rack('redfish');
    const { server } = await start(cluster);
    const evil = 'https://firmware.plant.example@evil.example/x.bin';
    const pre = await preflight(server, firmwareQuery('worker-1', evil));
    expect(pre.status).toBe(400);
    expect(pre.body.error.message).toContain(
      'servers.upgrades.firmwareSources',
    );
    // The create, with a token of an allowed URI: the body's URI is checked itself.
    const res = await createWith(server, firmwareQuery('worker-1'), {
      intent: 'firmware',
      nodes: ['worker-1'],
      firmware: { imageURI: evil },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(
      'servers.upgrades.firmwareSources',
    );
    expect(cluster.writes).toBe(0);
  });

  it.each([
    [
      'a look-alike registry',
      'factory.talos.dev.evil.example/installer/x:v1.12.0',
    ],
    ['another registry', 'ghcr.io/siderolabs/installer:v1.12.0'],
    ['no version tag', 'factory.talos.dev/installer/376567988ad3'],
  ])(
    'refuses an upgrade plan of an image outside the list (%s): 400 naming the list',
    async (_what, image) => {
      const cluster = rack();
      const { server } = await start(cluster);
      const pre = await preflight(server, upgradeQuery('worker-1', image));
      expect(pre.status).toBe(400);
      expect(pre.body.error.message).toContain('servers.upgrades.talosImages');
      const res = await createWith(server, upgradeQuery('worker-1'), {
        intent: 'upgrade',
        nodes: ['worker-1'],
        upgrade: { image },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('servers.upgrades.talosImages');
      expect(cluster.writes).toBe(0);
    },
  );

  it.each([
    [
      'both upgrade and firmware',
      {
        intent: 'upgrade',
        upgrade: { image: TARGET },
        firmware: { imageURI: FIRMWARE },
      },
      'firmware goes only with intent firmware, not upgrade',
    ],
    [
      'intent upgrade without upgrade',
      { intent: 'upgrade' },
      'upgrade is required with intent upgrade',
    ],
    [
      'intent firmware without firmware',
      { intent: 'firmware' },
      'firmware is required with intent firmware',
    ],
    [
      'an upgrade body on a reboot plan',
      { intent: 'reboot', upgrade: { image: TARGET } },
      'upgrade goes only with intent upgrade, not reboot',
    ],
    [
      "Talos's force (only for one node, at the hazard rung)",
      { intent: 'upgrade', upgrade: { image: TARGET, force: true } },
      'no force through Backstage',
    ],
    [
      'an upgrade without an image',
      { intent: 'upgrade', upgrade: { stage: true } },
      'upgrade.image',
    ],
  ])('400 for a body with %s', async (_what, body, message) => {
    const cluster = rack();
    const { server } = await start(cluster);
    const res = await request(server)
      .post(BASE)
      .send({
        reason: REASON,
        preflightToken: 'x',
        nodes: ['worker-1'],
        ...body,
      });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(message);
    expect(cluster.writes).toBe(0);
  });

  it('400 for a pre-flight of an upgrade without its image, or with a firmware URI', async () => {
    const { server } = await start(rack());
    const none = await preflight(server, 'intent=upgrade&nodes=worker-1');
    expect(none.status).toBe(400);
    expect(none.body.error.message).toContain('image is required');
    const both = await preflight(
      server,
      `${upgradeQuery('worker-1')}&imageURI=${encodeURIComponent(FIRMWARE)}`,
    );
    expect(both.status).toBe(400);
    expect(both.body.error.message).toContain('imageURI goes only with');
  });

  it('403 for a user who may reboot but not upgrade, naming the node; nothing written', async () => {
    const cluster = rack();
    const { server } = await start(cluster, {
      decisions: {
        'servers:reboot': AuthorizeResult.ALLOW,
        'servers:upgrade': AuthorizeResult.DENY,
      },
    });
    expect(
      (await preflight(server, 'intent=reboot&nodes=worker-1')).status,
    ).toBe(200);
    const pre = await preflight(server, upgradeQuery('worker-1'));
    expect(pre.status).toBe(403);
    expect(pre.body.error.message).toContain('worker-1');
    expect(pre.body.error.message).toContain('servers:upgrade');
    const res = await request(server)
      .post(BASE)
      .send({
        intent: 'upgrade',
        nodes: ['worker-1'],
        upgrade: { image: TARGET },
        reason: REASON,
        preflightToken: 'x',
        typedCount: 1,
      });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('servers:upgrade');
    expect(cluster.writes).toBe(0);
  });

  it('403 naming the nodes a resource-scoped servers:firmware refuses', async () => {
    const cluster = rack('redfish');
    const { server } = await start(cluster, {
      conditional: { 'servers:firmware': zoneA },
    });
    const refused = await preflight(
      server,
      firmwareQuery('worker-1,worker-2,worker-3'),
    );
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('worker-3');
    expect(refused.body.error.message).not.toContain('worker-1');
    expect(refused.body.error.message).toContain('servers:firmware');
    expect(
      (await preflight(server, firmwareQuery('worker-1,worker-2'))).status,
    ).toBe(200);
    expect(cluster.writes).toBe(0);
  });

  it('400 for a firmware plan on a channel without an UpdateService (talos); nothing written', async () => {
    const cluster = rack('talos');
    const { server } = await start(cluster);
    const pre = await tokenFor(server, firmwareQuery('worker-1'));
    expect(pre).toMatchObject({ canProceed: false });
    const res = await request(server)
      .post(BASE)
      .send({
        intent: 'firmware',
        nodes: ['worker-1'],
        firmware: { imageURI: FIRMWARE },
        reason: REASON,
        preflightToken: pre.token,
        typedCount: 1,
      });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('firmware is not offered on');
    expect(cluster.writes).toBe(0);
  });

  it('409 for a token of another image: the pre-flight binds what the plan installs', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const other = 'factory.talos.dev/installer/376567988ad3:v1.12.1';
    const res = await createWith(server, upgradeQuery('worker-1', other), {
      intent: 'upgrade',
      nodes: ['worker-1'],
      upgrade: { image: TARGET },
    });
    expect(res.status).toBe(409);
    expect(res.body.preflight.image).toBe(TARGET);
    expect(cluster.writes).toBe(0);
  });
});

describe('an upgrade plan', () => {
  it('pre-flight: skips the nodes already at the target, out of the steps and the count', async () => {
    const { server } = await start(rack());
    const res = await preflight(
      server,
      `${upgradeQuery('worker-1,worker-2,worker-3,cp-1')}&maxParallel=2`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      intent: 'upgrade',
      image: TARGET,
      skipped: [{ node: 'worker-2', reason: 'already at v1.12.0' }],
      typedCount: 3,
      canProceed: true,
    });
    expect(res.body.nodes.map((n: any) => [n.node, n.step])).toEqual([
      ['worker-1', 0],
      ['worker-3', 0],
      ['cp-1', 1],
    ]);
    expect(res.body.steps.map((s: any) => s.nodes)).toEqual([
      ['worker-1', 'worker-3'],
      ['cp-1'],
    ]);
  });

  it('pre-flight of nodes all at the target: nothing to do', async () => {
    const { server } = await start(rack());
    const res = await preflight(server, upgradeQuery('worker-2'));
    expect(res.status).toBe(200);
    expect(res.body.canProceed).toBe(false);
    expect(res.body.blockers).toEqual([
      'nothing to do: every server is already at v1.12.0',
    ]);
  });

  it('creates the plan with spec.upgrade and every node; the typed count leaves out the skipped', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const query = `${upgradeQuery('worker-1,worker-2,worker-3')}&maxParallel=2`;
    const wrongCount = await createWith(server, query, {
      intent: 'upgrade',
      nodes: ['worker-1', 'worker-2', 'worker-3'],
      maxParallel: 2,
      upgrade: { image: TARGET },
      typedCount: 3,
    });
    expect(wrongCount.status).toBe(400);
    expect(wrongCount.body.error.message).toContain(
      'type the number of servers to upgrade (2)',
    );
    expect(cluster.writes).toBe(0);
    const res = await createWith(server, query, {
      intent: 'upgrade',
      nodes: ['worker-1', 'worker-2', 'worker-3'],
      maxParallel: 2,
      upgrade: { image: TARGET, stage: true },
    });
    expect(res.status).toBe(201);
    expect(res.body.name).toMatch(/^upgrade-plan-/);
    expect(cluster.createdPlans).toHaveLength(1);
    expect(cluster.createdPlans[0].spec).toMatchObject({
      intent: 'upgrade',
      nodes: ['worker-1', 'worker-2', 'worker-3'],
      maxParallel: 2,
      upgrade: { image: TARGET, stage: true },
      requestedBy: 'user:default/mock',
    });
    expect(cluster.createdPlans[0].spec.upgrade).not.toHaveProperty('force');
  });

  it('reads back with its image, the versions of each step and "2 of 3 at v1.12.0"', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const created = await createWith(
      server,
      upgradeQuery('worker-1,worker-2,worker-3'),
      {
        intent: 'upgrade',
        nodes: ['worker-1', 'worker-2', 'worker-3'],
        upgrade: { image: TARGET },
      },
    );
    expect(created.status).toBe(201);
    const stored = cluster.planList[0];
    stored.status = {
      phase: 'Running',
      nodes: [
        {
          name: 'worker-1',
          phase: 'Done',
          talosVersion: { before: 'v1.11.3', after: 'v1.12.0' },
        },
        {
          name: 'worker-2',
          phase: 'Skipped',
          message: 'already at v1.12.0',
          talosVersion: { before: 'v1.12.0', after: 'v1.12.0' },
        },
        {
          name: 'worker-3',
          phase: 'Running',
          talosVersion: { before: 'v1.11.3' },
        },
      ],
    } as any;
    const res = await request(server).get(`${BASE}/${created.body.name}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      intent: 'upgrade',
      upgrade: { image: TARGET },
      versions: {
        target: 'v1.12.0',
        atTarget: 2,
        total: 3,
        text: '2 of 3 at v1.12.0',
      },
    });
    expect(res.body.nodes[0].talosVersion).toEqual({
      before: 'v1.11.3',
      after: 'v1.12.0',
    });
  });

  it('is held by an approval rule selecting intent upgrade', async () => {
    const cluster = rack();
    const { server } = await start(cluster, {
      config: {
        approvals: {
          rules: [
            {
              name: 'talos-upgrades',
              select: { actions: ['plan'], intents: ['upgrade'] },
              approvers: ['user:default/approver'],
            },
          ],
        },
      },
    });
    const res = await createWith(server, upgradeQuery('worker-1'), {
      intent: 'upgrade',
      nodes: ['worker-1'],
      upgrade: { image: TARGET },
    });
    expect(res.status).toBe(201);
    expect(res.body.approval).toMatchObject({ rule: 'talos-upgrades' });
    expect(cluster.createdPlans[0].spec.approval).toMatchObject({
      required: true,
      rule: 'talos-upgrades',
    });
    // A drain plan is not an upgrade: the rule does not hold it.
    const drain = await createWith(server, 'intent=drain&nodes=worker-3', {
      intent: 'drain',
      nodes: ['worker-3'],
    });
    expect(drain.status).toBe(201);
    expect(drain.body.approval).toBeUndefined();
  });
});

describe('a firmware plan', () => {
  it('with a version: the pre-flight skips the servers whose BMC already reports it for the targets', async () => {
    const cluster = rack('redfish');
    const bios = (version: string) =>
      ({
        firmware: [
          {
            id: '/redfish/v1/UpdateService/FirmwareInventory/BIOS',
            name: 'BIOS',
            version,
            updateable: true,
          },
          { name: 'iDRAC', version: '7.00.00', updateable: true },
        ],
      } as any);
    cluster.bmcHealth.set('worker-1', bios('2.19.1'));
    cluster.bmcHealth.set('worker-2', bios('2.18.0'));
    const { server } = await start(cluster);
    const query = `${firmwareQuery(
      'worker-1,worker-2,worker-3',
    )}&version=2.19.1&targets=BIOS`;
    const res = await preflight(server, query);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      version: '2.19.1',
      skipped: [{ node: 'worker-1', reason: 'already at 2.19.1' }],
      typedCount: 2,
    });
    expect(res.body.nodes.map((n: any) => n.node)).toEqual([
      'worker-2',
      'worker-3',
    ]);
    // The skipped node's reading and a planned node's, field by field (the portal's
    // Components choice lists both): id where the reading kept it, never updateable.
    const reading = (version: string) => [
      {
        id: '/redfish/v1/UpdateService/FirmwareInventory/BIOS',
        name: 'BIOS',
        version,
      },
      { name: 'iDRAC', version: '7.00.00' },
    ];
    expect(res.body.skipped[0].firmware).toEqual(reading('2.19.1'));
    expect(res.body.nodes[0].versions).toEqual({ firmware: reading('2.18.0') });
    const created = await createWith(server, query, {
      intent: 'firmware',
      nodes: ['worker-1', 'worker-2', 'worker-3'],
      firmware: { imageURI: FIRMWARE, version: '2.19.1', targets: ['BIOS'] },
    });
    expect(created.status).toBe(201);
    expect(cluster.createdPlans[0].spec.firmware).toEqual({
      imageURI: FIRMWARE,
      version: '2.19.1',
      targets: ['BIOS'],
    });
    // version and targets go with a firmware plan only.
    expect(
      (await preflight(server, `${upgradeQuery('worker-1')}&version=2.19.1`))
        .status,
    ).toBe(400);
  });

  it('takes each targets parameter whole: an id a BMC wrote with a comma in it is one target', async () => {
    const cluster = rack('redfish');
    const odd = '/redfish/v1/UpdateService/FirmwareInventory/BIOS,Backup';
    cluster.bmcHealth.set('worker-1', {
      ...(cluster.bmcHealth.get('worker-1') as any),
      firmware: [{ id: odd, name: 'BIOS', version: '2.19.1' }],
    } as any);
    const { server } = await start(cluster);
    const base = `${firmwareQuery('worker-1,worker-2')}&version=2.19.1`;
    const one = await preflight(
      server,
      `${base}&targets=${encodeURIComponent(odd)}`,
    );
    expect(one.status).toBe(200);
    // Cut at the comma, the target would name no component worker-1 reports.
    expect(one.body.skipped).toEqual([
      expect.objectContaining({
        node: 'worker-1',
        reason: 'already at 2.19.1',
      }),
    ]);
    const two = await preflight(
      server,
      `${base}&targets=${encodeURIComponent(odd)}&targets=BMC`,
    );
    expect(two.status).toBe(200);
    expect(two.body.skipped ?? []).toEqual([]);
    expect((await preflight(server, `${base}&targets=`)).status).toBe(400);
  });

  it('from a source that requires a checksum: 400 without one (pre-flight and plan), taken with one', async () => {
    const cluster = rack('redfish');
    const { server } = await start(cluster, {
      config: {
        upgrades: {
          ...UPGRADES,
          firmwareSources: [
            {
              origin: 'https://firmware.plant.example',
              checksumRequired: true,
            },
          ],
        },
      },
    });
    const pre = await preflight(server, firmwareQuery('worker-1'));
    expect(pre.status).toBe(400);
    expect(pre.body.error.message).toContain('requires a checksum');
    const checksum = `sha256:${'ab'.repeat(32)}`;
    const query = `${firmwareQuery('worker-1')}&checksum=${checksum}`;
    const without = await createWith(server, query, {
      intent: 'firmware',
      nodes: ['worker-1'],
      firmware: { imageURI: FIRMWARE },
    });
    expect(without.status).toBe(400);
    expect(without.body.error.message).toContain('requires a checksum');
    expect(cluster.writes).toBe(0);
    const res = await createWith(server, query, {
      intent: 'firmware',
      nodes: ['worker-1'],
      firmware: { imageURI: FIRMWARE, checksum },
    });
    expect(res.status).toBe(201);
    expect(cluster.createdPlans[0].spec.firmware).toMatchObject({ checksum });
  });

  it('reads back each step\'s firmware version before and after, and "1 of 2 at 2.19.1"; nothing else of the status', async () => {
    const cluster = rack('redfish');
    const { server } = await start(cluster);
    const query = `${firmwareQuery('worker-1,worker-3')}&version=2.19.1`;
    const created = await createWith(server, query, {
      intent: 'firmware',
      nodes: ['worker-1', 'worker-3'],
      firmware: { imageURI: FIRMWARE, version: '2.19.1' },
    });
    expect(created.status).toBe(201);
    const stored = cluster.planList[0];
    // Whoever can write the plan's status (kubectl) can put anything there: the answer
    // carries the versions field by field and nothing it does not name.
    stored.status = {
      phase: 'Running',
      nodes: [
        {
          name: 'worker-1',
          phase: 'Done',
          firmwareVersion: {
            before: '2.18.0',
            after: '2.19.1',
            bmcPassword: 'hunter2',
          },
          bmcSecret: 'hunter2',
        },
        {
          name: 'worker-3',
          phase: 'Running',
          firmwareVersion: { before: '2.18.0' },
          talosVersion: { before: 'v1.11.3', token: 'hunter2' },
        },
      ],
    } as any;
    const res = await request(server).get(`${BASE}/${created.body.name}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      intent: 'firmware',
      firmware: { imageURI: FIRMWARE, version: '2.19.1' },
      versions: {
        target: '2.19.1',
        atTarget: 1,
        total: 2,
        text: '1 of 2 at 2.19.1',
      },
    });
    expect(res.body.nodes[0]).toEqual({
      name: 'worker-1',
      controlPlane: false,
      phase: 'Done',
      firmwareVersion: { before: '2.18.0', after: '2.19.1' },
    });
    expect(res.body.nodes[1]).toEqual({
      name: 'worker-3',
      controlPlane: false,
      phase: 'Running',
      firmwareVersion: { before: '2.18.0' },
      talosVersion: { before: 'v1.11.3' },
    });
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
    // The list answers each plan the same way.
    const list = await request(server).get(BASE);
    expect(list.status).toBe(200);
    expect(list.body.items[0].nodes[0].firmwareVersion).toEqual({
      before: '2.18.0',
      after: '2.19.1',
    });
    expect(JSON.stringify(list.body)).not.toContain('hunter2');
  });

  it('creates the plan with spec.firmware on a redfish channel', async () => {
    const cluster = rack('redfish');
    const { server } = await start(cluster);
    const res = await createWith(server, firmwareQuery('worker-1,worker-3'), {
      intent: 'firmware',
      nodes: ['worker-1', 'worker-3'],
      firmware: {
        imageURI: FIRMWARE,
        targets: ['/redfish/v1/UpdateService/FirmwareInventory/BIOS'],
        applyTime: 'OnReset',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.name).toMatch(/^firmware-plan-/);
    expect(cluster.createdPlans[0].spec).toMatchObject({
      intent: 'firmware',
      nodes: ['worker-1', 'worker-3'],
      firmware: { imageURI: FIRMWARE, applyTime: 'OnReset' },
    });
  });
});
