import type { ServerBMC } from '@rackside/plugin-servers-common';
import type {
  BmcHealthReader,
  BmcHealthReading,
} from '@rackside/plugin-servers-node';
import { entriesSince, HealthMonitor, type HealthPatch } from './health';

/** A cache the monitor reads; `update` plays a watch event. */
function fakeCache<T extends { metadata: { name: string } }>(objects: T[]) {
  const byName = new Map(objects.map(o => [o.metadata.name, o]));
  const listeners: Record<string, ((o: T) => void)[]> = {};
  return {
    cache: {
      list: () => [...byName.values()],
      get: (name: string) => byName.get(name),
      on: (event: string, fn: (o: T) => void) => {
        (listeners[event] ??= []).push(fn);
        return () => {
          listeners[event] = listeners[event].filter(f => f !== fn);
        };
      },
    } as any,
    update(obj: T) {
      byName.set(obj.metadata.name, obj);
      for (const fn of listeners.update ?? []) fn(obj);
    },
  };
}

const bmc = (name: string, extra: Partial<ServerBMC> = {}): ServerBMC =>
  ({
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'ServerBMC',
    metadata: { name, uid: `uid-${name}` },
    spec: { address: 'https://10.0.5.21' },
    ...extra,
  } as ServerBMC);

const reading = (over: Partial<BmcHealthReading> = {}): BmcHealthReading => ({
  rollup: 'OK',
  summaryRollup: 'OK',
  state: 'Enabled',
  parts: [],
  logEntries: [],
  logEntriesSkipped: 0,
  firmware: [{ name: 'BIOS', version: '1.0', updateable: true }],
  missing: [],
  ...over,
});

/** A reader whose answers the test sets, counting what it was asked. */
function fakeReader() {
  const calls = { summary: 0, read: 0 };
  let running = 0;
  let maxRunning = 0;
  const state = {
    full: reading(),
    summary: 'OK' as BmcHealthReading['rollup'],
    fail: undefined as Error | undefined,
    gate: undefined as Promise<void> | undefined,
  };
  const reader = {
    async summary() {
      calls.summary++;
      if (state.fail) throw state.fail;
      return { rollup: state.summary, state: 'Enabled' };
    },
    async read() {
      calls.read++;
      running++;
      maxRunning = Math.max(maxRunning, running);
      try {
        await state.gate;
        if (state.fail) throw state.fail;
        return state.full;
      } finally {
        running--;
      }
    },
  } as unknown as BmcHealthReader;
  return { reader, calls, state, maxRunning: () => maxRunning };
}

function monitorOf(
  bmcs: ReturnType<typeof fakeCache<ServerBMC>>,
  reader: BmcHealthReader,
  extra: Partial<ConstructorParameters<typeof HealthMonitor>[0]> = {},
) {
  const written: Array<{ name: string; health: HealthPatch }> = [];
  const events: Array<{ type: string; reason: string; message: string }> = [];
  const hardware: Array<{ name: string; hardware: any }> = [];
  const monitor = new HealthMonitor({
    bmcs: bmcs.cache,
    nodes: fakeCache<any>([]).cache,
    maintenances: fakeCache<any>([]).cache,
    reader: async () => reader,
    scrub: (_name, text) => text.replace(/https:\/\/[^\s]+/g, 'the BMC'),
    writeHealth: async (name, health) => {
      written.push({ name, health: health as HealthPatch });
      const current = bmcs.cache.get(name);
      // A JSON merge patch: the fields it names replace, null removes, the rest stay.
      bmcs.update({
        ...current,
        status: {
          ...current.status,
          health: JSON.parse(
            JSON.stringify({ ...current.status?.health, ...health }),
            (_k, v) => (v === null ? undefined : v),
          ),
        },
      });
    },
    writeHardware: async (name, h) => {
      hardware.push({ name, hardware: h });
    },
    recorder: {
      record: async (_target, type, reason, message) => {
        events.push({ type, reason, message });
      },
    },
    log: () => {},
    intervalMs: 3_600_000,
    concurrency: 2,
    random: () => 0.5,
    ...extra,
  });
  return { monitor, written, events, hardware };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) {
    await new Promise(r => setTimeout(r, 5));
  }
  expect(check()).toBe(true);
};

