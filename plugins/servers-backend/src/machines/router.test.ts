import {
  coreServices,
  createServiceFactory,
  type RootLoggerService,
} from '@backstage/backend-plugin-api';
import { mockCredentials } from '@backstage/backend-test-utils';
import {
  ConflictError,
  NotAllowedError,
  ServiceUnavailableError,
} from '@backstage/errors';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  machineReclaimSchema,
  RECLAIM_ADDED_ADDRESSES_ANNOTATION,
} from '@rackside/plugin-servers-common';
import request from 'supertest';
import { inspect } from 'node:util';
import {
  clusterRegistryServiceRef,
  staticClusterRegistry,
} from '../cluster/clusterRegistry';
import {
  machinesRegistryServiceRef,
  staticMachinesRegistry,
} from './machinesRegistry';
import {
  FakeMachines,
  fakeReclaim,
  fakeTalosCluster,
  fakeTalosMachine,
} from '../testing/fakeMachines';
import {
  FOREIGN_ADMIN_KEY_PEM,
  FOREIGN_KEY_MATERIAL,
  foreignTalosconfig,
} from '../testing/foreignTalosconfig';
import {
  startServersTestBackend,
  type RecordedAuditEvent,
  type ServersTestBackendOptions,
} from '../testing/testBackend';

const REASON = 'replace plant-old worker, ticket OPS-42';
const ME = mockCredentials.user().principal.userEntityRef;
const SPARE = 'bba72157-81f6-43fd-9ddd-4684b42f4bd9';
const FOREIGN_UUID = 'bd49731e-ab42-45d9-9f81-6c7d0e506bdf';
const TALOSCONFIG = foreignTalosconfig();
/** What must never leave the backend: the key, as PEM body and as talosconfig field. */
const SECRETS = [
  FOREIGN_KEY_MATERIAL,
  Buffer.from(FOREIGN_ADMIN_KEY_PEM).toString('base64'),
];

/** What an audit record holds (the mock also keeps the request object, the auditor does not). */
function auditText(events: Events): string {
  return inspect(
    events.map(e => ({
      eventId: e.options.eventId,
      initial: e.options.meta,
      meta: e.meta,
      error: e.error,
    })),
    { depth: 10 },
  );
}

function expectNoCredential(text: string) {
  for (const secret of SECRETS) {
    expect(text).not.toContain(secret);
    // A fragment is a leak too (parse errors quote a few characters).
    expect(text).not.toContain(secret.slice(20, 36));
  }
}

/** plant-a's machine side: one TalosCluster with spares, a foreign machine and a member. */
function plant(): FakeMachines {
  return new FakeMachines('plant-a', {
    clusters: [
      fakeTalosCluster('plant-a', {
        addresses: ['127.0.10.31', '127.0.10.42', '127.0.10.11'],
        status: [
          { address: '127.0.10.31', state: 'Maintenance', uuid: SPARE },
          { address: '127.0.10.42', state: 'AlreadyConfigured' },
          { address: '127.0.10.11', state: 'Member', uuid: 'uuid-cp-1' },
        ],
      }),
    ],
    machines: [
      fakeTalosMachine(SPARE, 'plant-a', { address: '127.0.10.31' }),
      fakeTalosMachine(
        '616b6ad6-7dd3-45b0-bb99-71c859ec845e',
        'plant-a',
        { phase: 'Joined', address: '127.0.10.11', nodeName: 'cp-1' },
        '2026-11-01T10:00:00Z',
      ),
    ],
  });
}

type Events = RecordedAuditEvent[];

/** A root logger that keeps every line, with its meta, as text. */
function capturingRootLogger(lines: string[]) {
  const make = (meta: object): RootLoggerService => {
    const log = (level: string) => (message: string, extra?: unknown) => {
      lines.push(
        `${level} ${message} ${inspect(meta, { depth: 10 })} ${inspect(extra, {
          depth: 10,
        })}`,
      );
    };
    return {
      error: log('error'),
      warn: log('warn'),
      info: log('info'),
      debug: log('debug'),
      child: more => make({ ...meta, ...more }),
    };
  };
  return createServiceFactory({
    service: coreServices.rootLogger,
    deps: {},
    factory: () => make({}),
  });
}

async function start(
  machines: FakeMachines,
  options: Omit<ServersTestBackendOptions, 'features' | 'read'> = {},
) {
  const lines: string[] = [];
  const started = await startServersTestBackend({
    ...options,
    features: [
      capturingRootLogger(lines),
      createServiceFactory({
        service: clusterRegistryServiceRef,
        deps: {},
        factory: () => staticClusterRegistry([]),
      }),
      createServiceFactory({
        service: machinesRegistryServiceRef,
        deps: {},
        factory: () => staticMachinesRegistry([machines]),
      }),
    ],
  });
  return { ...started, lines };
}

const base = '/api/servers/clusters/plant-a';

