/*
 * `GET /clusters/:cluster/servers`: the whole list (the contract since the first
 * release), or a window of it (`?limit=&continue=` with the page's filter and sort),
 * answered from rows kept per change of the cluster rather than per request.
 */
import { randomBytes } from 'node:crypto';
import { CustomErrorBase, InputError } from '@backstage/errors';
import {
  nodeRolesOf,
  compareServers,
  matchesServerFilter,
  isNodeReady,
  normalizeServerFilter,
  powerAdvertisementOf,
  SERVER_SORT_KEYS,
  type QuorumSummaryResponse,
  type ServerAction,
  type ServerListResponse,
  type ServerOrderFields,
  type ServerSortKey,
} from '@rackside/plugin-servers-common';
import type { NodeObject } from '@rackside/plugin-servers-node';
import {
  ServerListCache,
  type ListRow,
  type PreparedJson,
} from './ServerListCache';
import type { KeyedSnapshot } from '../cluster/types';
import { alertsKeyOf, healthRowKey } from '../cluster/rowKeys';
import { phaseOf, serverListItem } from './view';
import { type ClusterSnapshot } from '../cluster/types';

/** A windowed list request: `?limit=&continue=&filter=&sort=&direction=`. */
export interface ServerListQuery {
  /** Rows per page; all matching rows when absent. */
  limit?: number;
  /** The token of the previous page's answer. */
  continue?: string;
  /** The table's filter text: name, role or `label=value`, case-insensitive. */
  filter: string;
  sort: ServerSortKey;
  direction: 'asc' | 'desc';
}

/** The most rows a window answers. */
export const MAX_WINDOW = 1000;
/** How long a walk through the windows of one list may take. */
export const WINDOW_TTL_MS = 10 * 60_000;
const MAX_WINDOWS = 64;

function one(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new InputError(`${name} must be given once, as text`);
  }
  return value;
}

/**
 * The windowed-mode parameters of a list request; undefined when none is given (the
 * whole list is answered, as before). Bad values are a 400 naming the parameter.
 */
export function parseServerListQuery(
  query: Record<string, unknown>,
): ServerListQuery | undefined {
  const limit = one(query.limit, 'limit');
  const token = one(query.continue, 'continue');
  const filter = one(query.filter, 'filter');
  const sort = one(query.sort, 'sort');
  const direction = one(query.direction, 'direction');
  if ([limit, token, filter, sort, direction].every(v => v === undefined)) {
    return undefined;
  }
  let limitNumber: number | undefined;
  if (limit !== undefined) {
    limitNumber = /^[0-9]{1,5}$/.test(limit) ? Number(limit) : NaN;
    if (!(limitNumber >= 1 && limitNumber <= MAX_WINDOW)) {
      throw new InputError(
        `limit must be a whole number from 1 to ${MAX_WINDOW}, not ${JSON.stringify(
          limit.slice(0, 20),
        )}`,
      );
    }
  }
  if (
    sort !== undefined &&
    !(SERVER_SORT_KEYS as readonly string[]).includes(sort)
  ) {
    throw new InputError(`sort must be one of ${SERVER_SORT_KEYS.join(', ')}`);
  }
  if (direction !== undefined && direction !== 'asc' && direction !== 'desc') {
    throw new InputError('direction must be asc or desc');
  }
  if (filter !== undefined && filter.length > 256) {
    throw new InputError('filter must be at most 256 characters');
  }
  if (token !== undefined && (token.length === 0 || token.length > 256)) {
    throw new InputError('continue is not a token of this list');
  }
  return {
    limit: limitNumber,
    continue: token,
    filter: normalizeServerFilter(filter ?? ''),
    sort: (sort as ServerSortKey | undefined) ?? 'name',
    direction: direction ?? 'asc',
  };
}

/**
 * 410 Gone: a continue token whose list this backend no longer holds (older than
 * {@link WINDOW_TTL_MS}, pushed out by newer walks, or issued by another replica). The
 * client starts over from the first window, as with an expired Kubernetes list.
 */
export class ExpiredContinueError extends CustomErrorBase {
  name = 'ExpiredContinueError' as const;
  readonly statusCode = 410;
}

/** What the user may see and do, as {@link ServersService} decides it. */
export interface ListDecisions {
  /** Names the decisions (for caches). */
  key: string;
  readable(node: NodeObject): boolean;
  allowed(node: NodeObject, action: ServerAction): boolean;
  quorumOf(snap: ClusterSnapshot): QuorumSummaryResponse;
}

