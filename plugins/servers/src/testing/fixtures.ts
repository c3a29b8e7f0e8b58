import { ResponseError } from '@backstage/errors';
import {
  ceremonyFor,
  compareServers,
  matchesServerFilter,
  SERVER_ACTIONS,
  type ActionOffer,
  type ApprovalDecisionBody,
  type ApprovalItem,
  type ApprovalView,
  type PlanListResponse,
  type PreflightResponse,
  type QuorumSummaryResponse,
  type ServerAction,
  type ServerListItem,
  type ServerAlertsResponse,
  type ServerListResponse,
  type ServerListWindowQuery,
  type ServerListWindowResponse,
  type ServerResponse,
} from '@rackside/plugin-servers-common';
import type { ServersApi } from '../api';

export const DERIVED: QuorumSummaryResponse = {
  derived: true,
  members: 3,
  quorum: 2,
  ready: 3,
  margin: 1,
  goingDown: [],
};

/** A server; every action is absent unless `offers` says otherwise. */
export function server(
  name: string,
  overrides: Partial<ServerResponse> = {},
  offers: Partial<Record<ServerAction, Partial<ActionOffer>>> = {},
): ServerResponse {
  const actions = {} as Record<ServerAction, ActionOffer>;
  for (const action of SERVER_ACTIONS) {
    actions[action] = {
      offered: false,
      allowed: false,
      ceremony: ceremonyFor(action, 'allow'),
      ...offers[action],
    };
  }
  return {
    name,
    cluster: 'rack',
    roles: ['worker'],
    controlPlane: false,
    virtual: false,
    ready: true,
    unschedulable: false,
    labels: { 'node-role.kubernetes.io/worker': '' },
    powerVerbs: [],
    actions,
    ...overrides,
  };
}

/** Offered and allowed. */
export const OK: Partial<ActionOffer> = { offered: true, allowed: true };

/** A server as the list route answers it: only the actions offered and allowed. */
export function listItemOf(detail: ServerResponse): ServerListItem {
  const { systemUUID: _uuid, actions: all, ...fields } = detail;
  const actions: ServerListItem['actions'] = {};
  for (const action of SERVER_ACTIONS) {
    const offer = all[action];
    if (offer.offered && offer.allowed) actions[action] = offer.ceremony.level;
  }
  return { ...fields, actions };
}

/** The details behind each list the fake answers, for its getServer. */
const detailsOf = new WeakMap<ServerListResponse, ServerResponse[]>();

export function serverList(
  details: ServerResponse[],
  quorum: QuorumSummaryResponse = DERIVED,
): ServerListResponse {
  const list = { cluster: 'rack', quorum, items: details.map(listItemOf) };
  detailsOf.set(list, details);
  return list;
}

/**
 * One window of `list` as the backend cuts it: the shared filter and sort, then
 * `limit` rows from the offset its `continue` names (here, plainly, the offset).
 */
export function windowOf(
  list: ServerListResponse,
  query: ServerListWindowQuery,
): ServerListWindowResponse {
  const matching = list.items
    .filter(s => matchesServerFilter(s, query.filter ?? ''))
    .sort((a, b) =>
      compareServers(a, b, query.sort ?? 'name', query.direction ?? 'asc'),
    );
  const offset = query.continue ? Number(query.continue) : 0;
  const end = Math.min(matching.length, offset + (query.limit ?? Infinity));
  return {
    cluster: list.cluster,
    quorum: list.quorum,
    total: matching.length,
    offset,
    items: matching.slice(offset, end),
    ...(end < matching.length ? { continue: String(end) } : {}),
  };
}

/**
 * A fake ServersApi with one cluster `rack`: `listServers` answers the list,
 * `listServerWindow` a window of what `listServers` answers ({@link windowOf};
 * so `listServers.mockResolvedValue` changes both, and each window counts as a
 * `listServers` call too), `getServer` the detail of one of its servers (made
 * by {@link serverList}), or a 404.
 */
export function fakeServersApi(list: ServerListResponse) {
  const api = {
    listClusters: jest.fn(async () => [
      {
        name: 'rack',
        title: 'Rack',
        available: true as const,
        servers: list.items.length,
        quorum: list.quorum,
        power: {
          type: 'none' as const,
          attendedRack: false,
          confirmsPowerOff: false,
          verbs: [],
        },
      },
    ]),
    listServers: jest.fn(
      async (_cluster: string): Promise<ServerListResponse> => list,
    ),
    listServerWindow: jest.fn(
      async (
        cluster: string,
        query: ServerListWindowQuery,
      ): Promise<ServerListWindowResponse> =>
        windowOf(await api.listServers(cluster), query),
    ),
    getServer: jest.fn(async (_cluster: string, node: string) => {
      const found = detailsOf.get(list)?.find(s => s.name === node);
      if (!found) {
        throw await responseError(404, 'Not Found', {
          name: 'NotFoundError',
          message: `no server named ${node} in cluster rack`,
        });
      }
      return found;
    }),
    getServerAlerts: jest.fn(
      async (cluster: string, node: string): Promise<ServerAlertsResponse> => ({
        cluster,
        node,
        configured: false,
        items: [],
      }),
    ),
    listMaintenances: jest.fn(async () => []),
    getMaintenance: jest.fn(async () => {
      throw new Error('not in this fake');
    }),
    preflight: jest.fn(async (): Promise<PreflightResponse> => {
      throw new Error('no pre-flight in this fake');
    }),
    requestAction: jest.fn(async () => ({ name: 'worker-1-cordon-abc' })),
    getUpgradeSources: jest.fn(async () => ({
      talosImages: [] as string[],
      firmwareSources: [] as string[],
      firmwareChecksumRequired: [] as string[],
    })),
    requestHealthRefresh: jest.fn(async () => ({
      requestedAt: '2026-12-06T10:00:00Z',
    })),
    listPlans: jest.fn(async (): Promise<PlanListResponse> => ({ items: [] })),
    getPlan: jest.fn(async () => {
      throw new Error('no plan in this fake');
    }),
    planPreflight: jest.fn(async () => {
      throw new Error('no plan pre-flight in this fake');
    }),
    createPlan: jest.fn(async () => ({ name: 'reboot-plan-abc' })),
    controlPlan: jest.fn(async () => ({ name: 'reboot-plan-abc' })),
    renewPlan: jest.fn(async () => ({
      name: 'reboot-plan-abc',
      until: '2026-12-01T08:00:00Z',
    })),
    listApprovalsForMe: jest.fn(async (): Promise<ApprovalItem[]> => []),
    getApproval: jest.fn(async (): Promise<ApprovalView> => {
      throw new Error('no approval in this fake');
    }),
    decideApproval: jest.fn(async (_c, _k, _n, body: ApprovalDecisionBody) => ({
      state: body.decision === 'approve' ? 'approved' : 'rejected',
    })),
  };
  return api as unknown as jest.Mocked<ServersApi>;
}

/** A ResponseError as the client throws it for an error response. */
export async function responseError(
  status: number,
  statusText: string,
  error: Record<string, unknown>,
): Promise<ResponseError> {
  const body = JSON.stringify({
    error,
    request: { method: 'POST', url: '/x' },
    response: { statusCode: status },
  });
  return ResponseError.fromResponse({
    ok: false,
    status,
    statusText,
    url: '/x',
    headers: {
      get: (n: string) =>
        n.toLowerCase() === 'content-type' ? 'application/json' : null,
    },
    text: async () => body,
  } as any);
}