describe('GET /clusters/:cluster/machines', () => {
  it('answers the discovery addresses with what the probes found, and the machines newest first', async () => {
    const machines = plant();
    machines.clusterList[0].metadata.annotations = {
      [RECLAIM_ADDED_ADDRESSES_ANNOTATION]: '127.0.10.42',
    };
    machines.clusterList[0].spec.discovery.addresses.push('127.0.10.99');
    const { server } = await start(machines);
    const res = await request(server).get(`${base}/machines`);
    expect(res.status).toBe(200);
    expect(res.body.cluster).toBe('plant-a');
    expect(res.body.namespace).toBe('rackside-system');
    expect(res.body.talosClusters).toHaveLength(1);
    expect(res.body.talosClusters[0]).toMatchObject({
      name: 'plant-a',
      intervalSeconds: 300,
      allowedNetworks: ['127.0.10.0/24'],
      talosPort: 50000,
    });
    expect(res.body.talosClusters[0].addresses).toEqual([
      {
        address: '127.0.10.31',
        state: 'Maintenance',
        uuid: SPARE,
        message: 'maintenance mode',
        addedByReclaim: false,
      },
      {
        address: '127.0.10.42',
        state: 'AlreadyConfigured',
        message: 'configured by another Talos cluster',
        addedByReclaim: true,
      },
      {
        address: '127.0.10.11',
        state: 'Member',
        uuid: 'uuid-cp-1',
        message: 'a member of this cluster',
        addedByReclaim: false,
      },
      // Listed, not probed yet.
      { address: '127.0.10.99', addedByReclaim: false },
    ]);
    expect(res.body.machines.map((m: any) => [m.uuid, m.phase])).toEqual([
      [SPARE, 'Pending'],
      ['616b6ad6-7dd3-45b0-bb99-71c859ec845e', 'Joined'],
    ]);
    expect(res.body.machines[1]).toMatchObject({
      nodeName: 'cp-1',
      talosCluster: 'plant-a',
    });
  });

  it('403 without machines:read, 404 for an unknown cluster', async () => {
    const denied = await start(plant(), {
      decisions: { 'machines:read': AuthorizeResult.DENY },
    });
    const res = await request(denied.server).get(`${base}/machines`);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('machines:read');
    for (const path of ['/reclaims', '/reclaims/x']) {
      expect((await request(denied.server).get(`${base}${path}`)).status).toBe(
        403,
      );
    }
    const { server } = await start(plant());
    expect(
      (await request(server).get('/api/servers/clusters/nope/machines')).status,
    ).toBe(404);
  });

  it('audits every read at low severity; a denied read fails its event', async () => {
    const { server, events } = await start(plant(), {
      decisions: { 'machines:read': AuthorizeResult.DENY },
    });
    expect((await request(server).get(`${base}/reclaims/can`)).status).toBe(
      200,
    );
    expect((await request(server).get(`${base}/reclaims/r-1`)).status).toBe(
      403,
    );
    const reads = events.filter(e => e.options.eventId === 'machine-read');
    expect(
      reads.map(e => [
        e.options.severityLevel,
        e.options.meta.read,
        e.options.meta.via,
        e.outcome,
      ]),
    ).toEqual([
      ['low', 'can-reclaim', 'http', 'success'],
      ['low', 'reclaim', 'http', 'fail'],
    ]);
    expect(reads[1].meta).toMatchObject({
      actor: ME,
      cluster: 'plant-a',
      reclaim: 'r-1',
      outcome: 'denied',
    });
  });
});

