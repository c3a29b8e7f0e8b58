/*
 * What the `/api/servers` routes and the registered actions do, once: reads from the watch
 * caches filtered by `servers:read`, the pre-flight, and every action request with its
 * checks in order (permission, body, reason policy, node, guard, capability, ceremony,
 * pre-flight token) and its auditor event. The HTTP router and the actions registry are
 * thin callers of this service, so both apply the same permission and guard checks.
 */
import type {
  AuditorService,
  BackstageCredentials,
  LoggerService,
} from '@backstage/backend-plugin-api';
import {
  ConflictError,
  InputError,
  NotAllowedError,
  NotFoundError,
} from '@backstage/errors';
import {
  actionRequestBodySchema,
  ceremonyFor,
  dataLossOptionsOf,
  checkCeremony,
  guard,
  isServerAction,
  nodeFactsFromNode,
  offerFor,
  isPowerVerb,
  PREFLIGHT_ACTIONS,
  powerAdvertisementOf,
  SERVER_ACTIONS,
  type CeremonyLevel,
  type ClusterListResponse,
  type ClusterSummaryResponse,
  type GuardResult,
  type MaintenanceListResponse,
  type MaintenanceResponse,
  type PreflightAction,
  type PreflightResponse,
  type ServerAction,
  type ServerListResponse,
  type ServerResponse,
} from '@rackside/plugin-servers-common';
import type { ServerResource } from '@rackside/plugin-servers-node';
import type { Request } from 'express';
import type { ServerAccess, UserAccess } from './access';
import { audited, AUDIT_OUTCOME, auditUnauthenticated } from '../lib/audited';
import { parseRequestBody } from '../lib/requestBody';
import {
  READ_SEVERITY,
  serverActionSeverity,
  type CallVia,
} from '../lib/auditSeverity';
import { performAction } from './commands/performAction';
import {
  computePreflight,
  PreflightConflictError,
  preflightMaintenanceName,
  usedTokenMessage,
  type PreflightImpact,
  type PreflightOptions,
  type PreflightTokens,
} from './preflight';
import { checkReason, type ReasonPolicy } from '../lib/reasonPolicy';
import type {
  ClusterRegistry,
  ClusterState,
  NewMaintenance,
} from '../cluster/types';
import {
  maintenanceView,
  newestFirst,
  powerCheck,
  serverResourceOf,
  serverView,
  snapshotOf,
  type ClusterSnapshot,
} from './view';
import type { PreparedJson } from './ServerListCache';
import {
  ServerLists,
  type ListDecisions,
  type ServerListQuery,
} from './serverList';

/** A guard refusal: 409 with the quorum numbers in the error body. */
export class QuorumRefusedError extends ConflictError {
  /** Audited as `refused`, not `conflict`. */
  get [AUDIT_OUTCOME]() {
    return 'refused';
  }

  readonly members: number | null;
  readonly quorum: number | null;
  readonly margin: number | null;
  readonly marginAfter: number | null;
  readonly reason: string;

  constructor(result: GuardResult) {
    super(result.reason);
    this.members = result.members;
    this.quorum = result.quorum;
    this.margin = result.margin;
    this.marginAfter = result.marginAfter;
    this.reason = result.reason;
  }
}

/** Whether an action carries a pre-flight. */
export function isPreflightAction(action: string): action is PreflightAction {
  return (PREFLIGHT_ACTIONS as readonly string[]).includes(action);
}

/** The cluster's snapshot (shared with PlansService). */
export async function snapshot(
  cluster: ClusterState,
): Promise<ClusterSnapshot> {
  // Derived once per change where the state keeps it (the watch-backed one does).
  if (cluster.snapshot) return cluster.snapshot();
  const [nodes, maintenances, powerProvider, bmcNodes] = await Promise.all([
    cluster.nodes(),
    cluster.maintenances(),
    cluster.powerProvider(),
    cluster.serverBmcNodes(),
  ]);
  return snapshotOf(nodes, maintenances, powerProvider, bmcNodes);
}

/**
 * What the service needs. No permission service: the permission checks come with each
 * call's access (see AuthorizedServersService).
 */
export interface ServersServiceOptions {
  clusters: ClusterRegistry;
  auditor: AuditorService;
  logger: LoggerService;
  reasonPolicy: ReasonPolicy;
  preflightTokens: PreflightTokens;
}

/** How a read came in: the actions registry or a route (with its request, for the audit). */
export interface CallContext {
  via?: CallVia;
  request?: Request;
}

