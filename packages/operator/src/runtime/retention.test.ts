import { KubeConfig } from '@kubernetes/client-node';
import {
  machineReclaimResource,
  nodeMaintenanceResource,
} from '@rackside/plugin-servers-common';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  maintenanceEndedAt,
  planEndedAt,
  planOwnersOf,
  reclaimEndedAt,
  RetentionController,
} from './retention';

const DAY = 24 * 3600 * 1000;

describe('when an object ended', () => {
  it('is the terminal history entry of a maintenance, else completedAt, else unknown; undefined while not terminal', () => {
    const nm = (status: any) =>
      ({ metadata: { name: 'm' }, spec: {}, status } as any);
    expect(maintenanceEndedAt(nm({ phase: 'Cordoned' }))).toBeUndefined();
    expect(
      maintenanceEndedAt(
        nm({
          phase: 'Complete',
          completedAt: '2026-01-01T00:00:09.000Z',
          history: [
            { phase: 'Returning', at: '2026-01-01T00:00:01.000Z' },
            { phase: 'Complete', at: '2026-01-01T00:00:02.000Z' },
          ],
        }),
      ),
    ).toBe(Date.parse('2026-01-01T00:00:02.000Z'));
    expect(
      maintenanceEndedAt(
        nm({ phase: 'Refused', completedAt: '2026-01-01T00:00:03.000Z' }),
      ),
    ).toBe(Date.parse('2026-01-01T00:00:03.000Z'));
    expect(maintenanceEndedAt(nm({ phase: 'Failed' }))).toBe('unknown');
  });

  it('is the last audit step of a terminal reclaim', () => {
    const mr = (status: any) =>
      ({ metadata: { name: 'r' }, spec: {}, status } as any);
    expect(reclaimEndedAt(mr({ phase: 'Resetting' }))).toBeUndefined();
    expect(
      reclaimEndedAt(
        mr({
          phase: 'Done',
          audit: [
            { at: '2026-01-01T00:00:01.000Z', event: 'Created' },
            { at: '2026-01-01T00:00:05.000Z', event: 'Done' },
          ],
        }),
      ),
    ).toBe(Date.parse('2026-01-01T00:00:05.000Z'));
    expect(reclaimEndedAt(mr({ phase: 'Expired' }))).toBe('unknown');
  });
});

describe('when a plan ended', () => {
  const plan = (status: any) =>
    ({ metadata: { name: 'p', uid: 'u' }, spec: {}, status } as any);
  const step = (status: any) =>
    ({
      metadata: {
        name: 's',
        ownerReferences: [{ kind: 'MaintenancePlan', name: 'p', uid: 'u' }],
      },
      spec: {},
      status,
    } as any);
  const at = (s: number) => `2026-01-01T00:00:0${s}.000Z`;

  it('is never while the plan runs, nor while any step it owns has not ended (deleting the plan deletes its steps)', () => {
    expect(planEndedAt(plan({ phase: 'Running' }), [])).toBeUndefined();
    expect(
      planEndedAt(plan({ phase: 'Cancelled', completedAt: at(1) }), [
        step({ phase: 'Complete', completedAt: at(1) }),
        step({ phase: 'Draining' }),
      ]),
    ).toBeUndefined();
  });

  it('is the latest of its completedAt and its steps ends, unknown if any is unknown', () => {
    expect(
      planEndedAt(plan({ phase: 'Complete', completedAt: at(2) }), [
        step({ phase: 'Complete', completedAt: at(1) }),
        step({ phase: 'Refused', completedAt: at(5) }),
      ]),
    ).toBe(Date.parse(at(5)));
    expect(planEndedAt(plan({ phase: 'Failed' }), [])).toBe('unknown');
    expect(
      planEndedAt(plan({ phase: 'Complete', completedAt: at(2) }), [
        step({ phase: 'Failed' }),
      ]),
    ).toBe('unknown');
  });

  it('is looked at again when a step changes: a step names its plan', () => {
    expect(planOwnersOf(step({}))).toEqual(['p']);
    expect(planOwnersOf({ metadata: { name: 'single' } } as any)).toEqual([]);
  });
});

