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
import type { Operator } from './operator';
import { startOperatorRack, type OperatorRack } from './testing/operatorRack';
import { powerRack, REDFISH_PROVIDER } from './testing/powerRack';

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
