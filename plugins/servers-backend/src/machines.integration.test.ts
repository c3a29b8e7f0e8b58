/*
 * The machine routes against the real apiserver of the simulated rack (with its Talos
 * emulator, for the foreign cluster's real talosconfig), as the Backstage identity of
 * e2e/rack/demo/backstage-access.yaml: a Reset and add request lands as a MachineReclaim
 * plus a Secret owned by it that the backend itself cannot read back; the typed UUID is
 * checked against what the operator reported; addresses and joins land on the objects.
 * No operator runs here: the test writes the status the operator would.
 */
import { RECLAIM_ADDED_ADDRESSES_ANNOTATION } from '@rackside/plugin-servers-common';
import { KubeHttp } from '@rackside/plugin-servers-node';
import {
  eventually,
  startTestRack,
  type TestRack,
} from '@rackside/rack-testing';
import fs from 'node:fs';
import request from 'supertest';
import {
  installRackside,
  startServersBackendOnRack,
} from './testing/rackBackend';

jest.setTimeout(60_000);

type Obj = Record<string, any>;

const NS = 'rackside-system';
const RACKSIDE = `/apis/rackside.dev/v1alpha1/namespaces/${NS}`;
const REASON = 'integration test: take over the plant-old worker';
const SPARE_UUID = 'bba72157-81f6-43fd-9ddd-4684b42f4bd9';
const FOREIGN_WORKER_UUID = 'bd49731e-ab42-45d9-9f81-6c7d0e506bdf';

let rack: TestRack | undefined;
let admin: KubeHttp;
let asBackstage: KubeHttp;
let server: Parameters<typeof request>[0];
let foreignTalosconfig: string;
let address: (host: number) => string;

const get = (p: string): Promise<Obj> =>
  admin.request({ method: 'GET', path: p });

beforeAll(async () => {
  rack = await startTestRack({ withRedfish: false, withWorkloads: false });
  address = host => `127.0.${10 + rack!.info.net}.${host}`;
  const talos = rack.info.talos as { talosconfigs: Record<string, string> };
  foreignTalosconfig = fs.readFileSync(talos.talosconfigs['plant-old'], 'utf8');

  const rackside = await installRackside(rack);
  admin = rackside.admin;
  const apply = rackside.apply;
  // The TalosCluster the machines are added to (the operator's, in its namespace).
  await apply({
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'TalosCluster',
    metadata: { name: 'plant-a', namespace: NS },
    spec: {
      discovery: {
        allowedNetworks: [`127.0.${10 + rack.info.net}.0/24`],
        addresses: [address(31)],
        intervalSeconds: 300,
      },
      joinConfigSecretRef: { name: 'plant-a-join' },
      talosconfigSecretRef: { name: 'plant-a-talosconfig' },
    },
  });
  await apply({
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'TalosMachine',
    metadata: { name: SPARE_UUID, namespace: NS },
    spec: { cluster: 'plant-a' },
  });

  asBackstage = new KubeHttp(rack.tokenKubeConfig(rackside.backstageToken));
  const backend = await startServersBackendOnRack({
    rack,
    token: rackside.backstageToken,
    cluster: { operatorNamespace: NS },
  });
  server = backend.server;
}, 180_000);

afterAll(async () => {
  await rack?.stop();
}, 60_000);

const base = '/api/servers/clusters/plant-a';

