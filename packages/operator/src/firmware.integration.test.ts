/*
 * Redfish firmware updates on the simulated rack (docs/upgrades.md, "Firmware"): the
 * operator, with its own ServiceAccount, sends SimpleUpdate to the rack's BMC (the health
 * proxy in front of sushy-tools, e2e/rack/lib/redfishUpdate.mjs), follows its task monitor
 * and reads the FirmwareInventory before and after. NodeMaintenances are written as
 * kubectl would write them; the proxy's record of every update request it received
 * (`GET /health/update/requests`) is what says what was sent. The proxy keeps one
 * inventory for all its systems, so each test names the version it expects from where the
 * one before left it.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { createHash, randomBytes } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  maintenancePlanResource,
  serverBmcResource,
  type MaintenancePlan,
  type ServerBMC,
} from '@rackside/plugin-servers-common';
import { ResourceClient } from '@rackside/plugin-servers-node';
import type { Operator } from './operator';
import {
  ADMIN_USER,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';
import { powerRack, REDFISH_PROVIDER } from './testing/powerRack';
import { selfSignedServingCertificate } from './webhook/certificates';

jest.setTimeout(180_000);

const SOURCE = 'https://fw.example.com';
const BIOS = '/redfish/v1/UpdateService/FirmwareInventory/BIOS';
const SIMPLE_UPDATE =
  '/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate';

interface UpdateRequests {
  count: number;
  requests: Array<{ method: string; path: string; status: number; body: any }>;
}

let env: OperatorRack;
let rack: ReturnType<typeof powerRack>;
let operator: Operator | undefined;

async function control<T>(path: string, body?: unknown): Promise<T> {
  const base = rack.redfish.healthControlUrl;
  if (!base) throw new Error('the rack has no BMC health proxy');
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}
const updateRequests = () => control<UpdateRequests>('/health/update/requests');
const simpleUpdates = async () =>
  (await updateRequests()).requests.filter(
    r => r.method === 'POST' && r.path === SIMPLE_UPDATE,
  );

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: true,
    withWorkloads: false,
  });
  rack = powerRack(env);
  await rack.createPowerSecrets();
  for (const node of ['worker-1', 'worker-2']) {
    await rack.linkBmc(node);
  }
  await rack.writeProvider(REDFISH_PROVIDER);
  await control('/health/update/reset', {});
  await control('/health/update', { taskMs: 1500 });
  operator = await env.startReady({
    drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
    power: { rebootSeconds: 60, unansweredSeconds: 60, upgradeSeconds: 90 },
    upgrades: { imagePrefixes: [], firmwareSources: [SOURCE] },
  });
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await env?.stop();
}, 60_000);

describe('a firmware update', () => {
  it('refuses a source outside the list written with kubectl, sending nothing to the BMC', async () => {
    const before = (await updateRequests()).count;
    await env.create('fw-evil', 'worker-2', 'firmware', {
      firmware: {
        imageURI: 'https://fw.example.com.evil.example/bios-9.9.9.bin',
      },
    });
    const refused = await env.phaseIs('fw-evil', 'Refused');
    expect(refused.status?.refusal?.reason).toMatch(
      /is not from an allowed firmware source \(allowed: https:\/\/fw\.example\.com\)/,
    );
    expect(refused.status?.power?.firmware).toBeUndefined();
    expect(await env.unschedulable('worker-2')).toBe(false);
    expect((await updateRequests()).count).toBe(before);
  });

  it('updates the BIOS end to end: drained, SimpleUpdate sent once, the task followed, the new version read', async () => {
    await env.create('fw-w1', 'worker-1', 'firmware', {
      firmware: { imageURI: `${SOURCE}/bios-2.5.0.bin`, targets: [BIOS] },
    });
    const complete = await env.phaseIs('fw-w1', 'Complete', 90_000);
    expect(complete.status?.history?.map(h => h.phase)).toEqual([
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
      'Returning',
      'Complete',
    ]);
    const firmware = complete.status?.firmware;
    expect(firmware?.before).toContainEqual({
      id: BIOS,
      name: 'Rack BIOS',
      version: '2.4.1',
    });
    expect(firmware?.after).toContainEqual({
      id: BIOS,
      name: 'Rack BIOS',
      version: '2.5.0',
    });
    expect(firmware?.taskUri).toMatch(
      /^\/redfish\/v1\/TaskService\/TaskMonitors\//,
    );
    expect(firmware?.taskState).toBe('Completed');
    expect(complete.status?.power?.firmware?.sentAt).toBeDefined();
    const sent = await simpleUpdates();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      status: 202,
      body: {
        ImageURI: `${SOURCE}/bios-2.5.0.bin`,
        TransferProtocol: 'HTTPS',
        Targets: [BIOS],
      },
    });
    expect(await env.unschedulable('worker-1')).toBe(false);
  });

  it('is Failed with the BMC message when the task fails, the version unchanged', async () => {
    await control('/health/update', {
      failNext: 'flash write failed at block 17',
    });
    await env.create('fw-w2', 'worker-2', 'firmware', {
      firmware: { imageURI: `${SOURCE}/bios-2.6.0.bin`, targets: [BIOS] },
    });
    const failed = await env.phaseIs('fw-w2', 'Failed', 90_000);
    expect(failed.status?.message).toMatch(
      /the firmware task of worker-2 ended Exception: .*flash write failed at block 17/,
    );
    expect(failed.status?.firmware?.taskState).toBe('Exception');
    expect(await env.unschedulable('worker-2')).toBe(true);
    expect(await simpleUpdates()).toHaveLength(2);
  });

  it('sends the reset an OnReset update asks for once, and reads the new version after it', async () => {
    const bootBefore = (await env.nodes.get('worker-1')).status?.nodeInfo
      ?.bootID;
    await env.create('fw-w1-onreset', 'worker-1', 'firmware', {
      firmware: {
        imageURI: `${SOURCE}/bios-2.7.0.bin`,
        targets: [BIOS],
        applyTime: 'OnReset',
      },
    });
    const complete = await env.phaseIs('fw-w1-onreset', 'Complete', 120_000);
    expect(complete.status?.history?.map(h => h.phase)).toEqual([
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
      'Rebooting',
      'Returning',
      'Complete',
    ]);
    expect(complete.status?.power?.firmware?.sentAt).toBeDefined();
    expect(complete.status?.power?.reboot?.sentAt).toBeDefined();
    expect(complete.status?.firmware?.before).toContainEqual({
      id: BIOS,
      name: 'Rack BIOS',
      version: '2.5.0',
    });
    expect(complete.status?.firmware?.after).toContainEqual({
      id: BIOS,
      name: 'Rack BIOS',
      version: '2.7.0',
    });
    expect(complete.status?.bootIdBefore).toBe(bootBefore);
    const after = (await env.nodes.get('worker-1')).status?.nodeInfo?.bootID;
    expect(after).not.toBe(bootBefore);
    const sent = await simpleUpdates();
    expect(sent).toHaveLength(3);
    expect(sent[2].body['@Redfish.OperationApplyTime']).toBe('OnReset');
  });

  it('sends the update once when the operator dies between the send and its record; the successor settles it from the inventory', async () => {
    const sentBefore = (await simpleUpdates()).length;
    await operator!.stop();
    let reached!: () => void;
    const atCrashPoint = new Promise<void>(resolve => {
      reached = resolve;
    });
    operator = await env.start({
      identity: 'doomed',
      upgrades: { imagePrefixes: [], firmwareSources: [SOURCE] },
      beforeStatusWrite: async (name, _phase, status) => {
        if (name === 'fw-crash' && status.power?.firmware?.sentAt) {
          reached();
          await new Promise(() => {}); // the process "dies" between the send and its record
        }
      },
    });
    await env.create('fw-crash', 'worker-1', 'firmware', {
      firmware: { imageURI: `${SOURCE}/bios-2.8.0.bin`, targets: [BIOS] },
    });
    await atCrashPoint;
    expect(await simpleUpdates()).toHaveLength(sentBefore + 1);
    const recorded = await env.nms.get('fw-crash');
    expect(recorded.status?.phase).toBe('Drained');
    expect(recorded.status?.power?.firmware?.recordedAt).toBeDefined();
    expect(recorded.status?.power?.firmware?.sentAt).toBeUndefined();
    await operator.stop();

    operator = await env.start({
      identity: 'successor',
      drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
      power: { rebootSeconds: 60, unansweredSeconds: 60, upgradeSeconds: 90 },
      upgrades: { imagePrefixes: [], firmwareSources: [SOURCE] },
    });
    const complete = await env.phaseIs('fw-crash', 'Complete', 90_000);
    expect(complete.status?.firmware?.after).toContainEqual({
      id: BIOS,
      name: 'Rack BIOS',
      version: '2.8.0',
    });
    expect(await simpleUpdates()).toHaveLength(sentBefore + 1);
  });
});

/*
 * A target version, checksums, a source's credentials and the ServerBMC's history
 * (docs/upgrades.md, "Firmware updates"). The images the operator fetches itself (for a
 * checksum, for a multipart push) come from a local https server with a throw-away CA
 * the operator is given (--firmware-sources-ca-file); the rack's BMC never fetches.
 */
