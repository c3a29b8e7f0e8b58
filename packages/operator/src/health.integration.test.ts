/*
 * Hardware health from the rack's BMCs (serverbmc/health.ts): the Redfish BMCs are sushy-tools
 * behind the rack's health proxy (e2e/rack/lib/redfishHealth.mjs), whose control API fails
 * parts, writes SEL entries and takes the FirmwareInventory away, as the Talos emulator's
 * does for power. The operator sweeps every 2 s here (15 min by default).
 */
import net from 'node:net';
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import {
  bmcHealthControl,
  type BmcHealthControl,
} from '@rackside/rack-testing';
import type { ServerBMC } from '@rackside/plugin-servers-common';
import type { Operator } from './operator';
import { startOperatorRack, type OperatorRack } from './testing/operatorRack';
import { powerRack, REDFISH_PROVIDER } from './testing/powerRack';

jest.setTimeout(120_000);

let env: OperatorRack;
let rack: ReturnType<typeof powerRack>;
let operator: Operator | undefined;
let control: BmcHealthControl;

const systemId = (node: string) => rack.uuidOf(node);

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: true,
    withWorkloads: false,
  });
  rack = powerRack(env);
  control = bmcHealthControl(rack.redfish);
  await rack.createPowerSecrets();
  for (const node of ['worker-1', 'worker-2']) await rack.linkBmc(node);
  await rack.writeProvider(REDFISH_PROVIDER);
  operator = await env.startReady({
    drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
    power: { rebootSeconds: 60, unansweredSeconds: 60 },
    health: { intervalMs: 2000, concurrency: 2, fullIntervalMs: 600_000 },
  });
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await env?.stop();
}, 60_000);

/** Waits until the ServerBMC's health satisfies `check`. */
function healthOf(
  node: string,
  what: string,
  check: (health: NonNullable<ServerBMC['status']>['health']) => boolean,
  timeoutMs = 30_000,
): Promise<ServerBMC> {
  return env.waitFor(
    `ServerBMC ${node}: ${what}`,
    async () => {
      const bmc: ServerBMC = await rack.bmcs.get(node);
      return check(bmc.status?.health) && bmc;
    },
    timeoutMs,
  );
}

/** Asks for a reading as the backend does (a merge patch of spec.healthRefresh) and waits for its answer. */
async function refresh(node: string): Promise<ServerBMC> {
  const requestedAt = new Date().toISOString();
  await rack.bmcs.patch(node, {
    spec: {
      healthRefresh: { requestedAt, requestedBy: 'user:default/tester' },
    },
  } as any);
  return healthOf(
    node,
    `refresh of ${requestedAt} answered`,
    h =>
      h?.answeredRequestAt !== undefined &&
      Date.parse(h.answeredRequestAt) === Date.parse(requestedAt),
  );
}

