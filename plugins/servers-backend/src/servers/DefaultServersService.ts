/*
 * The servers feature within what each call was granted (ServersService.ts): reads from
 * the watch caches through the caller's read scope and per-server decisions, the
 * pre-flight, and action requests (commands/requestAction.ts). It asks no permission:
 * a call without a grant is refused, so this service is never reachable around
 * AuthorizedServersService. A call on one cluster acts on the grant's cluster (the
 * decorator found it by the name the call also carries), never looks it up again.
 */
import type {
  BackstageCredentials,
  LoggerService,
} from '@backstage/backend-plugin-api';
import { NotAllowedError, NotFoundError } from '@backstage/errors';
import {
  offerFor,
  powerAdvertisementOf,
  type ClusterListResponse,
  type UpgradeSourcesResponse,
  type ClusterSummaryResponse,
  type HealthRefreshResponse,
  type MaintenanceListResponse,
  type MaintenanceResponse,
  type PreflightResponse,
  type ServerListResponse,
  type ServerAlertsResponse,
  type ServerResponse,
} from '@rackside/plugin-servers-common';
import type {
  ClusterRegistry,
  ClusterSnapshot,
  ClusterState,
} from '../cluster/types';
import type { ReasonPolicy } from '../lib/reasonPolicy';
import { NO_UPGRADE_SOURCES, type UpgradeSources } from '../lib/upgradeSources';
import type { ApprovalPolicy } from '../approval/heldApproval';
import type { WorkloadCatalog } from '../lib/workloadCatalog';
import type { ServerDecisions, ServerGrant } from '../access/serverGrant';
import { requestAction } from './commands/requestAction';
import { requestHealthRefresh } from './commands/requestHealthRefresh';
import { currentImpact } from '../preflight/impact';
import type { PreflightTokens } from '../preflight/tokens';
import { ServerLists, type ServerListQuery } from './serverList';
import type { PreparedJson } from './ServerListCache';
import type {
  ActionResult,
  CallContext,
  ServerActionCommand,
  ServerPreflightQuery,
  ServersService,
} from './ServersService';
import type { UserCredentials } from '../lib/credentials';
import {
  findNode,
  visibleNode,
  visibleNodeNames,
} from '../access/visibleNodes';
import { maintenanceView, serverView } from './view';
import { newestFirst, clusterSnapshot } from '../cluster/snapshot';
import { visibleNames } from '../access/visibleNames';

/** What the service needs. No permission service: the decorator decides. */
export interface DefaultServersServiceOptions {
  clusters: ClusterRegistry;
  logger: LoggerService;
  reasonPolicy: ReasonPolicy;
  preflightTokens: PreflightTokens;
  /** `servers.approvals`: which new maintenances are created held (NO_APPROVALS if unset). */
  approvals?: ApprovalPolicy;
  /** `servers.upgrades`: what an upgrade or a firmware update may install (nothing if unset). */
  upgradeSources?: UpgradeSources;
  /**
   * The catalog's workloads: a pre-flight also names the catalog entities a drain
   * disrupts and their owners (`affectedEntities`), the people told when it starts.
   * Who owns a workload is not part of the signed impact.
   */
  workloads?: WorkloadCatalog;
}

/** How many read decisions' summaries one snapshot keeps (see ClusterSummaries). */
const MAX_SUMMARIES_PER_SNAPSHOT = 256;

/**
 * A cluster's summary (readable servers, quorum, power) per snapshot and read decision:
 * counting the readable servers filters every server through a conditional decision, so
 * it is done once per change of the cluster and decision, not once per `/clusters`.
 * Kept with the snapshot (a new generation, a new snapshot: the old answers go with it).
 */
class ClusterSummaries {
  private readonly bySnapshot = new WeakMap<
    ClusterSnapshot,
    Map<string, ClusterSummaryResponse | undefined>
  >();

  of(
    snap: ClusterSnapshot,
    decisionKey: string,
    summarise: () => ClusterSummaryResponse | undefined,
  ): ClusterSummaryResponse | undefined {
    let byDecision = this.bySnapshot.get(snap);
    if (!byDecision) {
      byDecision = new Map();
      this.bySnapshot.set(snap, byDecision);
    }
    if (byDecision.has(decisionKey)) return byDecision.get(decisionKey);
    // Many distinct decisions on one snapshot (users with their own conditions): start
    // over rather than grow without bound.
    if (byDecision.size >= MAX_SUMMARIES_PER_SNAPSHOT) byDecision.clear();
    const summary = summarise();
    byDecision.set(decisionKey, summary);
    return summary;
  }
}