/** Who a read is audited as: the user, or the service's subject. */
export function actorOf(credentials: BackstageCredentials): string {
  const principal = credentials.principal as {
    type?: string;
    userEntityRef?: string;
    subject?: string;
  };
  return principal.userEntityRef ?? principal.subject ?? principal.type ?? '';
}

/** An action request as the router and the actions registry hand it over. */
export interface ActionRequest {
  cluster: string;
  node: string;
  /** Unchecked: an unknown action is a 404. */
  action: string;
  /** Unchecked: validated here (400 naming the field). */
  body: unknown;
  /** How the request came in (the audit event's `via`); `http` if unset. */
  via?: CallVia;
  /**
   * Through the actions registry: who called (audited as `principal`), and why a
   * request at this ceremony rung is not the caller's to make (a 403), if it is not.
   */
  agent?: {
    principal: string;
    refusal(level: CeremonyLevel, action: ServerAction): string | undefined;
  };
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

export class ServersService {
  private readonly lists = new ServerLists();
  private readonly summaries = new ClusterSummaries();

  constructor(private readonly options: ServersServiceOptions) {}

  /** The cluster, or 404 (also used by PlansService). */
  clusterOr404(name: string): ClusterState {
    const cluster = this.options.clusters.get(name);
    if (!cluster) throw new NotFoundError(`no cluster named ${name}`);
    return cluster;
  }

  private findNode(snap: ClusterSnapshot, cluster: string, name: string) {
    const node = snap.nodes.find(n => n.metadata?.name === name);
    if (!node) {
      throw new NotFoundError(`no server named ${name} in cluster ${cluster}`);
    }
    return node;
  }

  /** A node the user may read; hidden and absent are the same 404. */
  private visibleNode(
    snap: ClusterSnapshot,
    cluster: string,
    name: string,
    filter: (s: ServerResource) => boolean,
  ) {
    const node = this.findNode(snap, cluster, name);
    if (!filter(serverResourceOf(cluster, node))) {
      throw new NotFoundError(`no server named ${name} in cluster ${cluster}`);
    }
    return node;
  }

  private visibleNodeNames(
    snap: ClusterSnapshot,
    cluster: string,
    filter: (s: ServerResource) => boolean,
  ): Set<string> {
    return new Set(
      snap.nodes
        .filter(n => filter(serverResourceOf(cluster, n)))
        .map(n => n.metadata?.name ?? ''),
    );
  }

  /**
   * The impact of an action on a node now, read from the apiserver (the plan pre-flight
   * asks it of every node of a plan).
   */
  async currentImpact(
    cluster: ClusterState,
    snap: ClusterSnapshot,
    nodeName: string,
    action: PreflightAction,
    drainOptions: PreflightOptions,
  ): Promise<PreflightImpact> {
    const [pods, budgets] = await Promise.all([
      cluster.podsOnNode(nodeName),
      cluster.podDisruptionBudgets(),
    ]);
    // Claims and volumes tell node-local data apart (docs/drain.md).
    const storage = await cluster.drainStorage?.(nodeName, [
      ...new Set(pods.map(p => p.metadata?.namespace ?? '')),
    ]);
    return computePreflight({
      cluster: cluster.name,
      node: nodeName,
      action,
      options: drainOptions,
      snapshot: snap,
      pods,
      budgets,
      storage,
      now: new Date(),
    });
  }

  /**
   * {@link currentImpact} of many nodes (a plan pre-flight): the budgets once, and the
   * pods and storage of every node in one batched read where the cluster offers it, so
   * the apiserver requests do not grow with the nodes.
   */
  async currentImpacts(
    cluster: ClusterState,
    snap: ClusterSnapshot,
    nodeNames: string[],
    action: PreflightAction,
    drainOptions: PreflightOptions,
  ): Promise<PreflightImpact[]> {
    if (!cluster.drainInputsOf) {
      return Promise.all(
        nodeNames.map(n =>
          this.currentImpact(cluster, snap, n, action, drainOptions),
        ),
      );
    }
    const [inputs, budgets] = await Promise.all([
      cluster.drainInputsOf(nodeNames),
      cluster.podDisruptionBudgets(),
    ]);
    const now = new Date();
    return nodeNames.map(node => {
      const { pods, storage } = inputs.get(node) ?? {
        pods: [],
        storage: {},
      };
      return computePreflight({
        cluster: cluster.name,
        node,
        action,
        options: drainOptions,
        snapshot: snap,
        pods,
        budgets,
        storage,
        now,
      });
    });
  }