interface Row extends ListRow {
  node: NodeObject;
  /** What the table's filter and sort read (`matchesServerFilter`, `compareServers`). */
  fields: ServerOrderFields;
}

/** The readable rows of one cluster generation for one set of decisions. */
interface Listing {
  context: string;
  head: Omit<ServerListResponse, 'items'>;
  rows: Row[];
  full?: PreparedJson;
}

/** One walk through the windows of a list: the rows as the first window saw them. */
interface Walk {
  id: string;
  /** Cluster, decisions, filter and sort: a token is good only for the same again. */
  owner: string;
  generation: number | undefined;
  listing: Listing;
  rows: Row[];
  expires: number;
}

function encodeToken(walk: string, offset: number): string {
  return Buffer.from(JSON.stringify({ w: walk, o: offset })).toString(
    'base64url',
  );
}

function decodeToken(token: string): { w: string; o: number } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString());
    if (
      typeof parsed?.w === 'string' &&
      Number.isInteger(parsed?.o) &&
      parsed.o >= 0
    ) {
      return parsed;
    }
  } catch {
    // below
  }
  throw new InputError('continue is not a token of this list');
}

/**
 * The servers list of every cluster, kept between requests.
 *
 * - Rows are keyed by what they show (the snapshot's `rowKeys`: a Node's shown facts,
 *   its open maintenance, a BMC and its health reading), so a heartbeat keeps every
 *   row and the entity tag.
 * - Per cluster generation and set of decisions the readable, ordered rows are derived
 *   once, and the whole answer serialised once: a request while nothing changed costs
 *   the permission decisions and a lookup.
 * - A window (`limit`, `continue`) is cut from a walk: the rows in the order of the
 *   filter and sort as they were when the first window was asked for. Every later
 *   window of the same walk is cut from those same rows, so a walk is consistent: each
 *   server readable at the first window appears in exactly one window, once, with its
 *   row as it was then, whatever changes in between (the change signal tells the page
 *   to start a new walk). A token is refused for another cluster, user's decisions,
 *   filter or sort (400), and is gone (410) after {@link WINDOW_TTL_MS} or on another
 *   replica.
 */
export class ServerLists {
  private readonly rows = new ServerListCache();
  private readonly listings = new Map<string, Listing>();
  private readonly walks = new Map<string, Walk>();

  constructor(private readonly now: () => number = Date.now) {}

  private listing(
    cluster: string,
    snap: ClusterSnapshot | KeyedSnapshot,
    decisions: ListDecisions,
  ): Listing {
    const generation = (snap as KeyedSnapshot).generation;
    const memoKey =
      generation === undefined
        ? undefined
        : `${cluster}\n${generation}\n${decisions.key}`;
    const memo = memoKey === undefined ? undefined : this.listings.get(memoKey);
    if (memo) return memo;
    const rowKeys = (snap as KeyedSnapshot).rowKeys;
    const visible = snap.nodes.filter(node => decisions.readable(node));
    const rows = visible.map((node): Row => {
      const name = node.metadata?.name ?? '';
      const active = snap.activeByNode.get(name);
      const labels = node.metadata?.labels ?? {};
      const roles = nodeRolesOf(labels);
      let key = rowKeys?.get(name);
      if (key === undefined && !rowKeys) {
        // Without shown-fact keys: the resourceVersions (an object without one cannot
        // be told apart from its next version, so its row is built every time).
        const versions = [
          node.metadata?.resourceVersion,
          ...(active ? [active.metadata.resourceVersion] : []),
        ];
        key = versions.every(v => v !== undefined)
          ? `${versions.join('|')}|${active?.metadata.name ?? ''}|${
              snap.bmcNodes.has(name) ? 'bmc' : ''
            }|${alertsKeyOf(snap, name)}|${healthRowKey(
              snap.bmcHealth.get(name),
            )}`
          : undefined;
      }
      const health = snap.bmcHealth.get(name);
      return {
        name,
        key,
        node,
        build: () =>
          serverListItem(cluster, node, snap, action =>
            decisions.allowed(node, action),
          ),
        fields: {
          name,
          roles,
          labels,
          ready: isNodeReady(node),
          maintenance: active ? { phase: phaseOf(active) } : undefined,
          health: health ? { rollup: health.rollup } : undefined,
        },
      };
    });
    if (!rowKeys) {
      // A state that keeps no ordered, keyed snapshot (tests' fakes). A keyed one lists
      // its Nodes by name in the same collation (ClusterNodes.entries).
      rows.sort((a, b) => compareServers(a.fields, b.fields, 'name', 'asc'));
    }
    const listing: Listing = {
      context: JSON.stringify([
        cluster,
        snap.derivation,
        powerAdvertisementOf(snap.powerProvider),
        decisions.key,
      ]),
      head: { cluster, quorum: decisions.quorumOf(snap) },
      rows,
    };
    if (memoKey !== undefined) {
      // Only the latest generation of each cluster and decisions is worth keeping.
      for (const key of this.listings.keys()) {
        if (
          key.startsWith(`${cluster}\n`) &&
          key.endsWith(`\n${decisions.key}`)
        ) {
          this.listings.delete(key);
        }
      }
      this.listings.set(memoKey, listing);
      while (this.listings.size > 16) {
        this.listings.delete(this.listings.keys().next().value!);
      }
    }
    return listing;
  }