/** What the call was granted; none is a refusal (fail closed). */
function grantOf(call: CallContext | undefined): ServerGrant {
  if (!call?.grant) {
    throw new NotAllowedError('no permission decision was made for this call');
  }
  return call.grant;
}

/** The cluster the call was granted on (the decorator found it); none is a refusal. */
function clusterOf(grant: ServerGrant): ClusterState {
  if (!grant.cluster) {
    throw new NotAllowedError('no cluster was granted for this call');
  }
  return grant.cluster;
}

/** The per-server decisions the call was granted. */
function decisionsOf(call: CallContext | undefined): ServerDecisions {
  const { decisions } = grantOf(call);
  if (!decisions) {
    throw new NotAllowedError('no per-server decision was made for this call');
  }
  return decisions;
}

export class DefaultServersService implements ServersService {
  private readonly lists = new ServerLists();
  private readonly summaries = new ClusterSummaries();

  constructor(private readonly options: DefaultServersServiceOptions) {}

  async getUpgradeSources(
    _credentials: BackstageCredentials,
    call?: CallContext,
  ): Promise<UpgradeSourcesResponse> {
    grantOf(call);
    const sources = this.options.upgradeSources ?? NO_UPGRADE_SOURCES;
    return {
      talosImages: [...sources.talosImages],
      firmwareSources: [...sources.firmwareSources],
      firmwareChecksumRequired: [...(sources.firmwareChecksumRequired ?? [])],
    };
  }

  async listClusters(
    _credentials: BackstageCredentials,
    call?: CallContext,
  ): Promise<ClusterListResponse> {
    const { scope } = grantOf(call);
    const items = await Promise.all(
      this.options.clusters
        .list()
        .map(async (cluster): Promise<ClusterSummaryResponse | undefined> => {
          const admitted = scope.clusterVerdict(cluster.name);
          if (admitted === false) return undefined;
          let snap: ClusterSnapshot;
          try {
            snap = await clusterSnapshot(cluster);
          } catch (error) {
            this.options.logger.warn(
              `cluster ${cluster.name} unavailable: ${error}`,
            );
            return {
              name: cluster.name,
              title: cluster.title,
              available: false,
              error: String((error as Error)?.message ?? error),
            };
          }
          return this.summaries.of(snap, scope.key, () => {
            const readable = snap.nodes.filter(node =>
              scope.readable(cluster.name, node),
            ).length;
            if (readable === 0 && admitted !== true) return undefined;
            const advertisement = powerAdvertisementOf(snap.powerProvider);
            return {
              name: cluster.name,
              title: cluster.title,
              available: true,
              servers: readable,
              quorum: scope.quorumOf(cluster.name, snap),
              power: {
                type: advertisement.type,
                attendedRack: advertisement.attendedRack,
                confirmsPowerOff: advertisement.confirmsPowerOff,
                verbs: offerFor(advertisement),
              },
            };
          });
        }),
    );
    return {
      items: items.filter(
        (item): item is ClusterSummaryResponse => item !== undefined,
      ),
    };
  }

  async listServersJson(
    _credentials: BackstageCredentials,
    _cluster: string,
    query?: ServerListQuery,
    call?: CallContext,
  ): Promise<PreparedJson> {
    const decisions = decisionsOf(call);
    const cluster = clusterOf(grantOf(call));
    const snap = await clusterSnapshot(cluster);
    const list = {
      key: decisions.key,
      readable: decisions.readable,
      allowed: decisions.allowed,
      quorumOf: (s: ClusterSnapshot) =>
        decisions.scope.quorumOf(cluster.name, s),
    };
    return query
      ? this.lists.window(cluster.name, snap, list, query)
      : this.lists.full(cluster.name, snap, list);
  }

  async listServers(
    credentials: BackstageCredentials,
    clusterName: string,
    call?: CallContext,
  ): Promise<ServerListResponse> {
    return JSON.parse(
      (await this.listServersJson(credentials, clusterName, undefined, call))
        .body,
    );
  }

  async getServer(
    _credentials: BackstageCredentials,
    _cluster: string,
    nodeName: string,
    call?: CallContext,
  ): Promise<ServerResponse> {
    const decisions = decisionsOf(call);
    const cluster = clusterOf(grantOf(call));
    const snap = await clusterSnapshot(cluster);
    const node = findNode(snap, cluster.name, nodeName);
    if (!decisions.readable(node)) {
      // Hidden and absent are the same 404.
      throw new NotFoundError(
        `no server named ${nodeName} in cluster ${cluster.name}`,
      );
    }
    // The reading as the cache has it now (the snapshot's may be older by a readAt).
    const bmc = (await cluster.serverBmcs?.())?.find(b => b.name === nodeName);
    return serverView(
      cluster.name,
      node,
      snap,
      action => decisions.allowed(node, action),
      bmc,
    );
  }

