// Firmware updates on the rack's BMCs (lib/redfishUpdate.mjs behind lib/redfishHealth.mjs):
// SimpleUpdate, the task monitor followed to its end, OnReset applied by the next Reset that
// goes through the proxy, Immediate, a failed task, a push-only BMC, a BMC without an
// UpdateService, refused bodies and the requests counter.
//   node --test e2e/rack/test/redfish-update.test.mjs
// Starts only sushy-tools (cached venv, e2e/rack/redfish/install.sh) and the proxy, over
// HTTPS with the rack's CA; no kube-apiserver, no Talos emulator (a Reset reaches sushy alone).
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { startRedfish } from '../lib/redfish.mjs';
import { versionOfImage } from '../lib/redfishUpdate.mjs';

const INVENTORY = '/redfish/v1/UpdateService/FirmwareInventory';
const SIMPLE_UPDATE =
  '/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate';
const SYSTEMS = [
  { name: 'worker-1', uuid: 'b3f0c1d2-5e6f-4a7b-8c9d-0e1f2a3b4c5d', host: 21 },
  { name: 'worker-2', uuid: 'c4a1d2e3-6f70-4b8c-9dae-1f2a3b4c5d6e', host: 22 },
];

let dir;
let rack;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rack-redfish-update-'));
  rack = await startRedfish({
    dir,
    net: 0,
    fixture: {
      nodes: SYSTEMS.map(s => ({
        name: s.name,
        machine: { host: s.host, uuid: s.uuid, bmc: true },
      })),
    },
  });
});

after(async () => {
  await rack?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await control('POST', '/health/update/reset');
});

async function control(method, p, body) {
  const res = await fetch(`${rack.healthControlUrl}${p}`, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  assert.equal(res.status, 200, `${method} ${p}: ${JSON.stringify(json)}`);
  return json;
}

/** A raw HTTPS request to the proxy with the rack's credentials; answers status, headers, JSON. */
function request(method, p, { body, contentType } = {}) {
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(p, rack.url),
      {
        method,
        ca: fs.readFileSync(rack.caFile),
        headers: {
          authorization: `Basic ${Buffer.from(
            `${rack.username}:${rack.password}`,
          ).toString('base64')}`,
          ...(body
            ? {
                'content-type': contentType ?? 'application/json',
                'content-length': Buffer.byteLength(body),
              }
            : {}),
        },
      },
      res => {
        const chunks = [];
        res.on('data', c => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode,
            headers: res.headers,
            body: text ? JSON.parse(text) : null,
          });
        });
      },
    );
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

const simpleUpdate = parameters =>
  request('POST', SIMPLE_UPDATE, { body: JSON.stringify(parameters) });

async function versions() {
  const out = {};
  for (const id of ['BIOS', 'BMC']) {
    const r = await request('GET', `${INVENTORY}/${id}`);
    assert.equal(r.status, 200);
    out[id] = r.body.Version;
  }
  return out;
}

/**
 * Follows a task monitor as a client does: GET it again (after the Retry-After the BMC
 * names) while it answers 202; answers the states seen and the final answer.
 */
async function follow(monitor) {
  const seen = [];
  for (;;) {
    const r = await request('GET', monitor);
    seen.push(r.body.TaskState);
    if (r.status !== 202) return { seen, final: r };
    assert.equal(r.headers['retry-after'], '1');
    await new Promise(done => setTimeout(done, 50));
  }
}

function assertRedfishError(r, code) {
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.error.code, code);
  assert.equal(r.body.error['@Message.ExtendedInfo'][0].MessageId, code);
  assert.ok(r.body.error.message.length > 0);
}

test('the image file name carries the version', () => {
  assert.equal(versionOfImage('bios-2.3.1.bin'), '2.3.1');
  assert.equal(versionOfImage('X11DPU-bmc-01.74.11.fwpkg'), '01.74.11');
  assert.equal(versionOfImage('bios-2.3.1'), '2.3.1');
  assert.equal(versionOfImage('bios-v2.img.gz'), undefined);
  assert.equal(versionOfImage('firmware.bin'), undefined);
});

