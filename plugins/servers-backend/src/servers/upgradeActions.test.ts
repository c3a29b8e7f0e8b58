/*
 * `POST .../actions/upgrade` and `.../actions/firmware` through the plugin's routes on a
 * fake cluster (docs/upgrades.md): the attacks first (a forged body, a look-alike
 * registry, a source with user info, force without the hazard rung, a missing
 * permission), each refused with nothing written; then what an allowed request writes.
 */
import { AuthorizeResult } from '@backstage/plugin-permission-common';
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

const REASON = 'roll the plant onto Talos v1.12.0';
const INSTALLER = 'factory.talos.dev/installer/376567988ad3';
const TARGET = `${INSTALLER}:v1.12.0`;
const FIRMWARE = 'https://firmware.plant.example/bios/r740-2.19.1.exe';
const UPGRADES = {
  talosImages: [
    'factory.talos.dev/installer/',
    'ghcr.io/siderolabs/installer:',
  ],
  firmwareSources: ['https://firmware.plant.example'],
};

function rack(type: 'talos' | 'redfish' = 'talos'): FakeCluster {
  const cluster = new FakeCluster('plant-a', [
    fakeTalosNode('cp-1', 'v1.11.3', { controlPlane: true }),
    fakeTalosNode('cp-2', 'v1.11.3', { controlPlane: true }),
    fakeTalosNode('cp-3', 'v1.11.3', { controlPlane: true }),
    fakeTalosNode('worker-1', 'v1.11.3'),
    fakeTalosNode('worker-2', 'v1.12.0'),
  ]);
  cluster.provider = fakePowerProvider(type);
  return cluster;
}

async function start(
  cluster: FakeCluster,
  options: Omit<ServersTestBackendOptions, 'features'> = {},
) {
  return startServersTestBackend({
    config: { upgrades: UPGRADES },
    ...options,
    features: [staticClusterRegistryFactory([cluster])],
  });
}

const url = (node: string, action: string) =>
  `/api/servers/clusters/plant-a/servers/${node}/actions/${action}`;
const preflightUrl = (node: string, action: string) =>
  `/api/servers/clusters/plant-a/servers/${node}/preflight?action=${action}`;

async function preflightOf(server: any, node: string, action: string) {
  const pre = await request(server).get(preflightUrl(node, action));
  expect(pre.status).toBe(200);
  return pre.body;
}

/** An upgrade of `node` with a fresh pre-flight and its typed name, plus `body`. */
async function upgrade(server: any, node: string, body: object) {
  const pre = await preflightOf(server, node, 'upgrade');
  return request(server)
    .post(url(node, 'upgrade'))
    .send({
      reason: REASON,
      preflightToken: pre.token,
      typedName: node,
      ...body,
    });
}

async function firmware(server: any, node: string, body: object) {
  const pre = await preflightOf(server, node, 'firmware');
  return request(server)
    .post(url(node, 'firmware'))
    .send({
      reason: REASON,
      preflightToken: pre.token,
      typedName: node,
      ...body,
    });
}

