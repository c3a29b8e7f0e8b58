/*
 * Health reading against the DMTF mockups vendored in fixtures/redfish: public-rackmount1
 * has PowerSubsystem/ThermalSubsystem, SimpleStorage, system and manager log services and
 * a FirmwareInventory; public-telemetry has only the older Power/Thermal and no
 * UpdateService.
 */
import {
  HEALTH_LIMITS,
  serverHealthSchema,
} from '@rackside/plugin-servers-common';
import { REPO_ROOT } from '@rackside/rack-testing';
import { MockupBmc, mockupDir, OtherOrigin } from '../../testing';
import { BmcRateLimiter } from './rateLimit';
import { BmcHealthReader, LOG_PAGE_BUDGET } from './readHealth';
import { RedfishClient } from './RedfishClient';

const RACKMOUNT = mockupDir(REPO_ROOT, 'public-rackmount1');
const TELEMETRY = mockupDir(REPO_ROOT, 'public-telemetry');
const RACKMOUNT_SYSTEM = '/redfish/v1/Systems/437XR1138R2';
const TELEMETRY_SYSTEM = '/redfish/v1/Systems/1';
const CREDENTIALS = { username: 'admin', password: 'p4ss-w0rd!' };

const open: Array<{ close(): Promise<void> } | { stop(): Promise<void> }> = [];
async function bmc(dir = RACKMOUNT) {
  const server = await new MockupBmc({ dir }).start();
  open.push(server);
  return server;
}
function readerOf(server: MockupBmc, systemPath = RACKMOUNT_SYSTEM) {
  const client = new RedfishClient({
    address: server.url,
    credentials: CREDENTIALS,
    rateLimiter: new BmcRateLimiter({ minIntervalMs: 0 }),
  });
  open.push(client);
  return new BmcHealthReader(client, systemPath);
}
afterEach(async () => {
  while (open.length) {
    const item = open.pop()!;
    await ('stop' in item ? item.stop() : item.close());
  }
});

/** What `status.health` would hold: the reading must pass the CRD's own schema. */
function asStatus(reading: object) {
  return serverHealthSchema.parse({
    ...reading,
    readAt: new Date().toISOString(),
  });
}