test('the service root links the UpdateService, which offers SimpleUpdate over HTTPS only', async () => {
  const root = await request('GET', '/redfish/v1');
  assert.deepEqual(root.body.UpdateService, {
    '@odata.id': '/redfish/v1/UpdateService',
  });
  assert.deepEqual(root.body.TaskService, {
    '@odata.id': '/redfish/v1/TaskService',
  });
  const service = await request('GET', '/redfish/v1/UpdateService');
  assert.equal(service.status, 200);
  assert.deepEqual(service.body.Actions['#UpdateService.SimpleUpdate'], {
    target: SIMPLE_UPDATE,
    'TransferProtocol@Redfish.AllowableValues': ['HTTPS'],
    '@Redfish.OperationApplyTimeSupport': {
      SupportedValues: ['Immediate', 'OnReset'],
    },
  });
  assert.equal(service.body.HttpPushUri, undefined);
  assert.equal(service.body.MultipartHttpPushUri, undefined);
  assert.deepEqual(service.body.FirmwareInventory, { '@odata.id': INVENTORY });
});

test('OnReset: the task monitor is followed to Completed, and the version changes only after the Reset', async () => {
  await control('POST', '/health/update', { taskMs: 800 });
  const system = `/redfish/v1/Systems/${SYSTEMS[0].uuid}`;
  const accepted = await simpleUpdate({
    ImageURI: 'https://firmware.example/rack/bios-2.5.0.bin',
    TransferProtocol: 'HTTPS',
    Targets: [`${INVENTORY}/BIOS`, system],
    '@Redfish.OperationApplyTime': 'OnReset',
  });
  assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
  const monitor = accepted.headers.location;
  assert.match(monitor, /^\/redfish\/v1\/TaskService\/TaskMonitors\/\d+$/);
  assert.equal(accepted.body.TaskState, 'New');
  assert.equal(accepted.body.TaskMonitor, monitor);
  const taskPath = accepted.body['@odata.id'];
  assert.match(taskPath, /^\/redfish\/v1\/TaskService\/Tasks\/\d+$/);

  const { seen, final } = await follow(monitor);
  assert.equal(final.status, 200);
  assert.equal(seen[0], 'New');
  assert.ok(seen.includes('Running'), `states seen: ${seen}`);
  assert.equal(final.body.TaskState, 'Completed');
  assert.equal(final.body.TaskStatus, 'OK');
  assert.equal(final.body.PercentComplete, 100);
  assert.deepEqual(
    final.body.Messages.map(m => m.MessageId),
    ['Update.1.0.AwaitToActivate', 'Base.1.13.ResetRequired'],
  );
  assert.equal(
    final.body.Messages[1].MessageArgs[0],
    `${system}/Actions/ComputerSystem.Reset`,
  );
  const task = await request('GET', taskPath);
  assert.equal(task.status, 200);
  assert.equal(task.body.TaskState, 'Completed');
  const tasks = await request('GET', '/redfish/v1/TaskService/Tasks');
  assert.deepEqual(tasks.body.Members, [{ '@odata.id': taskPath }]);

  // Completed, but the image waits for the system's reset.
  assert.deepEqual(await versions(), { BIOS: '2.4.1', BMC: '1.12.0' });
  // Another system's reset does not apply it.
  const other = await request(
    'POST',
    `/redfish/v1/Systems/${SYSTEMS[1].uuid}/Actions/ComputerSystem.Reset`,
    { body: JSON.stringify({ ResetType: 'ForceRestart' }) },
  );
  assert.ok(other.status >= 200 && other.status < 300, `${other.status}`);
  assert.deepEqual(await versions(), { BIOS: '2.4.1', BMC: '1.12.0' });

  const reset = await request(
    'POST',
    `${system}/Actions/ComputerSystem.Reset`,
    {
      body: JSON.stringify({ ResetType: 'ForceRestart' }),
    },
  );
  assert.ok(reset.status >= 200 && reset.status < 300, `${reset.status}`);
  assert.deepEqual(await versions(), { BIOS: '2.5.0', BMC: '1.12.0' });
});

test('Immediate: the version changes when the task completes', async () => {
  await control('POST', '/health/update', { taskMs: 300 });
  const accepted = await simpleUpdate({
    ImageURI: 'https://firmware.example/rack/bios-2.6.0.bin?token=x',
  });
  assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
  assert.deepEqual(await versions(), { BIOS: '2.4.1', BMC: '1.12.0' });
  const { final } = await follow(accepted.headers.location);
  assert.equal(final.body.TaskState, 'Completed');
  assert.deepEqual(
    final.body.Messages.map(m => m.MessageId),
    ['Update.1.0.UpdateSuccessful'],
  );
  assert.deepEqual(await versions(), { BIOS: '2.6.0', BMC: '1.12.0' });
});