describe('POST /clusters/:cluster/discovery/addresses', () => {
  it('appends the address, never recorded as a reclaim address, and audits who and why', async () => {
    const machines = plant();
    const { server, events } = await start(machines);
    const res = await request(server)
      .post(`${base}/discovery/addresses`)
      .send({ address: ' 127.0.10.32 ', reason: REASON });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      talosCluster: 'plant-a',
      address: '127.0.10.32',
    });
    const cluster = machines.clusterList[0];
    expect(cluster.spec.discovery.addresses).toEqual([
      '127.0.10.31',
      '127.0.10.42',
      '127.0.10.11',
      '127.0.10.32',
    ]);
    expect(
      cluster.metadata.annotations?.[RECLAIM_ADDED_ADDRESSES_ANNOTATION],
    ).toBeUndefined();
    expect(events).toHaveLength(1);
    expect(events[0].options.eventId).toBe('machine-discovery-address-add');
    expect(events[0].outcome).toBe('success');
    expect(events[0].meta).toMatchObject({
      actor: ME,
      cluster: 'plant-a',
      talosCluster: 'plant-a',
      address: ' 127.0.10.32 ',
      reason: REASON,
      outcome: 'address-added',
    });
  });

  it('drops a stale reclaim record of the address the user adds, so clean-up cannot take it', async () => {
    const machines = plant();
    machines.clusterList[0].metadata.annotations = {
      [RECLAIM_ADDED_ADDRESSES_ANNOTATION]: '127.0.10.42,127.0.10.50',
    };
    const { server } = await start(machines);
    const res = await request(server)
      .post(`${base}/discovery/addresses`)
      .send({ address: '127.0.10.50:50000', reason: REASON });
    expect(res.status).toBe(201);
    expect(
      machines.clusterList[0].metadata.annotations?.[
        RECLAIM_ADDED_ADDRESSES_ANNOTATION
      ],
    ).toBe('127.0.10.42');
  });

  it('403 without machines:add, writes nothing, audits the denial', async () => {
    const machines = plant();
    const { server, events } = await start(machines, {
      decisions: { 'machines:add': AuthorizeResult.DENY },
    });
    const res = await request(server)
      .post(`${base}/discovery/addresses`)
      .send({ address: '127.0.10.32', reason: REASON });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('machines:add');
    expect(machines.writes).toEqual([]);
    expect(events[0]).toMatchObject({
      outcome: 'fail',
      meta: { outcome: 'denied' },
    });
  });

  it.each([
    [{ reason: REASON }, 'address: address is required'],
    [
      { address: 'not an address!', reason: REASON },
      'address: must be an IP address or host name',
    ],
    [{ address: 42, reason: REASON }, 'address: address must be a string'],
    [{ address: '127.0.10.32' }, 'reason: reason is required'],
    [
      { address: '127.0.10.32', reason: 'short' },
      'reason must be at least 10 characters',
    ],
  ])('400 naming the field for %j', async (body, message) => {
    const machines = plant();
    const { server, events } = await start(machines);
    const res = await request(server)
      .post(`${base}/discovery/addresses`)
      .send(body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(message);
    expect(machines.writes).toEqual([]);
    expect(events[0]).toMatchObject({
      outcome: 'fail',
      meta: { outcome: 'invalid' },
    });
  });

  it.each([
    // The apiserver, a closed port, the cloud metadata service, not a port at all.
    [
      '127.0.0.1:6443',
      'port 6443 is not the Talos API port of this cluster (50000)',
    ],
    ['127.0.0.1:1', 'port 1 is not the Talos API port of this cluster (50000)'],
    ['169.254.169.254:80', 'port 80 is not the Talos API port'],
    [
      '1.2.3.4:99999',
      'must be an IP address or host name, optionally with :port (1-65535)',
    ],
    ['127.0.0.1', 'outside the allowed networks (127.0.10.0/24)'],
    ['169.254.169.254:50000', 'outside the allowed networks (127.0.10.0/24)'],
    [
      '[::ffff:169.254.169.254]:50000',
      'outside the allowed networks (127.0.10.0/24)',
    ],
    ['[::1]', 'outside the allowed networks (127.0.10.0/24)'],
    // Names are resolved: localhost (hosts file) and 0x7f000001 (inet_aton) are 127.0.0.1.
    [
      'localhost',
      'resolves to an address outside the allowed networks (127.0.10.0/24)',
    ],
    ['0x7f000001:50000', '127.0.10.0/24'],
  ])(
    '400 for %s, naming the allowed networks; nothing written',
    async (address, message) => {
      const machines = plant();
      const { server, events } = await start(machines);
      const res = await request(server)
        .post(`${base}/discovery/addresses`)
        .send({ address, reason: REASON });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(message);
      expect(machines.writes).toEqual([]);
      expect(machines.clusterList[0].spec.discovery.addresses).toHaveLength(3);
      expect(events[0]).toMatchObject({
        outcome: 'fail',
        meta: { outcome: 'invalid' },
      });
    },
  );

  it('takes an address inside the networks, with or without the Talos port', async () => {
    const machines = plant();
    const { server } = await start(machines);
    for (const address of ['127.0.10.33:50000', '127.0.10.34']) {
      const res = await request(server)
        .post(`${base}/discovery/addresses`)
        .send({ address, reason: REASON });
      expect(res.status).toBe(201);
    }
    expect(machines.clusterList[0].spec.discovery.addresses).toEqual(
      expect.arrayContaining(['127.0.10.33:50000', '127.0.10.34']),
    );
  });

  it('fails closed: a TalosCluster with no allowed networks takes no address', async () => {
    const machines = new FakeMachines('plant-a', {
      clusters: [fakeTalosCluster('plant-a', { allowedNetworks: [] })],
    });
    const { server } = await start(machines);
    const res = await request(server)
      .post(`${base}/discovery/addresses`)
      .send({ address: '127.0.10.33', reason: REASON });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(
      'lists no allowed networks (spec.discovery.allowedNetworks)',
    );
    expect(machines.writes).toEqual([]);
  });

  it('holds an address to the Talos port the TalosCluster names', async () => {
    const machines = new FakeMachines('plant-a', {
      clusters: [fakeTalosCluster('plant-a', { talosPort: 50001 })],
    });
    const { server } = await start(machines);
    const wrong = await request(server)
      .post(`${base}/discovery/addresses`)
      .send({ address: '127.0.10.33:50000', reason: REASON });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain('(50001)');
    const right = await request(server)
      .post(`${base}/discovery/addresses`)
      .send({ address: '127.0.10.33:50001', reason: REASON });
    expect(right.status).toBe(201);
  });

  it('409 for an address already listed (also as host:port), naming a reclaim that listed it', async () => {
    const machines = plant();
    machines.clusterList[0].metadata.annotations = {
      [RECLAIM_ADDED_ADDRESSES_ANNOTATION]: '127.0.10.42',
    };
    const { server } = await start(machines);
    const plain = await request(server)
      .post(`${base}/discovery/addresses`)
      .send({ address: '127.0.10.31:50000', reason: REASON });
    expect(plain.status).toBe(409);
    expect(plain.body.error.message).toBe(
      '127.0.10.31 is already a discovery address of plant-a',
    );
    const byReclaim = await request(server)
      .post(`${base}/discovery/addresses`)
      .send({ address: '127.0.10.42', reason: REASON });
    expect(byReclaim.status).toBe(409);
    expect(byReclaim.body.error.message).toContain(
      'a Reset and add request listed it',
    );
    expect(machines.writes).toEqual([]);
  });

  it('404 without a TalosCluster; 400 asking to name one when there are several', async () => {
    const none = new FakeMachines('plant-a');
    const a = await start(none);
    const res = await request(a.server)
      .post(`${base}/discovery/addresses`)
      .send({ address: '127.0.10.32', reason: REASON });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain(
      'has no TalosCluster in namespace rackside-system',
    );

    const two = new FakeMachines('plant-a', {
      clusters: [fakeTalosCluster('plant-a'), fakeTalosCluster('spare-pool')],
    });
    const b = await start(two);
    const ambiguous = await request(b.server)
      .post(`${base}/discovery/addresses`)
      .send({ address: '127.0.10.32', reason: REASON });
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error.message).toContain(
      'talosCluster: cluster plant-a has several TalosClusters (plant-a, spare-pool)',
    );
    const named = await request(b.server)
      .post(`${base}/discovery/addresses`)
      .send({
        address: '127.0.10.32',
        reason: REASON,
        talosCluster: 'spare-pool',
      });
    expect(named.status).toBe(201);
    expect(two.clusterList[1].spec.discovery.addresses).toEqual([
      '127.0.10.32',
    ]);
    const unknown = await request(b.server)
      .post(`${base}/discovery/addresses`)
      .send({ address: '127.0.10.33', reason: REASON, talosCluster: 'nope' });
    expect(unknown.status).toBe(404);
  });

  it('retries a write that lost a race with the operator', async () => {
    const machines = plant();
    machines.failNext.set(
      'talosclusters',
      new ConflictError('the object has been modified'),
    );
    const { server } = await start(machines);
    const res = await request(server)
      .post(`${base}/discovery/addresses`)
      .send({ address: '127.0.10.32', reason: REASON });
    expect(res.status).toBe(201);
    expect(machines.clusterList[0].spec.discovery.addresses).toContain(
      '127.0.10.32',
    );
  });
});