describe('the sweep', () => {
  it('reads an OK server, then a failed power supply as Critical with the part named, an Event and the metric', async () => {
    const ok = await healthOf('worker-1', 'read OK', h => h?.rollup === 'OK');
    const health = ok.status!.health!;
    expect(health.readAt).toBeDefined();
    expect(health.error).toBeUndefined();
    expect(health.firmware).toEqual(
      expect.arrayContaining([
        {
          id: '/redfish/v1/UpdateService/FirmwareInventory/BIOS',
          name: 'Rack BIOS',
          version: '2.4.1',
          updateable: true,
        },
        {
          id: '/redfish/v1/UpdateService/FirmwareInventory/BMC',
          name: 'Rack BMC',
          version: '1.12.0',
          updateable: false,
        },
      ]),
    );
    expect(health.missing).toEqual([]);

    await control.setPart(
      systemId('worker-1'),
      { kind: 'PowerSupply', name: 'PSU2' },
      'Critical',
    );
    const critical = await healthOf(
      'worker-1',
      'Critical',
      h => h?.rollup === 'Critical',
    );
    expect(critical.status!.health!.parts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'PowerSupply',
          name: 'PSU2',
          health: 'Critical',
        }),
      ]),
    );
    const events = await env.waitFor('the HealthCritical Event', async () => {
      const list = await env.core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector:
          'involvedObject.kind=ServerBMC,involvedObject.name=worker-1',
      });
      const found = list.items.find(e => e.reason === 'HealthCritical');
      return found && list.items;
    });
    expect(events.find(e => e.reason === 'HealthCritical')).toMatchObject({
      type: 'Warning',
      message: expect.stringContaining('PSU2 Critical'),
    });
    const metrics = (await operator!.metrics.render()).body;
    expect(metrics).toMatch(
      /rackside_server_health\{node="worker-1",rollup="Critical"\} 1/,
    );
    expect(metrics).toMatch(
      /rackside_server_health\{node="worker-1",rollup="OK"\} 0/,
    );

    // Mended: back to OK, with a Normal Event.
    await control.setPart(
      systemId('worker-1'),
      { kind: 'PowerSupply', name: 'PSU2' },
      'OK',
    );
    const mended = await healthOf(
      'worker-1',
      'OK again',
      h => h?.rollup === 'OK',
    );
    expect(mended.status!.health!.parts).toEqual([]);
  });
});

describe('on request', () => {
  it('answers spec.healthRefresh: answeredRequestAt is the request', async () => {
    const answered = await refresh('worker-1');
    expect(answered.status!.health!.readAt).toBeDefined();
  });

  it('reads the rest when the BMC has no FirmwareInventory, and names it missing', async () => {
    await control.reset(systemId('worker-1'));
    await control.firmware({ offered: false });
    try {
      const read = await refresh('worker-1');
      const health = read.status!.health!;
      expect(health.error).toBeUndefined();
      expect(health.missing).toEqual(['FirmwareInventory']);
      expect(health.firmware).toEqual([]);
      expect(health.rollup).toBe('OK');
    } finally {
      await control.firmware({});
    }
  });
});

describe('a restart', () => {
  it('answers a request made while the operator was down once it is back', async () => {
    await operator!.stop();
    operator = undefined;
    const requestedAt = new Date().toISOString();
    await rack.bmcs.patch('worker-1', {
      spec: {
        healthRefresh: { requestedAt, requestedBy: 'user:default/tester' },
      },
    } as any);
    operator = await env.startReady({
      drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
      power: { rebootSeconds: 60, unansweredSeconds: 60 },
      health: { intervalMs: 2000, concurrency: 2, fullIntervalMs: 600_000 },
    });
    const answered = await healthOf(
      'worker-1',
      `refresh of ${requestedAt} answered after the restart`,
      h =>
        h?.answeredRequestAt !== undefined &&
        Date.parse(h.answeredRequestAt) === Date.parse(requestedAt),
    );
    expect(answered.status!.health!.error).toBeUndefined();
  });
});

describe('a refresh whose reading never ended', () => {
  it('is answered with that error after a restart, not read first again', async () => {
    await healthOf('worker-1', 'read once', h => h?.readAt !== undefined);
    await operator!.stop();
    operator = undefined;
    // What an operator that died mid-reading leaves: the request marked as being
    // answered (attemptedRequestAt), never answered.
    const requestedAt = new Date().toISOString();
    await rack.bmcs.patch('worker-1', {
      spec: {
        healthRefresh: { requestedAt, requestedBy: 'user:default/tester' },
      },
    } as any);
    await rack.bmcs.patchStatus(
      'worker-1',
      { status: { health: { attemptedRequestAt: requestedAt } } } as any,
      { type: 'merge' },
    );
    operator = await env.startReady({
      drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
      power: { rebootSeconds: 60, unansweredSeconds: 60 },
      health: { intervalMs: 2000, concurrency: 2, fullIntervalMs: 600_000 },
    });
    const answered = await healthOf(
      'worker-1',
      `refresh of ${requestedAt} answered after the restart`,
      h =>
        h?.answeredRequestAt !== undefined &&
        Date.parse(h.answeredRequestAt) === Date.parse(requestedAt),
    );
    expect(answered.status!.health!.error).toMatch(
      /did not end \(the operator stopped during it\)/,
    );
    // The next sweep reads the BMC as usual and clears the error.
    await healthOf('worker-1', 'read again by the sweep', h => !h?.error);
  });
});

