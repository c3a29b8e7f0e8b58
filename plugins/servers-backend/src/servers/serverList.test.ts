/*
 * The windowed list (issue 21): `?limit=&continue=` with the page's filter and sort,
 * answered on the server. A walk is consistent across a change: every server readable
 * when the first window was cut appears in exactly one window, once, as it was then.
 */
import { randomUUID } from 'node:crypto';
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import {
  compareServers,
  matchesServerFilter,
  SERVER_SORT_KEYS,
} from '@rackside/plugin-servers-common';
import type { ClusterConfig } from '@rackside/plugin-servers-node';
import { FakeKube } from '@rackside/plugin-servers-node/testing';
import { staticClusterRegistry } from '../cluster/clusterRegistry';
import { KubeClusterState } from '../cluster/KubeClusterState';
import { PreflightTokens } from '../preflight/tokens';
import { ExpiredContinueError, parseServerListQuery } from './serverList';
import { createServersService } from './createServersService';
import { DEFAULT_READ_DECISION_REUSE_MS } from '../access/readDecisions';

const NODES = '/api/v1/nodes';

/** A conditional servers:read decision: the servers carrying `label`. */
function hasLabel(label: string): PolicyDecision {
  return {
    result: AuthorizeResult.CONDITIONAL,
    pluginId: 'servers',
    resourceType: 'server',
    conditions: {
      rule: 'HAS_LABEL',
      resourceType: 'server',
      params: { label },
    },
  };
}

function node(
  name: string,
  ready = 'True',
  labels: Record<string, string> = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
    spec: {},
    status: { conditions: [{ type: 'Ready', status: ready }] },
  } as any;
}

const cluster: ClusterConfig = {
  name: 'plant-a',
  title: 'Plant A',
  operatorNamespace: 'rackside-system',
  access: {
    type: 'token',
    url: 'https://127.0.0.1:1',
    token: 'unused',
    skipTLSVerify: true,
  },
};