describe('POST /clusters/:cluster/machines/:uuid/join', () => {
  it('sets spec.join with who, why and when on a Pending machine', async () => {
    const machines = plant();
    const { server, events } = await start(machines);
    const res = await request(server)
      .post(`${base}/machines/${SPARE.toUpperCase()}/join`)
      .send({ reason: REASON });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: SPARE });
    const join = machines.machineList[0].spec.join!;
    expect(join).toMatchObject({ by: ME, reason: REASON });
    expect(Date.parse(join.at!)).toBeGreaterThan(Date.now() - 60_000);
    expect(events[0]).toMatchObject({
      outcome: 'success',
      options: { eventId: 'machine-join' },
      meta: {
        actor: ME,
        machine: SPARE,
        reason: REASON,
        outcome: 'join-requested',
      },
    });
  });

  it('403, 400, 404 and 409, each writing nothing', async () => {
    const machines = plant();
    machines.machineList.push(
      fakeTalosMachine('5c5b2654-0de5-4349-8eb0-23547ef8895d', 'plant-a'),
    );
    machines.machineList[2].spec.join = {
      by: 'user:default/other',
      reason: 'earlier',
      at: '2026-12-01T09:00:00Z',
    };
    const denied = await start(machines, {
      decisions: { 'machines:add': AuthorizeResult.DENY },
    });
    expect(
      (
        await request(denied.server)
          .post(`${base}/machines/${SPARE}/join`)
          .send({ reason: REASON })
      ).status,
    ).toBe(403);

    const { server } = await start(machines);
    const badUuid = await request(server)
      .post(`${base}/machines/worker-1/join`)
      .send({ reason: REASON });
    expect(badUuid.status).toBe(400);
    expect(badUuid.body.error.message).toContain(
      'uuid: worker-1 is not an SMBIOS UUID',
    );
    const noReason = await request(server)
      .post(`${base}/machines/${SPARE}/join`)
      .send({});
    expect(noReason.status).toBe(400);
    expect(noReason.body.error.message).toContain('reason: reason is required');
    const unknown = await request(server)
      .post(`${base}/machines/00000000-0000-0000-0000-000000000000/join`)
      .send({ reason: REASON });
    expect(unknown.status).toBe(404);
    const joined = await request(server)
      .post(`${base}/machines/616b6ad6-7dd3-45b0-bb99-71c859ec845e/join`)
      .send({ reason: REASON });
    expect(joined.status).toBe(409);
    expect(joined.body.error.message).toContain(
      'is Joined; only a Pending machine',
    );
    const twice = await request(server)
      .post(`${base}/machines/5c5b2654-0de5-4349-8eb0-23547ef8895d/join`)
      .send({ reason: REASON });
    expect(twice.status).toBe(409);
    expect(twice.body.error.message).toContain(
      'already being added: asked by user:default/other',
    );
    expect(machines.writes).toEqual([]);
  });
});

describe('GET /clusters/:cluster/reclaims/can', () => {
  it('allowed with machines:reclaim when the cluster lets Rackside reclaim', async () => {
    const { server } = await start(plant());
    const res = await request(server).get(`${base}/reclaims/can`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ allowed: true });
  });

  it('not allowed, and why, without the permission or without the Kubernetes verb', async () => {
    const denied = await start(plant(), {
      decisions: { 'machines:reclaim': AuthorizeResult.DENY },
    });
    expect(
      (await request(denied.server).get(`${base}/reclaims/can`)).body,
    ).toEqual({
      allowed: false,
      reason: 'you do not hold machines:reclaim',
    });
    const machines = plant();
    machines.access = { allowed: false, reason: 'no reclaim verb' };
    const { server } = await start(machines);
    expect((await request(server).get(`${base}/reclaims/can`)).body).toEqual({
      allowed: false,
      reason: 'no reclaim verb',
    });
    expect(
      (await request(server).get('/api/servers/clusters/nope/reclaims/can'))
        .status,
    ).toBe(404);
  });
});

