/*
 * `POST /clusters/:cluster/servers/:node/health/refresh`: asks the operator for a health
 * reading of one server now (docs/hardware-health.md). Checks in order (the server as
 * the caller may see it, its ServerBMC, at most one request a minute), then merge-patches
 * `spec.healthRefresh` on the ServerBMC's resourceVersion: of two requests at once (two
 * clicks, two backends) the apiserver lets one through and the other is the 429. The
 * backend never reaches the BMC; the operator answers in `status.health`.
 */
import {
  ConflictError,
  CustomErrorBase,
  NotFoundError,
} from '@backstage/errors';
import type { HealthRefreshResponse } from '@rackside/plugin-servers-common';
import type { ClusterState, ServerBmcRecord } from '../../cluster/types';
import { AUDIT_OUTCOME } from '../../lib/audited';
import type { ClusterGrant } from '../../access/serverGrant';
import { clusterSnapshot } from '../../cluster/snapshot';
import { visibleNode } from '../../access/visibleNodes';

/** At most one refresh request a minute per server. */
export const HEALTH_REFRESH_INTERVAL_MS = 60_000;

/** 429: a refresh was asked for less than a minute ago. */
export class HealthRefreshTooSoonError extends CustomErrorBase {
  name = 'HealthRefreshTooSoonError' as const;
  readonly statusCode = 429;
  /** Audited as `too-soon`. */
  get [AUDIT_OUTCOME]() {
    return 'too-soon';
  }

  constructor(
    /** Whole seconds until a request is taken again (the Retry-After header). */
    readonly retryAfterSeconds: number,
    /** When the request that holds the minute was made. */
    readonly requestedAt: string,
    readonly nextAt: string,
  ) {
    super(
      `a health reading of this server was requested at ${requestedAt}; ask again after ${nextAt} (in ${retryAfterSeconds} s)`,
    );
  }
}

/** One refresh request, as the router hands it over. */
export interface HealthRefreshRequest {
  cluster: string;
  node: string;
}

/** The 429 for a request made within a minute of `requestedAt`, if it is. */
function tooSoon(
  bmc: ServerBmcRecord,
  now: Date,
): HealthRefreshTooSoonError | undefined {
  const previous = bmc.healthRefresh?.requestedAt;
  if (!previous) return undefined;
  const next = Date.parse(previous) + HEALTH_REFRESH_INTERVAL_MS;
  // An unreadable or future time (a clock ahead elsewhere) holds at most a minute.
  const wait = Math.min(next - now.getTime(), HEALTH_REFRESH_INTERVAL_MS);
  if (!(wait > 0)) return undefined;
  return new HealthRefreshTooSoonError(
    Math.ceil(wait / 1000),
    previous,
    new Date(now.getTime() + wait).toISOString(),
  );
}

async function serverBmcOr404(
  cluster: ClusterState,
  node: string,
  fresh: boolean,
): Promise<ServerBmcRecord> {
  const bmc = fresh
    ? await cluster.readServerBmc?.(node)
    : (await cluster.serverBmcs?.())?.find(b => b.name === node);
  if (!bmc || !cluster.requestHealthRefresh) {
    throw new NotFoundError(
      `server ${node} in cluster ${cluster.name} has no ServerBMC: there is no BMC to read`,
    );
  }
  return bmc;
}

export async function requestHealthRefresh(
  actor: string,
  request: HealthRefreshRequest,
  grant: ClusterGrant,
  now: () => Date = () => new Date(),
): Promise<HealthRefreshResponse> {
  const { cluster } = grant;
  const snap = await clusterSnapshot(cluster);
  // A server the caller may not read is absent to them.
  visibleNode(snap, cluster.name, request.node, grant.scope.filter);
  // The cache first; after a lost race the object as the apiserver has it now.
  for (let attempt = 0; ; attempt++) {
    const bmc = await serverBmcOr404(cluster, request.node, attempt > 0);
    const at = now();
    const refused = tooSoon(bmc, at);
    if (refused) throw refused;
    const requestedAt = at.toISOString();
    try {
      await cluster.requestHealthRefresh!(
        request.node,
        bmc.resourceVersion ?? '',
        { requestedAt, requestedBy: actor },
      );
      return { requestedAt };
    } catch (error) {
      // The object changed since it was read: read it again and decide again (another
      // request may now hold the minute; a status write of the operator does not).
      if (attempt >= 2 || !ConflictError.is(error)) throw error;
    }
  }
}