  /** The whole list, as `GET /clusters/:cluster/servers` answered it always. */
  full(
    cluster: string,
    snap: ClusterSnapshot | KeyedSnapshot,
    decisions: ListDecisions,
  ): PreparedJson {
    const listing = this.listing(cluster, snap, decisions);
    if (!listing.full) {
      listing.full = this.rows.render(
        listing.context,
        listing.head,
        listing.rows,
      );
    }
    return listing.full;
  }

  /** One window of the list (see the class comment for what a walk guarantees). */
  window(
    cluster: string,
    snap: ClusterSnapshot | KeyedSnapshot,
    decisions: ListDecisions,
    query: ServerListQuery,
  ): PreparedJson {
    const now = this.now();
    for (const [id, walk] of this.walks) {
      if (walk.expires <= now) this.walks.delete(id);
    }
    const owner = JSON.stringify([
      cluster,
      decisions.key,
      query.filter,
      query.sort,
      query.direction,
    ]);
    let walk: Walk | undefined;
    let offset = 0;
    if (query.continue !== undefined) {
      const token = decodeToken(query.continue);
      walk = this.walks.get(token.w);
      if (!walk) {
        throw new ExpiredContinueError(
          'continue token expired: this list is no longer held (older than ' +
            `${
              WINDOW_TTL_MS / 60_000
            } minutes, or from another backend replica); ask again without continue`,
        );
      }
      if (walk.owner !== owner) {
        throw new InputError(
          'continue token was issued for another cluster, user, filter or sort',
        );
      }
      offset = token.o;
    } else {
      const generation = (snap as KeyedSnapshot).generation;
      // A page asking again while nothing changed gets the same walk (and entity tag).
      walk = [...this.walks.values()].find(
        w =>
          w.owner === owner &&
          generation !== undefined &&
          w.generation === generation,
      );
      if (!walk) walk = this.startWalk(cluster, snap, decisions, query, owner);
      walk.expires = now + WINDOW_TTL_MS;
    }
    const end = Math.min(
      walk.rows.length,
      offset + (query.limit ?? walk.rows.length),
    );
    const head: Record<string, unknown> = {
      ...walk.listing.head,
      total: walk.rows.length,
      offset,
      ...(end < walk.rows.length
        ? { continue: encodeToken(walk.id, end) }
        : {}),
    };
    return this.rows.renderPart(
      walk.listing.context,
      head,
      walk.rows.slice(offset, end),
    );
  }

  private startWalk(
    cluster: string,
    snap: ClusterSnapshot | KeyedSnapshot,
    decisions: ListDecisions,
    query: ServerListQuery,
    owner: string,
  ): Walk {
    const listing = this.listing(cluster, snap, decisions);
    const filter = query.filter;
    let rows = filter
      ? listing.rows.filter(r => matchesServerFilter(r.fields, filter))
      : listing.rows.slice();
    // The listing's rows are in name order already.
    if (query.sort !== 'name' || query.direction !== 'asc') {
      const { sort, direction } = query;
      rows = rows.sort((a, b) =>
        compareServers(a.fields, b.fields, sort, direction),
      );
    }
    const walk: Walk = {
      id: randomBytes(12).toString('base64url'),
      owner,
      generation: (snap as KeyedSnapshot).generation,
      listing,
      rows,
      expires: this.now() + WINDOW_TTL_MS,
    };
    this.walks.set(walk.id, walk);
    while (this.walks.size > MAX_WINDOWS) {
      this.walks.delete(this.walks.keys().next().value!);
    }
    return walk;
  }
}