describe('POST .../actions/upgrade', () => {
  it.each([
    // A registry host that merely starts with an allowed one.
    ['ghcr.io.evil.example/siderolabs/installer:v1.12.0'],
    // A repository that merely starts with the allowed one.
    ['ghcr.io/siderolabs/installer.evil.com/payload:v1.12.0'],
    ['ghcr.io/siderolabs/installer-evil:v1.12.0'],
    ['factory.talos.dev.evil.example/installer/x:v1.12.0'],
    // User info, a scheme, dot segments: not an image reference at all.
    ['attacker@factory.talos.dev/installer/x:v1.12.0'],
    ['https://factory.talos.dev/installer/x:v1.12.0'],
    ['factory.talos.dev/installer/../../evil/x:v1.12.0'],
  ])(
    'refuses the image %s with 400 naming the allowed list; nothing written',
    async image => {
      const cluster = rack();
      const { server, events } = await start(cluster);
      const res = await upgrade(server, 'worker-1', { image });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('is not in the allowed list');
      expect(res.body.error.message).toContain('servers.upgrades.talosImages');
      expect(res.body.error.message).toContain('factory.talos.dev/installer/');
      expect(cluster.writes).toBe(0);
      expect(events.at(-1)).toMatchObject({
        outcome: 'fail',
        options: { severityLevel: 'high' },
      });
    },
  );

  it('refuses every image when the deployment allows none (servers.upgrades unset)', async () => {
    const cluster = rack();
    const { server } = await start(cluster, { config: {} });
    const res = await upgrade(server, 'worker-1', { image: TARGET });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(
      /no Talos image prefix is allowed.*servers\.upgrades\.talosImages/,
    );
    expect(cluster.writes).toBe(0);
  });

  it('refuses an image whose tag names no version (400), and a body without image', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const latest = await upgrade(server, 'worker-1', {
      image: `${INSTALLER}:latest`,
    });
    expect(latest.status).toBe(400);
    expect(latest.body.error.message).toMatch(/names no Talos version/);
    const none = await upgrade(server, 'worker-1', {});
    expect(none.status).toBe(400);
    expect(none.body.error.message).toBe('image is required for an upgrade');
    expect(cluster.writes).toBe(0);
  });

  it('refuses a forged body: firmware fields on an upgrade, upgrade fields on a reboot, a wrong type', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const mixed = await upgrade(server, 'worker-1', {
      image: TARGET,
      imageURI: FIRMWARE,
    });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error.message).toBe(
      'imageURI is taken by a firmware update only, not by upgrade',
    );
    const pre = await preflightOf(server, 'worker-1', 'reboot');
    const reboot = await request(server).post(url('worker-1', 'reboot')).send({
      reason: REASON,
      preflightToken: pre.token,
      typedName: 'worker-1',
      image: TARGET,
    });
    expect(reboot.status).toBe(400);
    expect(reboot.body.error.message).toBe(
      'image is taken by an upgrade only, not by reboot',
    );
    const typed = await upgrade(server, 'worker-1', { image: ['x'] });
    expect(typed.status).toBe(400);
    expect(typed.body.error.message).toMatch(/image must be a string/);
    expect(cluster.writes).toBe(0);
  });

  it('refuses an upgrade on a channel that is not talos (400, the capability rule) and does not offer it', async () => {
    const cluster = rack('redfish');
    cluster.bmcNodes = ['worker-1'];
    const { server } = await start(cluster);
    const detail = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-1',
    );
    expect(detail.body.actions.upgrade).toMatchObject({
      offered: false,
      why: expect.stringMatching(/talos power channel.*redfish/),
    });
    const res = await upgrade(server, 'worker-1', { image: TARGET });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(
      "A Talos upgrade goes over the talos power channel, and this deployment's is redfish.",
    );
    expect(cluster.writes).toBe(0);
  });

  it('refuses force below the hazard rung (400); nothing written', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const res = await upgrade(server, 'worker-1', {
      image: TARGET,
      force: true,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(
      /force skips Talos's etcd health check.*acknowledged at the typed-name rung/,
    );
    expect(cluster.writes).toBe(0);
  });

  it('refuses 403 naming servers:upgrade to a caller who may reboot; nothing written', async () => {
    const cluster = rack();
    const { server, authorized } = await start(cluster, {
      decisions: { 'servers:upgrade': AuthorizeResult.DENY },
    });
    // Not even the pre-flight: it is the action's.
    const pre = await request(server).get(preflightUrl('worker-1', 'upgrade'));
    expect(pre.status).toBe(403);
    expect((await preflightOf(server, 'worker-1', 'reboot')).token).toEqual(
      expect.any(String),
    );
    const res = await request(server)
      .post(url('worker-1', 'upgrade'))
      .send({ reason: REASON, typedName: 'worker-1', image: TARGET });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe(
      'you are not allowed to upgrade worker-1 (servers:upgrade)',
    );
    expect(authorized.some(r => r.permission.name === 'servers:upgrade')).toBe(
      true,
    );
    expect(cluster.writes).toBe(0);
  });

  it('answers 409 "already at v1.12.0" for a node that runs the target; nothing written', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const res = await upgrade(server, 'worker-2', { image: TARGET });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toBe(
      'upgrade of worker-2 refused: already at v1.12.0',
    );
    expect(cluster.writes).toBe(0);
  });

  it('shows the version the node runs in the pre-flight, at the typed-name rung of a reboot', async () => {
    const { server } = await start(rack());
    const pre = await preflightOf(server, 'worker-1', 'upgrade');
    expect(pre).toMatchObject({
      action: 'upgrade',
      versions: { talos: 'v1.11.3' },
      ceremony: { level: 'typed-name' },
      canProceed: true,
    });
    // A reboot's token is not an upgrade's.
    const reboot = await preflightOf(server, 'worker-1', 'reboot');
    expect(reboot.versions).toBeUndefined();
    const res = await request(server).post(url('worker-1', 'upgrade')).send({
      reason: REASON,
      preflightToken: reboot.token,
      typedName: 'worker-1',
      image: TARGET,
    });
    expect(res.status).toBe(409);
  });

  it('asks for the typed name like a reboot', async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const pre = await preflightOf(server, 'worker-1', 'upgrade');
    const res = await request(server).post(url('worker-1', 'upgrade')).send({
      reason: REASON,
      preflightToken: pre.token,
      image: TARGET,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/Type the node name worker-1/);
    expect(cluster.writes).toBe(0);
  });

  it('creates the NodeMaintenance with spec.upgrade, audited high with the image', async () => {
    const cluster = rack();
    const { server, events } = await start(cluster);
    const res = await upgrade(server, 'worker-1', {
      image: TARGET,
      stage: true,
    });
    expect(res.status).toBe(201);
    expect(cluster.created).toHaveLength(1);
    expect(cluster.created[0].spec).toMatchObject({
      nodeName: 'worker-1',
      intent: 'upgrade',
      reason: REASON,
      upgrade: { image: TARGET, stage: true },
      preflight: { ceremony: 'typed-name' },
      drain: { force: false },
    });
    expect(events.at(-1)).toMatchObject({
      outcome: 'success',
      options: { severityLevel: 'high' },
      meta: { action: 'upgrade', upgrade: { image: TARGET, stage: true } },
    });
  });

  it('is held by an approval rule that selects upgrades, like any other request', async () => {
    const cluster = rack();
    const { server } = await start(cluster, {
      config: {
        upgrades: UPGRADES,
        approvals: {
          rules: [
            {
              name: 'talos-upgrades',
              select: { actions: ['upgrade'] },
              approvers: ['group:default/platform-oncall'],
            },
          ],
        },
      },
    });
    const res = await upgrade(server, 'worker-1', { image: TARGET });
    expect(res.status).toBe(201);
    expect(res.body.approval).toMatchObject({ rule: 'talos-upgrades' });
    expect(cluster.created[0].spec).toMatchObject({
      intent: 'upgrade',
      upgrade: { image: TARGET },
      approval: {
        required: true,
        rule: 'talos-upgrades',
        requestedRung: 'typed-name',
      },
    });
  });

  it("takes Talos's force at the hazard rung, and never as a drain option", async () => {
    const cluster = rack();
    const { server } = await start(cluster);
    const pre = await preflightOf(server, 'cp-1', 'upgrade');
    expect(pre.ceremony.level).toBe('hazard');
    const res = await request(server).post(url('cp-1', 'upgrade')).send({
      reason: REASON,
      preflightToken: pre.token,
      typedName: 'cp-1',
      image: TARGET,
      force: true,
    });
    expect(res.status).toBe(201);
    expect(cluster.created[0].spec).toMatchObject({
      intent: 'upgrade',
      upgrade: { image: TARGET, force: true },
      preflight: { ceremony: 'hazard' },
      drain: { force: false },
    });
  });
});