describe('POST /clusters/:cluster/reclaims', () => {
  const body = {
    address: '127.0.10.42',
    talosconfig: TALOSCONFIG,
    reason: REASON,
  };

  it('creates the request, then its credential Secret owned by it, then lists the address; answers only the name', async () => {
    const machines = plant();
    const { server, events } = await start(machines);
    const res = await request(server).post(`${base}/reclaims`).send(body);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['name']);
    const name = res.body.name as string;
    expect(name).toMatch(/^reclaim-[a-z0-9]+-[0-9a-f]{4}$/);

    // The address is listed already and nothing is stale: no TalosCluster write.
    expect(machines.writes.map(w => `${w.verb} ${w.kind}`)).toEqual([
      'create machinereclaims',
      'create secrets',
    ]);
    const reclaim = machines.reclaimList[0];
    expect(reclaim.metadata.namespace).toBe('rackside-system');
    expect(reclaim.spec).toEqual({
      address: '127.0.10.42',
      targetCluster: 'plant-a',
      credentialSecretRef: { name: `${name}-talosconfig`, key: 'talosconfig' },
      ttlMinutes: 15,
      requestedBy: ME,
      reason: REASON,
    });
    // The name the CRD pins (the CEL rule, checked here by its zod twin).
    expect(() => machineReclaimSchema.parse(reclaim)).not.toThrow();
    expect(machines.secrets).toEqual([
      {
        name: `${name}-talosconfig`,
        owner: { name, uid: reclaim.metadata.uid },
        key: 'talosconfig',
        talosconfig: TALOSCONFIG,
      },
    ]);
    // Already listed by the user: left as it is, not recorded as the reclaim's.
    const cluster = machines.clusterList[0];
    expect(cluster.spec.discovery.addresses).toEqual([
      '127.0.10.31',
      '127.0.10.42',
      '127.0.10.11',
    ]);
    expect(
      cluster.metadata.annotations?.[RECLAIM_ADDED_ADDRESSES_ANNOTATION],
    ).toBeUndefined();

    expect(events).toHaveLength(1);
    expect(events[0].options).toMatchObject({
      eventId: 'machine-reclaim-create',
      severityLevel: 'critical',
    });
    expect(events[0].meta).toMatchObject({
      actor: ME,
      cluster: 'plant-a',
      address: '127.0.10.42',
      reason: REASON,
      talosCluster: 'plant-a',
      reclaim: name,
      outcome: 'created',
    });
    expectNoCredential(JSON.stringify(res.body));
    expectNoCredential(auditText(events));
  });

  it('appends and records an address it had to add, and takes out addresses nothing needs any more', async () => {
    const machines = plant();
    const cluster = machines.clusterList[0];
    cluster.spec.discovery.addresses.push(
      '127.0.10.60',
      '127.0.10.61',
      '127.0.10.62',
      '127.0.10.63',
    );
    cluster.metadata.annotations = {
      [RECLAIM_ADDED_ADDRESSES_ANNOTATION]:
        '127.0.10.60,127.0.10.61,127.0.10.62,127.0.10.63',
    };
    machines.reclaimList.push(
      fakeReclaim('failed', '127.0.10.60', 'plant-a', { phase: 'Failed' }),
      fakeReclaim('done', '127.0.10.61', 'plant-a', { phase: 'Done' }),
      fakeReclaim('running', '127.0.10.62', 'plant-a', {
        phase: 'AwaitingConfirmation',
      }),
    );
    // .63: its request was deleted, but a machine answers there now.
    machines.machineList.push(
      fakeTalosMachine('aaaaaaaa-0000-0000-0000-000000000063', 'plant-a', {
        address: '127.0.10.63:50000',
      }),
    );
    const { server, events } = await start(machines);
    const res = await request(server)
      .post(`${base}/reclaims`)
      .send({ ...body, address: '127.0.10.70', ttlMinutes: 30 });
    expect(res.status).toBe(201);
    expect(machines.writes.map(w => `${w.verb} ${w.kind}`)).toEqual([
      'create machinereclaims',
      'create secrets',
      'update talosclusters',
    ]);
    const after = machines.clusterList[0];
    expect(after.spec.discovery.addresses).toEqual([
      '127.0.10.31',
      '127.0.10.42',
      '127.0.10.11',
      '127.0.10.61',
      '127.0.10.62',
      '127.0.10.63',
      '127.0.10.70',
    ]);
    expect(
      after.metadata.annotations?.[RECLAIM_ADDED_ADDRESSES_ANNOTATION],
    ).toBe('127.0.10.61,127.0.10.62,127.0.10.63,127.0.10.70');
    expect(machines.reclaimList.at(-1)!.spec.ttlMinutes).toBe(30);
    expect(events[0].meta).toMatchObject({
      addressAppended: true,
      addressesRemoved: ['127.0.10.60'],
    });
  });

  it.each([
    ['169.254.169.254', 'outside the allowed networks (127.0.10.0/24)'],
    ['127.0.0.1:6443', 'port 6443 is not the Talos API port'],
    ['localhost', 'localhost resolves to an address outside'],
  ])(
    '400 for %s outside what discovery may reach: no request, no Secret, no address',
    async (address, message) => {
      const machines = plant();
      const { server } = await start(machines);
      const res = await request(server)
        .post(`${base}/reclaims`)
        .send({ ...body, address });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(message);
      expect(machines.writes).toEqual([]);
      expect(machines.secrets).toEqual([]);
    },
  );

  it('403 without machines:reclaim: nothing written, the denial audited', async () => {
    const machines = plant();
    const { server, events } = await start(machines, {
      decisions: { 'machines:reclaim': AuthorizeResult.DENY },
    });
    const res = await request(server).post(`${base}/reclaims`).send(body);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('machines:reclaim');
    expect(machines.writes).toEqual([]);
    expect(events[0]).toMatchObject({
      outcome: 'fail',
      meta: { outcome: 'denied', actor: ME },
    });
  });

  it('an attempt without a user is refused and audited', async () => {
    const machines = plant();
    const { server, events } = await start(machines, {
      credentials: mockCredentials.service(),
    });
    const res = await request(server).post(`${base}/reclaims`).send(body);
    expect(res.status).toBe(403);
    expect(machines.writes).toEqual([]);
    expect(events[0]).toMatchObject({
      outcome: 'fail',
      meta: { actor: null, outcome: 'unauthenticated' },
    });
  });

  it.each([
    [
      { ...body, talosconfig: undefined },
      'talosconfig: talosconfig is required',
    ],
    [
      { ...body, talosconfig: 12 },
      'talosconfig: talosconfig must be the text of a talosconfig file',
    ],
    [
      { ...body, talosconfig: 'x'.repeat(70_000) },
      'talosconfig: talosconfig is larger than 64 KiB',
    ],
    [
      { ...body, address: 'bad address' },
      'address: must be an IP address or host name',
    ],
    [{ ...body, reason: undefined }, 'reason: reason is required'],
    [{ ...body, reason: 'too short' }, 'reason must be at least 10 characters'],
    [{ ...body, ttlMinutes: 61 }, 'ttlMinutes: ttlMinutes must be at most 60'],
    [{ ...body, ttlMinutes: 0 }, 'ttlMinutes: ttlMinutes must be at least 1'],
    [
      { ...body, ttlMinutes: 2.5 },
      'ttlMinutes: ttlMinutes must be a whole number of minutes',
    ],
    [{ ...body, talosconfig: 'contexts: [' }, 'talosconfig is not YAML'],
    [
      { ...body, talosconfig: 'context: a\ncontexts: {}\n' },
      'talosconfig has no context "a"',
    ],
    [
      {
        ...body,
        talosconfig: foreignTalosconfig({
          key: Buffer.from(
            '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n',
          ).toString('base64'),
        }),
      },
      'talosconfig context "plant-old": key is not a private key Node can load',
    ],
    [
      { ...body, talosconfig: foreignTalosconfig({ ca: 'bm90IGEgY2VydA==' }) },
      'talosconfig context "plant-old": ca is not base64 of a PEM block',
    ],
  ])(
    '400 naming what is wrong, never the key, and nothing written (%#)',
    async (sent, message) => {
      const machines = plant();
      const { server, events } = await start(machines);
      const res = await request(server).post(`${base}/reclaims`).send(sent);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(message);
      expect(machines.writes).toEqual([]);
      expect(events[0]).toMatchObject({
        outcome: 'fail',
        meta: { outcome: 'invalid' },
      });
      expectNoCredential(JSON.stringify(res.body));
      expectNoCredential(auditText(events));
    },
  );

  it('a body that is not JSON is a 400 that does not quote it', async () => {
    const machines = plant();
    const { server, lines } = await start(machines);
    const broken = `{"address":"127.0.10.42","talosconfig":"key: ${FOREIGN_KEY_MATERIAL}" oops}`;
    const res = await request(server)
      .post(`${base}/reclaims`)
      .set('Content-Type', 'application/json')
      .send(broken);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('request body is not valid JSON');
    expectNoCredential(JSON.stringify(res.body));
    expectNoCredential(lines.join('\n'));
    expect(machines.writes).toEqual([]);
  });

  it('409 for an address with a request in progress, a member, or a machine in maintenance mode', async () => {
    const machines = plant();
    machines.reclaimList.push(
      fakeReclaim('earlier', '127.0.10.42:50000', 'plant-a', {
        phase: 'AwaitingConfirmation',
      }),
    );
    const { server } = await start(machines);
    const running = await request(server).post(`${base}/reclaims`).send(body);
    expect(running.status).toBe(409);
    expect(running.body.error.message).toBe(
      '127.0.10.42 already has a Reset and add request in progress: earlier (AwaitingConfirmation)',
    );
    const member = await request(server)
      .post(`${base}/reclaims`)
      .send({ ...body, address: '127.0.10.11' });
    expect(member.status).toBe(409);
    expect(member.body.error.message).toContain('already a member of plant-a');
    const spare = await request(server)
      .post(`${base}/reclaims`)
      .send({ ...body, address: '127.0.10.31' });
    expect(spare.status).toBe(409);
    expect(spare.body.error.message).toContain('in maintenance mode already');
    expect(machines.writes).toEqual([]);
  });

  it('a finished request for the same address does not block a new one', async () => {
    const machines = plant();
    machines.reclaimList.push(
      fakeReclaim('expired', '127.0.10.42', 'plant-a', { phase: 'Expired' }),
    );
    const { server } = await start(machines);
    expect(
      (await request(server).post(`${base}/reclaims`).send(body)).status,
    ).toBe(201);
  });

  it('404 without a TalosCluster to add the machine to', async () => {
    const machines = new FakeMachines('plant-a');
    const { server } = await start(machines);
    const res = await request(server).post(`${base}/reclaims`).send(body);
    expect(res.status).toBe(404);
    expect(machines.writes).toEqual([]);
  });

  it('a refusal by the cluster (admission webhook) is a 403 and leaves no Secret', async () => {
    const machines = plant();
    machines.failNext.set(
      'machinereclaims',
      new NotAllowedError(
        'admission webhook "machinereclaims.rackside.dev" denied the request: may not reclaim',
      ),
    );
    const { server } = await start(machines);
    const res = await request(server).post(`${base}/reclaims`).send(body);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('may not reclaim');
    expect(machines.writes).toEqual([]);
    expect(machines.secrets).toEqual([]);
  });

  it('a Secret that cannot be stored: 503 naming the request, and no address listed for it', async () => {
    const machines = plant();
    machines.failNext.set(
      'secrets',
      new ServiceUnavailableError('etcd is slow'),
    );
    const { server } = await start(machines);
    const res = await request(server)
      .post(`${base}/reclaims`)
      .send({ ...body, address: '127.0.10.70' });
    expect(res.status).toBe(503);
    const name = machines.reclaimList[0].metadata.name;
    expect(res.body.error.message).toBe(
      `reclaim ${name} was recorded but its credential could not be stored (etcd is slow); it cannot proceed and expires after 15 minutes: try again`,
    );
    expect(machines.writes.map(w => w.kind)).toEqual(['machinereclaims']);
    expect(machines.clusterList[0].spec.discovery.addresses).not.toContain(
      '127.0.10.70',
    );
  });

  it('an address that cannot be listed is a warning: the request stands', async () => {
    const machines = plant();
    machines.failNext.set('talosclusters', new NotAllowedError('forbidden'));
    const { server } = await start(machines);
    const res = await request(server)
      .post(`${base}/reclaims`)
      .send({ ...body, address: '127.0.10.70' });
    expect(res.status).toBe(201);
    expect(res.body.warnings).toEqual([
      '127.0.10.70 could not be listed for discovery in plant-a yet (forbidden); confirming the reset lists it',
    ]);
  });
});