test('a task told to fail ends in Exception with the message, and the version stays', async () => {
  await control('POST', '/health/update', {
    taskMs: 200,
    failNext: 'flash verification failed',
  });
  const failed = await simpleUpdate({
    ImageURI: 'https://firmware.example/rack/bios-2.7.0.bin',
  });
  assert.equal(failed.status, 202);
  const { final } = await follow(failed.headers.location);
  assert.equal(final.status, 200);
  assert.equal(final.body.TaskState, 'Exception');
  assert.equal(final.body.TaskStatus, 'Critical');
  assert.equal(final.body.Messages[0].Message, 'flash verification failed');
  assert.deepEqual(await versions(), { BIOS: '2.4.1', BMC: '1.12.0' });

  // Only the next task fails.
  const next = await simpleUpdate({
    ImageURI: 'https://firmware.example/rack/bios-2.7.0.bin',
  });
  const done = await follow(next.headers.location);
  assert.equal(done.final.body.TaskState, 'Completed');
  assert.deepEqual(await versions(), { BIOS: '2.7.0', BMC: '1.12.0' });
});

test('an image whose name carries no version ends in Exception', async () => {
  await control('POST', '/health/update', { taskMs: 100 });
  const r = await simpleUpdate({
    ImageURI: 'https://firmware.example/bios.bin',
  });
  assert.equal(r.status, 202);
  const { final } = await follow(r.headers.location);
  assert.equal(final.body.TaskState, 'Exception');
  assert.match(final.body.Messages[0].Message, /carries no version/);
});