describe('POST .../actions/firmware', () => {
  function bmcRack() {
    const cluster = rack('redfish');
    cluster.bmcNodes = ['worker-1', 'worker-2'];
    cluster.bmcHealth.set('worker-1', {
      firmware: [
        {
          id: '/redfish/v1/UpdateService/FirmwareInventory/BIOS',
          name: 'BIOS',
          version: '2.18.0',
          updateable: true,
        },
        { name: 'iDRAC', version: '7.00.00', updateable: true },
      ],
    } as any);
    return cluster;
  }

  it.each([
    ['https://attacker@firmware.plant.example/bios.exe', /user info/],
    ['https://firmware.plant.example@evil.example/bios.exe', /user info/],
    ['http://firmware.plant.example/bios.exe', /not an https URL/],
    [
      'https://firmware.plant.example.evil.example/bios.exe',
      /not from an allowed firmware source/,
    ],
    [
      'https://firmware.plant.example:8443/bios.exe',
      /not from an allowed firmware source/,
    ],
    ['https://firmware.plant.example\\@evil.example/x', /backslash/],
  ])(
    'refuses the image URI %s with 400 naming the list; nothing written',
    async (imageURI, why) => {
      const cluster = bmcRack();
      const { server } = await start(cluster);
      const res = await firmware(server, 'worker-1', { imageURI });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(why);
      expect(res.body.error.message).toContain(
        'servers.upgrades.firmwareSources',
      );
      expect(cluster.writes).toBe(0);
    },
  );

  it('refuses a firmware update where no BMC can carry it (400): the talos channel, a node without ServerBMC', async () => {
    const talos = rack();
    const { server } = await start(talos);
    const res = await firmware(server, 'worker-1', { imageURI: FIRMWARE });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(
      /Redfish UpdateService, and the power channel is talos/,
    );
    expect(talos.writes).toBe(0);

    const redfish = bmcRack();
    const other = await start(redfish);
    const withBmc = await firmware(other.server, 'worker-1', {
      imageURI: FIRMWARE,
    });
    expect(withBmc.status).toBe(201);
    const cp = await firmware(other.server, 'cp-1', { imageURI: FIRMWARE });
    expect(cp.status).toBe(400);
    expect(cp.body.error.message).toMatch(/cp-1 has no ServerBMC/);
    expect(redfish.created).toHaveLength(1);
  });

  it('refuses 403 naming servers:firmware to a caller who may upgrade; nothing written', async () => {
    const cluster = bmcRack();
    const { server } = await start(cluster, {
      decisions: { 'servers:firmware': AuthorizeResult.DENY },
    });
    const pre = await request(server).get(preflightUrl('worker-1', 'firmware'));
    expect(pre.status).toBe(403);
    expect((await preflightOf(server, 'worker-1', 'upgrade')).token).toEqual(
      expect.any(String),
    );
    const res = await request(server)
      .post(url('worker-1', 'firmware'))
      .send({ reason: REASON, typedName: 'worker-1', imageURI: FIRMWARE });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe(
      'you are not allowed to update the firmware of worker-1 (servers:firmware)',
    );
    expect(cluster.writes).toBe(0);
  });

  it('refuses a body without imageURI, or with an upgrade field', async () => {
    const cluster = bmcRack();
    const { server } = await start(cluster);
    const none = await firmware(server, 'worker-1', {});
    expect(none.status).toBe(400);
    expect(none.body.error.message).toBe(
      'imageURI is required for a firmware update',
    );
    const mixed = await firmware(server, 'worker-1', {
      imageURI: FIRMWARE,
      stage: true,
    });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error.message).toBe(
      'stage is taken by an upgrade only, not by firmware',
    );
    const when = await firmware(server, 'worker-1', {
      imageURI: FIRMWARE,
      applyTime: 'Later',
    });
    expect(when.status).toBe(400);
    expect(when.body.error.message).toMatch(/applyTime must be one of/);
    expect(cluster.writes).toBe(0);
  });

  it('shows the inventory in the pre-flight and creates the NodeMaintenance with spec.firmware', async () => {
    const cluster = bmcRack();
    const { server, events } = await start(cluster);
    const pre = await preflightOf(server, 'worker-1', 'firmware');
    // Each component's id where the reading kept it (what targets name), and nothing
    // else of the reading (updateable stays on the server).
    expect(pre.versions).toEqual({
      firmware: [
        {
          id: '/redfish/v1/UpdateService/FirmwareInventory/BIOS',
          name: 'BIOS',
          version: '2.18.0',
        },
        { name: 'iDRAC', version: '7.00.00' },
      ],
    });
    expect(pre.ceremony.level).toBe('typed-name');
    const res = await request(server)
      .post(url('worker-1', 'firmware'))
      .send({
        reason: REASON,
        preflightToken: pre.token,
        typedName: 'worker-1',
        imageURI: FIRMWARE,
        targets: ['/redfish/v1/UpdateService/FirmwareInventory/BIOS'],
        applyTime: 'OnReset',
      });
    expect(res.status).toBe(201);
    expect(cluster.created[0].spec).toMatchObject({
      nodeName: 'worker-1',
      intent: 'firmware',
      firmware: {
        imageURI: FIRMWARE,
        targets: ['/redfish/v1/UpdateService/FirmwareInventory/BIOS'],
        applyTime: 'OnReset',
      },
      preflight: { ceremony: 'typed-name' },
    });
    expect(events.at(-1)).toMatchObject({
      outcome: 'success',
      options: { severityLevel: 'high' },
      meta: { action: 'firmware', firmware: { imageURI: FIRMWARE } },
    });
  });
  it('refuses 400 an image from a source that requires a checksum when the body has none; takes it with one, version and checksum into spec.firmware', async () => {
    const cluster = bmcRack();
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
    const without = await firmware(server, 'worker-1', { imageURI: FIRMWARE });
    expect(without.status).toBe(400);
    expect(without.body.error.message).toMatch(
      /the firmware source https:\/\/firmware\.plant\.example requires a checksum/,
    );
    const upper = await firmware(server, 'worker-1', {
      imageURI: FIRMWARE,
      checksum: `sha256:${'AB'.repeat(32)}`,
    });
    expect(upper.status).toBe(400);
    expect(upper.body.error.message).toMatch(/checksum must be sha256/);
    expect(cluster.writes).toBe(0);
    const checksum = `sha256:${'ab'.repeat(32)}`;
    const ok = await firmware(server, 'worker-1', {
      imageURI: FIRMWARE,
      version: '2.19.1',
      checksum,
    });
    expect(ok.status).toBe(201);
    expect(cluster.created[0].spec).toMatchObject({
      firmware: { imageURI: FIRMWARE, version: '2.19.1', checksum },
    });
  });

  it('answers 409 "already at" when the BMC\'s last reading reports the version for the targets; nothing written', async () => {
    const cluster = bmcRack();
    const { server } = await start(cluster);
    const res = await firmware(server, 'worker-1', {
      imageURI: FIRMWARE,
      targets: ['BIOS'],
      version: '2.18.0',
    });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toBe(
      'firmware update of worker-1 refused: already at 2.18.0',
    );
    expect(cluster.writes).toBe(0);
  });
});