describe('a maintenance', () => {
  it('records the health before and after a reboot, and the log entry written during it', async () => {
    const message = `Correctable ECC storm on DIMM A1 (${Date.now()})`;
    await control.writeLog(systemId('worker-2'), {
      message: 'written before the maintenance',
      severity: 'OK',
    });
    await env.create('reboot-w2', 'worker-2', 'reboot');
    const started = await env.waitFor('status.hardware.before', async () => {
      const nm = await env.nms.get('reboot-w2');
      return nm.status?.hardware?.before && nm;
    });
    expect(started.status!.hardware!.before!.rollup).toBe('OK');
    await control.writeLog(systemId('worker-2'), {
      message,
      severity: 'Warning',
    });
    await env.phaseIs('reboot-w2', 'Complete', 60_000);
    const done = await env.waitFor('status.hardware.after', async () => {
      const nm = await env.nms.get('reboot-w2');
      return nm.status?.hardware?.after && nm;
    });
    const hardware = done.status!.hardware!;
    expect(hardware.after!.rollup).toBe('OK');
    expect(Date.parse(hardware.after!.readAt)).toBeGreaterThanOrEqual(
      Date.parse(hardware.before!.readAt),
    );
    expect(hardware.logEntries.map(e => e.message)).toEqual([message]);
    expect(hardware.logEntries[0]).toMatchObject({
      severity: 'Warning',
      service: 'System',
    });
  });
});