describe('RetentionController', () => {
  let server: http.Server;
  let deletes: { url: string; body: any }[];
  let kubeConfig: KubeConfig;

  beforeEach(async () => {
    deletes = [];
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', c => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'DELETE') {
          const text = Buffer.concat(chunks).toString('utf8');
          deletes.push({ url: req.url ?? '', body: text && JSON.parse(text) });
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [
        {
          name: 'c',
          server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          skipTLSVerify: true,
        },
      ],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  afterEach(async () => {
    await new Promise(r => server.close(r));
  });

  /** A watch cache holding the given objects, with listeners the test can fire. */
  const fakeCache = (objects: any[]) => {
    const key = (o: any) =>
      o.metadata.namespace
        ? `${o.metadata.namespace}/${o.metadata.name}`
        : o.metadata.name;
    const byKey = new Map(objects.map(o => [key(o), o]));
    const listeners: Record<string, ((o: any) => void)[]> = {};
    return {
      cache: {
        list: () => [...byKey.values()],
        get: (name: string) => byKey.get(name),
        on: (event: string, fn: (o: any) => void) => {
          (listeners[event] ??= []).push(fn);
          return () => {};
        },
      } as any,
      update(obj: any) {
        byKey.set(key(obj), obj);
        for (const fn of listeners.update ?? []) fn(obj);
      },
    };
  };

  it('deletes what ended long enough ago with its uid as precondition, keeps the rest, and records each deletion', async () => {
    const now = Date.parse('2026-03-01T00:00:00.000Z');
    const ended = (days: number) => new Date(now - days * DAY).toISOString();
    const maintenances = fakeCache([
      {
        metadata: { name: 'old', uid: 'u-old' },
        status: {
          phase: 'Complete',
          history: [{ phase: 'Complete', at: ended(8) }],
        },
      },
      {
        metadata: { name: 'recent', uid: 'u-recent' },
        status: {
          phase: 'Failed',
          history: [{ phase: 'Failed', at: ended(1) }],
        },
      },
      {
        metadata: { name: 'open', uid: 'u-open', creationTimestamp: ended(30) },
        status: { phase: 'Cordoned' },
      },
    ]);
    const reclaims = fakeCache([
      {
        metadata: { name: 'r', namespace: 'ops', uid: 'u-r' },
        status: {
          phase: 'Refused',
          audit: [{ at: ended(7.5), event: 'Refused' }],
        },
      },
    ]);
    const recorded: any[] = [];
    const logs: string[] = [];
    const controller = new RetentionController({
      kubeConfig,
      retentionMs: 7 * DAY,
      now: () => now,
      log: m => logs.push(m),
      recorder: {
        record: async (target, _type, reason, message) => {
          recorded.push({ target, reason, message });
        },
      },
      kinds: [
        {
          kind: 'NodeMaintenance',
          descriptor: nodeMaintenanceResource,
          cache: maintenances.cache,
          endedAt: maintenanceEndedAt,
        },
        {
          kind: 'MachineReclaim',
          descriptor: machineReclaimResource,
          cache: reclaims.cache,
          endedAt: reclaimEndedAt,
        },
      ],
    });
    controller.start();
    try {
      for (let i = 0; i < 200 && recorded.length < 2; i++) {
        await new Promise(r => setTimeout(r, 5));
      }
      expect(logs.filter(l => !/^retention: deleted/.test(l))).toEqual([]);
      expect(deletes.map(d => d.url).sort()).toEqual([
        '/apis/rackside.dev/v1alpha1/namespaces/ops/machinereclaims/r',
        '/apis/rackside.dev/v1alpha1/nodemaintenances/old',
      ]);
      for (const d of deletes) {
        expect(d.body.preconditions.uid).toMatch(/^u-(old|r)$/);
      }
      expect(recorded.map(r => [r.target.name, r.reason])).toEqual(
        expect.arrayContaining([
          ['old', 'RetentionExpired'],
          ['r', 'RetentionExpired'],
        ]),
      );
      // Turning terminal is news: an old, open one that ends now is not deleted now.
      maintenances.update({
        metadata: { name: 'open', uid: 'u-open' },
        status: {
          phase: 'Complete',
          history: [{ phase: 'Complete', at: ended(0) }],
        },
      });
      await new Promise(r => setTimeout(r, 50));
      expect(deletes).toHaveLength(2);
    } finally {
      controller.stop();
    }
  });
});