describe('HealthMonitor', () => {
  it('reads in full first, then only the summary while it does not change; a change reads in full again', async () => {
    const bmcs = fakeCache([bmc('w1')]);
    const fake = fakeReader();
    const { monitor, written, events } = monitorOf(bmcs, fake.reader);
    await monitor.read('w1', 'sweep');
    expect(fake.calls).toEqual({ summary: 0, read: 1 });
    expect(written[0].health).toMatchObject({ rollup: 'OK', error: null });
    expect(events.map(e => e.reason)).toEqual(['HealthOK']);

    await monitor.read('w1', 'sweep');
    expect(fake.calls).toEqual({ summary: 1, read: 1 });
    expect(written[1].health.firmware).toEqual(written[0].health.firmware);

    fake.state.summary = 'Critical';
    fake.state.full = reading({
      rollup: 'Critical',
      summaryRollup: 'Critical',
      parts: [{ kind: 'PowerSupply', name: 'PSU2', health: 'Critical' }],
    });
    await monitor.read('w1', 'sweep');
    expect(fake.calls).toEqual({ summary: 2, read: 2 });
    expect(written[2].health.rollup).toBe('Critical');
    expect(events.at(-1)).toMatchObject({
      type: 'Warning',
      reason: 'HealthCritical',
      message: expect.stringContaining('PSU2 Critical'),
    });
  });

  it('keeps the last parts and says why when a reading fails, without the BMC address; the next sweep reads in full', async () => {
    const bmcs = fakeCache([bmc('w1')]);
    const fake = fakeReader();
    const { monitor, written } = monitorOf(bmcs, fake.reader);
    fake.state.full = reading({
      rollup: 'Warning',
      parts: [{ kind: 'Fan', name: 'Fan1', health: 'Warning' }],
    });
    await monitor.read('w1', 'sweep');
    fake.state.fail = new Error(
      'Redfish BMC https://10.0.5.21: GET /redfish/v1/Systems/1 failed: ECONNREFUSED',
    );
    await monitor.read('w1', 'sweep');
    expect(written[1].health).toMatchObject({
      rollup: 'Warning',
      parts: [{ name: 'Fan1' }],
      error: expect.stringContaining('ECONNREFUSED'),
    });
    expect(written[1].health.error).not.toContain('10.0.5.21');
    // The failure came from the summary; the sweep after it reads everything.
    expect(fake.calls).toEqual({ summary: 1, read: 1 });
    fake.state.fail = undefined;
    await monitor.read('w1', 'sweep');
    expect(fake.calls).toEqual({ summary: 1, read: 2 });
    expect(written[2].health.error).toBeNull();
  });

  it('a BMC never read successfully is Unknown, with the error bounded', async () => {
    const bmcs = fakeCache([bmc('w1')]);
    const fake = fakeReader();
    fake.state.fail = new Error('x'.repeat(5000));
    const { monitor, written } = monitorOf(bmcs, fake.reader);
    await monitor.read('w1', 'sweep');
    expect(written[0].health.rollup).toBe('Unknown');
    expect(written[0].health.error!.length).toBe(1024);
  });

  it('answers a refresh request (only a newer one) with a full reading', async () => {
    const requestedAt = '2026-12-06T10:00:00.000Z';
    const bmcs = fakeCache([bmc('w1')]);
    const fake = fakeReader();
    const { monitor, written } = monitorOf(bmcs, fake.reader);
    monitor.start();
    try {
      bmcs.update(
        bmc('w1', {
          spec: {
            address: 'https://10.0.5.21',
            healthRefresh: { requestedAt, requestedBy: 'user:default/a' },
          },
        }),
      );
      await until(() =>
        written.some(w => w.health.answeredRequestAt === requestedAt),
      );
      const reads = fake.calls.read;
      // The answered request again (e.g. a relist): not read again.
      bmcs.update(bmcs.cache.get('w1'));
      await new Promise(r => setTimeout(r, 30));
      expect(fake.calls.read).toBe(reads);
    } finally {
      monitor.pause();
    }
  });

  it('a refresh asked while a failing reading runs is answered when it ends, though that reading wrote nothing new (no watch event)', async () => {
    const requestedAt = '2026-12-06T10:00:00.000Z';
    const failed = {
      rollup: 'Unknown' as const,
      error: 'the answer is larger than the limit of 4,194,304 bytes (4 MiB)',
      parts: [],
      logEntries: [],
      firmware: [],
      missing: [],
      sweepIntervalSeconds: 3600,
    };
    const bmcs = fakeCache([bmc('w1', { status: { health: failed } })]);
    const fake = fakeReader();
    fake.state.fail = new Error(failed.error);
    let release!: () => void;
    fake.state.gate = new Promise<void>(resolve => {
      release = resolve;
    });
    const { monitor, written } = monitorOf(bmcs, fake.reader, {
      // As the apiserver: a merge patch that changes nothing sends no watch event.
      writeHealth: async (name, health) => {
        written.push({ name, health: health as HealthPatch });
        const current = bmcs.cache.get(name);
        const next = JSON.parse(
          JSON.stringify({ ...current.status?.health, ...health }),
          (_k, v) => (v === null ? undefined : v),
        );
        if (JSON.stringify(next) === JSON.stringify(current.status?.health)) {
          return;
        }
        bmcs.update({
          ...current,
          status: { ...current.status, health: next },
        });
      },
      random: () => 0,
    });
    monitor.start();
    try {
      await until(() => fake.calls.read === 1);
      bmcs.update(
        bmc('w1', {
          spec: {
            address: 'https://10.0.5.21',
            healthRefresh: { requestedAt, requestedBy: 'user:default/a' },
          },
          status: { health: failed },
        }),
      );
      release();
      await until(() =>
        written.some(w => w.health.answeredRequestAt === requestedAt),
      );
      expect(bmcs.cache.get('w1').status.health.answeredRequestAt).toBe(
        requestedAt,
      );
    } finally {
      monitor.pause();
    }
  });

  it('reads at most `concurrency` BMCs at once', async () => {
    const bmcs = fakeCache([bmc('a'), bmc('b'), bmc('c'), bmc('d')]);
    const fake = fakeReader();
    let open!: () => void;
    fake.state.gate = new Promise<void>(resolve => {
      open = resolve;
    });
    const { monitor } = monitorOf(bmcs, fake.reader, { concurrency: 2 });
    const all = ['a', 'b', 'c', 'd'].map(n => monitor.read(n, 'sweep'));
    await new Promise(r => setTimeout(r, 20));
    expect(fake.calls.read).toBe(2);
    open();
    await Promise.all(all);
    expect(fake.calls.read).toBe(4);
    expect(fake.maxRunning()).toBe(2);
  });

  it('spreads the first sweep over one interval and the next ones ±20 % around it', () => {
    const bmcs = fakeCache([bmc('w1')]);
    const fake = fakeReader();
    const randoms = [0, 1];
    const { monitor } = monitorOf(bmcs, fake.reader, {
      random: () => randoms.shift() ?? 0.5,
      intervalMs: 1000,
    });
    const memory = (monitor as any).memoryOf(bmcs.cache.get('w1'));
    expect(memory.dueAt - Date.now()).toBeLessThanOrEqual(1);
    expect((monitor as any).jittered()).toBeCloseTo(1200);
    expect((monitor as any).jittered()).toBeCloseTo(1000);
  });
});

