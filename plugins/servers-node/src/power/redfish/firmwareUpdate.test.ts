/*
 * Firmware updates against the DMTF public-rackmount1 mockup (an UpdateService with
 * SimpleUpdate and a FirmwareInventory), with the update's answers and the task monitor
 * written by each test: a BMC that runs, fails, asks for a reset, or is hostile.
 */
import { REPO_ROOT } from '@rackside/rack-testing';
import type { ServerResponse } from 'node:http';
import { MockupBmc, mockupDir } from '../../testing';
import type { FirmwareTaskReading } from '../types';
import { readTask, RedfishFirmwareUpdater } from './firmwareUpdate';
import { BmcRateLimiter } from './rateLimit';
import { RedfishClient } from './RedfishClient';

const RACKMOUNT = mockupDir(REPO_ROOT, 'public-rackmount1');
const CREDENTIALS = { username: 'admin', password: 'p4ss-w0rd!' };
const UPDATE = '/redfish/v1/UpdateService';
const SIMPLE_UPDATE = `${UPDATE}/Actions/UpdateService.SimpleUpdate`;
const MONITOR = '/redfish/v1/TaskService/TaskMonitors/7';
const IMAGE = 'https://fw.example.com/bios-2.5.0.bin';

const open: Array<{ close(): Promise<void> } | { stop(): Promise<void> }> = [];
async function bmc() {
  const server = await new MockupBmc({ dir: RACKMOUNT }).start();
  open.push(server);
  return server;
}
function updaterOf(server: MockupBmc, deadlineMs?: number) {
  const client = new RedfishClient({
    address: server.url,
    credentials: CREDENTIALS,
    rateLimiter: new BmcRateLimiter({ minIntervalMs: 0 }),
  });
  open.push(client);
  return new RedfishFirmwareUpdater(client, { deadlineMs });
}
afterEach(async () => {
  while (open.length) {
    const item = open.pop()!;
    await ('stop' in item ? item.stop() : item.close());
  }
});

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers = {},
) {
  res
    .writeHead(status, { 'content-type': 'application/json', ...headers })
    .end(JSON.stringify(body));
}
const posts = (server: MockupBmc, path: string) =>
  server.requests.filter(r => r.method === 'POST' && r.path === path);

describe('a hostile or broken BMC', () => {
  it('a task monitor larger than the byte cap is refused, not read whole', async () => {
    const server = await bmc();
    server.raw.set(MONITOR, (_req, res) =>
      json(res, 202, {
        TaskState: 'Running',
        Messages: [{ Message: 'x'.repeat(2 * 1024 * 1024) }],
      }),
    );
    await expect(updaterOf(server).task(MONITOR)).rejects.toThrow(
      /larger than the limit of 1,048,576 bytes \(1 MiB\); not read/,
    );
  });

  it('a task monitor that stalls fails at the reading deadline', async () => {
    const server = await bmc();
    server.raw.set(MONITOR, (_req, res) => {
      res.writeHead(202, { 'content-type': 'application/json' });
      res.write('{"TaskState": "Running", ');
      // Never ends.
    });
    await expect(updaterOf(server, 300).task(MONITOR)).rejects.toThrow(
      /deadline/,
    );
  });

  it('a task monitor off the BMC is never read', async () => {
    const server = await bmc();
    await expect(
      updaterOf(server).task('https://evil.example/redfish/v1/TaskService/1'),
    ).rejects.toThrow();
    expect(server.requests.some(r => r.path.includes('evil'))).toBe(false);
  });

  it('a task with thousands of long messages keeps 8 of 1024 characters', () => {
    const reading = readTask(
      {
        TaskState: 'Exception',
        TaskStatus: 'Critical',
        PercentComplete: 1e9,
        Messages: Array.from({ length: 5000 }, (_, i) => ({
          MessageId: 'Update.1.0.ApplyFailed',
          Message: `${i}${'y'.repeat(5000)}`,
        })),
      },
      200,
    );
    expect(reading.messages).toHaveLength(8);
    expect(reading.messages.every(m => m.length <= 1024)).toBe(true);
    expect(reading.percent).toBeUndefined();
    expect(reading.failed).toBe(true);
  });

  it('a Location header off the BMC is refused', async () => {
    const server = await bmc();
    server.raw.set(SIMPLE_UPDATE, (_req, res) =>
      json(res, 202, {}, { location: 'https://evil.example/monitor/1' }),
    );
    await expect(updaterOf(server).update({ imageURI: IMAGE })).rejects.toThrow(
      /evil\.example|origin/,
    );
  });
});

describe('reading the FirmwareInventory', () => {
  it('lists each member with its id, name and version', async () => {
    const server = await bmc();
    const inventory = await updaterOf(server).inventory();
    expect(inventory).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: `${UPDATE}/FirmwareInventory/BIOS`,
          version: expect.any(String),
        }),
        expect.objectContaining({ id: `${UPDATE}/FirmwareInventory/BMC` }),
      ]),
    );
  });

  it('fails naming the BMC when it has no UpdateService', async () => {
    const server = await bmc();
    server.removed.add(UPDATE);
    await expect(updaterOf(server).inventory()).rejects.toThrow(
      /no FirmwareInventory/,
    );
  });
});

