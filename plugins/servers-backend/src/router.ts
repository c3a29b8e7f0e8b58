import type {
  AuditorService,
  AuditorServiceEvent,
  BackstageCredentials,
  BackstageUserPrincipal,
  HttpAuthService,
  LoggerService,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import {
  ConflictError,
  InputError,
  NotAllowedError,
  NotFoundError,
} from '@backstage/errors';
import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import {
  ceremonyFor,
  checkCeremony,
  guard,
  isServerAction,
  nodeFactsFromNode,
  offerFor,
  POWER_VERBS,
  PREFLIGHT_ACTIONS,
  powerAdvertisementOf,
  RACKSIDE_API_VERSION,
  SERVER_ACTIONS,
  serverActionPermissions,
  serversReadPermission,
  type ActionResponse,
  type ClusterListResponse,
  type ClusterSummaryResponse,
  type GuardResult,
  type MaintenanceListResponse,
  type PowerVerb,
  type PreflightAction,
  type ServerAction,
  type ServerListResponse,
} from '@rackside/plugin-servers-common';
import {
  serverResourceRefOf,
  type NodeObject,
  type ServerResource,
} from '@rackside/plugin-servers-node';
import express from 'express';
import Router from 'express-promise-router';
import { z } from 'zod';
import {
  computePreflight,
  PreflightConflictError,
  type PreflightImpact,
  type PreflightOptions,
  type PreflightTokens,
} from './service/preflight';
import { checkReason, type ReasonPolicy } from './service/reasonPolicy';
import type { ClusterRegistry, ClusterState } from './service/types';
import {
  activeMaintenanceOf,
  maintenanceView,
  newestFirst,
  powerCheck,
  quorumSummary,
  serverResourceOf,
  serverView,
  snapshotOf,
  type ClusterSnapshot,
} from './service/view';

/** Options of {@link createRouter}. */
export interface RouterOptions {
  clusters: ClusterRegistry;
  httpAuth: HttpAuthService;
  permissions: PermissionsService;
  auditor: AuditorService;
  logger: LoggerService;
  reasonPolicy: ReasonPolicy;
  /** Signs and checks pre-flight acknowledgement tokens. */
  preflightTokens: PreflightTokens;
  /** Applies a conditional decision of `servers:*` to one server. */
  applyConditions: (
    decision: PolicyDecision,
    resource: ServerResource | undefined,
  ) => boolean;
}

/** A guard refusal: 409 with the quorum numbers in the error body. */
export class QuorumRefusedError extends ConflictError {
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

const actionBodySchema = z.object({
  reason: z.string({
    required_error: 'reason is required',
    invalid_type_error: 'reason must be a string',
  }),
  preflightToken: z
    .string({ invalid_type_error: 'preflightToken must be a string' })
    .max(4096)
    .optional(),
  typedName: z
    .string({ invalid_type_error: 'typedName must be a string' })
    .max(253)
    .optional(),
  deleteEmptyDirData: z
    .boolean({ invalid_type_error: 'deleteEmptyDirData must be a boolean' })
    .optional(),
  force: z
    .boolean({ invalid_type_error: 'force must be a boolean' })
    .optional(),
});

function isPowerVerb(action: string): action is PowerVerb {
  return (POWER_VERBS as readonly string[]).includes(action);
}

function isPreflightAction(action: string): action is PreflightAction {
  return (PREFLIGHT_ACTIONS as readonly string[]).includes(action);
}

/** `true` / `false` / absent in a query string; anything else is a 400. */
function queryFlag(value: unknown, name: string): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new InputError(`${name} must be true or false`);
}

function parseBody(body: unknown) {
  const parsed = actionBodySchema.safeParse(body ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join('.') || 'body';
    throw new InputError(`invalid request body: ${field}: ${issue.message}`);
  }
  return parsed.data;
}

async function snapshot(cluster: ClusterState): Promise<ClusterSnapshot> {
  const [nodes, maintenances, powerProvider, bmcNodes] = await Promise.all([
    cluster.nodes(),
    cluster.maintenances(),
    cluster.powerProvider(),
    cluster.serverBmcNodes(),
  ]);
  return snapshotOf(nodes, maintenances, powerProvider, bmcNodes);
}

const OUTCOMES: Record<string, string> = {
  NotAllowedError: 'denied',
  InputError: 'invalid',
  NotFoundError: 'not-found',
  ConflictError: 'conflict',
};

function outcomeOf(error: unknown): string {
  if (error instanceof QuorumRefusedError) return 'refused';
  return OUTCOMES[(error as Error)?.name] ?? 'failed';
}

/** What is kept on the NodeMaintenance of the pre-flight the requester acknowledged. */
function preflightRecord(impact: PreflightImpact, token: string) {
  const level = impact.ceremony.level;
  if (level === 'refused') {
    throw new TypeError('a refused action has no pre-flight to record');
  }
  const q = impact.quorum;
  return {
    takenAt: impact.takenAt,
    token,
    ceremony: level,
    pods: impact.evict
      .slice(0, 2000)
      .map(p => ({ namespace: p.namespace, name: p.name })),
    blockingPDBs: impact.budgets
      .filter(b => b.blocksNow)
      .slice(0, 500)
      .map(b => ({ namespace: b.namespace, name: b.name })),
    quorum:
      q.members !== null &&
      q.quorum !== null &&
      q.ready !== null &&
      q.margin !== null
        ? {
            members: q.members,
            quorum: q.quorum,
            ready: q.ready,
            margin: q.margin,
          }
        : undefined,
  };
}

function maintenanceName(node: string, intent: string): string {
  const stamp = Date.now().toString(36);
  const base = `${node}-${intent}`.slice(0, 253 - stamp.length - 1);
  return `${base}-${stamp}`;
}

/** Builds the `/api/servers` routes. */
export async function createRouter(
  options: RouterOptions,
): Promise<express.Router> {
  const {
    clusters,
    httpAuth,
    permissions,
    auditor,
    logger,
    reasonPolicy,
    preflightTokens,
    applyConditions,
  } = options;
  const router = Router();
  router.use(express.json());

  // Unauthenticated on purpose: load balancers and the demo script probe it.
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });

  function clusterOr404(name: string): ClusterState {
    const cluster = clusters.get(name);
    if (!cluster) throw new NotFoundError(`no cluster named ${name}`);
    return cluster;
  }

  /** The read filter; 403 when reading servers is denied outright. */
  async function requireRead(credentials: BackstageCredentials) {
    const [decision] = await permissions.authorizeConditional(
      [{ permission: serversReadPermission }],
      { credentials },
    );
    if (decision.result === AuthorizeResult.DENY) {
      throw new NotAllowedError(
        `you are not allowed to read servers (${serversReadPermission.name})`,
      );
    }
    if (decision.result === AuthorizeResult.ALLOW) {
      return (_server: ServerResource) => true;
    }
    return (server: ServerResource) => applyConditions(decision, server);
  }

  /** Per-action decisions for many servers in one batch call. */
  async function actionDecisions(
    credentials: BackstageCredentials,
    cluster: string,
    nodes: string[],
  ): Promise<(node: string, action: ServerAction) => boolean> {
    if (nodes.length === 0) return () => false;
    const requests = nodes.flatMap(node =>
      SERVER_ACTIONS.map(action => ({
        permission: serverActionPermissions[action],
        resourceRef: serverResourceRefOf(cluster, node),
      })),
    );
    const decisions = await permissions.authorize(requests, { credentials });
    const allowed = new Set<string>();
    decisions.forEach((d, i) => {
      if (d.result === AuthorizeResult.ALLOW) {
        allowed.add(
          `${requests[i].resourceRef}|${requests[i].permission.name}`,
        );
      }
    });
    return (node, action) =>
      allowed.has(
        `${serverResourceRefOf(cluster, node)}|${
          serverActionPermissions[action].name
        }`,
      );
  }

  router.get('/clusters', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    await requireRead(credentials);
    const items = await Promise.all(
      clusters.list().map(async (cluster): Promise<ClusterSummaryResponse> => {
        try {
          const snap = await snapshot(cluster);
          const advertisement = powerAdvertisementOf(snap.powerProvider);
          return {
            name: cluster.name,
            title: cluster.title,
            available: true,
            servers: snap.nodes.length,
            quorum: quorumSummary(snap.derivation),
            power: {
              type: advertisement.type,
              attendedRack: advertisement.attendedRack,
              confirmsPowerOff: advertisement.confirmsPowerOff,
              verbs: offerFor(advertisement),
            },
          };
        } catch (error) {
          logger.warn(`cluster ${cluster.name} unavailable: ${error}`);
          return {
            name: cluster.name,
            title: cluster.title,
            available: false,
            error: String((error as Error)?.message ?? error),
          };
        }
      }),
    );
    const body: ClusterListResponse = { items };
    res.json(body);
  });

  router.get('/clusters/:cluster/servers', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    const cluster = clusterOr404(req.params.cluster);
    const filter = await requireRead(credentials);
    const snap = await snapshot(cluster);
    const visible = snap.nodes
      .filter(node => filter(serverResourceOf(cluster.name, node)))
      .sort((a, b) =>
        (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
      );
    const allowed = await actionDecisions(
      credentials,
      cluster.name,
      visible.map(n => n.metadata?.name ?? ''),
    );
    const body: ServerListResponse = {
      cluster: cluster.name,
      quorum: quorumSummary(snap.derivation),
      items: visible.map(node =>
        serverView(cluster.name, node, snap, action =>
          allowed(node.metadata?.name ?? '', action),
        ),
      ),
    };
    res.json(body);
  });

  function findNode(snap: ClusterSnapshot, cluster: string, name: string) {
    const node = snap.nodes.find(n => n.metadata?.name === name);
    if (!node) {
      throw new NotFoundError(`no server named ${name} in cluster ${cluster}`);
    }
    return node;
  }

  router.get('/clusters/:cluster/servers/:node', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    const cluster = clusterOr404(req.params.cluster);
    const filter = await requireRead(credentials);
    const snap = await snapshot(cluster);
    const node = findNode(snap, cluster.name, req.params.node);
    if (!filter(serverResourceOf(cluster.name, node))) {
      // Do not tell apart "hidden" and "absent".
      throw new NotFoundError(
        `no server named ${req.params.node} in cluster ${cluster.name}`,
      );
    }
    const allowed = await actionDecisions(credentials, cluster.name, [
      req.params.node,
    ]);
    res.json(
      serverView(cluster.name, node, snap, action =>
        allowed(req.params.node, action),
      ),
    );
  });

  function visibleNodeNames(
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

  router.get('/clusters/:cluster/maintenances', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    const cluster = clusterOr404(req.params.cluster);
    const filter = await requireRead(credentials);
    const snap = await snapshot(cluster);
    const visible = visibleNodeNames(snap, cluster.name, filter);
    const nodeFilter =
      typeof req.query.node === 'string' ? req.query.node : undefined;
    const items = snap.maintenances
      .filter(m => visible.has(m.spec.nodeName))
      .filter(m => !nodeFilter || m.spec.nodeName === nodeFilter)
      .sort(newestFirst)
      .map(maintenanceView);
    const body: MaintenanceListResponse = { items };
    res.json(body);
  });

  router.get('/clusters/:cluster/maintenances/:name', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    const cluster = clusterOr404(req.params.cluster);
    const filter = await requireRead(credentials);
    const snap = await snapshot(cluster);
    const visible = visibleNodeNames(snap, cluster.name, filter);
    const m = snap.maintenances.find(x => x.metadata.name === req.params.name);
    if (!m || !visible.has(m.spec.nodeName)) {
      throw new NotFoundError(
        `no maintenance named ${req.params.name} in cluster ${cluster.name}`,
      );
    }
    res.json(maintenanceView(m));
  });

  /** Authorises one action on one server; 403 naming the permission otherwise. */
  async function requireAction(
    credentials: BackstageCredentials,
    cluster: string,
    nodeName: string,
    action: ServerAction,
  ) {
    const [decision] = await permissions.authorize(
      [
        {
          permission: serverActionPermissions[action],
          resourceRef: serverResourceRefOf(cluster, nodeName),
        },
      ],
      { credentials },
    );
    if (decision.result !== AuthorizeResult.ALLOW) {
      throw new NotAllowedError(
        `you are not allowed to ${action} ${nodeName} (${serverActionPermissions[action].name})`,
      );
    }
  }

  /** The impact of an action on a node now, read from the apiserver. */
  async function currentImpact(
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
    return computePreflight({
      cluster: cluster.name,
      node: nodeName,
      action,
      options: drainOptions,
      snapshot: snap,
      pods,
      budgets,
      now: new Date(),
    });
  }

  router.get('/clusters/:cluster/servers/:node/preflight', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    const cluster = clusterOr404(req.params.cluster);
    const action = String(req.query.action ?? '');
    if (!isPreflightAction(action)) {
      throw new InputError(
        `action must be one of ${PREFLIGHT_ACTIONS.join(
          ', ',
        )}, got "${action}"`,
      );
    }
    const drainOptions = {
      deleteEmptyDirData: queryFlag(
        req.query.deleteEmptyDirData,
        'deleteEmptyDirData',
      ),
      force: queryFlag(req.query.force, 'force'),
    };
    const filter = await requireRead(credentials);
    await requireAction(credentials, cluster.name, req.params.node, action);
    const snap = await snapshot(cluster);
    const node = findNode(snap, cluster.name, req.params.node);
    if (!filter(serverResourceOf(cluster.name, node))) {
      throw new NotFoundError(
        `no server named ${req.params.node} in cluster ${cluster.name}`,
      );
    }
    const impact = await currentImpact(
      cluster,
      snap,
      req.params.node,
      action,
      drainOptions,
    );
    res.json(preflightTokens.sign(impact, credentials.principal.userEntityRef));
  });

  router.post(
    '/clusters/:cluster/servers/:node/actions/:action',
    async (req, res) => {
      const { node: nodeName, action: actionParam } = req.params;
      let credentials: BackstageCredentials<BackstageUserPrincipal>;
      try {
        credentials = await httpAuth.credentials(req, { allow: ['user'] });
      } catch (error) {
        // Attempts without a user are audited too.
        const meta = {
          actor: null,
          action: actionParam,
          cluster: req.params.cluster,
          node: nodeName,
          outcome: 'unauthenticated',
        };
        const e = await auditor.createEvent({
          eventId: 'server-action',
          severityLevel: 'medium',
          request: req,
          meta,
        });
        await e.fail({ meta, error: error as Error });
        throw error;
      }
      const actor = credentials.principal.userEntityRef;
      const rawReason =
        typeof req.body?.reason === 'string' ? req.body.reason : '';
      const meta = {
        actor,
        action: actionParam,
        reason: rawReason,
        cluster: req.params.cluster,
        node: nodeName,
      };
      let event: AuditorServiceEvent | undefined;
      let maintenance: string | undefined;
      try {
        if (!isServerAction(actionParam)) {
          throw new NotFoundError(
            `unknown action ${actionParam}; actions are ${SERVER_ACTIONS.join(
              ', ',
            )}`,
          );
        }
        const action: ServerAction = actionParam;
        event = await auditor.createEvent({
          eventId: 'server-action',
          severityLevel:
            action === 'reboot' || action === 'shutdown' ? 'high' : 'medium',
          request: req,
          meta,
        });
        const cluster = clusterOr404(req.params.cluster);

        // Authorise before anything else is told about the node.
        await requireAction(credentials, cluster.name, nodeName, action);

        const body = parseBody(req.body);
        const reasonProblem = checkReason(reasonPolicy, body.reason);
        if (reasonProblem) throw new InputError(reasonProblem);

        const snap = await snapshot(cluster);
        const node = findNode(snap, cluster.name, nodeName);
        const facts = nodeFactsFromNode(node as any);
        const active = activeMaintenanceOf(snap.maintenances, nodeName);

        const verdict = guard(
          { action, nodeName },
          snap.derivation,
          snap.facts,
        );
        if (verdict.verdict === 'refuse') {
          throw new QuorumRefusedError(verdict);
        }
        if (isPowerVerb(action)) {
          // The capability rule: a verb the channel does not offer here is refused.
          const allowed = powerCheck(snap, action, facts);
          if (!allowed.ok) throw new ConflictError(allowed.reason);
        }
        const problems = checkCeremony(ceremonyFor(action, verdict.verdict), {
          reason: body.reason,
          preflightToken: body.preflightToken,
          typedName: body.typedName,
          nodeName,
        });
        if (problems.length) {
          throw new InputError(`ceremony not met: ${problems.join(' ')}`);
        }

        let acknowledged: PreflightImpact | undefined;
        if (isPreflightAction(action)) {
          const drainOptions = {
            deleteEmptyDirData: body.deleteEmptyDirData === true,
            force: body.force === true,
          };
          acknowledged = await currentImpact(
            cluster,
            snap,
            nodeName,
            action,
            drainOptions,
          );
          // 400 for a token that is not ours, 409 with the new pre-flight if it changed.
          const { takenAt } = preflightTokens.verify(
            body.preflightToken ?? '',
            acknowledged,
            actor,
            new Date(),
          );
          // Same impact as acknowledged: record it as of when the user saw it.
          acknowledged = { ...acknowledged, takenAt };
          if (!acknowledged.canProceed) {
            throw new PreflightConflictError(
              acknowledged.blockers.join(' '),
              preflightTokens.sign(acknowledged, actor),
            );
          }
        }

        const flag = {
          by: actor,
          reason: body.reason.trim(),
          at: new Date().toISOString(),
        };
        const result = await perform(
          cluster,
          action,
          node,
          active,
          facts.name,
          flag,
          acknowledged && {
            impact: acknowledged,
            token: body.preflightToken ?? '',
          },
        );
        maintenance = result.name;
        await event.success({
          meta: { ...meta, maintenance, outcome: result.outcome },
        });
        const answer: ActionResponse = { name: result.name };
        res.status(result.status).json(answer);
      } catch (error) {
        const outcome = outcomeOf(error);
        const failMeta = { ...meta, maintenance: maintenance ?? null, outcome };
        if (event) {
          await event.fail({ meta: failMeta, error: error as Error });
        } else {
          const e = await auditor.createEvent({
            eventId: 'server-action',
            severityLevel: 'medium',
            request: req,
            meta,
          });
          await e.fail({ meta: failMeta, error: error as Error });
        }
        if (error instanceof PreflightConflictError) {
          // The new pre-flight travels with the 409 so the dialog can show it at once.
          res.status(409).json({
            error: { name: error.name, message: error.message },
            request: { method: req.method, url: req.originalUrl },
            response: { statusCode: 409 },
            preflight: error.preflight,
          });
          return;
        }
        throw error;
      }
    },
  );

  async function perform(
    cluster: ClusterState,
    action: ServerAction,
    node: NodeObject,
    active: ReturnType<typeof activeMaintenanceOf>,
    nodeName: string,
    flag: { by: string; reason: string; at: string },
    preflight?: { impact: PreflightImpact; token: string },
  ): Promise<{ status: number; name: string; outcome: string }> {
    const unschedulable = node.spec?.unschedulable === true;
    const ending = (m: NonNullable<typeof active>) =>
      m.spec.returnToService
        ? 'is already returning to service'
        : 'is already being abandoned';
    switch (action) {
      case 'cordon': {
        if (active) {
          throw new ConflictError(
            `${nodeName} already has a maintenance in progress: ${
              active.metadata.name
            } (${active.spec.intent}, ${active.status?.phase ?? 'Requested'})`,
          );
        }
        if (unschedulable) {
          throw new ConflictError(`${nodeName} is already cordoned`);
        }
        const created = await cluster.createMaintenance({
          apiVersion: RACKSIDE_API_VERSION,
          kind: 'NodeMaintenance',
          metadata: { name: maintenanceName(nodeName, 'cordon') },
          spec: {
            nodeName,
            intent: 'cordon',
            reason: flag.reason,
            requestedBy: flag.by,
          },
        });
        return { status: 201, name: created.metadata.name, outcome: 'created' };
      }
      case 'uncordon': {
        if (active) {
          if (active.spec.returnToService || active.spec.abandon) {
            throw new ConflictError(
              `maintenance ${active.metadata.name} ${ending(active)}`,
            );
          }
          await cluster.setRequestFlag(
            active.metadata.name,
            'returnToService',
            flag,
          );
          return {
            status: 200,
            name: active.metadata.name,
            outcome: 'return-to-service-requested',
          };
        }
        if (!unschedulable) {
          throw new ConflictError(`${nodeName} is in service already`);
        }
        // Cordoned outside Rackside: record the return like any other act.
        const created = await cluster.createMaintenance({
          apiVersion: RACKSIDE_API_VERSION,
          kind: 'NodeMaintenance',
          metadata: { name: maintenanceName(nodeName, 'cordon') },
          spec: {
            nodeName,
            intent: 'cordon',
            reason: flag.reason,
            requestedBy: flag.by,
            returnToService: flag,
          },
        });
        return {
          status: 201,
          name: created.metadata.name,
          outcome: 'created-with-return-to-service',
        };
      }
      case 'drain':
      case 'reboot':
      case 'shutdown': {
        if (active) {
          throw new ConflictError(
            `${nodeName} already has a maintenance in progress: ${
              active.metadata.name
            } (${active.spec.intent}, ${active.status?.phase ?? 'Requested'})`,
          );
        }
        const { impact, token } = preflight!;
        const created = await cluster.createMaintenance({
          apiVersion: RACKSIDE_API_VERSION,
          kind: 'NodeMaintenance',
          metadata: { name: maintenanceName(nodeName, action) },
          spec: {
            nodeName,
            intent: action,
            reason: flag.reason,
            requestedBy: flag.by,
            preflight: preflightRecord(impact, token),
            drain: {
              deleteEmptyDirData: impact.options.deleteEmptyDirData,
              force: impact.options.force,
            },
          },
        });
        return { status: 201, name: created.metadata.name, outcome: 'created' };
      }
      case 'maintenance-abandon': {
        if (!active) {
          throw new ConflictError(`${nodeName} has no maintenance to abandon`);
        }
        if (active.spec.returnToService || active.spec.abandon) {
          throw new ConflictError(
            `maintenance ${active.metadata.name} ${ending(active)}`,
          );
        }
        await cluster.setRequestFlag(active.metadata.name, 'abandon', flag);
        return {
          status: 200,
          name: active.metadata.name,
          outcome: 'abandon-requested',
        };
      }
      case 'power-on': {
        if (
          !active ||
          active.spec.intent !== 'shutdown' ||
          active.status?.phase !== 'PoweredOff'
        ) {
          throw new ConflictError(
            `${nodeName} is not powered off by a Rackside shutdown${
              active
                ? ` (maintenance ${active.metadata.name} is ${
                    active.spec.intent
                  }, ${active.status?.phase ?? 'Requested'})`
                : ''
            }`,
          );
        }
        if (active.spec.returnToService || active.spec.abandon) {
          throw new ConflictError(
            `maintenance ${active.metadata.name} ${ending(active)}`,
          );
        }
        if (active.spec.powerOn) {
          throw new ConflictError(
            `power-on of ${nodeName} was already requested by ${active.spec.powerOn.by}`,
          );
        }
        await cluster.setRequestFlag(active.metadata.name, 'powerOn', flag);
        return {
          status: 200,
          name: active.metadata.name,
          outcome: 'power-on-requested',
        };
      }
      default:
        throw new NotFoundError(`unknown action ${String(action)}`);
    }
  }

  return router;
}
