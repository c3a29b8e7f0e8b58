/*
 * The CRDs in crds/ against a real kube-apiserver (the simulated rack): they install,
 * they accept valid objects and reject invalid ones with a clear message, their CEL
 * immutability rules hold, the status subresource is separate, and the printer columns
 * are what `kubectl get` shows. Where a rule does not need the previous object, zod
 * (servers-common) must reach the same verdict as the apiserver.
 */
/* eslint jest/expect-expect: ["warn", { "assertFunctionNames": ["expect", "expect*", "create"] }] */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  machineReclaimSchema,
  maintenancePlanSchema,
  nodeMaintenanceSchema,
  powerProviderSchema,
  RACKSIDE_API_VERSION,
  RACKSIDE_RESOURCES,
  serverBmcSchema,
  talosClusterSchema,
  talosMachineSchema,
  type RacksideKind,
} from '@rackside/plugin-servers-common';
import {
  REPO_ROOT,
  startTestRack,
  type TestRack,
} from '@rackside/rack-testing';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { parse } from 'yaml';

jest.setTimeout(60_000);

const NS = 'rackside-crds';
const UUID = '4c4c4544-0031-3810-8044-b1c04f4d3232';
const T0 = '2026-08-04T10:00:00Z';

/** What the test needs of a zod schema (kept structural: no zod import here). */
interface Parser {
  safeParse(value: unknown): {
    success: boolean;
    error?: { issues: unknown[] };
  };
}

const schemas: Record<RacksideKind, Parser> = {
  NodeMaintenance: nodeMaintenanceSchema,
  PowerProvider: powerProviderSchema,
  ServerBMC: serverBmcSchema,
  TalosCluster: talosClusterSchema,
  TalosMachine: talosMachineSchema,
  MachineReclaim: machineReclaimSchema,
  MaintenancePlan: maintenancePlanSchema,
};

type Obj = Record<string, any>;

interface Response {
  status: number;
  body: Obj;
}

let rack: TestRack;
let kc: KubeConfig;