describe('POST /clusters/:cluster/reclaims/:name/confirm', () => {
  function awaiting(machines: FakeMachines, status: object = {}) {
    machines.reclaimList.push(
      fakeReclaim('reclaim-1', '127.0.10.42', 'plant-a', {
        phase: 'AwaitingConfirmation',
        machineUUID: FOREIGN_UUID,
        expiresAt: new Date(Date.now() + 10 * 60_000).toISOString(),
        ...status,
      }),
    );
  }

  it('sets spec.confirmUUID to the machine UUID when the typed one matches (any case)', async () => {
    const machines = plant();
    awaiting(machines);
    const { server, events } = await start(machines);
    const res = await request(server)
      .post(`${base}/reclaims/reclaim-1/confirm`)
      .send({ uuid: ` ${FOREIGN_UUID.toUpperCase()} ` });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 'reclaim-1' });
    expect(machines.reclaimList[0].spec.confirmUUID).toBe(FOREIGN_UUID);
    expect(events[0].options).toMatchObject({
      eventId: 'machine-reclaim-confirm',
      severityLevel: 'critical',
    });
    expect(events[0].meta).toMatchObject({
      actor: ME,
      reclaim: 'reclaim-1',
      address: '127.0.10.42',
      machineUUID: FOREIGN_UUID,
      outcome: 'confirmed',
    });
  });

  it('rejects a wrong typed UUID with a 400 and writes nothing', async () => {
    const machines = plant();
    awaiting(machines);
    const { server, events } = await start(machines);
    const res = await request(server)
      .post(`${base}/reclaims/reclaim-1/confirm`)
      .send({ uuid: '437933e7-5d1e-4d07-8455-ea5d78c647f4' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(
      'uuid does not match the UUID of the machine at 127.0.10.42: nothing was reset; check it and type it again',
    );
    expect(machines.reclaimList[0].spec.confirmUUID).toBeUndefined();
    expect(machines.writes).toEqual([]);
    expect(events[0]).toMatchObject({
      outcome: 'fail',
      meta: {
        outcome: 'invalid',
        typedUUID: '437933e7-5d1e-4d07-8455-ea5d78c647f4',
      },
    });
  });

  it('400 for something that is not a UUID, 403 without the permission, 404 for an unknown request', async () => {
    const machines = plant();
    awaiting(machines);
    const { server } = await start(machines);
    const notUuid = await request(server)
      .post(`${base}/reclaims/reclaim-1/confirm`)
      .send({ uuid: 'yes' });
    expect(notUuid.status).toBe(400);
    expect(notUuid.body.error.message).toContain('uuid: uuid must be a UUID');
    const missing = await request(server)
      .post(`${base}/reclaims/reclaim-1/confirm`)
      .send({});
    expect(missing.body.error.message).toContain('uuid: uuid is required');
    const unknown = await request(server)
      .post(`${base}/reclaims/nope/confirm`)
      .send({ uuid: FOREIGN_UUID });
    expect(unknown.status).toBe(404);
    const denied = await start(machines, {
      decisions: { 'machines:reclaim': AuthorizeResult.DENY },
    });
    expect(
      (
        await request(denied.server)
          .post(`${base}/reclaims/reclaim-1/confirm`)
          .send({ uuid: FOREIGN_UUID })
      ).status,
    ).toBe(403);
    expect(machines.writes).toEqual([]);
  });

  it.each([
    [
      { phase: 'Pending', machineUUID: undefined },
      "is Pending: the operator has not read the machine's UUID yet",
    ],
    [
      { phase: 'Failed', result: 'the machine did not answer' },
      'is Failed: the machine did not answer; it cannot be confirmed',
    ],
    [{ expiresAt: '2026-01-01T00:00:00Z' }, 'expired at 2026-01-01T00:00:00Z'],
  ])('409 when it cannot be confirmed (%#)', async (status, message) => {
    const machines = plant();
    awaiting(machines, status);
    const { server } = await start(machines);
    const res = await request(server)
      .post(`${base}/reclaims/reclaim-1/confirm`)
      .send({ uuid: FOREIGN_UUID });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain(message);
    expect(machines.writes).toEqual([]);
  });

  it('409 when confirmed already', async () => {
    const machines = plant();
    awaiting(machines);
    machines.reclaimList[0].spec.confirmUUID = FOREIGN_UUID;
    const { server } = await start(machines);
    const res = await request(server)
      .post(`${base}/reclaims/reclaim-1/confirm`)
      .send({ uuid: FOREIGN_UUID });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toBe(
      'reclaim reclaim-1 is confirmed already',
    );
  });

  it('takes out stale reclaim addresses after confirming, and retries a lost race', async () => {
    const machines = plant();
    awaiting(machines);
    const cluster = machines.clusterList[0];
    cluster.spec.discovery.addresses.push('127.0.10.60');
    cluster.metadata.annotations = {
      [RECLAIM_ADDED_ADDRESSES_ANNOTATION]: '127.0.10.60',
    };
    machines.failNext.set(
      'machinereclaims',
      new ConflictError('the object has been modified'),
    );
    const { server } = await start(machines);
    const res = await request(server)
      .post(`${base}/reclaims/reclaim-1/confirm`)
      .send({ uuid: FOREIGN_UUID });
    expect(res.status).toBe(200);
    expect(machines.reclaimList[0].spec.confirmUUID).toBe(FOREIGN_UUID);
    const after = machines.clusterList[0];
    expect(after.spec.discovery.addresses).not.toContain('127.0.10.60');
    expect(
      after.metadata.annotations?.[RECLAIM_ADDED_ADDRESSES_ANNOTATION],
    ).toBeUndefined();
  });
});