  /**
   * Runs a read with its auditor event (`server-read`, severity low): who, what, via
   * which door, and how it ended (a denied or unknown target fails the event).
   */
  async auditedRead<T>(
    actor: string,
    call: CallContext | undefined,
    target: Record<string, string | undefined>,
    read: () => Promise<T>,
  ): Promise<T> {
    return audited(
      {
        auditor: this.options.auditor,
        eventId: 'server-read',
        severityLevel: READ_SEVERITY,
        request: call?.request,
        meta: {
          actor,
          ...target,
          via: call?.via ?? 'http',
        },
      },
      read,
    );
  }

  /**
   * `GET /clusters`: the clusters this user may read (see {@link ReadScope}), each with
   * the readable servers counted and the quorum only if every member is readable.
   */
  async listClusters(
    access: ServerAccess,
    call?: CallContext,
  ): Promise<ClusterListResponse> {
    return this.auditedRead(
      access.actor,
      call,
      { read: 'clusters' },
      async () => {
        const scope = await access.readScope();
        const items = await Promise.all(
          this.options.clusters
            .list()
            .map(
              async (cluster): Promise<ClusterSummaryResponse | undefined> => {
                const admitted = scope.clusterVerdict(cluster.name);
                if (admitted === false) return undefined;
                let snap: ClusterSnapshot;
                try {
                  snap = await snapshot(cluster);
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
                  const advertisement = powerAdvertisementOf(
                    snap.powerProvider,
                  );
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
              },
            ),
        );
        return {
          items: items.filter(
            (item): item is ClusterSummaryResponse => item !== undefined,
          ),
        };
      },
    );
  }

  /**
   * `GET /clusters/:cluster/servers`, serialised: the whole list, or with `query` one
   * window of it (see {@link ServerLists}: rows kept per change of the cluster, keyed by
   * what they show, so a heartbeat changes neither a row nor the entity tag).
   */
  async listServersJson(
    access: ServerAccess,
    clusterName: string,
    query?: ServerListQuery,
    call?: CallContext,
  ): Promise<PreparedJson> {
    return this.auditedRead(
      access.actor,
      call,
      { read: 'servers', cluster: clusterName },
      async () => {
        const cluster = this.clusterOr404(clusterName);
        const decisions = await access.decisions(cluster.name);
        const snap = await snapshot(cluster);
        const list: ListDecisions = {
          key: decisions.key,
          readable: decisions.readable,
          allowed: decisions.allowed,
          quorumOf: s => decisions.scope.quorumOf(cluster.name, s),
        };
        return query
          ? this.lists.window(cluster.name, snap, list, query)
          : this.lists.full(cluster.name, snap, list);
      },
    );
  }

  async listServers(
    access: ServerAccess,
    clusterName: string,
    call?: CallContext,
  ): Promise<ServerListResponse> {
    return JSON.parse(
      (await this.listServersJson(access, clusterName, undefined, call)).body,
    );
  }

  async getServer(
    access: ServerAccess,
    clusterName: string,
    nodeName: string,
    call?: CallContext,
  ): Promise<ServerResponse> {
    return this.auditedRead(
      access.actor,
      call,
      { read: 'server', cluster: clusterName, node: nodeName },
      async () => {
        const cluster = this.clusterOr404(clusterName);
        const decisions = await access.decisions(cluster.name);
        const snap = await snapshot(cluster);
        const node = this.findNode(snap, cluster.name, nodeName);
        if (!decisions.readable(node)) {
          // Hidden and absent are the same 404.
          throw new NotFoundError(
            `no server named ${nodeName} in cluster ${cluster.name}`,
          );
        }
        return serverView(cluster.name, node, snap, action =>
          decisions.allowed(node, action),
        );
      },
    );
  }

  async listMaintenances(
    access: ServerAccess,
    clusterName: string,
    nodeFilter?: string,
    call?: CallContext,
  ): Promise<MaintenanceListResponse> {
    return this.auditedRead(
      access.actor,
      call,
      { read: 'maintenances', cluster: clusterName, node: nodeFilter },
      async () => {
        const cluster = this.clusterOr404(clusterName);
        const scope = await access.readScope();
        const snap = await snapshot(cluster);
        const visible = this.visibleNodeNames(snap, cluster.name, scope.filter);
        const items = snap.maintenances
          .filter(m => visible.has(m.spec.nodeName))
          .filter(m => !nodeFilter || m.spec.nodeName === nodeFilter)
          .sort(newestFirst)
          .map(m =>
            scope.maintenanceOf(cluster.name, snap, maintenanceView(m)),
          );
        return { items };
      },
    );
  }

  async getMaintenance(
    access: ServerAccess,
    clusterName: string,
    name: string,
    call?: CallContext,
  ): Promise<MaintenanceResponse> {
    return this.auditedRead(
      access.actor,
      call,
      { read: 'maintenance', cluster: clusterName, maintenance: name },
      async () => {
        const cluster = this.clusterOr404(clusterName);
        const scope = await access.readScope();
        const snap = await snapshot(cluster);
        const visible = this.visibleNodeNames(snap, cluster.name, scope.filter);
        const m = snap.maintenances.find(x => x.metadata.name === name);
        if (!m || !visible.has(m.spec.nodeName)) {
          throw new NotFoundError(
            `no maintenance named ${name} in cluster ${cluster.name}`,
          );
        }
        return scope.maintenanceOf(cluster.name, snap, maintenanceView(m));
      },
    );
  }

  /** What `action` would do to the node now, with the token that binds it for this user. */
  async preflight(
    access: UserAccess,
    clusterName: string,
    nodeName: string,
    action: string,
    drainOptions: PreflightOptions,
    call?: CallContext,
  ): Promise<PreflightResponse> {
    return this.auditedRead(
      access.actor,
      call,
      { read: 'preflight', cluster: clusterName, node: nodeName, action },
      async () => {
        const cluster = this.clusterOr404(clusterName);
        if (!isPreflightAction(action)) {
          throw new InputError(
            `action must be one of ${PREFLIGHT_ACTIONS.join(
              ', ',
            )}, got "${action}"`,
          );
        }
        const scope = await access.readScope();
        await access.requireAction(cluster.name, nodeName, action);
        const snap = await snapshot(cluster);
        this.visibleNode(snap, cluster.name, nodeName, scope.filter);
        const impact = await this.currentImpact(
          cluster,
          snap,
          nodeName,
          action,
          drainOptions,
        );
        return scope.preflightOf(
          snap,
          this.options.preflightTokens.sign(impact, access.user),
        );
      },
    );
  }

  /**
   * Carries out an action request: every check, then the write, with an auditor event
   * either way. Answers the HTTP status and the NodeMaintenance name; throws the
   * `@backstage/errors` error of the first check that fails (nothing written).
   */
  async requestAction(
    access: UserAccess,
    request: ActionRequest,
    httpRequest?: Request,
  ): Promise<{ status: number; name: string }> {
    const { auditor, reasonPolicy, preflightTokens } = this.options;
    const { node: nodeName, action: actionParam } = request;
    const actor = access.user;
    const raw = request.body as { reason?: unknown } | undefined;
    const meta = {
      actor,
      action: actionParam,
      reason: typeof raw?.reason === 'string' ? raw.reason : '',
      cluster: request.cluster,
      node: nodeName,
      via: request.via ?? 'http',
      ...(request.agent ? { principal: request.agent.principal } : {}),
    };
    return audited(
      {
        auditor,
        eventId: 'server-action',
        severityLevel: serverActionSeverity(actionParam),
        request: httpRequest,
        meta,
      },
      async record => {
        record.extra.maintenance = null;
        if (!isServerAction(actionParam)) {
          throw new NotFoundError(
            `unknown action ${actionParam}; actions are ${SERVER_ACTIONS.join(
              ', ',
            )}`,
          );
        }
        const action: ServerAction = actionParam;
        const cluster = this.clusterOr404(request.cluster);

        // Authorise before anything else is told about the node.
        await access.requireAction(cluster.name, nodeName, action);

        const body = parseRequestBody(actionRequestBodySchema, request.body);
        const reasonProblem = checkReason(reasonPolicy, body.reason);
        if (reasonProblem) throw new InputError(reasonProblem);
        const dataLoss = isPreflightAction(action)
          ? dataLossOptionsOf(body)
          : [];
        if (dataLoss.length > 0) {
          await access.requireDrainData(cluster.name, nodeName, dataLoss);
        }

        const scope = await access.readScope();
        const snap = await snapshot(cluster);
        // A server the user may not read is absent to them: no 409 below may name its
        // state or its maintenance.
        const node = this.visibleNode(
          snap,
          cluster.name,
          nodeName,
          scope.filter,
        );
        const facts = nodeFactsFromNode(node as any);
        const active = snap.activeByNode.get(nodeName);

        const verdict = guard(
          { action, nodeName },
          snap.derivation,
          snap.facts,
        );
        if (verdict.verdict === 'refuse') {
          throw new QuorumRefusedError(
            scope.guardOf(cluster.name, snap, verdict, action, nodeName),
          );
        }
        if (isPowerVerb(action)) {
          // The capability rule: a verb the channel does not offer here is refused.
          const allowed = powerCheck(snap, action, facts);
          if (!allowed.ok) throw new ConflictError(allowed.reason);
        }
        const ceremony = ceremonyFor(action, verdict.verdict);
        // An agent stops below the rungs that ask a person to type the node's name.
        const agentRefused = request.agent?.refusal(ceremony.level, action);
        if (agentRefused) throw new NotAllowedError(agentRefused);
        const problems = checkCeremony(ceremony, {
          reason: body.reason,
          preflightToken: body.preflightToken,
          typedName: body.typedName,
          nodeName,
        });
        if (problems.length) {
          throw new InputError(`ceremony not met: ${problems.join(' ')}`);
        }

        let acknowledged: PreflightImpact | undefined;
        let target: ClusterState = cluster;
        if (isPreflightAction(action)) {
          const impact = await this.currentImpact(
            cluster,
            snap,
            nodeName,
            action,
            {
              deleteEmptyDirData: body.deleteEmptyDirData === true,
              force: body.force === true,
              allowNodeLocalData: body.allowNodeLocalData === true,
            },
          );
          // The new pre-flight of a 409 is shown as the pre-flight route shows it.
          const shown = (error: unknown) =>
            error instanceof PreflightConflictError
              ? new PreflightConflictError(
                  error.message,
                  scope.preflightOf(snap, error.preflight),
                )
              : error;
          // 400 for a token that is not ours, 409 with the new pre-flight if it changed.
          let takenAt: string;
          try {
            ({ takenAt } = preflightTokens.verify(
              body.preflightToken ?? '',
              impact,
              actor,
              new Date(),
            ));
          } catch (error) {
            throw shown(error);
          }
          // One request per token: its maintenance, named after it, exists already.
          const once = preflightMaintenanceName(
            nodeName,
            action,
            body.preflightToken ?? '',
          );
          if (snap.maintenances.some(m => m.metadata.name === once)) {
            throw shown(
              new PreflightConflictError(
                usedTokenMessage(once),
                preflightTokens.sign(impact, actor),
              ),
            );
          }
          // Another request (or replica) may create it first: the apiserver's
          // AlreadyExists is the same answer.
          target = Object.create(cluster, {
            createMaintenance: {
              value: async (obj: NewMaintenance) => {
                try {
                  return await cluster.createMaintenance(obj);
                } catch (error) {
                  if (obj.metadata.name === once && ConflictError.is(error)) {
                    throw shown(
                      new PreflightConflictError(
                        usedTokenMessage(once),
                        preflightTokens.sign(impact, actor),
                      ),
                    );
                  }
                  throw error;
                }
              },
            },
          });
          // Same impact as acknowledged: record it as of when the user saw it.
          acknowledged = { ...impact, takenAt };
          if (!acknowledged.canProceed) {
            throw shown(
              new PreflightConflictError(
                acknowledged.blockers.join(' '),
                preflightTokens.sign(acknowledged, actor),
              ),
            );
          }
        }

        const result = await performAction(
          target,
          action,
          node,
          active,
          facts.name,
          {
            by: actor,
            reason: body.reason.trim(),
            at: new Date().toISOString(),
          },
          acknowledged && {
            impact: acknowledged,
            token: body.preflightToken ?? '',
          },
        );
        record.extra.maintenance = result.name;
        record.outcome = result.outcome;
        return { status: result.status, name: result.name };
      },
    );
  }

  /** Audits an attempt that had no user (the router's 401 path). */
  async auditUnauthenticated(
    request: Omit<ActionRequest, 'body'>,
    error: Error,
    httpRequest?: Request,
  ): Promise<void> {
    await auditUnauthenticated(
      {
        auditor: this.options.auditor,
        eventId: 'server-action',
        severityLevel: serverActionSeverity(request.action),
        request: httpRequest,
        meta: {
          actor: null,
          action: request.action,
          cluster: request.cluster,
          node: request.node,
          via: 'http',
        },
      },
      error,
    );
  }
}