describe('a status write that fails', () => {
  /** A monitor whose status writes fail while `failing` is set, as an apiserver refusing them. */
  function refusingMonitor(
    bmcs: ReturnType<typeof fakeCache<ServerBMC>>,
    reader: BmcHealthReader,
  ) {
    const control = { failing: false, failures: 0 };
    const built = monitorOf(bmcs, reader, {
      onWriteFailed: () => {
        control.failures++;
      },
    });
    const writeHealth = (built.monitor as any).options.writeHealth;
    (built.monitor as any).options.writeHealth = async (
      name: string,
      health: HealthPatch,
    ) => {
      if (control.failing) {
        throw new Error('admission webhook "deny-status" denied the request');
      }
      await writeHealth(name, health);
    };
    return { ...built, control };
  }

  it('is not remembered as written: the Critical reading the apiserver refused is written at the next sweep, never the old OK one with a fresh readAt', async () => {
    const bmcs = fakeCache([bmc('w1')]);
    const fake = fakeReader();
    const { monitor, written, events, control } = refusingMonitor(
      bmcs,
      fake.reader,
    );
    await monitor.read('w1', 'sweep');
    expect(written[0].health.rollup).toBe('OK');

    // The PSU fails; the sweep reads it, and the apiserver refuses the status write.
    fake.state.summary = 'Critical';
    fake.state.full = reading({
      rollup: 'Critical',
      summaryRollup: 'Critical',
      parts: [{ kind: 'PowerSupply', name: 'PSU2', health: 'Critical' }],
    });
    control.failing = true;
    await monitor.read('w1', 'sweep');
    expect(written).toHaveLength(1);
    expect(control.failures).toBe(1);
    expect(events.at(-1)).toMatchObject({
      type: 'Warning',
      reason: 'StatusWriteFailed',
      message: expect.stringContaining('denied the request'),
    });

    // The apiserver takes writes again: the next cheap sweep must not see "no change".
    control.failing = false;
    await monitor.read('w1', 'sweep');
    expect(written).toHaveLength(2);
    expect(written[1].health.rollup).toBe('Critical');
    expect(written[1].health.parts).toEqual([
      { kind: 'PowerSupply', name: 'PSU2', health: 'Critical' },
    ]);
  });

  it('an error reading that could not be written either leaves the memory as it was', async () => {
    const bmcs = fakeCache([bmc('w1')]);
    const fake = fakeReader();
    const { monitor, written, control } = refusingMonitor(bmcs, fake.reader);
    await monitor.read('w1', 'sweep');
    // The summary says Critical, the full reading then fails, and its error write fails.
    fake.state.summary = 'Critical';
    const full = reading({
      rollup: 'Critical',
      summaryRollup: 'Critical',
      parts: [{ kind: 'Fan', name: 'Fan1', health: 'Critical' }],
    });
    fake.state.full = undefined as any;
    fake.state.fail = undefined;
    (fake.reader as any).read = async () => {
      throw new Error('timeout after 60 s');
    };
    control.failing = true;
    await monitor.read('w1', 'sweep');
    control.failing = false;
    (fake.reader as any).read = async () => full;
    await monitor.read('w1', 'sweep');
    expect(written.at(-1)!.health.rollup).toBe('Critical');
  });

  it('writes the sweep interval into every reading, so the backend judges its age by the same number', async () => {
    const bmcs = fakeCache([bmc('w1')]);
    const fake = fakeReader();
    const { monitor, written } = monitorOf(bmcs, fake.reader, {
      intervalMs: 900_000,
    });
    await monitor.read('w1', 'sweep');
    await monitor.read('w1', 'sweep');
    fake.state.fail = new Error('ECONNREFUSED');
    await monitor.read('w1', 'sweep');
    expect(written.map(w => w.health.sweepIntervalSeconds)).toEqual([
      900, 900, 900,
    ]);
  });
});