describe('reading the health of public-rackmount1', () => {
  it('reads the rollup, the parts not OK, both logs newest first and the firmware', async () => {
    const server = await bmc();
    const reading = await readerOf(server).read();
    asStatus(reading);
    // The system rolls up Warning (CPU1 Temp above its caution threshold).
    expect(reading.rollup).toBe('Warning');
    expect(reading.state).toBe('Enabled');
    expect(reading.parts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'System',
          health: 'Warning',
          message: expect.stringContaining('CPU1 Temp'),
        }),
        expect.objectContaining({
          kind: 'Drive',
          name: 'SATA Bay 2',
          health: 'Warning',
        }),
      ]),
    );
    expect(reading.parts.every(p => p.health !== 'OK')).toBe(true);
    // Two system SEL entries and one manager entry, newest first.
    expect(
      reading.logEntries.map(e => `${e.service}/${e.id}@${e.created}`),
    ).toEqual([
      'System/2@2012-03-07T14:45:00.000Z',
      'System/1@2012-03-07T14:44:00.000Z',
      'Manager/1@2012-03-07T14:44:00.000Z',
    ]);
    expect(reading.logEntries[0]).toMatchObject({ severity: 'Critical' });
    expect(reading.firmware.map(f => f.name)).toEqual(
      expect.arrayContaining([expect.stringMatching(/BMC|Contoso/)]),
    );
    expect(reading.firmware.length).toBeGreaterThanOrEqual(3);
    expect(reading.firmware.every(f => f.version !== '')).toBe(true);
    // Drives come from SimpleStorage: Storage is not counted missing.
    expect(reading.missing).toEqual([]);
  });

  it('names a failed power supply and makes the rollup Critical', async () => {
    const server = await bmc();
    const bay = '/redfish/v1/Chassis/1U/PowerSubsystem/PowerSupplies/Bay1';
    server.edit(bay, json => {
      json.Status = { State: 'Enabled', Health: 'Critical' };
    });
    const reading = await readerOf(server).read();
    expect(reading.rollup).toBe('Critical');
    const name = server.resource(bay)!.Name;
    expect(reading.parts[0]).toMatchObject({
      kind: 'PowerSupply',
      name,
      health: 'Critical',
    });
  });

  it('reads the rest when FirmwareInventory is gone, and says it is missing', async () => {
    const server = await bmc();
    server.removed.add('/redfish/v1/UpdateService/FirmwareInventory');
    const reading = await readerOf(server).read();
    expect(reading.missing).toEqual(['FirmwareInventory']);
    expect(reading.firmware).toEqual([]);
    expect(reading.logEntries).toHaveLength(3);
    expect(reading.rollup).toBe('Warning');
  });

  it('uses $expand where the service root offers it: a collection is one request', async () => {
    const server = await bmc();
    await readerOf(server).read();
    const firmwareRequests = server.requests.filter(r =>
      r.path.startsWith('/redfish/v1/UpdateService/FirmwareInventory'),
    );
    expect(firmwareRequests).toHaveLength(1);
  });

  it('reads members one by one where the BMC does not expand', async () => {
    const server = await bmc();
    server.edit('/redfish/v1', json => {
      delete json.ProtocolFeaturesSupported;
    });
    const reading = await readerOf(server).read();
    expect(reading.firmware.length).toBeGreaterThanOrEqual(3);
    expect(
      server.count('GET', '/redfish/v1/UpdateService/FirmwareInventory/'),
    ).toBe(3);
  });

  it('summarises with two requests: the system and its chassis', async () => {
    const server = await bmc();
    const reader = readerOf(server);
    await reader.summary();
    const before = server.requests.length;
    const summary = await reader.summary();
    expect(summary).toMatchObject({
      rollup: 'Warning',
      chassisPath: '/redfish/v1/Chassis/1U',
    });
    expect(server.requests.slice(before).map(r => r.path)).toEqual([
      RACKMOUNT_SYSTEM,
      '/redfish/v1/Chassis/1U',
    ]);
  });
});

describe('reading the health of public-telemetry (older Power and Thermal)', () => {
  it('reads fans, temperatures and supplies from Power/Thermal; no UpdateService is missing firmware', async () => {
    const server = await bmc(TELEMETRY);
    server.edit('/redfish/v1/Chassis/1/Thermal', json => {
      json.Fans[0].Status = { State: 'Enabled', Health: 'Warning' };
      json.Temperatures[1].Status = { State: 'Enabled', Health: 'Critical' };
    });
    const thermal = server.resource('/redfish/v1/Chassis/1/Thermal')!;
    const reading = await readerOf(server, TELEMETRY_SYSTEM).read();
    asStatus(reading);
    expect(reading.rollup).toBe('Critical');
    // Worst first; the mockup's own power supplies report Warning (from Power).
    expect(reading.parts[0]).toMatchObject({
      kind: 'Temperature',
      name: thermal.Temperatures[1].Name,
      health: 'Critical',
    });
    expect(reading.parts.slice(1)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'Fan',
          name: thermal.Fans[0].Name ?? thermal.Fans[0].MemberId,
          health: 'Warning',
        }),
        expect.objectContaining({
          kind: 'PowerSupply',
          name: 'Power Supply Bay 1',
          health: 'Warning',
        }),
      ]),
    );
    expect(reading.parts).toHaveLength(4);
    expect(reading.missing).toEqual(
      expect.arrayContaining(['FirmwareInventory', 'Storage']),
    );
    expect(reading.missing).not.toContain('Power');
    expect(reading.missing).not.toContain('Thermal');
  });
});

