/*
 * The demo's MCP wiring without a rack: the MCP actions backend and the servers plugin in
 * one test backend, over an in-memory cluster, called with MCP's JSON-RPC over streamable
 * HTTP as two users (mock user tokens). The permission service and the auditor are
 * recording fakes. The rack test of the same path, with the MCP SDK's client, is
 * e2e/tests/servers-mcp.e2e.mjs.
 */
import {
  mockCredentials,
  mockServices,
  startTestBackend,
} from '@backstage/backend-test-utils';
import mcpActionsPlugin from '@backstage/plugin-mcp-actions-backend';
import serversPlugin, {
  staticClusterRegistryFactory,
  type ClusterState,
  type MaintenanceObject,
  type NewMaintenance,
} from '@rackside/plugin-servers-backend';
import type { AddressInfo } from 'node:net';

const ADMIN = 'user:default/guest';
const VIEWER = 'user:default/viewer';
const REASON = 'replace the failed disk in bay 3';

function node(name: string, controlPlane = false) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      resourceVersion: '1',
      labels: {
        'kubernetes.io/hostname': name,
        ...(controlPlane
          ? { 'node-role.kubernetes.io/control-plane': '' }
          : {}),
      },
    },
    spec: {},
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  } as any;
}

/** plant-a in memory: three control-plane nodes and a worker; records its writes. */
function plantA() {
  const created: NewMaintenance[] = [];
  const stored: MaintenanceObject[] = [];
  const cluster: ClusterState = {
    name: 'plant-a',
    title: 'Plant A',
    nodes: async () => [
      node('cp-1', true),
      node('cp-2', true),
      node('cp-3', true),
      node('worker-1'),
    ],
    maintenances: async () => stored,
    powerProvider: async () => undefined,
    serverBmcNodes: async () => [],
    podsOnNode: async () => [],
    podDisruptionBudgets: async () => [],
    createMaintenance: async obj => {
      created.push(obj);
      const m = {
        ...obj,
        metadata: {
          ...obj.metadata,
          creationTimestamp: new Date().toISOString(),
        },
      } as MaintenanceObject;
      stored.push(m);
      return m;
    },
    setRequestFlag: async () => {
      throw new Error('not in this test');
    },
    onChange: () => () => {},
  };
  return { cluster, created };
}

interface Recorded {
  plugin?: string;
  options: any;
  outcome?: 'success' | 'fail';
  meta?: any;
}