describe('a refresh whose reading never ends', () => {
  const requestedAt = '2026-12-06T10:00:00.000Z';
  const asked = (health?: ServerBMC['status']) =>
    bmc('w1', {
      spec: {
        address: 'https://10.0.5.21',
        healthRefresh: { requestedAt, requestedBy: 'user:default/a' },
      },
      ...(health ? { status: health } : {}),
    });

  it('marks the request as being answered before it reads', async () => {
    const bmcs = fakeCache([asked()]);
    const fake = fakeReader();
    let open!: () => void;
    fake.state.gate = new Promise<void>(resolve => {
      open = resolve;
    });
    const { monitor, written } = monitorOf(bmcs, fake.reader);
    monitor.start();
    try {
      await until(() => fake.calls.read === 1);
      // While the reading runs (and would crash the process), the status says so.
      expect(bmcs.cache.get('w1').status.health.attemptedRequestAt).toBe(
        requestedAt,
      );
      expect(
        bmcs.cache.get('w1').status.health.answeredRequestAt,
      ).toBeUndefined();
      open();
      await until(() =>
        written.some(w => w.health.answeredRequestAt === requestedAt),
      );
    } finally {
      monitor.pause();
    }
  });

  it('is answered with an error at the next start (a new operator), not read again', async () => {
    const lastReadAt = new Date(Date.now() - 60_000).toISOString();
    // What the operator that died mid-reading left: the request marked as being
    // answered, never answered.
    const bmcs = fakeCache([
      asked({
        health: {
          rollup: 'OK',
          // Recent: the sweep is not due, so any reading would be the refresh's.
          readAt: lastReadAt,
          attemptedRequestAt: requestedAt,
          parts: [],
          logEntries: [],
          firmware: [],
          missing: [],
        },
      }),
    ]);
    const fake = fakeReader();
    const { monitor, written, events } = monitorOf(bmcs, fake.reader);
    monitor.start();
    try {
      await until(() =>
        written.some(w => w.health.answeredRequestAt === requestedAt),
      );
      const answer = written.find(
        w => w.health.answeredRequestAt === requestedAt,
      )!;
      expect(answer.health.error).toMatch(
        /the reading for the refresh requested at 2026-12-06T10:00:00.000Z did not end/,
      );
      // The last good reading stays as it was.
      expect(bmcs.cache.get('w1').status.health).toMatchObject({
        rollup: 'OK',
        readAt: lastReadAt,
      });
      expect(fake.calls.read).toBe(0);
      await until(() => events.some(e => e.reason === 'HealthRefreshNotRead'));
      expect(events.find(e => e.reason === 'HealthRefreshNotRead')?.type).toBe(
        'Warning',
      );
      // A second start (another restart) does not read it either.
      monitor.pause();
      const again = monitorOf(bmcs, fake.reader);
      again.monitor.start();
      await new Promise(r => setTimeout(r, 30));
      again.monitor.pause();
      expect(fake.calls.read).toBe(0);
    } finally {
      monitor.pause();
    }
  });

  it('a failed refresh reading is answered with its error, and not read again at the next start', async () => {
    const bmcs = fakeCache([asked()]);
    const fake = fakeReader();
    fake.state.fail = new Error('answer larger than 16 MiB');
    const first = monitorOf(bmcs, fake.reader);
    first.monitor.start();
    try {
      await until(() =>
        first.written.some(w => w.health.answeredRequestAt === requestedAt),
      );
    } finally {
      first.monitor.pause();
    }
    expect(bmcs.cache.get('w1').status.health.error).toMatch(/16 MiB/);
    const reads = fake.calls.read;
    const second = monitorOf(bmcs, fake.reader);
    second.monitor.start();
    await new Promise(r => setTimeout(r, 30));
    second.monitor.pause();
    expect(fake.calls.read).toBe(reads);
  });
});