test('a push-only BMC offers MultipartHttpPushUri and takes a multipart image', async () => {
  await control('POST', '/health/update', { pushOnly: true, taskMs: 100 });
  const service = await request('GET', '/redfish/v1/UpdateService');
  assert.equal(service.body.Actions, undefined);
  assert.equal(service.body.HttpPushUri, undefined);
  const push = service.body.MultipartHttpPushUri;
  assert.equal(push, '/redfish/v1/UpdateService/upload');
  const refused = await simpleUpdate({
    ImageURI: 'https://firmware.example/rack/bios-2.8.0.bin',
  });
  assert.equal(refused.status, 404);

  const boundary = 'rackside-boundary';
  const image = Buffer.alloc(2048, 7);
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="UpdateParameters"\r\n` +
        `Content-Type: application/json\r\n\r\n` +
        `${JSON.stringify({
          Targets: [`${INVENTORY}/BIOS`],
          '@Redfish.OperationApplyTime': 'Immediate',
        })}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="UpdateFile"; filename="bios-2.8.0.bin"\r\n` +
        `Content-Type: application/octet-stream\r\n\r\n`,
    ),
    image,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const accepted = await request('POST', push, {
    body,
    contentType: `multipart/form-data; boundary=${boundary}`,
  });
  assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
  const { final } = await follow(accepted.headers.location);
  assert.equal(final.body.TaskState, 'Completed');
  assert.deepEqual(await versions(), { BIOS: '2.8.0', BMC: '1.12.0' });

  const { requests } = await control('GET', '/health/update/requests');
  assert.deepEqual(requests.at(-1), {
    method: 'POST',
    path: push,
    status: 202,
    body: {
      UpdateParameters: {
        Targets: [`${INVENTORY}/BIOS`],
        '@Redfish.OperationApplyTime': 'Immediate',
      },
      UpdateFile: { fileName: 'bios-2.8.0.bin', bytes: 2048 },
    },
  });

  const noFile = await request('POST', push, {
    body: `--${boundary}\r\nContent-Disposition: form-data; name="UpdateParameters"\r\n\r\n{}\r\n--${boundary}--\r\n`,
    contentType: `multipart/form-data; boundary=${boundary}`,
  });
  assertRedfishError(noFile, 'Base.1.8.ActionParameterMissing');
});

test('a BMC without an UpdateService answers 404 and the service root does not link one', async () => {
  await control('POST', '/health/update', { offered: false });
  const root = await request('GET', '/redfish/v1');
  assert.equal(root.body.UpdateService, undefined);
  assert.equal((await request('GET', '/redfish/v1/UpdateService')).status, 404);
  const r = await simpleUpdate({
    ImageURI: 'https://firmware.example/rack/bios-2.9.0.bin',
  });
  assert.equal(r.status, 404);
});

test('invalid bodies are refused with a 400 and a Redfish error body, and no task', async () => {
  const cases = [
    [{}, 'Base.1.8.ActionParameterMissing'],
    [
      { ImageURI: 'http://firmware.example/bios-2.3.1.bin' },
      'Base.1.8.ActionParameterValueFormatError',
    ],
    [
      { ImageURI: 'ftp://firmware.example/bios-2.3.1.bin' },
      'Base.1.8.ActionParameterValueFormatError',
    ],
    [
      {
        ImageURI: 'https://firmware.example/bios-2.3.1.bin',
        TransferProtocol: 'FTP',
      },
      'Base.1.8.ActionParameterNotSupported',
    ],
    [
      {
        ImageURI: 'https://firmware.example/bios-2.3.1.bin',
        Targets: [`${INVENTORY}/NIC`],
      },
      'Base.1.8.ActionParameterValueFormatError',
    ],
    [
      {
        ImageURI: 'https://firmware.example/bmc-2.3.1.bin',
        Targets: [`${INVENTORY}/BMC`],
      },
      'Base.1.8.ActionParameterValueFormatError',
    ],
    [
      {
        ImageURI: 'https://firmware.example/bios-2.3.1.bin',
        Targets: `${INVENTORY}/BIOS`,
      },
      'Base.1.8.ActionParameterValueTypeError',
    ],
    [
      {
        ImageURI: 'https://firmware.example/bios-2.3.1.bin',
        '@Redfish.OperationApplyTime': 'AtMaintenanceWindowStart',
      },
      'Base.1.8.ActionParameterNotSupported',
    ],
    [
      {
        ImageURI: 'https://firmware.example/bios-2.3.1.bin',
        Username: 'fw-reader',
      },
      'Base.1.8.ActionParameterValueFormatError',
    ],
    [
      {
        ImageURI: 'https://firmware.example/bios-2.3.1.bin',
        Username: 'fw-reader',
        Password: 42,
      },
      'Base.1.8.ActionParameterValueFormatError',
    ],
  ];
  for (const [body, code] of cases)
    assertRedfishError(await simpleUpdate(body), code);
  const malformed = await request('POST', SIMPLE_UPDATE, {
    body: '{"ImageURI":',
  });
  assertRedfishError(malformed, 'Base.1.8.MalformedJSON');

  const tasks = await request('GET', '/redfish/v1/TaskService/Tasks');
  assert.deepEqual(tasks.body.Members, []);
  const { count, requests } = await control('GET', '/health/update/requests');
  assert.equal(count, cases.length + 1);
  assert.ok(requests.every(r => r.status === 400));
  assert.deepEqual(requests[1].body, {
    ImageURI: 'http://firmware.example/bios-2.3.1.bin',
  });
});

test('the requests counter shows an update sent once, with its body (the source credentials too)', async () => {
  await control('POST', '/health/update', { taskMs: 100 });
  const parameters = {
    ImageURI: 'https://firmware.example/rack/bios-3.0.0.bin',
    Targets: [`${INVENTORY}/BIOS`],
    Username: 'fw-reader',
    Password: 'source-password',
  };
  const r = await simpleUpdate(parameters);
  await follow(r.headers.location);
  // Reading the task and the inventory are not update requests.
  await versions();
  const seen = await control('GET', '/health/update/requests');
  assert.deepEqual(seen, {
    count: 1,
    requests: [
      { method: 'POST', path: SIMPLE_UPDATE, status: 202, body: parameters },
    ],
  });
  // Read again: the record is kept (not cleared by reading).
  assert.equal((await control('GET', '/health/update/requests')).count, 1);
});

test('the TaskService keeps 32 tasks: the oldest finished one goes first', async () => {
  await control('POST', '/health/update', { taskMs: 0 });
  const monitors = [];
  for (let i = 0; i < 33; i++) {
    const r = await simpleUpdate({
      ImageURI: `https://firmware.example/rack/bios-4.0.${i}.bin`,
    });
    assert.equal(r.status, 202);
    monitors.push(r.headers.location);
    await follow(r.headers.location);
  }
  const tasks = await request('GET', '/redfish/v1/TaskService/Tasks');
  assert.equal(tasks.body.Members.length, 32);
  assert.equal(tasks.body['Members@odata.count'], 32);
  assert.equal((await request('GET', monitors[0])).status, 404);
  assert.equal((await request('GET', monitors[32])).status, 200);
  assert.deepEqual(await versions(), { BIOS: '4.0.32', BMC: '1.12.0' });
  assert.equal((await control('GET', '/health/update/requests')).count, 33);
});

test('update requests need the BMC credentials', async () => {
  const r = await new Promise((resolve, reject) => {
    const req = https.request(
      new URL(SIMPLE_UPDATE, rack.url),
      {
        method: 'POST',
        ca: fs.readFileSync(rack.caFile),
        headers: { 'content-type': 'application/json' },
      },
      res => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end(
      JSON.stringify({ ImageURI: 'https://firmware.example/bios-1.0.0.bin' }),
    );
  });
  assert.equal(r, 401);
  assert.equal((await control('GET', '/health/update/requests')).count, 0);
});