describe('machine routes on the simulated rack', () => {
  it('reads the TalosCluster and the machine from the watch caches', async () => {
    const machines = await eventually(
      'the machine list',
      async () => {
        const res = await request(server).get(`${base}/machines`);
        return res.status === 200 && res.body.machines.length === 1
          ? res.body
          : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    expect(machines.talosClusters).toEqual([
      expect.objectContaining({
        name: 'plant-a',
        namespace: NS,
        addresses: [{ address: address(31), addedByReclaim: false }],
      }),
    ]);
    expect(machines.machines[0]).toMatchObject({
      uuid: SPARE_UUID,
      phase: 'Pending',
    });
  });

  it('offers Reset and add: the identity holds the reclaim verb', async () => {
    const res = await request(server).get(`${base}/reclaims/can`);
    expect(res.body).toEqual({ allowed: true });
  });

  it('adds a discovery address and asks to join a machine, as the objects show', async () => {
    const added = await request(server)
      .post(`${base}/discovery/addresses`)
      .send({ address: address(32), reason: REASON });
    expect(added.status).toBe(201);
    const cluster = await get(`${RACKSIDE}/talosclusters/plant-a`);
    expect(cluster.spec.discovery.addresses).toEqual([
      address(31),
      address(32),
    ]);
    expect(
      cluster.metadata.annotations?.[RECLAIM_ADDED_ADDRESSES_ANNOTATION],
    ).toBeUndefined();

    const joined = await request(server)
      .post(`${base}/machines/${SPARE_UUID}/join`)
      .send({ reason: REASON });
    expect(joined.status).toBe(200);
    const machine = await get(`${RACKSIDE}/talosmachines/${SPARE_UUID}`);
    expect(machine.spec.join).toMatchObject({
      by: 'user:default/mock',
      reason: REASON,
    });
    const again = await request(server)
      .post(`${base}/machines/${SPARE_UUID}/join`)
      .send({ reason: REASON });
    expect(again.status).toBe(409);
  });

  it('refuses addresses outside the allowed networks or off the Talos port: 400 naming the networks, nothing written', async () => {
    const apiserverPort = new URL(rack!.info.server as string).port;
    const before = await get(`${RACKSIDE}/talosclusters/plant-a`);
    for (const [bad, message] of [
      [
        `127.0.0.1:${apiserverPort}`,
        `port ${apiserverPort} is not the Talos API port`,
      ],
      ['127.0.0.1:1', 'port 1 is not the Talos API port'],
      ['169.254.169.254:80', 'port 80 is not the Talos API port'],
      ['1.2.3.4:99999', 'optionally with :port (1-65535)'],
      ['169.254.169.254', 'outside the allowed networks'],
      ['127.0.0.1', 'outside the allowed networks'],
      [
        'localhost',
        'localhost resolves to an address outside the allowed networks',
      ],
    ]) {
      const res = await request(server)
        .post(`${base}/discovery/addresses`)
        .send({ address: bad, reason: REASON });
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
      expect(res.body.error.message).toContain(message);
    }
    const outside = await request(server)
      .post(`${base}/discovery/addresses`)
      .send({ address: '127.0.0.1', reason: REASON });
    expect(outside.body.error.message).toContain(
      `(127.0.${10 + rack!.info.net}.0/24)`,
    );
    const after = await get(`${RACKSIDE}/talosclusters/plant-a`);
    expect(after.metadata.resourceVersion).toBe(
      before.metadata.resourceVersion,
    );
  });

  it('answers probe outcomes as categories, whatever text a status holds', async () => {
    // An operator before categories wrote the probe's error text.
    await admin.request({
      method: 'PATCH',
      path: `${RACKSIDE}/talosclusters/plant-a/status`,
      contentType: 'application/merge-patch+json',
      body: {
        status: {
          addresses: [
            {
              address: address(31),
              state: 'Unreachable',
              message:
                'Talos API 127.0.0.1:1 /machine.MachineService/Version: UNAVAILABLE: connect ECONNREFUSED',
            },
            {
              address: address(32),
              state: 'NotTalos',
              message: 'PERMISSION_DENIED: Received HTTP status code 403',
            },
          ],
        },
      },
    } as any);
    const answer = await eventually(
      'the status in the cache',
      async () => {
        const res = await request(server).get(`${base}/machines`);
        const addresses = res.body.talosClusters?.[0]?.addresses ?? [];
        return addresses.some((a: Obj) => a.state === 'NotTalos')
          ? addresses
          : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    expect(answer.map((a: Obj) => [a.state, a.message])).toEqual([
      ['Unreachable', 'no answer at this address'],
      ['NotTalos', 'something answered, but not as a Talos machine API'],
    ]);
    expect(JSON.stringify(answer)).not.toMatch(/ECONNREFUSED|403|UNAVAILABLE/);
  });

  it('creates a reclaim: the MachineReclaim, and a Secret owned by it that only the operator can read', async () => {
    const foreign = address(42);
    const res = await request(server).post(`${base}/reclaims`).send({
      address: foreign,
      talosconfig: foreignTalosconfig,
      reason: REASON,
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['name']);
    const name: string = res.body.name;

    const reclaim = await get(`${RACKSIDE}/machinereclaims/${name}`);
    expect(reclaim.spec).toEqual({
      address: foreign,
      targetCluster: 'plant-a',
      credentialSecretRef: { name: `${name}-talosconfig`, key: 'talosconfig' },
      ttlMinutes: 15,
      requestedBy: 'user:default/mock',
      reason: REASON,
    });

    const secret = await get(
      `/api/v1/namespaces/${NS}/secrets/${name}-talosconfig`,
    );
    // The credential binding the operator checks (docs/architecture.md, "Adding machines"): owner with this uid, label.
    expect(secret.type).toBe('Opaque');
    expect(secret.immutable).toBe(true);
    expect(secret.metadata.labels).toMatchObject({
      'rackside.dev/credential-of': name,
    });
    expect(secret.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'rackside.dev/v1alpha1',
        kind: 'MachineReclaim',
        name,
        uid: reclaim.metadata.uid,
        controller: true,
      },
    ]);
    expect(
      Buffer.from(secret.data.talosconfig, 'base64').toString('utf8'),
    ).toBe(foreignTalosconfig);

    // The backend's own identity cannot read it back (create only).
    await expect(
      asBackstage.request({
        method: 'GET',
        path: `/api/v1/namespaces/${NS}/secrets/${name}-talosconfig`,
      }),
    ).rejects.toMatchObject({ statusCode: 403 });

    // The address is listed for discovery and recorded as the reclaim's.
    const cluster = await get(`${RACKSIDE}/talosclusters/plant-a`);
    expect(cluster.spec.discovery.addresses).toContain(foreign);
    expect(
      cluster.metadata.annotations?.[RECLAIM_ADDED_ADDRESSES_ANNOTATION],
    ).toBe(foreign);

    // The answers never carry the credential.
    const one = await eventually(
      'the reclaim in the cache',
      async () => {
        const got = await request(server).get(`${base}/reclaims`);
        return got.body.items?.find((r: Obj) => r.name === name);
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    expect(one).toMatchObject({ phase: 'Pending', address: foreign });
    const keyLine = foreignTalosconfig
      .split('\n')
      .find(l => l.trim().startsWith('key:'))!
      .trim()
      .slice(5);
    expect(JSON.stringify(one)).not.toContain(keyLine);
    expect(JSON.stringify(one)).not.toContain('talosconfig');

    // A second request for the same address while this one runs: 409, nothing written.
    const second = await request(server).post(`${base}/reclaims`).send({
      address: foreign,
      talosconfig: foreignTalosconfig,
      reason: REASON,
    });
    expect(second.status).toBe(409);
    const all = await get(`${RACKSIDE}/machinereclaims`);
    expect(all.items).toHaveLength(1);

    // The operator reads the UUID through the credential; here the test says so.
    await admin.request({
      method: 'PATCH',
      path: `${RACKSIDE}/machinereclaims/${name}/status`,
      body: {
        status: {
          phase: 'AwaitingConfirmation',
          machineUUID: FOREIGN_WORKER_UUID,
          expiresAt: new Date(Date.now() + 15 * 60_000).toISOString(),
        },
      },
      contentType: 'application/merge-patch+json',
    });

    const wrong = await request(server)
      .post(`${base}/reclaims/${name}/confirm`)
      .send({ uuid: '437933e7-5d1e-4d07-8455-ea5d78c647f4' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain('uuid does not match');
    expect(
      (await get(`${RACKSIDE}/machinereclaims/${name}`)).spec.confirmUUID,
    ).toBeUndefined();

    const right = await request(server)
      .post(`${base}/reclaims/${name}/confirm`)
      .send({ uuid: FOREIGN_WORKER_UUID.toUpperCase() });
    expect(right.status).toBe(200);
    expect(
      (await get(`${RACKSIDE}/machinereclaims/${name}`)).spec.confirmUUID,
    ).toBe(FOREIGN_WORKER_UUID);
  });

  it('a talosconfig that does not load is a 400 and writes nothing', async () => {
    const before = (await get(`${RACKSIDE}/machinereclaims`)).items.length;
    const res = await request(server)
      .post(`${base}/reclaims`)
      .send({
        address: address(41),
        talosconfig: foreignTalosconfig.replace(
          /key: \S+/,
          'key: bm90IGEga2V5',
        ),
        reason: REASON,
      });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(
      'key is not base64 of a PEM block',
    );
    expect((await get(`${RACKSIDE}/machinereclaims`)).items).toHaveLength(
      before,
    );
    const secrets = await get(`/api/v1/namespaces/${NS}/secrets`);
    expect(
      secrets.items.filter(
        (s: Obj) => s.metadata.labels?.['rackside.dev/credential-of'],
      ),
    ).toHaveLength(before);
  });
});
