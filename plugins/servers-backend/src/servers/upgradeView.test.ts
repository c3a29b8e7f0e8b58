/*
 * What the portal shows of upgrades (issue 47), through the read routes: a row's Talos
 * version (from the Node's osImage), and a maintenance's upgrade or firmware update (what
 * was asked and what the operator recorded).
 */
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import request from 'supertest';
import { staticClusterRegistryFactory } from '../cluster/clusterRegistry';
import { FakeCluster, fakeMaintenance, fakeNode } from '../testing/fakeCluster';
import {
  startServersTestBackend,
  type ServersTestBackendOptions,
} from '../testing/testBackend';

// The first test starts a whole test backend (cold module loads): on a busy machine that
// alone can pass Jest's default 5 s.
jest.setTimeout(30_000);

const IMAGE = 'factory.talos.dev/installer/abc:v1.12.0';

function withOsImage(name: string, osImage: string | undefined) {
  const node = fakeNode(name);
  (node.status!.nodeInfo as any).osImage = osImage;
  return node;
}

function rack(): FakeCluster {
  const cluster = new FakeCluster('plant-a', [
    withOsImage('worker-1', 'Talos (v1.11.3)'),
    withOsImage('worker-2', 'Talos (v1.12.0)'),
    // Not Talos, and a version-like text that is not one: no version shown.
    withOsImage('worker-3', 'Ubuntu 24.04.1 LTS'),
    withOsImage('worker-4', 'Talos (v1.12.0) (evil)'),
  ]);
  cluster.bmcNodes = ['worker-1', 'worker-2'];
  const upgrade = fakeMaintenance(
    'worker-1-upgrade',
    'worker-1',
    'upgrade',
    'Rebooting',
    {
      upgrade: { image: IMAGE },
    } as any,
  );
  upgrade.status = {
    phase: 'Rebooting',
    upgrade: {
      image: IMAGE,
      fromVersion: 'v1.11.3',
      toVersion: 'v1.12.0',
      sentAt: '2026-12-07T12:00:00Z',
    },
  } as any;
  const firmware = fakeMaintenance(
    'worker-2-firmware',
    'worker-2',
    'firmware',
    'Drained',
    {
      firmware: { imageURI: 'https://fw.plant.example/bios-2.20.bin' },
    } as any,
  );
  firmware.status = {
    phase: 'Drained',
    firmware: {
      before: [{ id: 'BIOS', name: 'BIOS', version: '2.19.1' }],
      taskState: 'Running',
      percent: 40,
    },
  } as any;
  cluster.maintenanceList.push(upgrade, firmware);
  return cluster;
}

async function start(
  cluster: FakeCluster,
  options: Omit<ServersTestBackendOptions, 'features'> = {},
) {
  return startServersTestBackend({
    ...options,
    features: [staticClusterRegistryFactory([cluster])],
  });
}

describe('the Talos version of a server', () => {
  it('is on each row and in the detail when the osImage names one, and absent otherwise', async () => {
    const { server } = await start(rack());
    const list = await request(server).get(
      '/api/servers/clusters/plant-a/servers',
    );
    expect(list.status).toBe(200);
    const versions = Object.fromEntries(
      list.body.items.map((s: any) => [s.name, s.talosVersion]),
    );
    expect(versions).toEqual({
      'worker-1': 'v1.11.3',
      'worker-2': 'v1.12.0',
      'worker-3': undefined,
      'worker-4': undefined,
    });
    const detail = await request(server).get(
      '/api/servers/clusters/plant-a/servers/worker-2',
    );
    expect(detail.body.talosVersion).toBe('v1.12.0');
  });
});

describe("a maintenance's upgrade and firmware update", () => {
  it('the upgrade: what was asked and the versions the operator recorded', async () => {
    const { server } = await start(rack());
    const res = await request(server).get(
      '/api/servers/clusters/plant-a/maintenances/worker-1-upgrade',
    );
    expect(res.status).toBe(200);
    expect(res.body.upgrade).toEqual({
      request: { image: IMAGE },
      status: {
        image: IMAGE,
        fromVersion: 'v1.11.3',
        toVersion: 'v1.12.0',
        sentAt: '2026-12-07T12:00:00Z',
      },
    });
    expect(res.body.firmware).toBeUndefined();
  });

  it("the firmware update: the image asked, the inventory before and the BMC's task", async () => {
    const { server } = await start(rack());
    const res = await request(server).get(
      '/api/servers/clusters/plant-a/maintenances/worker-2-firmware',
    );
    expect(res.body.firmware).toEqual({
      request: { imageURI: 'https://fw.plant.example/bios-2.20.bin' },
      status: {
        before: [{ id: 'BIOS', name: 'BIOS', version: '2.19.1' }],
        taskState: 'Running',
        percent: 40,
      },
    });
    expect(res.body.upgrade).toBeUndefined();
  });

  it('another intent carries neither', async () => {
    const cluster = rack();
    cluster.maintenanceList.push(
      fakeMaintenance('worker-3-cordon', 'worker-3', 'cordon', 'Cordoned'),
    );
    const { server } = await start(cluster);
    const res = await request(server).get(
      '/api/servers/clusters/plant-a/maintenances/worker-3-cordon',
    );
    expect(res.status).toBe(200);
    expect(res.body.upgrade).toBeUndefined();
    expect(res.body.firmware).toBeUndefined();
  });
});

describe('GET /upgrades/sources', () => {
  const SOURCES = '/api/servers/upgrades/sources';

  it('answers the lists of servers.upgrades, audited as a read', async () => {
    const { server, events } = await start(rack(), {
      config: {
        upgrades: {
          talosImages: [
            'factory.talos.dev/installer/',
            'ghcr.io/siderolabs/installer:',
          ],
          firmwareSources: [
            'https://fw.plant.example',
            { origin: 'https://signed.plant.example', checksumRequired: true },
            { origin: 'https://open.plant.example', checksumRequired: false },
          ],
        },
      },
    });
    const res = await request(server).get(SOURCES);
    expect(res.status).toBe(200);
    // Which sources require a checksum, so the portal asks for one before the backend
    // refuses the request without it.
    expect(res.body).toEqual({
      talosImages: [
        'factory.talos.dev/installer/',
        'ghcr.io/siderolabs/installer:',
      ],
      firmwareSources: [
        'https://fw.plant.example',
        'https://signed.plant.example',
        'https://open.plant.example',
      ],
      firmwareChecksumRequired: ['https://signed.plant.example'],
    });
    expect(events).toHaveLength(1);
    expect(events[0].options).toMatchObject({
      eventId: 'server-read',
      meta: { read: 'upgrade-sources', actor: 'user:default/mock' },
    });
    expect(events[0].outcome).toBe('success');
  });

  it('empty lists when nothing is configured (every upgrade is refused then)', async () => {
    const { server } = await start(rack());
    const res = await request(server).get(SOURCES);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      talosImages: [],
      firmwareSources: [],
      firmwareChecksumRequired: [],
    });
  });

  it('403 for a caller who may read no server, as the cluster list', async () => {
    const { server } = await start(rack(), {
      decisions: { 'servers:read': AuthorizeResult.DENY },
      read: { result: AuthorizeResult.DENY },
      config: { upgrades: { talosImages: ['factory.talos.dev/installer/'] } },
    });
    const res = await request(server).get(SOURCES);
    expect(res.status).toBe(403);
    expect(res.body.talosImages).toBeUndefined();
  });
});
