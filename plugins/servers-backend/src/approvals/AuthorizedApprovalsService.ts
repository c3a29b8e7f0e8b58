/*
 * The permission checks of the approvals feature, around the service that does the rest
 * (as AuthorizedServersService and AuthorizedPlansService guard theirs): an unknown
 * cluster's 404 first, then `servers:read` (what the caller may see), then
 * `servers:approve` on the servers: on every node of a request a decision names (403
 * naming the nodes, only for a request the caller may see: a hidden one is the inner
 * layer's 404). What it decided goes to the inner service with the call, as one grant per
 * cluster; the inner service never asks back.
 */
import { NotAllowedError } from '@backstage/errors';
import {
  serversApprovePermission,
  type ApprovalDecidedResponse,
  type ApprovalListResponse,
  type ApprovalView,
} from '@rackside/plugin-servers-common';
import type { ServerPermissions } from '../access/serverPermissions';
import { clusterOr404 } from '../cluster/clusterRegistry';
import { clusterSnapshot } from '../cluster/snapshot';
import type { ClusterRegistry, ClusterState } from '../cluster/types';
import type { UserCredentials } from '../lib/credentials';
import type {
  ApprovalCallContext,
  ApprovalGrant,
  ApprovalListQuery,
  ApprovalRef,
  ApprovalsService,
  DecideApprovalCommand,
} from './ApprovalsService';
import { cachedRequest, visibleRequest } from './heldRequest';

export class AuthorizedApprovalsService implements ApprovalsService {
  constructor(
    private readonly inner: ApprovalsService,
    private readonly permissions: ServerPermissions,
    private readonly clusters: ClusterRegistry,
  ) {}

  /** `servers:read` (403 when denied outright) and `servers:approve` on one cluster. */
  private async grantOn(
    credentials: UserCredentials,
    cluster: ClusterState,
  ): Promise<ApprovalGrant> {
    const scope = await this.permissions.readScope(credentials);
    const allowed = await this.permissions.allowedOn(
      credentials,
      serversApprovePermission,
      cluster.name,
    );
    const snap = await clusterSnapshot(cluster);
    const byName = new Map(snap.nodes.map(n => [n.metadata?.name ?? '', n]));
    return {
      cluster,
      scope,
      // A node no longer there is one nobody may approve a request on.
      approveRefusedOn: names =>
        names.filter(name => {
          const node = byName.get(name);
          return !node || !allowed(node);
        }),
    };
  }

  async listForMe(
    credentials: UserCredentials,
    query: ApprovalListQuery,
    call?: ApprovalCallContext,
  ): Promise<ApprovalListResponse> {
    const scope = await this.permissions.readScope(credentials);
    const grants: ApprovalGrant[] = [];
    for (const cluster of this.clusters.list()) {
      // A cluster the read decision rules out by name has nothing to show.
      if (scope.clusterVerdict(cluster.name) === false) continue;
      try {
        grants.push(await this.grantOn(credentials, cluster));
      } catch (error) {
        // An unavailable cluster lists nothing; the others still do.
        if (error instanceof NotAllowedError) throw error;
      }
    }
    return this.inner.listForMe(credentials, query, { ...call, grants });
  }

  async getApproval(
    credentials: UserCredentials,
    ref: ApprovalRef,
    call?: ApprovalCallContext,
  ): Promise<ApprovalView> {
    const cluster = clusterOr404(this.clusters, ref.cluster);
    const grant = await this.grantOn(credentials, cluster);
    return this.inner.getApproval(credentials, ref, {
      ...call,
      grants: [grant],
    });
  }

  /** `servers:approve` on every node of the request, before anything else is told of it. */
  async decide(
    credentials: UserCredentials,
    command: DecideApprovalCommand,
    call?: ApprovalCallContext,
  ): Promise<ApprovalDecidedResponse> {
    const cluster = clusterOr404(this.clusters, command.cluster);
    const grant = await this.grantOn(credentials, cluster);
    const request = await cachedRequest(cluster, command);
    if (request) {
      const snap = await clusterSnapshot(cluster);
      if (visibleRequest(request, snap, grant.scope)) {
        const refused = grant.approveRefusedOn(request.nodes);
        if (refused.length > 0) {
          throw new NotAllowedError(
            `you are not allowed to approve requests on ${refused.join(
              ', ',
            )} (${serversApprovePermission.name})`,
          );
        }
      }
    }
    return this.inner.decide(credentials, command, {
      ...call,
      grants: [grant],
    });
  }
}