describe('a hostile BMC', () => {
  it('stays within the bounds: a 10,000-character message and 300 entries (3 MB, under the page cap)', async () => {
    const server = await bmc();
    const entries = '/redfish/v1/Systems/437XR1138R2/LogServices/Log1/Entries';
    server.edit(entries, json => {
      json.Members = Array.from({ length: 300 }, (_, i) => ({
        '@odata.id': `${entries}/${i}`,
        Id: `${'x'.repeat(100)}${i}`,
        Created: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        Severity: 'Warning',
        Message: 'M'.repeat(10_000),
      }));
    });
    server.edit('/redfish/v1/Chassis/1U/PowerSubsystem/PowerSupplies', json => {
      json.Members = Array.from({ length: 300 }, (_, i) => ({
        '@odata.id': `/redfish/v1/Chassis/1U/PowerSubsystem/PowerSupplies/P${i}`,
        Name: 'N'.repeat(5000),
        Status: { Health: 'Critical', State: 'S'.repeat(5000) },
      }));
    });
    const reading = await readerOf(server).read();
    const status = asStatus(reading);
    expect(status.logEntries).toHaveLength(HEALTH_LIMITS.logEntries);
    expect(status.logEntries[0].message.length).toBe(
      HEALTH_LIMITS.logEntryMessage,
    );
    expect(status.logEntries[0].id.length).toBeLessThanOrEqual(
      HEALTH_LIMITS.logEntryId,
    );
    // Newest first: the last of the three hundred.
    expect(status.logEntries[0].created).toBe('2026-01-01T00:04:59.000Z');
    expect(status.parts).toHaveLength(HEALTH_LIMITS.parts);
    expect(status.parts[0].name.length).toBe(HEALTH_LIMITS.partName);
  });

  it('does not follow a link off its origin: the reading fails, nothing is sent there', async () => {
    const other = await new OtherOrigin().start();
    open.push(other);
    const server = await bmc();
    server.edit('/redfish/v1/UpdateService', json => {
      json.FirmwareInventory = {
        '@odata.id': `${other.url}/redfish/v1/UpdateService/FirmwareInventory`,
      };
    });
    await expect(readerOf(server).read()).rejects.toThrow(/another origin/);
    expect(other.requests).toHaveLength(0);
  });
});