describe('a firmware update with a version, a checksum and source credentials', () => {
  const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;
  const IMAGE_BYTES = randomBytes(200_000);
  const IMAGE_SHA = `sha256:${createHash('sha256')
    .update(IMAGE_BYTES)
    .digest('hex')}`;
  let images: https.Server;
  let local: string;
  const imageRequests: Array<{ path?: string; authorization?: string }> = [];
  let bmcs: ResourceClient<ServerBMC>;

  beforeAll(async () => {
    const tls = await selfSignedServingCertificate(['127.0.0.1']);
    images = https.createServer(
      { cert: tls.certPem, key: tls.keyPem },
      (req, res) => {
        imageRequests.push({
          path: req.url,
          authorization: req.headers.authorization,
        });
        if (req.url?.startsWith('/bios-')) {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.end(IMAGE_BYTES);
          return;
        }
        res.writeHead(404).end();
      },
    );
    await new Promise<void>(resolve => images.listen(0, '127.0.0.1', resolve));
    local = `https://127.0.0.1:${(images.address() as AddressInfo).port}`;
    bmcs = new ResourceClient<ServerBMC>(env.admin, serverBmcResource);
    // The credentials Secret in the operator's namespace; one of the same name elsewhere
    // (another namespace) holds other credentials and must never be read.
    await env.secret('firmware-sources', {
      'sources.json': JSON.stringify({
        [SOURCE]: { username: 'fw-reader', password: PASSWORD },
        [local]: { username: 'fw-reader', password: PASSWORD },
        'https://evil.example': { username: 'x', password: 'elsewhere' },
      }),
    });
    await env.core.createNamespacedSecret({
      namespace: 'default',
      body: {
        metadata: { name: 'firmware-sources', namespace: 'default' },
        stringData: {
          'sources.json': JSON.stringify({
            [SOURCE]: { username: 'intruder', password: 'from-default' },
          }),
        },
      },
    });
    // worker-2 was left cordoned by the failed update above.
    await env.nodes.patch(
      'worker-2',
      { spec: { unschedulable: false } },
      { type: 'strategic' },
    );
    await operator?.stop();
    operator = await env.startReady({
      identity: 'with-credentials',
      drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
      power: { rebootSeconds: 60, unansweredSeconds: 60, upgradeSeconds: 90 },
      upgrades: {
        imagePrefixes: [],
        firmwareSources: [SOURCE, local],
        firmwareChecksumRequired: [local],
        firmwareSourceCredentialsSecret: 'firmware-sources',
        firmwareSourceCaBundle: tls.caPem,
      },
    });
  }, 120_000);

  afterAll(async () => {
    await new Promise(resolve => images?.close(resolve));
  });

  /** Everything a user or an agent can read of a maintenance: its object and Events. */
  async function readable(name: string): Promise<string> {
    const events = await env.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${name}`,
    });
    return JSON.stringify([
      await env.nms.get(name),
      events.items.map(e => e.message),
    ]);
  }

  it('reaches the version: Complete, the credentials in SimpleUpdate only, the ServerBMC history written once', async () => {
    const sentBefore = (await simpleUpdates()).length;
    await env.create('fw-version', 'worker-1', 'firmware', {
      firmware: {
        imageURI: `${SOURCE}/bios-2.9.0.bin`,
        targets: [BIOS],
        version: '2.9.0',
      },
    });
    const complete = await env.phaseIs('fw-version', 'Complete', 90_000);
    expect(complete.status?.firmware?.after).toContainEqual({
      id: BIOS,
      name: 'Rack BIOS',
      version: '2.9.0',
    });
    const sent = (await simpleUpdates()).slice(sentBefore);
    expect(sent).toHaveLength(1);
    expect(sent[0].body).toMatchObject({
      ImageURI: `${SOURCE}/bios-2.9.0.bin`,
      Username: 'fw-reader',
      Password: PASSWORD,
    });
    // Never the Secret of another namespace: the code reads its own namespace only, and
    // the operator's identity may not read Secrets elsewhere.
    expect(JSON.stringify(sent)).not.toContain('from-default');
    await expect(
      env.operatorKc.makeApiClient(CoreV1Api).readNamespacedSecret({
        name: 'firmware-sources',
        namespace: 'default',
      }),
    ).rejects.toMatchObject({ code: 403 });
    // Nowhere a user reads, nor in the operator's log.
    expect(await readable('fw-version')).not.toContain(PASSWORD);
    expect(env.logs.join('\n')).not.toContain(PASSWORD);
    const bmc = await env.waitFor(
      'the history entry of fw-version',
      async () => {
        const read = await bmcs.get('worker-1');
        return (
          read.status?.firmwareHistory?.some(
            h => h.maintenance === 'fw-version',
          ) && read
        );
      },
    );
    const entries = bmc.status!.firmwareHistory!.filter(
      h => h.maintenance === 'fw-version',
    );
    expect(entries).toEqual([
      {
        at: expect.any(String),
        maintenance: 'fw-version',
        uid: complete.metadata.uid,
        imageURI: `${SOURCE}/bios-2.9.0.bin`,
        result: 'Complete',
        components: [{ id: BIOS, before: '2.8.0', after: '2.9.0' }],
      },
    ]);
    expect(JSON.stringify(bmc.status)).not.toContain(PASSWORD);
  });

  it('is Refused "already at" when the BMC reports the version, sending nothing', async () => {
    const sentBefore = (await simpleUpdates()).length;
    await env.create('fw-already', 'worker-2', 'firmware', {
      firmware: {
        imageURI: `${SOURCE}/bios-2.9.0.bin`,
        targets: [BIOS],
        version: '2.9.0',
      },
    });
    const refused = await env.phaseIs('fw-already', 'Refused', 60_000);
    expect(refused.status?.message).toMatch(
      /firmware update of worker-2 refused: already at 2\.9\.0 \(the BMC's (last health reading|FirmwareInventory) reports it/,
    );
    expect(refused.status?.power?.firmware).toBeUndefined();
    expect(await simpleUpdates()).toHaveLength(sentBefore);
  });

  it('refuses an image whose checksum is another before anything is sent, naming both; fetched with the source credentials', async () => {
    const sentBefore = (await updateRequests()).count;
    const asked = `sha256:${'0'.repeat(64)}`;
    await env.create('fw-checksum', 'worker-2', 'firmware', {
      firmware: {
        imageURI: `${local}/bios-3.0.0.bin`,
        targets: [BIOS],
        checksum: asked,
      },
    });
    const refused = await env.phaseIs('fw-checksum', 'Refused', 60_000);
    expect(refused.status?.message).toContain(
      `the checksum of ${local}/bios-3.0.0.bin is ${IMAGE_SHA}, not ${asked}`,
    );
    expect(refused.status?.power?.firmware).toBeUndefined();
    expect((await updateRequests()).count).toBe(sentBefore);
    expect(imageRequests.at(-1)).toEqual({
      path: '/bios-3.0.0.bin',
      authorization: `Basic ${Buffer.from(`fw-reader:${PASSWORD}`).toString(
        'base64',
      )}`,
    });
    expect(await readable('fw-checksum')).not.toContain(PASSWORD);
    await env.nodes.patch(
      'worker-2',
      { spec: { unschedulable: false } },
      { type: 'strategic' },
    );
  });

  it('refuses an image from a source requiring a checksum without one, at admission: nothing fetched, drained or sent', async () => {
    const fetched = imageRequests.length;
    await env.create('fw-no-checksum', 'worker-2', 'firmware', {
      firmware: { imageURI: `${local}/bios-3.0.0.bin`, targets: [BIOS] },
    });
    const refused = await env.phaseIs('fw-no-checksum', 'Refused', 60_000);
    expect(refused.status?.message).toMatch(/requires a checksum/);
    expect(await env.unschedulable('worker-2')).toBe(false);
    expect(imageRequests).toHaveLength(fetched);
  });

  it('uploads, to a BMC that takes only a multipart push, the very bytes whose checksum matched', async () => {
    await control('/health/update', { pushOnly: true });
    try {
      await env.create('fw-push', 'worker-2', 'firmware', {
        firmware: {
          imageURI: `${local}/bios-3.1.0.bin`,
          targets: [BIOS],
          checksum: IMAGE_SHA,
          version: '3.1.0',
        },
      });
      const complete = await env.phaseIs('fw-push', 'Complete', 90_000);
      expect(complete.status?.firmware?.after).toContainEqual({
        id: BIOS,
        name: 'Rack BIOS',
        version: '3.1.0',
      });
      const pushes = (await updateRequests()).requests.filter(
        r =>
          r.method === 'POST' && r.path === '/redfish/v1/UpdateService/upload',
      );
      expect(pushes.at(-1)?.body.UpdateFile).toEqual({
        fileName: 'bios-3.1.0.bin',
        bytes: IMAGE_BYTES.length,
      });
      // Fetched twice: once to check before recording, once for the upload (checked again).
      expect(
        imageRequests.filter(r => r.path === '/bios-3.1.0.bin'),
      ).toHaveLength(2);
    } finally {
      await control('/health/update', { pushOnly: false });
    }
  });
});

/*
 * A firmware plan to a version over three workers, one at a time. The rack's proxy keeps
 * one FirmwareInventory for all its systems, so worker-4's "already there" is its
 * ServerBMC's last reading, its firmware written by the test as a full sweep would after
 * an update made elsewhere (BIOS 3.2.0): Skipped up front, nothing asked of it. worker-1 is updated; worker-2's maintenance then reads the shared inventory, at
 * 3.2.0 already, right before sending: Refused "already at", the plan's step Skipped.
 */
describe('a firmware plan to a version', () => {
  it('skips up front the node whose BMC already reports it, updates the others once, and counts 3 of 3 at 3.2.0', async () => {
    const plans = new ResourceClient<MaintenancePlan>(
      env.admin,
      maintenancePlanResource,
    );
    const bmcs = new ResourceClient<ServerBMC>(env.admin, serverBmcResource);
    await rack.linkBmc('worker-4');
    const requestedAt = new Date().toISOString();
    await bmcs.patch('worker-4', {
      spec: {
        healthRefresh: { requestedAt, requestedBy: 'user:default/tester' },
      },
    } as any);
    const read = await env.waitFor('a reading of worker-4', async () => {
      const bmc = await bmcs.get('worker-4');
      const h = bmc.status?.health;
      return (
        h?.answeredRequestAt !== undefined &&
        Date.parse(h.answeredRequestAt) === Date.parse(requestedAt) &&
        bmc
      );
    });
    // Its BIOS as a reading after an update made elsewhere would report it.
    expect(read.status?.health?.error).toBeUndefined();
    // The reading keeps each component's link, which the targets name.
    expect(read.status?.health?.firmware).toContainEqual(
      expect.objectContaining({ id: BIOS, name: 'Rack BIOS' }),
    );
    await bmcs.patchStatus(
      'worker-4',
      {
        status: {
          health: {
            firmware: [
              {
                id: BIOS,
                name: 'Rack BIOS',
                version: '3.2.0',
                updateable: true,
              },
              {
                id: '/redfish/v1/UpdateService/FirmwareInventory/BMC',
                name: 'Rack BMC',
                version: '1.12.0',
                updateable: false,
              },
            ],
          },
        },
      } as any,
      { type: 'merge' },
    );
    const sentBefore = (await simpleUpdates()).length;
    await plans.create({
      apiVersion: maintenancePlanResource.apiVersion,
      kind: 'MaintenancePlan',
      metadata: { name: 'bios-3-2' },
      spec: {
        intent: 'firmware',
        firmware: {
          imageURI: `${SOURCE}/bios-3.2.0.bin`,
          targets: [BIOS],
          version: '3.2.0',
        },
        nodes: ['worker-1', 'worker-2', 'worker-4'],
        maxParallel: 1,
        reason: 'BIOS 3.2.0',
        requestedBy: ADMIN_USER,
        healthyReturn: { healthyForSeconds: 0 },
      },
    } as any);
    const resolved = await env.waitFor('the plan resolved', async () => {
      const plan = await plans.get('bios-3-2');
      return plan.status?.nodes && plan;
    });
    expect(
      resolved.status?.nodes?.find(n => n.name === 'worker-4'),
    ).toMatchObject({
      phase: 'Skipped',
      message: 'already at 3.2.0',
      firmwareVersion: { before: '3.2.0', after: '3.2.0' },
    });
    expect(resolved.status?.upgrade?.summary).toBe('1 of 3 at 3.2.0');
    const done = await env.waitFor(
      'the plan ended',
      async () => {
        const plan = await plans.get('bios-3-2');
        return (
          ['Complete', 'Failed'].includes(plan.status?.phase ?? '') && plan
        );
      },
      180_000,
    );
    const steps = Object.fromEntries(
      (done.status?.nodes ?? []).map(n => [n.name, n]),
    );
    expect(steps['worker-1']).toMatchObject({
      phase: 'Done',
      firmwareVersion: { after: '3.2.0' },
    });
    expect(steps['worker-2']).toMatchObject({
      phase: 'Skipped',
      message: 'already at 3.2.0',
    });
    expect(done.status?.phase).toBe('Complete');
    expect(done.status?.upgrade?.summary).toBe('3 of 3 at 3.2.0');
    // One SimpleUpdate: worker-1's.
    const sent = (await simpleUpdates()).slice(sentBefore);
    expect(sent).toHaveLength(1);
    expect(sent[0].body).toMatchObject({
      ImageURI: `${SOURCE}/bios-3.2.0.bin`,
      Targets: [BIOS],
    });
    // worker-4 was never asked anything.
    const { items } = await env.nms.list({
      labelSelector: 'rackside.dev/plan=bios-3-2',
    });
    expect(items.map(nm => nm.spec.nodeName).sort()).toEqual([
      'worker-1',
      'worker-2',
    ]);
  }, 300_000);
});