  async getServerAlerts(
    _credentials: BackstageCredentials,
    _cluster: string,
    nodeName: string,
    call?: CallContext,
  ): Promise<ServerAlertsResponse> {
    const grant = grantOf(call);
    const { scope } = grant;
    const cluster = clusterOf(grant);
    const snap = await clusterSnapshot(cluster);
    // Hidden and absent are the same 404.
    visibleNode(snap, cluster.name, nodeName, scope.filter);
    const alerts = snap.alerts;
    const names = visibleNames(scope, cluster.name, snap);
    return {
      cluster: cluster.name,
      node: nodeName,
      configured: alerts !== undefined,
      // An alert's labels and summary may name other servers: only readable ones.
      items: (alerts?.byNode.get(nodeName) ?? []).map(names.alert),
      ...(alerts?.readAt ? { readAt: alerts.readAt } : {}),
      ...(alerts?.stale ? { stale: alerts.stale } : {}),
    };
  }

  async listMaintenances(
    _credentials: BackstageCredentials,
    _cluster: string,
    nodeFilter?: string,
    call?: CallContext,
  ): Promise<MaintenanceListResponse> {
    const grant = grantOf(call);
    const { scope } = grant;
    const cluster = clusterOf(grant);
    const snap = await clusterSnapshot(cluster);
    const visible = visibleNodeNames(snap, cluster.name, scope.filter);
    const items = snap.maintenances
      .filter(m => visible.has(m.spec.nodeName))
      .filter(m => !nodeFilter || m.spec.nodeName === nodeFilter)
      .sort(newestFirst)
      .map(m => scope.maintenanceOf(cluster.name, snap, maintenanceView(m)));
    return { items };
  }

  async getMaintenance(
    _credentials: BackstageCredentials,
    _cluster: string,
    name: string,
    call?: CallContext,
  ): Promise<MaintenanceResponse> {
    const grant = grantOf(call);
    const { scope } = grant;
    const cluster = clusterOf(grant);
    const snap = await clusterSnapshot(cluster);
    const visible = visibleNodeNames(snap, cluster.name, scope.filter);
    const m = snap.maintenances.find(x => x.metadata.name === name);
    if (!m || !visible.has(m.spec.nodeName)) {
      throw new NotFoundError(
        `no maintenance named ${name} in cluster ${cluster.name}`,
      );
    }
    return scope.maintenanceOf(cluster.name, snap, maintenanceView(m));
  }

  async preflight(
    credentials: UserCredentials,
    query: ServerPreflightQuery,
    call?: CallContext,
  ): Promise<PreflightResponse> {
    const grant = grantOf(call);
    const cluster = clusterOf(grant);
    const snap = await clusterSnapshot(cluster);
    visibleNode(snap, cluster.name, query.node, grant.scope.filter);
    const impact = await currentImpact(
      cluster,
      snap,
      query.node,
      query.action,
      query.options,
    );
    const answer = grant.scope.preflightOf(
      snap,
      this.options.preflightTokens.sign(
        impact,
        credentials.principal.userEntityRef,
      ),
    );
    return this.withOwners(answer, query.node);
  }

  /** The pre-flight with the catalog entities its workloads belong to, where known. */
  private async withOwners(
    answer: PreflightResponse,
    nodeName: string,
  ): Promise<PreflightResponse> {
    const { workloads, logger } = this.options;
    if (!workloads) return answer;
    try {
      const affectedEntities = await workloads.entitiesOf(
        answer.workloads ?? [],
      );
      return { ...answer, affectedEntities };
    } catch (error) {
      logger.warn(
        `pre-flight of ${nodeName}: could not find the owners of its workloads in the catalog: ${error}`,
      );
      return answer;
    }
  }

  async requestAction(
    credentials: UserCredentials,
    command: ServerActionCommand,
    call?: CallContext,
  ): Promise<ActionResult> {
    const grant = grantOf(call);
    return requestAction(
      this.options,
      credentials.principal.userEntityRef,
      command,
      { ...grant, cluster: clusterOf(grant) },
    );
  }

  async requestHealthRefresh(
    credentials: UserCredentials,
    clusterName: string,
    node: string,
    call?: CallContext,
  ): Promise<HealthRefreshResponse> {
    const grant = grantOf(call);
    return requestHealthRefresh(
      credentials.principal.userEntityRef,
      { cluster: clusterName, node },
      { ...grant, cluster: clusterOf(grant) },
    );
  }
}