describe('event logs: newest first, whatever their length', () => {
  const ENTRIES = '/redfish/v1/Systems/437XR1138R2/LogServices/Log1/Entries';
  const at = (i: number) =>
    new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
  /** Entry i of a log, created at second i; the last one Critical. */
  const entry = (i: number, total: number, created = at(i)) => ({
    '@odata.id': `${ENTRIES}/${i}`,
    Id: String(i),
    Created: created,
    Severity: i === total - 1 ? 'Critical' : 'OK',
    Message: i === total - 1 ? 'PSU2 failed' : `entry ${i}`,
  });
  const send = (res: import('node:http').ServerResponse, body: unknown) =>
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify(body));

  /**
   * Serves `total` entries (oldest first unless `newestFirst`) in pages of `pageSize`,
   * linked by `Members@odata.nextLink` with `$skip` offsets (as OpenBMC does), with
   * `Members@odata.count` unless `withoutCount`. Records the offsets asked for.
   */
  function pagedLog(
    server: MockupBmc,
    total: number,
    pageSize: number,
    options: { newestFirst?: boolean; withoutCount?: boolean } = {},
  ) {
    const asked: number[] = [];
    server.raw.set(ENTRIES, (_req, res, url) => {
      const skip = Number(url.searchParams.get('$skip') ?? 0);
      asked.push(skip);
      const members = [];
      for (let k = skip; k < Math.min(total, skip + pageSize); k++) {
        const i = options.newestFirst ? total - 1 - k : k;
        members.push(entry(i, total));
      }
      send(res, {
        '@odata.id': ENTRIES,
        ...(options.withoutCount ? {} : { 'Members@odata.count': total }),
        Members: members,
        ...(skip + pageSize < total
          ? {
              'Members@odata.nextLink': `${ENTRIES}?$skip=${
                skip + pageSize
              }&$top=${pageSize}`,
            }
          : {}),
      });
    });
    return asked;
  }

  it('considers every entry of a 1,500-entry list, not the first 1,000: the newest Critical one is read', async () => {
    const server = await bmc();
    server.raw.set(ENTRIES, (_req, res) =>
      send(res, {
        '@odata.id': ENTRIES,
        Members: Array.from({ length: 1500 }, (_, i) => entry(i, 1500)),
      }),
    );
    const reading = await readerOf(server).read();
    expect(reading.logEntries[0]).toMatchObject({
      id: '1499',
      severity: 'Critical',
      message: 'PSU2 failed',
    });
    expect(reading.logEntries).toHaveLength(HEALTH_LIMITS.logEntries);
    expect(reading.logEntriesSkipped).toBe(0);
    asStatus(reading);
  });

  it('follows Members@odata.nextLink: 1,500 entries in pages of 100, the newest on the last page', async () => {
    const server = await bmc();
    const asked = pagedLog(server, 1500, 100);
    const reading = await readerOf(server).read();
    expect(asked).toHaveLength(15);
    expect(reading.logEntries[0]).toMatchObject({
      id: '1499',
      severity: 'Critical',
    });
    expect(reading.logEntries.map(e => e.id).slice(0, 3)).toEqual([
      '1499',
      '1498',
      '1497',
    ]);
    expect(reading.logEntriesSkipped).toBe(0);
  });

  it('past the page budget, a log listed oldest first is read from its last pages ($skip), and the skipped entries are counted', async () => {
    const server = await bmc();
    const asked = pagedLog(server, 3000, 50);
    const reading = await readerOf(server).read();
    expect(asked.length).toBeLessThanOrEqual(LOG_PAGE_BUDGET);
    expect(asked[0]).toBe(0);
    expect(asked[asked.length - 1]).toBe(2950);
    expect(reading.logEntries[0]).toMatchObject({
      id: '2999',
      severity: 'Critical',
    });
    // The first page and the last 19: 1,000 considered, 2,000 skipped.
    expect(reading.logEntriesSkipped).toBe(2000);
  });

  it('a log listed newest first and longer than the budget keeps its newest, and says entries were skipped even without a count', async () => {
    const server = await bmc();
    const asked = pagedLog(server, 3000, 50, {
      newestFirst: true,
      withoutCount: true,
    });
    const reading = await readerOf(server).read();
    expect(asked).toHaveLength(LOG_PAGE_BUDGET);
    expect(reading.logEntries[0]).toMatchObject({
      id: '2999',
      severity: 'Critical',
    });
    expect(reading.logEntriesSkipped).toBeGreaterThanOrEqual(1);
  });

  it('entries created in the same second: the higher Id is the newer', async () => {
    const server = await bmc();
    const same = '2026-01-01T00:00:00.000Z';
    server.raw.set(ENTRIES, (_req, res) =>
      send(res, {
        '@odata.id': ENTRIES,
        Members: [9, 10, 2, 11, 1].map(i => entry(i, 12, same)),
      }),
    );
    const reading = await readerOf(server).read();
    expect(
      reading.logEntries.filter(e => e.service === 'System').map(e => e.id),
    ).toEqual(['11', '10', '9', '2', '1']);
  });

  it.each([
    ['oldest first', false],
    ['newest first', true],
  ])(
    'entries listed only by link (%s): the newest are the ones read',
    async (_order, newestFirst) => {
      const server = await bmc();
      const total = 100;
      const ids = Array.from({ length: total }, (_, k) =>
        newestFirst ? total - 1 - k : k,
      );
      server.raw.set(ENTRIES, (_req, res) =>
        send(res, {
          '@odata.id': ENTRIES,
          'Members@odata.count': total,
          Members: ids.map(i => ({ '@odata.id': `${ENTRIES}/${i}` })),
        }),
      );
      for (let i = 0; i < total; i++) {
        server.overrides.set(`${ENTRIES}/${i}`, entry(i, total));
      }
      const reading = await readerOf(server).read();
      expect(reading.logEntries[0]).toMatchObject({
        id: '99',
        severity: 'Critical',
      });
      const read = server.requests.filter(r =>
        r.path.startsWith(`${ENTRIES}/`),
      );
      expect(read.length).toBeLessThanOrEqual(HEALTH_LIMITS.logEntries + 1);
      expect(reading.logEntriesSkipped).toBe(total - HEALTH_LIMITS.logEntries);
    },
  );

  it('refuses a nextLink off the BMC origin: the reading fails, nothing is sent there', async () => {
    const other = await new OtherOrigin().start();
    open.push(other);
    const server = await bmc();
    server.raw.set(ENTRIES, (_req, res) =>
      send(res, {
        '@odata.id': ENTRIES,
        Members: [entry(0, 1)],
        'Members@odata.nextLink': `${other.url}${ENTRIES}?$skip=1`,
      }),
    );
    await expect(readerOf(server).read()).rejects.toThrow(
      /Members@odata.nextLink of .* is refused: it is on another origin/,
    );
    expect(other.requests).toHaveLength(0);
  });
});

