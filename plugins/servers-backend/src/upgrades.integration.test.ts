/*
 * Upgrades and firmware updates (docs/upgrades.md) on the simulated rack's real
 * apiserver, as the Backstage identity of e2e/rack/demo/backstage-access.yaml with the
 * CRDs' CEL rules: an allowed upgrade creates the NodeMaintenance with spec.upgrade, which
 * the apiserver admits; a refused one (an image outside servers.upgrades.talosImages, a
 * look-alike registry, force below the hazard rung, a firmware update on the talos
 * channel) writes nothing. No operator runs here: what was created stays as created.
 */
import { createServiceFactory } from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { signalsServiceRef } from '@backstage/plugin-signals-node';
import { KubeHttp } from '@rackside/plugin-servers-node';
import {
  eventually,
  startTestRack,
  type TestRack,
} from '@rackside/rack-testing';
import request from 'supertest';
import { serversPlugin } from './plugin';
import {
  advertiseTalosChannel,
  installRackside,
  RACK_DRAIN_OPTIONS,
  RACK_DRAIN_QUERY,
} from './testing/rackBackend';

jest.setTimeout(90_000);

type Obj = Record<string, any>;

const REASON = 'integration test: roll worker-1 onto Talos v1.12.0';
const BASE = '/api/servers/clusters/plant-a';
const NM = '/apis/rackside.dev/v1alpha1/nodemaintenances';
const TARGET = 'factory.talos.dev/installer/376567988ad3:v1.12.0';

let rack: TestRack | undefined;
let admin: KubeHttp;
let backend: { server: any; stop(): Promise<void> } | undefined;

beforeAll(async () => {
  rack = await startTestRack({ withTalos: false, withRedfish: false });
  const rackside = await installRackside(rack);
  admin = rackside.admin;
  await advertiseTalosChannel(admin);
  backend = await startTestBackend({
    features: [
      serversPlugin,
      mockServices.permissions.factory({ result: AuthorizeResult.ALLOW }),
      createServiceFactory({
        service: signalsServiceRef,
        deps: {},
        factory: () => ({ publish: async () => {} }),
      }),
      mockServices.rootConfig.factory({
        data: {
          servers: {
            upgrades: {
              talosImages: ['factory.talos.dev/installer/'],
              firmwareSources: ['https://firmware.plant.example'],
            },
            clusters: [
              {
                name: 'plant-a',
                url: rack.info.server,
                caFile: rack.info.caFile,
                serviceAccountToken: rackside.backstageToken,
              },
            ],
          },
        },
      }),
    ],
  });
}, 180_000);

afterAll(async () => {
  await backend?.stop();
  await rack?.stop();
}, 60_000);

/** The NodeMaintenances of `node` in the apiserver. */
async function maintenancesOf(node: string): Promise<Obj[]> {
  const list: Obj = await admin.request({ method: 'GET', path: NM });
  return list.items.filter((m: Obj) => m.spec.nodeName === node);
}

/** The pre-flight of `action` on `node`, once the backend's caches have synced. */
async function preflight(node: string, action: string): Promise<Obj> {
  return eventually(
    `the ${action} pre-flight of ${node}`,
    async () => {
      const res = await request(backend!.server).get(
        `${BASE}/servers/${node}/preflight?action=${action}${RACK_DRAIN_QUERY}`,
      );
      return res.status === 200 ? res.body : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
}

/**
 * A request with a fresh acknowledgement and the typed name, as the dialog sends it; a
 * pre-flight that changed before the request (the rack's workloads settling) is
 * acknowledged again.
 */
async function requestAcknowledged(
  node: string,
  action: string,
  body: Obj,
): Promise<request.Response> {
  return eventually(
    `the ${action} request of ${node} with a pre-flight that holds`,
    async () => {
      const pre = await preflight(node, action);
      const res = await request(backend!.server)
        .post(`${BASE}/servers/${node}/actions/${action}`)
        .send({
          reason: REASON,
          preflightToken: pre.token,
          typedName: node,
          ...RACK_DRAIN_OPTIONS,
          ...body,
        });
      return res.status === 409 && res.body.preflight ? undefined : res;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}

describe('upgrades on the simulated rack', () => {
  it('refuses an image outside the allowed list, a look-alike registry and force below the hazard rung: nothing is written', async () => {
    for (const image of [
      'ghcr.io/siderolabs/installer:v1.12.0',
      'factory.talos.dev.evil.example/installer/x:v1.12.0',
      'attacker@factory.talos.dev/installer/x:v1.12.0',
    ]) {
      const res = await requestAcknowledged('worker-2', 'upgrade', { image });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(
        /is not in the allowed list.*servers\.upgrades\.talosImages/,
      );
    }
    const forced = await requestAcknowledged('worker-2', 'upgrade', {
      image: TARGET,
      force: true,
    });
    expect(forced.status).toBe(400);
    expect(forced.body.error.message).toMatch(/force skips Talos's etcd/);
    expect(await maintenancesOf('worker-2')).toEqual([]);
  });

  it('refuses a firmware update on the talos channel (400): nothing is written', async () => {
    const res = await requestAcknowledged('worker-3', 'firmware', {
      imageURI: 'https://firmware.plant.example/bios.exe',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/power channel is talos/);
    expect(await maintenancesOf('worker-3')).toEqual([]);
  });

  it('creates the NodeMaintenance with spec.upgrade, admitted by the CRD', async () => {
    const res = await requestAcknowledged('worker-1', 'upgrade', {
      image: TARGET,
      stage: true,
    });
    expect(res.status).toBe(201);
    const stored: Obj = await admin.request({
      method: 'GET',
      path: `${NM}/${res.body.name}`,
    });
    expect(stored.spec).toMatchObject({
      nodeName: 'worker-1',
      intent: 'upgrade',
      reason: REASON,
      requestedBy: 'user:default/mock',
      upgrade: { image: TARGET, stage: true },
      preflight: { ceremony: 'typed-name' },
      drain: { force: false },
    });
    expect(await maintenancesOf('worker-1')).toHaveLength(1);
  });
});