describe('sending an update', () => {
  it('sends SimpleUpdate once with the image, targets and apply time, and follows the Location', async () => {
    const server = await bmc();
    server.raw.set(SIMPLE_UPDATE, (_req, res) =>
      json(res, 202, { TaskState: 'New' }, { location: MONITOR }),
    );
    const accepted = await updaterOf(server).update({
      imageURI: IMAGE,
      targets: [`${UPDATE}/FirmwareInventory/BIOS`],
      applyTime: 'OnReset',
    });
    expect(accepted).toEqual({
      how: 'simpleUpdate',
      taskUri: MONITOR,
      status: 202,
    });
    expect(posts(server, SIMPLE_UPDATE).map(r => r.body)).toEqual([
      {
        ImageURI: IMAGE,
        TransferProtocol: 'HTTPS',
        Targets: [`${UPDATE}/FirmwareInventory/BIOS`],
        '@Redfish.OperationApplyTime': 'OnReset',
      },
    ]);
  });

  it("passes the source's credentials as SimpleUpdate's Username and Password", async () => {
    const server = await bmc();
    server.raw.set(SIMPLE_UPDATE, (_req, res) =>
      json(res, 202, { TaskState: 'New' }, { location: MONITOR }),
    );
    await updaterOf(server).update(
      { imageURI: IMAGE },
      { sourceCredentials: { username: 'fw', password: 's3cret' } },
    );
    expect(posts(server, SIMPLE_UPDATE).map(r => r.body)).toEqual([
      {
        ImageURI: IMAGE,
        TransferProtocol: 'HTTPS',
        Username: 'fw',
        Password: 's3cret',
      },
    ]);
  });

  it('sends nothing when the caller may no longer act', async () => {
    const server = await bmc();
    await expect(
      updaterOf(server).update(
        { imageURI: IMAGE },
        {
          beforePost: () => {
            throw new Error('not leading');
          },
        },
      ),
    ).rejects.toMatchObject({ outcome: 'notSent' });
    expect(posts(server, SIMPLE_UPDATE)).toEqual([]);
  });

  it('sends nothing to a BMC without an UpdateService', async () => {
    const server = await bmc();
    server.removed.add(UPDATE);
    const updater = updaterOf(server);
    expect(await updater.offer()).toBeUndefined();
    await expect(updater.update({ imageURI: IMAGE })).rejects.toMatchObject({
      outcome: 'notSent',
      message: expect.stringMatching(/no UpdateService/),
    });
    expect(
      server.requests.filter(
        r => r.method === 'POST' && r.path.startsWith(UPDATE),
      ),
    ).toEqual([]);
  });

  it("a BMC's refusal carries its message", async () => {
    const server = await bmc();
    server.raw.set(SIMPLE_UPDATE, (_req, res) =>
      json(res, 400, {
        error: {
          code: 'Base.1.15.PropertyValueFormatError',
          message: 'ImageURI is not https',
        },
      }),
    );
    await expect(
      updaterOf(server).update({ imageURI: IMAGE }),
    ).rejects.toMatchObject({
      outcome: 'refused',
      message: expect.stringMatching(/400 Bad Request: ImageURI is not https/),
    });
  });

  it('pushes the image as multipart/form-data where only that is offered', async () => {
    const server = await bmc();
    server.edit(UPDATE, service => {
      delete service.Actions;
      service.MultipartHttpPushUri = `${UPDATE}/upload`;
    });
    let contentType = '';
    server.raw.set(`${UPDATE}/upload`, (req, res) => {
      contentType = String(req.headers['content-type']);
      json(res, 202, {}, { location: MONITOR });
    });
    const updater = updaterOf(server);
    await expect(updater.update({ imageURI: IMAGE })).rejects.toMatchObject({
      outcome: 'notSent',
    });
    const accepted = await updater.update(
      { imageURI: IMAGE, applyTime: 'Immediate' },
      {
        image: async () => ({
          fileName: 'bios-2.5.0.bin',
          bytes: Buffer.from('IMAGE BYTES'),
        }),
      },
    );
    expect(accepted).toMatchObject({ how: 'multipartPush', taskUri: MONITOR });
    expect(contentType).toMatch(/^multipart\/form-data; boundary=/);
    const [push] = posts(server, `${UPDATE}/upload`);
    expect(push.body).toContain('name="UpdateParameters"');
    expect(push.body).toContain('{"@Redfish.OperationApplyTime":"Immediate"}');
    expect(push.body).toContain('filename="bios-2.5.0.bin"');
    expect(push.body).toContain('IMAGE BYTES');
  });
});

describe('following the task', () => {
  const cases: Array<[string, number, unknown, Partial<FirmwareTaskReading>]> =
    [
      [
        'running: 202 with its percent',
        202,
        { TaskState: 'Running', PercentComplete: 40 },
        { state: 'Running', finished: false, failed: false, percent: 40 },
      ],
      [
        'completed',
        200,
        { TaskState: 'Completed', TaskStatus: 'OK', PercentComplete: 100 },
        {
          state: 'Completed',
          finished: true,
          failed: false,
          resetRequired: false,
        },
      ],
      [
        'completed, waiting for a reset',
        200,
        {
          TaskState: 'Completed',
          TaskStatus: 'OK',
          Messages: [
            {
              MessageId: 'Update.1.0.AwaitToActivate',
              Message: 'Awaiting activation.',
            },
            {
              MessageId: 'Base.1.13.ResetRequired',
              Message: 'A reset is required.',
            },
          ],
        },
        { finished: true, failed: false, resetRequired: true },
      ],
      [
        'failed, with the BMC message',
        200,
        {
          TaskState: 'Exception',
          TaskStatus: 'Critical',
          Messages: [
            {
              MessageId: 'Update.1.0.ApplyFailed',
              Message: 'The image is corrupt.',
            },
          ],
        },
        { finished: true, failed: true, messages: ['The image is corrupt.'] },
      ],
    ];
  it.each(cases)('%s', async (_, status, body, expected) => {
    const server = await bmc();
    server.raw.set(MONITOR, (_req, res) => json(res, status, body));
    expect(await updaterOf(server).task(MONITOR)).toMatchObject(expected);
  });
});