describe('bounded answers and the reading deadline', () => {
  const ENTRIES = '/redfish/v1/Systems/437XR1138R2/LogServices/Log1/Entries';

  it('refuses an Entries page past 4 MiB as it streams, naming the BMC, the path and the limit', async () => {
    const server = await bmc();
    let written = 0;
    server.raw.set(ENTRIES, (_req, res) => {
      // No Content-Length: only the streamed count can refuse it.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"Members":[');
      const chunk = `${JSON.stringify({
        Id: 'x',
        Message: 'M'.repeat(60_000),
      })},`;
      const more = () => {
        while (written < 50 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', more);
            return;
          }
        }
        res.end('{}]}');
      };
      res.on('close', () => res.removeAllListeners('drain'));
      more();
    });
    const reader = readerOf(server);
    const refused = await reader.read().catch(e => e as Error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toContain(
      `Redfish BMC ${server.url}: GET ${ENTRIES}`,
    );
    expect((refused as Error).message).toContain(
      ': the answer is larger than the limit of 4,194,304 bytes (4 MiB)',
    );
    // Refused as it streamed: far less than the 50 MB the BMC would have sent.
    expect(written).toBeLessThan(20 * 1024 * 1024);
  });

  it('gives up a BMC that answers one byte at a time at the reading deadline, naming it', async () => {
    const server = await bmc();
    const body = JSON.stringify({ '@odata.id': ENTRIES, Members: [] });
    const timers: NodeJS.Timeout[] = [];
    server.raw.set(ENTRIES, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      let at = 0;
      const timer = setInterval(() => {
        if (at < body.length) res.write(body[at++]);
        else {
          clearInterval(timer);
          res.end();
        }
      }, 100);
      timers.push(timer);
      res.on('close', () => clearInterval(timer));
    });
    const started = Date.now();
    const failure = await readerOf(server)
      .read({ deadlineMs: 1500 })
      .catch(e => e as Error);
    timers.forEach(clearInterval);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(
      /^Redfish BMC http:\/\/127\.0\.0\.1:\d+: GET /,
    );
    expect((failure as Error).message).toContain(
      `the health reading of Redfish BMC ${server.url} passed its deadline of 1.5 s`,
    );
    // The per-request deadline (15 s) was not what ended it.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('every request of one reading shares the deadline: no request is sent after it', async () => {
    const server = await bmc();
    server.raw.set(ENTRIES, () => {
      // Never answers.
    });
    const failure = await readerOf(server)
      .read({ deadlineMs: 800 })
      .catch(e => e as Error);
    expect((failure as Error).message).toMatch(/passed its deadline of 0.8 s/);
    const count = server.requests.length;
    await new Promise(resolve => setTimeout(resolve, 300));
    expect(server.requests.length).toBe(count);
  });

  it('refuses a deadline that is not a positive number', async () => {
    const server = await bmc();
    await expect(readerOf(server).read({ deadlineMs: 0 })).rejects.toThrow(
      /must be a positive number of milliseconds, not 0/,
    );
  });
});