describe('GET /clusters/:cluster/reclaims', () => {
  it('lists requests newest first with phase, result and audit, never the credential or its Secret', async () => {
    const machines = plant();
    machines.reclaimList.push(
      fakeReclaim(
        'old',
        '127.0.10.41',
        'plant-a',
        {
          phase: 'Refused',
          result:
            'resetting 127.0.10.41 would remove the last control plane of plant-old',
        },
        '2026-12-01T08:00:00Z',
      ),
      fakeReclaim(
        'new',
        '127.0.10.42',
        'plant-a',
        {
          phase: 'Done',
          machineUUID: FOREIGN_UUID,
          result: 'back in maintenance mode with the same UUID',
          audit: [
            {
              at: '2026-12-01T09:01:00Z',
              event: 'CredentialDeleted',
              message: 'deleted at the reset',
            },
          ],
        },
        '2026-12-01T09:00:00Z',
      ),
    );
    const { server } = await start(machines);
    const res = await request(server).get(`${base}/reclaims`);
    expect(res.status).toBe(200);
    expect(
      res.body.items.map((r: any) => [r.name, r.phase, r.terminal]),
    ).toEqual([
      ['new', 'Done', true],
      ['old', 'Refused', true],
    ]);
    expect(res.body.items[0]).toMatchObject({
      address: '127.0.10.42',
      targetCluster: 'plant-a',
      machineUUID: FOREIGN_UUID,
      confirmed: false,
      ttlMinutes: 15,
      requestedBy: 'user:default/someone',
      audit: [{ event: 'CredentialDeleted' }],
    });
    const text = JSON.stringify(res.body);
    expect(text).not.toContain('credentialSecretRef');
    expect(text).not.toContain('-talosconfig');

    const one = await request(server).get(`${base}/reclaims/old`);
    expect(one.body).toMatchObject({ name: 'old', phase: 'Refused' });
    expect((await request(server).get(`${base}/reclaims/nope`)).status).toBe(
      404,
    );
  });
});