describe('a hostile BMC', () => {
  it('stays within the bounds: 300 log entries of 10,000 characters (3 MB, under the 4 MiB page cap)', async () => {
    await control.writeLog(systemId('worker-1'), {
      message: 'M'.repeat(10_000),
      severity: 'Critical',
      count: 300,
    });
    const read = await refresh('worker-1');
    const health = read.status!.health!;
    expect(health.error).toBeUndefined();
    expect(health.logEntries).toHaveLength(20);
    expect(health.logEntries.every(e => e.message.length === 512)).toBe(true);
    // Newest first.
    const created = health.logEntries.map(e => Date.parse(e.created));
    expect([...created].sort((a, b) => b - a)).toEqual(created);
  });

  it('does not follow a link off its origin: the reading fails with the reason, nothing connects there', async () => {
    let connections = 0;
    const trap = net.createServer(socket => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>(resolve => trap.listen(0, '127.0.0.1', resolve));
    const port = (trap.address() as net.AddressInfo).port;
    await control.firmware({
      link: `https://127.0.0.1:${port}/redfish/v1/UpdateService/FirmwareInventory`,
    });
    try {
      const read = await refresh('worker-1');
      expect(read.status!.health!.error).toMatch(/another origin/);
      expect(connections).toBe(0);
    } finally {
      await control.firmware({});
      await new Promise(resolve => trap.close(resolve));
    }
  });
});

describe('a status write the apiserver refuses', () => {
  const POLICY = 'rackside-tests-refuse-critical-health';

  /** Refuses every write of status.health that says Critical for worker-2 (anyone's). */
  async function refuseCriticalWrites() {
    const admission = env.admin.makeApiClient(AdmissionregistrationV1Api);
    await admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name: POLICY },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: ['rackside.dev'],
                apiVersions: ['*'],
                operations: ['UPDATE'],
                resources: ['serverbmcs/status'],
              },
            ],
          },
          validations: [
            {
              expression:
                "object.metadata.name != 'worker-2' || !has(object.status) || !has(object.status.health) || object.status.health.rollup != 'Critical'",
              message: `${POLICY}: no Critical reading for worker-2`,
            },
          ],
        },
      },
    });
    await admission.createValidatingAdmissionPolicyBinding({
      body: {
        metadata: { name: POLICY },
        spec: { policyName: POLICY, validationActions: ['Deny'] },
      },
    });
    // In force once a dry-run write of a Critical reading is refused.
    await env.waitFor(
      'the policy refusing Critical readings in force',
      async () => {
        try {
          await rack.bmcs.patchStatus(
            'worker-2',
            { status: { health: { rollup: 'Critical' } } } as any,
            { type: 'merge', dryRun: true },
          );
          return false;
        } catch (error) {
          return String((error as Error).message).includes(POLICY);
        }
      },
    );
    return async () => {
      await admission
        .deleteValidatingAdmissionPolicyBinding({ name: POLICY })
        .catch(() => undefined);
      await admission
        .deleteValidatingAdmissionPolicy({ name: POLICY })
        .catch(() => undefined);
    };
  }

  it('leaves the sweep nothing to forget: the Critical reading it could not write ends in the status once the apiserver takes it, with a Warning Event and the metric', async () => {
    await control.reset(systemId('worker-2'));
    await healthOf('worker-2', 'read OK', h => h?.rollup === 'OK' && !h.error);
    const allow = await refuseCriticalWrites();
    try {
      const refusedBefore = env.logs.length;
      await control.setPart(
        systemId('worker-2'),
        { kind: 'PowerSupply', name: 'PSU1' },
        'Critical',
      );
      // The operator read Critical and the apiserver refused to take it.
      await env.waitFor('a refused health write of worker-2', async () =>
        env.logs
          .slice(refusedBefore)
          .some(
            line =>
              line.includes('ServerBMC worker-2: health not written') &&
              line.includes(POLICY),
          ),
      );
      // Meanwhile the status still says OK: the refused reading was not taken.
      const during: ServerBMC = await rack.bmcs.get('worker-2');
      expect(during.status?.health?.rollup).toBe('OK');
    } finally {
      await allow();
    }
    // Once the apiserver takes the writes again, the next sweeps (every 2 s here) write
    // Critical; before, a cheap sweep saw "no change" and kept writing the old OK reading
    // with a fresh readAt until the next full reading (10 min here, 12 h by default).
    const critical = await healthOf(
      'worker-2',
      'Critical written once the apiserver takes it',
      h => h?.rollup === 'Critical',
      20_000,
    );
    expect(critical.status!.health!.parts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'PSU1', health: 'Critical' }),
      ]),
    );
    expect(critical.status!.health!.sweepIntervalSeconds).toBe(2);
    // Each refused write was a Warning Event on the ServerBMC and counted.
    const events = await env.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector:
        'involvedObject.kind=ServerBMC,involvedObject.name=worker-2',
    });
    expect(
      events.items.find(e => e.reason === 'StatusWriteFailed'),
    ).toMatchObject({
      type: 'Warning',
      message: expect.stringContaining(POLICY),
    });
    const metrics = (await operator!.metrics.render()).body;
    expect(metrics).toMatch(
      /rackside_status_write_failures_total\{kind="ServerBMC"\} [1-9]/,
    );
    await control.setPart(
      systemId('worker-2'),
      { kind: 'PowerSupply', name: 'PSU1' },
      'OK',
    );
    await healthOf('worker-2', 'OK again', h => h?.rollup === 'OK');
  });
});

