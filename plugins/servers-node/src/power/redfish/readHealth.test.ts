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
import { MockupBmc, mockupDir, OtherOrigin } from './mockupBmc';
import { BmcRateLimiter } from './rateLimit';
import { BmcHealthReader } from './readHealth';
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
  it('stays within the bounds: a 10,000-character message and 1,000 entries', async () => {
    const server = await bmc();
    const entries = '/redfish/v1/Systems/437XR1138R2/LogServices/Log1/Entries';
    server.edit(entries, json => {
      json.Members = Array.from({ length: 1000 }, (_, i) => ({
        '@odata.id': `${entries}/${i}`,
        Id: `${'x'.repeat(100)}${i}`,
        Created: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        Severity: 'Warning',
        Message: 'M'.repeat(10_000),
      }));
    });
    server.edit('/redfish/v1/Chassis/1U/PowerSubsystem/PowerSupplies', json => {
      json.Members = Array.from({ length: 500 }, (_, i) => ({
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
    // Newest first: the last of the thousand.
    expect(status.logEntries[0].created).toBe('2026-01-01T00:16:39.000Z');
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