async function start(pluginSources: string[]) {
  const plant = plantA();
  const events: Recorded[] = [];
  const auditor = mockServices.auditor.mock({
    createEvent: async options => {
      const entry: Recorded = { options };
      events.push(entry);
      return {
        success: async (o?: { meta?: object }) => {
          entry.outcome = 'success';
          entry.meta = { ...options.meta, ...o?.meta };
        },
        fail: async (o: { meta?: object }) => {
          entry.outcome = 'fail';
          entry.meta = { ...options.meta, ...o.meta };
        },
      };
    },
  });
  // The viewer may read; only the admin may act.
  const decide = (name: string, credentials: any): any =>
    name === 'servers:read' || credentials.principal.userEntityRef === ADMIN
      ? 'ALLOW'
      : 'DENY';
  const permissions = mockServices.permissions.mock({
    authorize: async (requests, { credentials }) =>
      requests.map(r => ({ result: decide(r.permission.name, credentials) })),
    authorizeConditional: async (requests, { credentials }) =>
      requests.map(r => ({
        result: decide(r.permission.name, credentials),
      })) as any,
  });
  const { server } = await startTestBackend({
    features: [
      mcpActionsPlugin,
      serversPlugin,
      auditor.factory,
      permissions.factory,
      staticClusterRegistryFactory([plant.cluster]),
      mockServices.rootConfig.factory({
        data: {
          backend: { actions: { pluginSources } },
          servers: { preflight: { secret: 'test' } },
        },
      }),
    ],
  });
  const port = (server.address() as AddressInfo).port;
  let id = 0;
  /** One JSON-RPC request to the MCP endpoint as `user`; answers its result. */
  const mcp = async (user: string, method: string, params: object) => {
    id += 1;
    const res = await fetch(`http://localhost:${port}/api/mcp-actions/v1`, {
      method: 'POST',
      headers: {
        Authorization: mockCredentials.user.header(user),
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    expect(res.status).toBe(200);
    // A server-sent event stream with the one answer.
    const answers = (await res.text())
      .split('\n')
      .filter(line => line.startsWith('data: '))
      .map(line => JSON.parse(line.slice('data: '.length)));
    const answer = answers.find(a => a.id === id);
    expect(answer?.error).toBeUndefined();
    return answer.result;
  };
  const tool = (user: string, name: string, args: object) =>
    mcp(user, 'tools/call', { name, arguments: args });
  return { ...plant, events, mcp, tool };
}

describe('the demo MCP endpoint over the servers actions', () => {
  it('lists the servers tools with their hints; the admin cordons, the viewer is denied; audited via actions', async () => {
    const { created, events, mcp, tool } = await start([
      'auth',
      'catalog',
      'servers',
    ]);
    const { tools } = await mcp(ADMIN, 'tools/list', {});
    const hints = Object.fromEntries(
      (tools as any[])
        .filter(t => t.name.startsWith('servers.'))
        .map(t => [
          t.name,
          [
            t.annotations?.readOnlyHint,
            t.annotations?.destructiveHint,
            t.annotations?.idempotentHint,
          ],
        ]),
    );
    expect(hints).toMatchObject({
      'servers.list-servers': [true, false, true],
      'servers.preflight-server-action': [true, false, true],
      'servers.cordon-server': [false, false, false],
      'servers.drain-server': [false, true, false],
      'servers.upgrade-server': [false, true, false],
      'servers.update-server-firmware': [false, true, false],
    });
    expect(Object.keys(hints)).toHaveLength(14);

    const listed = await tool(ADMIN, 'servers.list-servers', {
      cluster: 'plant-a',
    });
    expect(listed.isError).toBeFalsy();
    const worker = listed.structuredContent.servers.find(
      (s: any) => s.name === 'worker-1',
    );
    expect(worker.actions.cordon).toBe('reason');

    const pre = await tool(ADMIN, 'servers.preflight-server-action', {
      cluster: 'plant-a',
      node: 'worker-1',
      action: 'drain',
    });
    expect(pre.structuredContent.preflight.token).toEqual(expect.any(String));

    const cordoned = await tool(ADMIN, 'servers.cordon-server', {
      cluster: 'plant-a',
      node: 'worker-1',
      reason: REASON,
    });
    expect(cordoned.isError).toBeFalsy();
    expect(created).toEqual([
      expect.objectContaining({
        spec: expect.objectContaining({
          nodeName: 'worker-1',
          intent: 'cordon',
          requestedBy: ADMIN,
          reason: REASON,
        }),
      }),
    ]);

    const denied = await tool(VIEWER, 'servers.cordon-server', {
      cluster: 'plant-a',
      node: 'cp-1',
      reason: REASON,
    });
    expect(denied.isError).toBe(true);
    expect(denied.content[0].text).toMatch(
      /^NotAllowedError: .*servers:cordon/,
    );
    expect(created).toHaveLength(1);

    const actionsOf = events.filter(e => e.options.eventId === 'server-action');
    expect(
      actionsOf.map(e => [
        e.meta.actor,
        e.meta.node,
        e.meta.via,
        e.options.severityLevel,
        e.outcome,
        e.meta.outcome,
      ]),
    ).toEqual([
      [ADMIN, 'worker-1', 'actions', 'medium', 'success', 'created'],
      [VIEWER, 'cp-1', 'actions', 'medium', 'fail', 'denied'],
    ]);
    const reads = events.filter(e => e.options.eventId === 'server-read');
    expect(
      reads.map(e => [e.meta.read, e.meta.via, e.options.severityLevel]),
    ).toEqual([
      ['servers', 'actions', 'low'],
      ['preflight', 'actions', 'low'],
    ]);
    // The MCP plugin's own events of the same calls.
    expect(
      events
        .filter(e => e.options.eventId === 'tool-execution')
        .map(e => [e.options.meta.toolName, e.outcome]),
    ).toEqual([
      ['servers.list-servers', 'success'],
      ['servers.preflight-server-action', 'success'],
      ['servers.cordon-server', 'success'],
      ['servers.cordon-server', 'fail'],
    ]);
  });

  it('serves no servers tools when backend.actions.pluginSources leaves servers out', async () => {
    const { mcp } = await start(['catalog']);
    const { tools } = await mcp(ADMIN, 'tools/list', {});
    expect((tools as any[]).filter(t => t.name.startsWith('servers.'))).toEqual(
      [],
    );
  });
});