describe('a maintenance', () => {
  it('records before and after and the entries created between, once each, even when the watch lags', async () => {
    const bmcs = fakeCache([bmc('w1')]);
    const nms = fakeCache<any>([]);
    const fake = fakeReader();
    const { hardware, monitor } = (() => {
      const built = monitorOf(bmcs, fake.reader);
      (built.monitor as any).options.maintenances = nms.cache;
      return built;
    })();
    monitor.start();
    try {
      const nm = (phase: string) => ({
        metadata: { name: 'm1', uid: 'u1' },
        spec: { nodeName: 'w1', intent: 'reboot' },
        status: { phase },
      });
      nms.update(nm('Cordoned'));
      await until(() => hardware.length === 1);
      expect(hardware[0].hardware.before.rollup).toBe('OK');
      const openedAt = Date.parse(hardware[0].hardware.before.readAt);
      // The watch has not brought the before-reading back: still one before.
      nms.update(nm('Rebooting'));
      fake.state.full = reading({
        logEntries: [
          {
            id: '2',
            created: new Date(openedAt + 1000).toISOString(),
            severity: 'Warning',
            message: 'during',
            service: 'System',
          },
          {
            id: '1',
            created: new Date(openedAt - 60_000).toISOString(),
            severity: 'OK',
            message: 'before',
            service: 'System',
          },
        ],
      });
      nms.update(nm('Complete'));
      await until(() => hardware.length === 2);
      expect(hardware[1].hardware.after.rollup).toBe('OK');
      expect(
        hardware[1].hardware.logEntries.map((e: any) => e.message),
      ).toEqual(['during']);
      await new Promise(r => setTimeout(r, 30));
      expect(hardware).toHaveLength(2);
    } finally {
      monitor.pause();
    }
  });

  it('records Unknown, never an error of the maintenance, when the BMC cannot be read', async () => {
    const bmcs = fakeCache([bmc('w1')]);
    const nms = fakeCache<any>([]);
    const fake = fakeReader();
    fake.state.fail = new Error('connect ECONNREFUSED');
    const built = monitorOf(bmcs, fake.reader);
    (built.monitor as any).options.maintenances = nms.cache;
    built.monitor.start();
    try {
      const nm = (phase: string) => ({
        metadata: { name: 'm3', uid: 'u3' },
        spec: { nodeName: 'w1', intent: 'reboot' },
        status: { phase },
      });
      nms.update(nm('Cordoned'));
      await until(() => built.hardware.length === 1);
      nms.update(nm('Complete'));
      await until(() => built.hardware.length === 2);
      expect(built.hardware[0].hardware.before.rollup).toBe('Unknown');
      expect(built.hardware[1].hardware).toMatchObject({
        after: { rollup: 'Unknown' },
        logEntries: [],
      });
      expect(bmcs.cache.get('w1').status.health.error).toMatch(/ECONNREFUSED/);
    } finally {
      built.monitor.pause();
    }
  });

  it('records nothing for a maintenance refused before it started', async () => {
    const bmcs = fakeCache([bmc('w1')]);
    const nms = fakeCache<any>([]);
    const fake = fakeReader();
    const built = monitorOf(bmcs, fake.reader);
    (built.monitor as any).options.maintenances = nms.cache;
    built.monitor.start();
    try {
      nms.update({
        metadata: { name: 'm2', uid: 'u2' },
        spec: { nodeName: 'w1', intent: 'reboot' },
        status: { phase: 'Refused' },
      });
      await new Promise(r => setTimeout(r, 30));
      expect(built.hardware).toEqual([]);
    } finally {
      built.monitor.pause();
    }
  });

  it('reads nothing for a maintenance held for approval, nor for one abandoned while held', async () => {
    const bmcs = fakeCache([bmc('w1')]);
    const nms = fakeCache<any>([]);
    const fake = fakeReader();
    const built = monitorOf(bmcs, fake.reader);
    (built.monitor as any).options.maintenances = nms.cache;
    built.monitor.start();
    try {
      const nm = (name: string, phase: string) => ({
        metadata: { name, uid: name },
        spec: { nodeName: 'w1', intent: 'reboot' },
        status: {
          phase,
          // What admission records: the held one was never admitted.
          ...(name === 'admitted'
            ? { admission: { verdict: 'allow', at: '2026-01-01T00:00:00Z' } }
            : {}),
        },
      });
      nms.update(nm('held', 'AwaitingApproval'));
      nms.update(nm('held', 'Complete'));
      // A maintenance that did start afterwards is read: the only reading there is.
      nms.update(nm('admitted', 'Cordoned'));
      await until(() => built.hardware.length === 1);
      expect(built.hardware.map(h => h.name)).toEqual(['admitted']);
      nms.update(nm('admitted', 'Complete'));
      await until(() => built.hardware.length === 2);
      expect(built.hardware.map(h => h.name)).toEqual(['admitted', 'admitted']);
    } finally {
      built.monitor.pause();
    }
  });

  it('entriesSince keeps the window and the bound', () => {
    const entries = Array.from({ length: 30 }, (_, i) => ({
      id: String(i),
      created: new Date(Date.UTC(2026, 0, 1, 0, 0, 30 - i)).toISOString(),
      severity: 'OK' as const,
      message: '',
      service: 'System' as const,
    }));
    expect(entriesSince(entries, '2026-01-01T00:00:00Z')).toHaveLength(20);
    expect(entriesSince(entries, '2026-01-01T00:00:25Z')).toHaveLength(6);
  });
});