describe('the credential', () => {
  it('appears in no log line, audit record or answer, whatever happens to the request', async () => {
    const machines = plant();
    const { server, lines } = await start(machines, { realAuditor: true });
    const answers: string[] = [];
    const send = async (payload: object) => {
      const res = await request(server).post(`${base}/reclaims`).send(payload);
      answers.push(JSON.stringify(res.body));
      return res;
    };
    const ok = await send({
      address: '127.0.10.42',
      talosconfig: TALOSCONFIG,
      reason: REASON,
    });
    expect(ok.status).toBe(201);
    await send({
      address: '127.0.10.42',
      talosconfig: TALOSCONFIG,
      reason: REASON,
    }); // 409
    await send({
      address: '127.0.10.43',
      talosconfig: TALOSCONFIG,
      reason: 'short',
    }); // 400
    await send({
      address: '127.0.10.43',
      talosconfig: TALOSCONFIG.replace('crt:', 'crt: x'),
      reason: REASON,
    }); // 400
    machines.failNext.set(
      'secrets',
      new ServiceUnavailableError('etcd is slow'),
    );
    await send({
      address: '127.0.10.44',
      talosconfig: TALOSCONFIG,
      reason: REASON,
    }); // 503
    answers.push(
      JSON.stringify((await request(server).get(`${base}/reclaims`)).body),
    );

    // The auditor did log each attempt, through the logger captured here.
    expect(
      lines.filter(l => l.includes('servers.machine-reclaim-create')).length,
    ).toBeGreaterThanOrEqual(5);
    expectNoCredential(lines.join('\n'));
    expectNoCredential(answers.join('\n'));
  });
});

describe('live updates', () => {
  it('announces machine changes on the servers channel', async () => {
    jest.useFakeTimers({
      doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'],
    });
    try {
      const machines = plant();
      const { published } = await start(machines);
      machines.notify();
      machines.notify();
      jest.advanceTimersByTime(1500);
      await Promise.resolve();
      expect(published).toEqual([
        {
          recipients: { type: 'broadcast' },
          channel: 'rackside:servers',
          message: { cluster: 'plant-a' },
        },
      ]);
    } finally {
      jest.useRealTimers();
    }
  });
});