function request(
  method: string,
  urlPath: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  const server = new URL(kc.getCurrentCluster()!.server);
  const options: https.RequestOptions = {
    method,
    hostname: server.hostname,
    port: server.port,
    path: urlPath,
    headers: {
      accept: 'application/json',
      'content-type': 'application/json',
      ...headers,
    },
  };
  return kc.applyToHTTPSOptions(options).then(
    () =>
      new Promise<Response>((resolve, reject) => {
        const req = https.request(options, res => {
          const chunks: Buffer[] = [];
          res.on('data', chunk => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: Obj;
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = { message: text };
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
        });
        req.on('error', reject);
        if (body !== undefined) req.write(JSON.stringify(body));
        req.end();
      }),
  );
}

function collectionPath(kind: RacksideKind): string {
  const r = RACKSIDE_RESOURCES[kind];
  return `/apis/${r.group}/${r.version}/${
    r.namespaced ? `namespaces/${NS}/` : ''
  }${r.plural}`;
}

function objectPath(kind: RacksideKind, name: string, sub = ''): string {
  return `${collectionPath(kind)}/${name}${sub ? `/${sub}` : ''}`;
}

function object(kind: RacksideKind, name: string, spec?: Obj): Obj {
  const metadata: Obj = { name };
  if (RACKSIDE_RESOURCES[kind].namespaced) metadata.namespace = NS;
  return {
    apiVersion: RACKSIDE_API_VERSION,
    kind,
    metadata,
    ...(spec === undefined ? {} : { spec }),
  };
}

/** Creates the object, expects 201, and proves zod reads what the apiserver stored. */
async function create(kind: RacksideKind, obj: Obj): Promise<Obj> {
  expect(schemas[kind].safeParse(obj).error?.issues ?? []).toEqual([]);
  const res = await request('POST', collectionPath(kind), obj);
  if (res.status !== 201) {
    throw new Error(
      `create ${kind} ${obj.metadata.name}: ${res.status} ${res.body.message}`,
    );
  }
  const parsed = schemas[kind].safeParse(res.body);
  expect(parsed.error?.issues ?? []).toEqual([]);
  return res.body;
}

/**
 * Expects the apiserver to refuse the object with a message matching `message`, and, for
 * a rule that needs no previous object, zod to refuse it too.
 */
async function expectCreateRejected(
  kind: RacksideKind,
  obj: Obj,
  message: RegExp,
): Promise<void> {
  const res = await request('POST', collectionPath(kind), obj);
  expect({ status: res.status, message: res.body.message }).toEqual({
    status: 422,
    message: expect.stringMatching(message),
  });
  expect(schemas[kind].safeParse(obj).success).toBe(false);
}

async function mergePatch(
  kind: RacksideKind,
  name: string,
  patch: Obj,
  sub = '',
): Promise<Response> {
  return request('PATCH', objectPath(kind, name, sub), patch, {
    'content-type': 'application/merge-patch+json',
  });
}

async function expectPatched(
  kind: RacksideKind,
  name: string,
  patch: Obj,
  sub = '',
): Promise<Obj> {
  const res = await mergePatch(kind, name, patch, sub);
  if (res.status !== 200) {
    throw new Error(`patch ${kind} ${name}: ${res.status} ${res.body.message}`);
  }
  expect(schemas[kind].safeParse(res.body).error?.issues ?? []).toEqual([]);
  return res.body;
}

async function expectPatchRejected(
  kind: RacksideKind,
  name: string,
  patch: Obj,
  message: RegExp,
  sub = '',
): Promise<void> {
  const res = await mergePatch(kind, name, patch, sub);
  expect({ status: res.status, message: res.body.message }).toEqual({
    status: 422,
    message: expect.stringMatching(message),
  });
}

function crdFiles(): Obj[] {
  const dir = path.join(REPO_ROOT, 'crds');
  return fs
    .readdirSync(dir)
    .filter(file => file.endsWith('.yaml'))
    .sort()
    .map(file => parse(fs.readFileSync(path.join(dir, file), 'utf8')));
}

async function waitEstablished(name: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await request(
      'GET',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
    );
    const conditions: Obj[] = res.body.status?.conditions ?? [];
    if (conditions.some(c => c.type === 'Established' && c.status === 'True')) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`${name} not Established: ${JSON.stringify(conditions)}`);
    }
    await new Promise(r => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  rack = await startTestRack({
    withTalos: false,
    withRedfish: false,
    withWorkloads: false,
  });
  kc = rack.adminKubeConfig();
  for (const crd of crdFiles()) {
    const res = await request(
      'PATCH',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}?fieldManager=rackside-crds-test&force=true`,
      crd,
      { 'content-type': 'application/apply-patch+yaml' },
    );
    if (res.status !== 200 && res.status !== 201) {
      throw new Error(
        `apply ${crd.metadata.name}: ${res.status} ${res.body.message}`,
      );
    }
  }
  for (const crd of crdFiles()) await waitEstablished(crd.metadata.name);
  const ns = await request('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS },
  });
  if (ns.status !== 201) {
    throw new Error(`create namespace ${NS}: ${ns.status} ${ns.body.message}`);
  }
}, 180_000);

afterAll(async () => {
  await rack?.stop();
}, 60_000);

describe('installation', () => {
  it('installs one Established CRD per kind, in group rackside.dev', async () => {
    expect(crdFiles().map(crd => crd.metadata.name)).toEqual(
      Object.values(RACKSIDE_RESOURCES)
        .map(r => `${r.plural}.rackside.dev`)
        .sort(),
    );
  });

  it('publishes short names, the rackside category and the status subresource', async () => {
    const res = await request('GET', '/apis/rackside.dev/v1alpha1');
    const resources: Obj[] = res.body.resources;
    const byName = new Map(resources.map(r => [r.name, r]));
    for (const r of Object.values(RACKSIDE_RESOURCES)) {
      const discovered = byName.get(r.plural)!;
      expect({
        kind: discovered.kind,
        namespaced: discovered.namespaced,
        shortNames: discovered.shortNames,
        categories: discovered.categories,
      }).toEqual({
        kind: r.kind,
        namespaced: r.namespaced,
        shortNames: [...r.shortNames],
        categories: ['rackside'],
      });
      expect(byName.has(`${r.plural}/status`)).toBe(true);
    }
  });
});

describe('NodeMaintenance', () => {
  const spec = (extra: Obj = {}): Obj => ({
    nodeName: 'worker-1',
    intent: 'drain',
    reason: 'Replace a failed DIMM',
    requestedBy: 'user:default/jane',
    ...extra,
  });

  it('accepts a valid object and applies the drain defaults', async () => {
    const created = await create(
      'NodeMaintenance',
      object(
        'NodeMaintenance',
        'nm-valid',
        spec({
          preflight: {
            takenAt: T0,
            token: 'v1.abc',
            ceremony: 'preflight',
            pods: [{ namespace: 'shop', name: 'payments-7c9f-abcde' }],
            blockingPDBs: [{ namespace: 'shop', name: 'payments' }],
            quorum: { members: 3, quorum: 2, ready: 3, margin: 1 },
          },
          drain: { timeoutSeconds: 600, gracePeriodSeconds: 30 },
        }),
      ),
    );
    expect(created.spec.drain).toEqual({
      allowNodeLocalData: false,
      timeoutSeconds: 600,
      gracePeriodSeconds: 30,
      deleteEmptyDirData: false,
      force: false,
    });
  });

  it('accepts a kubectl-made object with only node, intent and reason', async () => {
    await create(
      'NodeMaintenance',
      object('NodeMaintenance', 'nm-minimal', {
        nodeName: 'worker-2',
        intent: 'cordon',
        reason: 'rack move',
        returnToService: { by: 'admin', reason: 'was cordoned by hand' },
      }),
    );
  });

  it('rejects an unknown intent', async () => {
    await expectCreateRejected(
      'NodeMaintenance',
      object('NodeMaintenance', 'nm-bad-intent', spec({ intent: 'explode' })),
      /spec\.intent: Unsupported value: "explode": supported values: "cordon", "drain", "reboot", "shutdown"/,
    );
  });

  it('rejects a missing or blank reason', async () => {
    const { reason: _reason, ...withoutReason } = spec();
    await expectCreateRejected(
      'NodeMaintenance',
      object('NodeMaintenance', 'nm-no-reason', withoutReason),
      /spec\.reason: Required value/,
    );
    await expectCreateRejected(
      'NodeMaintenance',
      object('NodeMaintenance', 'nm-blank-reason', spec({ reason: '' })),
      /spec\.reason: Invalid value: "": spec\.reason in body should be at least 1 chars long/,
    );
    await expectCreateRejected(
      'NodeMaintenance',
      object('NodeMaintenance', 'nm-space-reason', spec({ reason: '   ' })),
      /spec\.reason in body should match/,
    );
  });

  it('rejects powerOn on anything but a shutdown', async () => {
    await expectCreateRejected(
      'NodeMaintenance',
      object(
        'NodeMaintenance',
        'nm-poweron-drain',
        spec({ powerOn: { by: 'user:default/jane', reason: 'back' } }),
      ),
      /spec\.powerOn: Invalid value: .*powerOn applies only to a maintenance with intent shutdown/,
    );
  });

  it('keeps nodeName, intent and reason immutable', async () => {
    await create(
      'NodeMaintenance',
      object('NodeMaintenance', 'nm-immutable', spec()),
    );
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-immutable',
      { spec: { nodeName: 'worker-3' } },
      /spec\.nodeName: Invalid value: .*nodeName is immutable/,
    );
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-immutable',
      { spec: { intent: 'reboot' } },
      /spec\.intent: Invalid value: .*intent is immutable/,
    );
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-immutable',
      { spec: { reason: 'something else' } },
      /reason is immutable/,
    );
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-immutable',
      { spec: { drain: { force: true } } },
      /spec\.drain: Invalid value: .*drain is immutable/,
    );
  });

  it('lets each request flag be set once, never changed or unset', async () => {
    await create(
      'NodeMaintenance',
      object('NodeMaintenance', 'nm-flags', spec()),
    );
    const flag = { by: 'user:default/jane', reason: 'DIMM replaced', at: T0 };
    const patched = await expectPatched('NodeMaintenance', 'nm-flags', {
      spec: { returnToService: flag },
    });
    expect(patched.spec.returnToService).toEqual(flag);
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-flags',
      { spec: { returnToService: null } },
      /spec\.returnToService: Invalid value: .*returnToService can be set once: it cannot be changed or removed once set/,
    );
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-flags',
      { spec: { returnToService: { ...flag, by: 'user:default/mallory' } } },
      /returnToService can be set once/,
    );
    // The other flags are independent.
    await expectPatched('NodeMaintenance', 'nm-flags', {
      spec: { abandon: { by: 'user:default/joe', reason: 'wrong node' } },
    });
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-flags',
      { spec: { abandon: null } },
      /abandon can be set once/,
    );
  });

  it('keeps status behind the status subresource', async () => {
    const created = await create(
      'NodeMaintenance',
      object('NodeMaintenance', 'nm-status', spec({ intent: 'shutdown' })),
    );
    // A status written with the main resource is dropped.
    const res = await request(
      'PUT',
      objectPath('NodeMaintenance', 'nm-status'),
      { ...created, status: { phase: 'Complete' } },
    );
    expect(res.status).toBe(200);
    expect(res.body.status).toBeUndefined();

    const status = {
      phase: 'PoweredOff',
      conditions: [
        {
          type: 'PowerOffConfirmed',
          status: 'False',
          reason: 'ReadbackRunning',
          message: 'reading the BMC until 10:11',
          lastTransitionTime: T0,
        },
      ],
      drain: { total: 2, evicted: 2, pending: 0 },
      wasUnschedulable: false,
      bootIdBefore: 'a1b2',
      cordonedAt: T0,
      poweredOffAt: T0,
      power: {
        shutdown: { recordedAt: T0, sentAt: T0, channel: 'redfish' },
      },
      history: [
        { phase: 'Requested', at: T0 },
        { phase: 'PoweredOff', at: T0, message: 'GracefulShutdown accepted' },
      ],
      observedGeneration: 1,
    };
    const withStatus = await expectPatched(
      'NodeMaintenance',
      'nm-status',
      { status },
      'status',
    );
    expect(withStatus.status.phase).toBe('PoweredOff');
    expect(withStatus.metadata.generation).toBe(created.metadata.generation);

    // A spec update leaves status alone, and a status update leaves spec alone.
    const afterSpec = await expectPatched('NodeMaintenance', 'nm-status', {
      spec: { powerOn: { by: 'user:default/jane', reason: 'back' } },
      status: { phase: 'Failed' },
    });
    expect(afterSpec.status.phase).toBe('PoweredOff');
    expect(afterSpec.spec.powerOn.reason).toBe('back');
    const afterStatus = await expectPatched(
      'NodeMaintenance',
      'nm-status',
      {
        spec: { requestedBy: 'user:default/mallory' },
        status: { abandoned: false },
      },
      'status',
    );
    expect(afterStatus.spec.requestedBy).toBe('user:default/jane');
    expect(afterStatus.status.abandoned).toBe(false);
  });

  it('validates status: phase enum, bounded history, one condition per type', async () => {
    await create(
      'NodeMaintenance',
      object('NodeMaintenance', 'nm-bad-status', spec()),
    );
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-bad-status',
      { status: { phase: 'Exploded' } },
      /status\.phase: Unsupported value: "Exploded"/,
      'status',
    );
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-bad-status',
      {
        status: {
          history: Array.from({ length: 51 }, () => ({
            phase: 'Draining',
            at: T0,
          })),
        },
      },
      /status\.history: Too many: 51: must have at most 50 items/,
      'status',
    );
    const condition = {
      type: 'PowerOffConfirmed',
      status: 'Unknown',
      reason: 'NoReadback',
      message: '',
      lastTransitionTime: T0,
    };
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-bad-status',
      { status: { conditions: [condition, condition] } },
      /status\.conditions\[1\]: Duplicate value/,
      'status',
    );
  });

  it('never leaves a terminal phase and never forgets a recorded power verb', async () => {
    await create(
      'NodeMaintenance',
      object('NodeMaintenance', 'nm-terminal', spec({ intent: 'reboot' })),
    );
    await expectPatched(
      'NodeMaintenance',
      'nm-terminal',
      { status: { phase: 'Rebooting', power: { reboot: { recordedAt: T0 } } } },
      'status',
    );
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-terminal',
      { status: { power: null } },
      /status\.power: Invalid value: .*status\.power\.reboot is sent at most once/,
      'status',
    );
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-terminal',
      { status: { power: { reboot: { recordedAt: '2026-08-04T11:00:00Z' } } } },
      /status\.power\.reboot is sent at most once/,
      'status',
    );
    await expectPatched(
      'NodeMaintenance',
      'nm-terminal',
      { status: { power: { reboot: { sentAt: T0 } } } },
      'status',
    );
    await expectPatched(
      'NodeMaintenance',
      'nm-terminal',
      { status: { phase: 'Complete' } },
      'status',
    );
    await expectPatchRejected(
      'NodeMaintenance',
      'nm-terminal',
      { status: { phase: 'Returning' } },
      /status\.phase: Invalid value: .*a maintenance in a terminal phase \(Complete, Refused, Failed\) cannot change phase/,
      'status',
    );
  });

  it('prints NODE, INTENT, PHASE, REQUESTER and AGE (kubectl get nodemaintenances)', async () => {
    const res = await request(
      'GET',
      `${collectionPath(
        'NodeMaintenance',
      )}?fieldSelector=metadata.name=nm-status`,
      undefined,
      { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    );
    expect(res.status).toBe(200);
    expect(res.body.kind).toBe('Table');
    const columns: Obj[] = res.body.columnDefinitions;
    expect(
      columns.filter(c => c.priority === 0).map(c => c.name.toUpperCase()),
    ).toEqual(['NAME', 'NODE', 'INTENT', 'PHASE', 'REQUESTER', 'AGE']);
    expect(res.body.rows).toHaveLength(1);
    const cells: unknown[] = res.body.rows[0].cells;
    expect(cells.slice(0, 5)).toEqual([
      'nm-status',
      'worker-1',
      'shutdown',
      'PoweredOff',
      'user:default/jane',
    ]);
    expect(cells[5]).toMatch(/^\d+s$/);
  });
});

describe('PowerProvider', () => {
  afterEach(async () => {
    await request('DELETE', objectPath('PowerProvider', 'default'));
    for (let i = 0; i < 50; i++) {
      const res = await request('GET', objectPath('PowerProvider', 'default'));
      if (res.status === 404) break;
      await new Promise(r => setTimeout(r, 100));
    }
  });

  it('defaults an empty object to type none', async () => {
    const created = await create(
      'PowerProvider',
      object('PowerProvider', 'default'),
    );
    expect(created.spec).toEqual({ type: 'none', attendedRack: false });
  });

  it('accepts redfish with Secret references and applies its defaults', async () => {
    const created = await create(
      'PowerProvider',
      object('PowerProvider', 'default', {
        type: 'redfish',
        redfish: {
          credentialsSecretRef: { namespace: 'rackside', name: 'bmc' },
          insecureSkipVerify: true,
        },
      }),
    );
    expect(created.spec.redfish).toEqual({
      credentialsSecretRef: {
        namespace: 'rackside',
        name: 'bmc',
        usernameKey: 'username',
        passwordKey: 'password',
      },
      insecureSkipVerify: true,
      readbackWindowSeconds: 300,
      readbackIntervalSeconds: 5,
    });
    const status = await expectPatched(
      'PowerProvider',
      'default',
      {
        status: {
          reboot: true,
          shutdown: true,
          powerOn: true,
          confirmsPowerOff: true,
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'Configured',
              message: '',
              lastTransitionTime: T0,
            },
          ],
          observedGeneration: 1,
        },
      },
      'status',
    );
    expect(status.status.powerOn).toBe(true);
  });

  it('must be named default', async () => {
    await expectCreateRejected(
      'PowerProvider',
      object('PowerProvider', 'main', { type: 'none' }),
      /the PowerProvider must be named default/,
    );
  });

  it('rejects an unknown type', async () => {
    await expectCreateRejected(
      'PowerProvider',
      object('PowerProvider', 'default', { type: 'ipmi' }),
      /spec\.type: Unsupported value: "ipmi": supported values: "none", "talos", "redfish"/,
    );
  });

  it('needs the settings of its type', async () => {
    await expectCreateRejected(
      'PowerProvider',
      object('PowerProvider', 'default', { type: 'talos' }),
      /spec\.talos: Invalid value: .*type talos needs spec\.talos\.secretRef/,
    );
    await expectCreateRejected(
      'PowerProvider',
      object('PowerProvider', 'default', {
        type: 'redfish',
        redfish: { credentialsSecretRef: { name: 'bmc' } },
      }),
      /redfish needs exactly one of caBundleRef or insecureSkipVerify: true/,
    );
  });

  it('takes credentials as Secret references only', async () => {
    const res = await request(
      'POST',
      collectionPath('PowerProvider'),
      object('PowerProvider', 'default', {
        type: 'redfish',
        redfish: {
          credentialsSecretRef: { name: 'bmc' },
          insecureSkipVerify: true,
          password: 'hunter2',
        },
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.spec.redfish).not.toHaveProperty('password');
  });
});

describe('ServerBMC', () => {
  it('accepts a valid object', async () => {
    await create(
      'ServerBMC',
      object('ServerBMC', 'worker-1', {
        address: 'https://127.0.0.1:8443',
        systemPath: `/redfish/v1/Systems/${UUID}`,
        credentialsSecretRef: { namespace: 'rackside', name: 'worker-1-bmc' },
      }),
    );
  });

  it('rejects an address that is not an http(s) URL', async () => {
    await expectCreateRejected(
      'ServerBMC',
      object('ServerBMC', 'worker-2', { address: 'ftp://bmc' }),
      /spec\.address in body should match/,
    );
  });
});

describe('TalosCluster', () => {
  it('accepts a valid object and defaults the discovery interval to 5 minutes', async () => {
    const created = await create(
      'TalosCluster',
      object('TalosCluster', 'plant-a', {
        discovery: { addresses: ['127.0.10.21'] },
        joinConfigSecretRef: { name: 'plant-a-join' },
        talosconfigSecretRef: { name: 'plant-a-talosconfig' },
      }),
    );
    expect(created.spec.discovery.intervalSeconds).toBe(300);
    await expectPatched(
      'TalosCluster',
      'plant-a',
      {
        status: {
          addresses: [
            {
              address: '127.0.10.21',
              state: 'Maintenance',
              uuid: UUID,
              lastProbeTime: T0,
            },
          ],
          lastDiscoveryTime: T0,
        },
      },
      'status',
    );
  });

  it('rejects a duplicate address and an unknown address state', async () => {
    await expectCreateRejected(
      'TalosCluster',
      object('TalosCluster', 'plant-b', {
        discovery: { addresses: ['127.0.10.21', '127.0.10.21'] },
        joinConfigSecretRef: { name: 'j' },
        talosconfigSecretRef: { name: 't' },
      }),
      /spec\.discovery\.addresses\[1\]: Duplicate value: "127\.0\.10\.21"/,
    );
    await expectPatchRejected(
      'TalosCluster',
      'plant-a',
      { status: { addresses: [{ address: '127.0.10.21', state: 'Gone' }] } },
      /status\.addresses\[0\]\.state: Unsupported value: "Gone"/,
      'status',
    );
  });
});

describe('TalosCluster allowed networks', () => {
  it('defaults to none and port 50000; takes canonical IPv4 and IPv6 CIDRs', async () => {
    const created = await create(
      'TalosCluster',
      object('TalosCluster', 'nets-a', {
        joinConfigSecretRef: { name: 'j' },
        talosconfigSecretRef: { name: 't' },
      }),
    );
    expect(created.spec.discovery).toMatchObject({
      allowedNetworks: [],
      talosPort: 50000,
    });
    await create(
      'TalosCluster',
      object('TalosCluster', 'nets-b', {
        discovery: {
          allowedNetworks: ['127.0.10.0/24', 'fd00:5::/64'],
          talosPort: 50001,
        },
        joinConfigSecretRef: { name: 'j' },
        talosconfigSecretRef: { name: 't' },
      }),
    );
  });

  it.each([
    ['127.0.10.5/24'],
    ['10.0.0.0/33'],
    ['10.0.0.0'],
    ['::ffff:10.0.0.0/120'],
    ['example.com/24'],
  ])('the apiserver and zod both refuse %s', async network => {
    await expectCreateRejected(
      'TalosCluster',
      object('TalosCluster', 'nets-bad', {
        discovery: { allowedNetworks: [network] },
        joinConfigSecretRef: { name: 'j' },
        talosconfigSecretRef: { name: 't' },
      }),
      /allowedNetworks\[0\]: Invalid value: ".*": must be a CIDR with no bits set after the prefix/,
    );
  });

  it('refuses a Talos port outside 1-65535', async () => {
    await expectCreateRejected(
      'TalosCluster',
      object('TalosCluster', 'nets-port', {
        discovery: { talosPort: 99999 },
        joinConfigSecretRef: { name: 'j' },
        talosconfigSecretRef: { name: 't' },
      }),
      /spec\.discovery\.talosPort: Invalid value: 99999/,
    );
  });
});

describe('TalosMachine', () => {
  it('is named by its SMBIOS UUID', async () => {
    await create(
      'TalosMachine',
      object('TalosMachine', UUID, { cluster: 'plant-a' }),
    );
    await expectCreateRejected(
      'TalosMachine',
      object('TalosMachine', 'worker-9', { cluster: 'plant-a' }),
      /a TalosMachine is named by its SMBIOS UUID/,
    );
  });

  it('lets join be set once and keeps its cluster', async () => {
    const join = { by: 'user:default/jane', reason: 'more capacity', at: T0 };
    await expectPatched('TalosMachine', UUID, { spec: { join } });
    await expectPatchRejected(
      'TalosMachine',
      UUID,
      { spec: { join: null } },
      /join can be set once/,
    );
    await expectPatchRejected(
      'TalosMachine',
      UUID,
      { spec: { cluster: 'plant-b' } },
      /cluster is immutable/,
    );
    const status = await expectPatched(
      'TalosMachine',
      UUID,
      { status: { phase: 'Joining', address: '127.0.10.21' } },
      'status',
    );
    expect(status.status.phase).toBe('Joining');
  });
});

describe('MachineReclaim', () => {
  const spec = (extra: Obj = {}): Obj => ({
    address: '127.0.10.31',
    targetCluster: 'plant-a',
    requestedBy: 'user:default/jane',
    reason: 'move the old line-3 controller',
    ...extra,
  });
  /** A request with the credential name the CRD pins (<name>-talosconfig) unless `s` names one. */
  const reclaim = (name: string, s: Obj): Obj =>
    object('MachineReclaim', name, {
      credentialSecretRef: { name: `${name}-talosconfig` },
      ...s,
    });

  it('pins credentialSecretRef.name to <metadata.name>-talosconfig (the backend gives it that name)', async () => {
    await expectCreateRejected(
      'MachineReclaim',
      reclaim(
        'mr-other-secret',
        spec({ credentialSecretRef: { name: 'plant-a-talosconfig' } }),
      ),
      /spec\.credentialSecretRef\.name: Invalid value: spec\.credentialSecretRef\.name must be mr-other-secret-talosconfig, the credential Secret the backend creates for this request/,
    );
  });

  it('accepts a valid object and defaults ttlMinutes to 15', async () => {
    const created = await create('MachineReclaim', reclaim('mr-valid', spec()));
    expect(created.spec.ttlMinutes).toBe(15);
    expect(created.spec.credentialSecretRef.key).toBe('talosconfig');
    await create('MachineReclaim', reclaim('mr-60', spec({ ttlMinutes: 60 })));
  });

  it('keeps ttlMinutes within 1..60', async () => {
    await expectCreateRejected(
      'MachineReclaim',
      reclaim('mr-ttl-0', spec({ ttlMinutes: 0 })),
      /spec\.ttlMinutes: Invalid value: 0: spec\.ttlMinutes in body should be greater than or equal to 1/,
    );
    await expectCreateRejected(
      'MachineReclaim',
      reclaim('mr-ttl-61', spec({ ttlMinutes: 61 })),
      /spec\.ttlMinutes: Invalid value: 61: spec\.ttlMinutes in body should be less than or equal to 60/,
    );
  });

  it('keeps the spec fixed except confirmUUID, which is set once', async () => {
    await create('MachineReclaim', reclaim('mr-fixed', spec()));
    await expectPatchRejected(
      'MachineReclaim',
      'mr-fixed',
      { spec: { address: '127.0.10.32' } },
      /spec\.address: Invalid value: .*address is immutable/,
    );
    await expectPatchRejected(
      'MachineReclaim',
      'mr-fixed',
      { spec: { ttlMinutes: 30 } },
      /ttlMinutes is immutable/,
    );
    await expectPatchRejected(
      'MachineReclaim',
      'mr-fixed',
      { spec: { credentialSecretRef: { name: 'other' } } },
      /credentialSecretRef is immutable/,
    );
    await expectPatchRejected(
      'MachineReclaim',
      'mr-fixed',
      { spec: { confirmUUID: 'yes' } },
      /spec\.confirmUUID in body should match/,
    );
    await expectPatched('MachineReclaim', 'mr-fixed', {
      spec: { confirmUUID: UUID },
    });
    await expectPatchRejected(
      'MachineReclaim',
      'mr-fixed',
      { spec: { confirmUUID: '4c4c4544-0031-3810-8044-b1c04f4d3233' } },
      /confirmUUID can be set once/,
    );
    await expectPatchRejected(
      'MachineReclaim',
      'mr-fixed',
      { spec: { confirmUUID: null } },
      /confirmUUID can be set once/,
    );
  });

  it('records progress in status and ends in a terminal phase for good', async () => {
    await create('MachineReclaim', reclaim('mr-status', spec()));
    await expectPatched(
      'MachineReclaim',
      'mr-status',
      {
        status: {
          phase: 'Expired',
          expiresAt: T0,
          credentialDeletedAt: T0,
          result: 'not confirmed within 15 minutes',
          audit: [{ at: T0, event: 'CredentialDeleted', actor: 'operator' }],
        },
      },
      'status',
    );
    await expectPatchRejected(
      'MachineReclaim',
      'mr-status',
      { status: { phase: 'Resetting' } },
      /a reclaim in a terminal phase/,
      'status',
    );
    await expectPatchRejected(
      'MachineReclaim',
      'mr-status',
      { status: { phase: 'Exploded' } },
      /status\.phase: Unsupported value/,
      'status',
    );
  });

  it('prints the phase and the UUID at the terminal', async () => {
    const res = await request(
      'GET',
      collectionPath('MachineReclaim'),
      undefined,
      {
        accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
      },
    );
    expect(
      (res.body.columnDefinitions as Obj[])
        .filter(c => c.priority === 0)
        .map(c => c.name.toUpperCase()),
    ).toEqual([
      'NAME',
      'ADDRESS',
      'CLUSTER',
      'PHASE',
      'UUID',
      'EXPIRES',
      'AGE',
    ]);
  });
});

describe('MaintenancePlan', () => {
  const spec = (extra: Obj = {}): Obj => ({
    intent: 'reboot',
    nodes: ['worker-1', 'worker-2'],
    reason: 'kernel update',
    requestedBy: 'user:default/jane',
    ...extra,
  });
  const pause = (at: string, by = 'user:default/jane') => ({
    by,
    reason: 'the line is busy',
    at,
  });
  const T1 = '2026-08-04T10:05:00Z';
  const T2 = '2026-08-04T10:10:00Z';

  it('accepts a valid plan and applies its defaults', async () => {
    const created = await create(
      'MaintenancePlan',
      object(
        'MaintenancePlan',
        'mp-valid',
        spec({
          gates: {
            timeoutSeconds: 600,
            objects: [
              {
                name: 'storage',
                apiVersion: 'ceph.rook.io/v1',
                kind: 'CephCluster',
                namespace: 'rook-ceph',
                objectName: 'rook-ceph',
                field: { path: '.status.ceph.health', value: 'HEALTH_OK' },
                timeoutSeconds: 900,
              },
            ],
          },
          window: {
            notBefore: T0,
            weekdays: ['Mon', 'Tue'],
            hours: { start: '22:00', end: '04:00' },
            timeZone: 'Europe/Berlin',
          },
          drain: { timeoutSeconds: 600 },
        }),
      ),
    );
    expect(created.spec).toMatchObject({
      maxParallel: 1,
      failurePolicy: { tolerate: 0 },
      onCancel: 'finish',
      gates: { previousNodeReady: true, podDisruptionBudgetsHealthy: true },
    });
    await create(
      'MaintenancePlan',
      object(
        'MaintenancePlan',
        'mp-selector',
        spec({
          nodes: undefined,
          selector: {
            matchExpressions: [
              {
                key: 'node-role.kubernetes.io/control-plane',
                operator: 'DoesNotExist',
              },
            ],
          },
          intent: 'drain',
          maxParallel: 2,
        }),
      ),
    );
  });

  it('needs exactly one of nodes and selector, and sane gates and window', async () => {
    await expectCreateRejected(
      'MaintenancePlan',
      object(
        'MaintenancePlan',
        'mp-both',
        spec({ selector: { matchLabels: { a: 'b' } } }),
      ),
      /exactly one of nodes and selector/,
    );
    await expectCreateRejected(
      'MaintenancePlan',
      object('MaintenancePlan', 'mp-neither', spec({ nodes: undefined })),
      /exactly one of nodes and selector/,
    );
    await expectCreateRejected(
      'MaintenancePlan',
      object('MaintenancePlan', 'mp-shutdown', spec({ intent: 'shutdown' })),
      /spec\.intent: Unsupported value: "shutdown"/,
    );
    await expectCreateRejected(
      'MaintenancePlan',
      object(
        'MaintenancePlan',
        'mp-gate',
        spec({
          gates: {
            objects: [
              {
                name: 'g',
                apiVersion: 'v1',
                kind: 'ConfigMap',
                objectName: 'x',
              },
            ],
          },
        }),
      ),
      /exactly one of condition and field/,
    );
    await expectCreateRejected(
      'MaintenancePlan',
      object(
        'MaintenancePlan',
        'mp-window',
        spec({ window: { notBefore: T1, notAfter: T0 } }),
      ),
      /notBefore must be before notAfter/,
    );
    await expectCreateRejected(
      'MaintenancePlan',
      object(
        'MaintenancePlan',
        'mp-hours',
        spec({ window: { hours: { start: '25:00', end: '04:00' } } }),
      ),
      /spec\.window\.hours\.start in body should match/,
    );
  });

  it('keeps the spec fixed; pause and resume move forward in time; cancel is set once', async () => {
    await create(
      'MaintenancePlan',
      object('MaintenancePlan', 'mp-fixed', spec()),
    );
    for (const [patch, message] of [
      [{ intent: 'drain' }, /intent is immutable/],
      [{ maxParallel: 3 }, /maxParallel is immutable/],
      [{ nodes: ['worker-3'] }, /nodes is immutable/],
      [{ reason: 'other' }, /reason is immutable/],
      [{ onCancel: 'abandon' }, /onCancel is immutable/],
    ] as const) {
      await expectPatchRejected(
        'MaintenancePlan',
        'mp-fixed',
        { spec: patch },
        message,
      );
    }
    await expectPatchRejected(
      'MaintenancePlan',
      'mp-fixed',
      { spec: { resume: pause(T1) } },
      /a resume needs a pause before it/,
    );
    await expectPatched('MaintenancePlan', 'mp-fixed', {
      spec: { pause: pause(T1) },
    });
    await expectPatchRejected(
      'MaintenancePlan',
      'mp-fixed',
      { spec: { pause: pause(T0) } },
      /pause cannot be removed, and is replaced only by a pause with a later at/,
    );
    await expectPatchRejected(
      'MaintenancePlan',
      'mp-fixed',
      { spec: { pause: null } },
      /pause cannot be removed/,
    );
    await expectPatchRejected(
      'MaintenancePlan',
      'mp-fixed',
      { spec: { resume: pause(T0) } },
      /a resume needs a pause before it/,
    );
    await expectPatched('MaintenancePlan', 'mp-fixed', {
      spec: { resume: pause(T2) },
    });
    await expectPatched('MaintenancePlan', 'mp-fixed', {
      spec: { cancel: { by: 'user:default/jane', reason: 'stop' } },
    });
    await expectPatchRejected(
      'MaintenancePlan',
      'mp-fixed',
      { spec: { cancel: { by: 'user:default/jane', reason: 'other' } } },
      /cancel can be set once/,
    );
  });

  it('resolves its nodes once and keeps a finished step and plan finished', async () => {
    await create(
      'MaintenancePlan',
      object('MaintenancePlan', 'mp-status', spec()),
    );
    const nodes = [
      { name: 'worker-1', phase: 'Running', maintenance: 'mp-status-worker-1' },
      { name: 'worker-2', phase: 'Pending' },
    ];
    await expectPatched(
      'MaintenancePlan',
      'mp-status',
      { status: { phase: 'Running', resolvedAt: T0, nodes } },
      'status',
    );
    await expectPatchRejected(
      'MaintenancePlan',
      'mp-status',
      { status: { nodes: [nodes[1], nodes[0]] } },
      /status\.nodes is resolved once/,
      'status',
    );
    await expectPatched(
      'MaintenancePlan',
      'mp-status',
      { status: { nodes: [{ ...nodes[0], phase: 'Done' }, nodes[1]] } },
      'status',
    );
    await expectPatchRejected(
      'MaintenancePlan',
      'mp-status',
      { status: { nodes: [{ ...nodes[0], phase: 'Running' }, nodes[1]] } },
      /a plan step in a terminal phase/,
      'status',
    );
    await expectPatched(
      'MaintenancePlan',
      'mp-status',
      { status: { phase: 'Cancelled' } },
      'status',
    );
    await expectPatchRejected(
      'MaintenancePlan',
      'mp-status',
      { status: { phase: 'Running' } },
      /a plan in a terminal phase/,
      'status',
    );
  });

  it('prints INTENT, PHASE, TOTAL, DONE, RUNNING, WAITING, REQUESTER and AGE', async () => {
    const res = await request(
      'GET',
      collectionPath('MaintenancePlan'),
      undefined,
      { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    );
    const columns: Obj[] = res.body.columnDefinitions;
    expect(
      columns.filter(c => c.priority === 0).map(c => c.name.toUpperCase()),
    ).toEqual([
      'NAME',
      'INTENT',
      'PHASE',
      'TOTAL',
      'DONE',
      'RUNNING',
      'WAITING',
      'REQUESTER',
      'AGE',
    ]);
  });
});