describe('windowed servers list', () => {
  let kube: FakeKube;
  let state: KubeClusterState;
  let service: ReturnType<typeof createServersService>;
  let read: PolicyDecision;
  let clock: number;
  /** How many times a conditional decision was applied to a server. */
  let applied: number;
  const credentials = mockCredentials.user();

  const page = async (params: Record<string, string>) => {
    const query = parseServerListQuery(params)!;
    return JSON.parse(
      (await service.listServersJson(credentials, 'plant-a', query)).body,
    );
  };

  /** Every window of one walk, following `continue`; `between` runs after each window. */
  const walk = async (
    params: Record<string, string>,
    between: (window: number) => void = () => {},
  ) => {
    const windows: any[] = [];
    let token: string | undefined;
    do {
      const answer = await page(
        token ? { ...params, continue: token } : params,
      );
      windows.push(answer);
      between(windows.length);
      token = answer.continue;
    } while (token);
    return windows;
  };

  beforeEach(async () => {
    kube = new FakeKube();
    for (const n of ['w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6', 'w-7']) {
      kube.put(NODES, node(n, 'True', { rack: n < 'w-4' ? 'r1' : 'r2' }));
    }
    const logger = mockServices.logger.mock();
    state = new KubeClusterState(cluster, logger, { transport: kube });
    read = { result: AuthorizeResult.ALLOW };
    clock = 0;
    applied = 0;
    service = createServersService({
      clusters: staticClusterRegistry([state]),
      permissions: mockServices.permissions.mock({
        // As the permission client answers: each decision with a fresh request id.
        authorizeConditional: async requests =>
          requests.map((_r, i) => ({
            ...(i === 0 ? read : { result: AuthorizeResult.ALLOW }),
            id: randomUUID(),
          })),
      }) as any,
      auditor: mockServices.auditor.mock(),
      logger,
      reasonPolicy: { minLength: 10, maxLength: 500 },
      preflightTokens: new PreflightTokens('secret'),
      applyConditions: () => {
        applied += 1;
        return true;
      },
      // The reuse window of read decisions (readDecisions.ts) on a clock of its own:
      // a test that changes a decision moves past it.
      now: () => clock,
    });
    await state.snapshot();
  });

  afterEach(() => state.stop());

  it('cuts every window of a walk from the list of its first window, whatever changes between', async () => {
    const windows = await walk({ limit: '3' }, n => {
      if (n === 1) {
        // After the first window: a server before the cut appears, one after it goes,
        // one after it changes, one before it changes.
        kube.put(NODES, node('a-0'));
        kube.delete(NODES, 'w-5');
        kube.put(NODES, node('w-6', 'False', { rack: 'r2' }));
        kube.put(NODES, node('w-1', 'False', { rack: 'r1' }));
      }
    });
    const names = windows.flatMap(w => w.items.map((s: any) => s.name));
    expect(names).toEqual(['w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6', 'w-7']);
    expect(windows.map(w => w.items.length)).toEqual([3, 3, 1]);
    expect(windows.every(w => w.total === 7)).toBe(true);
    // Rows as they were when the walk began.
    expect(windows[1].items.find((s: any) => s.name === 'w-6').ready).toBe(
      true,
    );
    expect(windows[2].continue).toBeUndefined();

    // A new walk sees the change.
    const fresh = await walk({ limit: '3' });
    expect(fresh.flatMap(w => w.items.map((s: any) => s.name))).toEqual([
      'a-0',
      'w-1',
      'w-2',
      'w-3',
      'w-4',
      'w-6',
      'w-7',
    ]);
    expect(fresh[0].items[1].ready).toBe(false);
  });

  it('filters and sorts on the server as the table does (ties by name)', async () => {
    kube.put(NODES, node('w-2', 'False', { rack: 'r1' }));
    kube.put(NODES, node('w-6', 'False', { rack: 'r2' }));
    const windows = await walk({
      limit: '2',
      filter: 'RACK=r2',
      sort: 'ready',
      direction: 'asc',
    });
    expect(windows.flatMap(w => w.items.map((s: any) => s.name))).toEqual([
      'w-6',
      'w-4',
      'w-5',
      'w-7',
    ]);
    expect(windows[0].total).toBe(4);
    const byName = await page({ sort: 'name', direction: 'desc', limit: '2' });
    expect(byName.items.map((s: any) => s.name)).toEqual(['w-7', 'w-6']);
  });

  it('filters and sorts as the shared rules do (matchesServerFilter, compareServers), for every column', async () => {
    // Names that code-point order and the collation put apart.
    for (const n of ['W-10', 'w-9', 'Alpha', 'beta', 'w-1b']) {
      kube.put(
        NODES,
        node(n, n.length % 2 ? 'True' : 'False', {
          rack: n.toLowerCase() < 'w' ? 'R1' : 'r2',
          ...(n === 'beta'
            ? { 'node-role.kubernetes.io/control-plane': '' }
            : {}),
        }),
      );
    }
    const all = JSON.parse(
      (await service.listServersJson(credentials, 'plant-a')).body,
    ).items;
    for (const sort of SERVER_SORT_KEYS) {
      for (const direction of ['asc', 'desc'] as const) {
        for (const filter of ['', 'rack=r1', 'W-', 'control']) {
          const windows = await walk({ limit: '4', filter, sort, direction });
          const expected = all
            .filter((s: any) => matchesServerFilter(s, filter))
            .sort((a: any, b: any) => compareServers(a, b, sort, direction))
            .map((s: any) => s.name);
          expect(windows.flatMap(w => w.items.map((s: any) => s.name))).toEqual(
            expected,
          );
        }
      }
    }
    // The whole list is in the rules' name order too.
    expect(all.map((s: any) => s.name)).toEqual(
      [...all]
        .sort((a: any, b: any) => compareServers(a, b, 'name', 'asc'))
        .map((s: any) => s.name),
    );
  });

  it('asks again while nothing changed: the same window and entity tag', async () => {
    const query = parseServerListQuery({ limit: '2' })!;
    const a = await service.listServersJson(credentials, 'plant-a', query);
    kube.put(NODES, { ...node('w-1', 'True', { rack: 'r1' }) }); // a heartbeat
    const b = await service.listServersJson(credentials, 'plant-a', query);
    expect(b.etag).toBe(a.etag);
    expect(b.body).toBe(a.body);
  });

  it('refuses a token for another filter, sort or user (400), a forged one (400), and an unknown one (410)', async () => {
    const first = await page({ limit: '2' });
    const token = first.continue as string;
    await expect(
      page({ limit: '2', continue: token, sort: 'ready' }),
    ).rejects.toThrow(/another cluster, user, filter or sort/);
    await expect(
      page({ limit: '2', continue: token, filter: 'r1' }),
    ).rejects.toThrow(/another cluster, user, filter or sort/);
    read = hasLabel('rack');
    clock += DEFAULT_READ_DECISION_REUSE_MS;
    await expect(page({ limit: '2', continue: token })).rejects.toThrow(
      /another cluster, user, filter or sort/,
    );
    read = { result: AuthorizeResult.ALLOW };
    clock += DEFAULT_READ_DECISION_REUSE_MS;
    await expect(
      page({ limit: '2', continue: 'bm90IGEgdG9rZW4' }),
    ).rejects.toMatchObject({
      name: 'InputError',
    });
    const unknown = Buffer.from(JSON.stringify({ w: 'gone', o: 2 })).toString(
      'base64url',
    );
    const error = await page({ limit: '2', continue: unknown }).catch(e => e);
    expect(error).toBeInstanceOf(ExpiredContinueError);
    expect(error.statusCode).toBe(410);
  });

  it('summarises a cluster once per change and decision, not once per /clusters', async () => {
    const serversOf = async () => {
      const [summary] = (await service.listClusters(credentials)).items;
      return summary.available ? summary.servers : undefined;
    };
    read = hasLabel('rack');
    const first = await service.listClusters(credentials);
    expect(await serversOf()).toBe(7);
    const filtered = applied;
    expect(filtered).toBeGreaterThanOrEqual(7);
    // The same decision asked again (a new request id): the same answer, no server
    // filtered again.
    clock += DEFAULT_READ_DECISION_REUSE_MS;
    expect(await service.listClusters(credentials)).toEqual(first);
    expect(applied).toBe(filtered);
    // A change of the cluster is a new snapshot: counted again.
    kube.put(NODES, node('w-8', 'True', { rack: 'r1' }));
    expect(await serversOf()).toBe(8);
    expect(applied).toBeGreaterThan(filtered);
    // Another decision on the same snapshot is its own answer, counted for itself.
    const before = applied;
    read = hasLabel('zone');
    clock += DEFAULT_READ_DECISION_REUSE_MS;
    expect(await serversOf()).toBe(8);
    expect(applied).toBeGreaterThan(before);
  });

  it('names what is wrong with a bad parameter', () => {
    expect(() => parseServerListQuery({ limit: '0' })).toThrow(
      /limit must be a whole number from 1 to 1000/,
    );
    expect(() => parseServerListQuery({ limit: '1001' })).toThrow(/limit/);
    expect(() => parseServerListQuery({ limit: '2e3' })).toThrow(/limit/);
    expect(() => parseServerListQuery({ limit: ['1', '2'] })).toThrow(
      /limit must be given once/,
    );
    expect(() => parseServerListQuery({ sort: 'uuid' })).toThrow(
      /sort must be one of name, role, ready, phase, health/,
    );
    expect(() => parseServerListQuery({ direction: 'up' })).toThrow(
      /direction must be asc or desc/,
    );
    expect(() => parseServerListQuery({ filter: 'x'.repeat(300) })).toThrow(
      /filter/,
    );
    expect(parseServerListQuery({})).toBeUndefined();
    expect(parseServerListQuery({ other: 'x' })).toBeUndefined();
  });
});