describe('bounded readings: huge and slow answers, long logs (docs/hardware-health.md, "Limits")', () => {
  const OPTIONS = {
    drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
    power: { rebootSeconds: 60, unansweredSeconds: 60 },
  };
  /**
   * A full reading of the rack's BMC is about 22 requests, 200 ms apart, and 20 more for a
   * 20-page log (about 9 s); a slow BMC's first slow answer starts within a second, so its
   * own 15 s request deadline comes after the reading's 14 s.
   */
  const READING_DEADLINE_MS = 14_000;

  /** Asks for a reading and waits up to `timeoutMs` for its answer (a slow BMC's included). */
  async function refreshWithin(node: string, timeoutMs: number) {
    const requestedAt = new Date().toISOString();
    await rack.bmcs.patch(node, {
      spec: {
        healthRefresh: { requestedAt, requestedBy: 'user:default/tester' },
      },
    } as any);
    return healthOf(
      node,
      `refresh of ${requestedAt} answered`,
      h =>
        h?.answeredRequestAt !== undefined &&
        Date.parse(h.answeredRequestAt) === Date.parse(requestedAt),
      timeoutMs,
    );
  }

  beforeAll(async () => {
    await operator?.stop();
    operator = await env.startReady({
      ...OPTIONS,
      health: {
        intervalMs: 2000,
        concurrency: 2,
        fullIntervalMs: 600_000,
        readingDeadlineMs: READING_DEADLINE_MS,
      },
    });
  }, 120_000);

  afterAll(async () => {
    for (const node of ['worker-1', 'worker-2']) {
      await control.reset(systemId(node)).catch(() => undefined);
    }
    await operator?.stop();
    operator = await env.startReady({
      ...OPTIONS,
      health: { intervalMs: 2000, concurrency: 2, fullIntervalMs: 600_000 },
    });
  }, 120_000);

  it('a 200 MB event log is refused at the 4 MiB page cap as it streams: the reading says so, and the operator grows by less than 64 MB', async () => {
    await control.reset(systemId('worker-1'));
    await control.hugeLog(systemId('worker-1'), 200 * 1000 * 1000);
    // The operator runs in this process: its resident set, sampled while it reads.
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    try {
      const read = await refresh('worker-1');
      expect(read.status!.health!.error).toMatch(
        /LogServices\/SEL\/Entries.*the answer is larger than the limit of 4,194,304 bytes \(4 MiB\)/,
      );
    } finally {
      clearInterval(sampler);
      await control.hugeLog(systemId('worker-1'), 0);
    }
    expect((peak - baseline) / (1024 * 1024)).toBeLessThan(64);
  });

  it('a BMC that answers one byte a second is given up at the reading deadline, naming it', async () => {
    await control.reset(systemId('worker-1'));
    await control.slowLog(systemId('worker-1'), 1);
    try {
      const read = await refreshWithin('worker-1', 60_000);
      expect(read.status!.health!.error).toMatch(
        /GET \/redfish\/v1\/\S+: the answer did not arrive in time \(the health reading of .* passed its deadline of 14 s\)/,
      );
    } finally {
      await control.slowLog(systemId('worker-1'), 0);
    }
  });

  it('1,500 entries over 30 pages: the newest Critical entry, on the last page, is in status.health.logEntries and the skipped entries are counted', async () => {
    await control.reset(systemId('worker-1'));
    await control.writeLog(systemId('worker-1'), {
      message: 'an older entry',
      severity: 'OK',
      count: 1499,
    });
    const message = `PSU2 input lost (${Date.now()})`;
    await control.writeLog(systemId('worker-1'), {
      message,
      severity: 'Critical',
    });
    await control.pageLog(systemId('worker-1'), 50);
    const read = await refreshWithin('worker-1', 60_000);
    const health = read.status!.health!;
    expect(health.error).toBeUndefined();
    expect(health.logEntries[0]).toMatchObject({
      id: '1500',
      severity: 'Critical',
      message,
      service: 'System',
    });
    // The first page and the last 19 (20 pages, the budget): 1,000 read, 500 skipped.
    expect(health.logEntriesSkipped).toBe(500);
  });
});
