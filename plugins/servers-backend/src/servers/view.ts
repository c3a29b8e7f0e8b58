import { NotFoundError } from '@backstage/errors';
import {
  nodeRolesOf,
  ceremonyFor,
  deriveQuorum,
  failedPartsOf,
  guard,
  hardwareHealthRaise,
  hardwareReadingState,
  holdsNodeCordoned,
  isPowerVerb,
  type MaintenanceState,
  isOpen,
  nodeFactsFromNode,
  invoke,
  openMaintenanceByNode,
  POWER_VERBS,
  powerAdvertisementOf,
  quorumMaintenances,
  whyNotApplicable,
  type InvokeResult,
  type NodeState,
  type PowerVerb,
  SERVER_ACTIONS,
  type MaintenancePhase,
  type NodeFacts,
  type PowerProvider,
  type QuorumDerivation,
  type ServerAction,
  type ActionOffer,
  type MaintenanceResponse,
  type QuorumSummaryResponse,
  type ServerFields,
  type ServerHealth,
  type ServerHealthDetail,
  type ServerHealthSummary,
  type ServerListItem,
  type ServerResponse,
  type ServerAlertSummary,
} from '@rackside/plugin-servers-common';
import type { NodeObject, ServerResource } from '@rackside/plugin-servers-node';
import { alertSummaryOf, type ClusterAlerts } from '../cluster/nodeAlerts';
import type {
  ClusterSnapshot,
  ClusterState,
  MaintenanceObject,
  ServerBmcRecord,
} from '../cluster/types';

/** The phase of a maintenance; an object the operator has not seen yet is Requested. */
export function phaseOf(m: MaintenanceObject): MaintenancePhase {
  return (m.status?.phase as MaintenancePhase | undefined) ?? 'Requested';
}

/** Whether a maintenance is still open (servers-common `isOpen`, as the operator reads it). */
export function isActive(m: MaintenanceObject): boolean {
  return isOpen(m);
}

/** What servers-common's maintenance rules read of a maintenance. */
export function maintenanceState(m: MaintenanceObject): MaintenanceState {
  return {
    intent: m.spec.intent,
    // Absent until the operator admits it: the rules read that as not yet admitted.
    phase: m.status?.phase as MaintenancePhase | undefined,
    returnToService: m.spec.returnToService,
    abandon: m.spec.abandon,
    powerOn: m.spec.powerOn,
  };
}

/** Orders maintenances newest first (RFC 3339 timestamps sort as strings). */
export function newestFirst(
  a: MaintenanceObject,
  b: MaintenanceObject,
): number {
  return (b.metadata.creationTimestamp ?? '').localeCompare(
    a.metadata.creationTimestamp ?? '',
  );
}

export function maintenanceView(m: MaintenanceObject): MaintenanceResponse {
  const status = m.status ?? {};
  return {
    name: m.metadata.name,
    nodeName: m.spec.nodeName,
    intent: m.spec.intent,
    reason: m.spec.reason,
    requestedBy: m.spec.requestedBy,
    createdAt: m.metadata.creationTimestamp,
    phase: phaseOf(m),
    terminal: !isActive(m),
    returnToService: m.spec.returnToService,
    abandon: m.spec.abandon,
    powerOn: m.spec.powerOn,
    drain: m.spec.drain,
    progress: status.drain,
    conditions: status.conditions ?? [],
    refusal: status.refusal,
    abandoned: status.abandoned,
    history: status.history ?? [],
    power: status.power,
    rebootSentAt: status.rebootSentAt,
    poweredOffAt: status.poweredOffAt,
    powerOnSentAt: status.powerOnSentAt,
    alerting: status.alerting,
    ...(status.hardware ? { hardware: status.hardware } : {}),
  };
}

/** What a row shows of a health reading. */
export function healthSummaryOf(health: ServerHealth): ServerHealthSummary {
  return {
    rollup: health.rollup,
    ...(health.readAt ? { readAt: health.readAt } : {}),
    failedParts: failedPartsOf(health),
    // What the typed-name rule judges the reading's age and error by (the dialog
    // rebuilds the rung's why from the row).
    ...(health.error !== undefined ? { error: health.error } : {}),
    ...(health.sweepIntervalSeconds
      ? { sweepIntervalSeconds: health.sweepIntervalSeconds }
      : {}),
  };
}

/**
 * The part of a row's key a health reading makes (what the row shows of it, and whether
 * the reading still counts: it goes unknown with time alone, and the row's rung with it).
 */
export function healthRowKey(
  health: ServerHealth | undefined,
  now: number = Date.now(),
): string {
  return health
    ? `${health.rollup}|${health.readAt ?? ''}|${failedPartsOf(health)}|${
        health.error ?? ''
      }|${hardwareReadingState(health, now).state}`
    : '';
}

/**
 * The whole reading as the detail route answers it: the fields of `status.health` named
 * one by one (a field the operator adds later is not sent until it is named here), and
 * the refresh asked for last.
 */
export function healthDetailOf(
  health: ServerHealth | undefined,
  refresh: ServerBmcRecord['healthRefresh'],
): ServerHealthDetail | undefined {
  if (!health) {
    return refresh
      ? {
          rollup: 'Unknown',
          failedParts: 0,
          parts: [],
          logEntries: [],
          firmware: [],
          missing: [],
          refreshRequestedAt: refresh.requestedAt,
        }
      : undefined;
  }
  return {
    ...healthSummaryOf(health),
    ...(health.state ? { state: health.state } : {}),
    ...(health.error ? { error: health.error } : {}),
    ...(health.answeredRequestAt
      ? { answeredRequestAt: health.answeredRequestAt }
      : {}),
    parts: health.parts ?? [],
    logEntries: health.logEntries ?? [],
    ...(health.logEntriesSkipped
      ? { logEntriesSkipped: health.logEntriesSkipped }
      : {}),
    firmware: health.firmware ?? [],
    missing: health.missing ?? [],
    ...(refresh ? { refreshRequestedAt: refresh.requestedAt } : {}),
  };
}

export type MaintenanceView = MaintenanceResponse;

export type { ClusterSnapshot } from '../cluster/types';

export function snapshotOf(
  nodes: NodeObject[],
  maintenances: MaintenanceObject[],
  powerProvider: PowerProvider | undefined,
  bmcNodes: Iterable<string> = [],
  bmcs: readonly ServerBmcRecord[] = [],
  alerts?: ClusterAlerts,
): ClusterSnapshot {
  const bmcHealth = new Map<string, ServerHealth>();
  for (const b of bmcs) if (b.health) bmcHealth.set(b.name, b.health);
  const facts = nodes.map(n => nodeFactsFromNode(n));
  const activeByNode = openMaintenanceByNode(maintenances);
  const newestByNode = new Map<string, MaintenanceObject>();
  for (const m of [...maintenances].sort(newestFirst).reverse()) {
    newestByNode.set(m.spec.nodeName, m);
  }
  return {
    nodes,
    facts,
    maintenances,
    activeByNode,
    newestByNode,
    derivation: deriveQuorum(facts, quorumMaintenances(maintenances)),
    powerProvider,
    bmcNodes: new Set(bmcNodes),
    ...(alerts ? { alerts } : {}),
    bmcHealth,
  };
}

/** A row's alert summary; undefined when the cluster has no Alertmanager configured. */
export function alertSummaryOfNode(
  snapshot: ClusterSnapshot,
  name: string,
): ServerAlertSummary | undefined {
  if (!snapshot.alerts) return undefined;
  return alertSummaryOf(
    snapshot.alerts.byNode.get(name),
    snapshot.alerts.stale !== undefined,
  );
}

/** What a row's key takes of its alerts: the summary the row shows. */
export function alertsKeyOf(snapshot: ClusterSnapshot, name: string): string {
  const summary = alertSummaryOfNode(snapshot, name);
  return summary ? JSON.stringify(summary) : '';
}

/** The node named `name`, or 404. */
export function findNode(
  snap: ClusterSnapshot,
  cluster: string,
  name: string,
): NodeObject {
  const node = snap.nodes.find(n => n.metadata?.name === name);
  if (!node) {
    throw new NotFoundError(`no server named ${name} in cluster ${cluster}`);
  }
  return node;
}

/** A node the caller may read; hidden and absent are the same 404. */
export function visibleNode(
  snap: ClusterSnapshot,
  cluster: string,
  name: string,
  filter: (server: ServerResource) => boolean,
): NodeObject {
  const node = findNode(snap, cluster, name);
  if (!filter(serverResourceOf(cluster, node))) {
    throw new NotFoundError(`no server named ${name} in cluster ${cluster}`);
  }
  return node;
}

/** The names of the nodes the caller may read. */
export function visibleNodeNames(
  snap: ClusterSnapshot,
  cluster: string,
  filter: (server: ServerResource) => boolean,
): Set<string> {
  return new Set(
    snap.nodes
      .filter(n => filter(serverResourceOf(cluster, n)))
      .map(n => n.metadata?.name ?? ''),
  );
}

/** The cluster's snapshot, derived once per change where the state keeps it. */
export async function clusterSnapshot(
  cluster: ClusterState,
): Promise<ClusterSnapshot> {
  if (cluster.snapshot) return cluster.snapshot();
  const [nodes, maintenances, powerProvider, bmcNodes, bmcs, alerts] =
    await Promise.all([
      cluster.nodes(),
      cluster.maintenances(),
      cluster.powerProvider(),
      cluster.serverBmcNodes(),
      cluster.serverBmcs?.() ?? [],
      cluster.alerts?.(),
    ]);
  return snapshotOf(nodes, maintenances, powerProvider, bmcNodes, bmcs, alerts);
}

/** Whether a power verb may be asked for this node: servers-common's capability rule. */
export function powerCheck(
  snapshot: ClusterSnapshot,
  verb: PowerVerb,
  facts: NodeFacts,
): InvokeResult {
  return invoke(powerAdvertisementOf(snapshot.powerProvider), verb, facts, {
    hasServerBmc: snapshot.bmcNodes.has(facts.name),
  });
}

export function quorumSummary(
  derivation: QuorumDerivation,
): QuorumSummaryResponse {
  return derivation.derived
    ? {
        derived: true as const,
        members: derivation.members,
        quorum: derivation.quorum,
        ready: derivation.ready,
        margin: derivation.margin,
        goingDown: derivation.goingDown,
      }
    : { derived: false as const, reason: derivation.reason };
}

export function serverResourceOf(
  cluster: string,
  node: NodeObject,
): ServerResource {
  const facts = nodeFactsFromNode(node);
  return {
    cluster,
    node: facts.name,
    controlPlane: facts.controlPlane,
    virtual: facts.virtual,
    labels: { ...(node.metadata?.labels ?? {}) },
  };
}

/** The shared {@link ActionOffer} shape. */
export type ActionView = ActionOffer;

/** What servers-common's applicability rule reads of a node and its open maintenance. */
export function nodeStateOf(
  node: NodeObject,
  facts: NodeFacts,
  active: MaintenanceObject | undefined,
): NodeState {
  return {
    name: facts.name,
    virtual: facts.virtual,
    unschedulable: node.spec?.unschedulable === true,
    open: active && { name: active.metadata.name, ...maintenanceState(active) },
  };
}

/**
 * Whether an action is offered on a node now, and if not, why: the capability rule for
 * the power verbs, then servers-common's applicability rule (the request check applies
 * the same two, performAction.ts).
 */
export function offerOf(
  action: ServerAction,
  node: NodeObject,
  facts: NodeFacts,
  active: MaintenanceObject | undefined,
  snapshot: ClusterSnapshot,
): { offered: boolean; why?: string } {
  if (!facts.virtual && isPowerVerb(action)) {
    // The capability rule: only what the channel advertises for this node.
    const allowed = powerCheck(snapshot, action, facts);
    if (!allowed.ok) return { offered: false, why: allowed.reason };
  }
  const why = whyNotApplicable(action, nodeStateOf(node, facts, active));
  return why ? { offered: false, why } : { offered: true };
}

/** What the list and the detail views of a server share. */
function serverBase(
  cluster: string,
  node: NodeObject,
  snapshot: ClusterSnapshot,
) {
  const facts = nodeFactsFromNode(node);
  const labels = { ...(node.metadata?.labels ?? {}) };
  const active = snapshot.activeByNode.get(facts.name);
  const unschedulable = node.spec?.unschedulable === true;
  // A maintenance refused at the moment of acting left the node cordoned and drained:
  // the row shows it (with its refusal) until the node is returned to service.
  const newest = snapshot.newestByNode.get(facts.name);
  const holding =
    !active &&
    newest &&
    holdsNodeCordoned(
      { ...maintenanceState(newest), cordonedAt: newest.status?.cordonedAt },
      unschedulable,
    )
      ? newest
      : undefined;
  const shown = active ?? holding;
  const health = snapshot.bmcHealth.get(facts.name);
  const fields: ServerFields = {
    name: facts.name,
    cluster,
    roles: nodeRolesOf(labels),
    controlPlane: facts.controlPlane,
    virtual: facts.virtual,
    ready: facts.ready,
    unschedulable,
    labels,
    maintenance: shown ? maintenanceView(shown) : undefined,
    powerVerbs: POWER_VERBS.filter(
      verb => powerCheck(snapshot, verb, facts).ok,
    ),
    ...(health ? { health: healthSummaryOf(health) } : {}),
  };
  const alerts = alertSummaryOfNode(snapshot, facts.name);
  if (alerts) fields.alerts = alerts;
  return { facts, active, fields };
}

/** The ceremony of an action on a node now. */
function ceremonyOn(
  action: ServerAction,
  facts: NodeFacts,
  snapshot: ClusterSnapshot,
) {
  // guard() only looks this node up in the list: hand it just this node, or a list of
  // every server makes the whole page quadratic in the number of servers.
  const { verdict } = guard(
    { action, nodeName: facts.name },
    snapshot.derivation,
    [facts],
  );
  // Returning a server whose BMC reports Critical asks for the typed name, and says why.
  return ceremonyFor(
    action,
    verdict,
    hardwareHealthRaise(action, snapshot.bmcHealth.get(facts.name), Date.now()),
  );
}

/** A server as the detail route answers it: every action, offered or not, and why. */
export function serverView(
  cluster: string,
  node: NodeObject,
  snapshot: ClusterSnapshot,
  allowed: (action: ServerAction) => boolean,
  bmc?: ServerBmcRecord,
): ServerResponse {
  const { facts, active, fields } = serverBase(cluster, node, snapshot);
  const actions = {} as Record<ServerAction, ActionView>;
  for (const action of SERVER_ACTIONS) {
    const offer = offerOf(action, node, facts, active, snapshot);
    actions[action] = {
      offered: offer.offered,
      allowed: allowed(action),
      ceremony: ceremonyOn(action, facts, snapshot),
      ...(offer.why ? { why: offer.why } : {}),
    };
  }
  const health = healthDetailOf(
    bmc?.health ?? snapshot.bmcHealth.get(facts.name),
    bmc?.healthRefresh,
  );
  // The detail carries the whole reading in place of the row's summary.
  const { health: _summary, ...rest } = fields;
  return {
    ...rest,
    ...(health ? { health } : {}),
    systemUUID: node.status?.nodeInfo?.systemUUID,
    actions,
  };
}

/** A server as the list route answers it: only the actions offered and allowed. */
export function serverListItem(
  cluster: string,
  node: NodeObject,
  snapshot: ClusterSnapshot,
  allowed: (action: ServerAction) => boolean,
): ServerListItem {
  const { facts, active, fields } = serverBase(cluster, node, snapshot);
  const actions: ServerListItem['actions'] = {};
  for (const action of SERVER_ACTIONS) {
    if (
      allowed(action) &&
      offerOf(action, node, facts, active, snapshot).offered
    ) {
      actions[action] = ceremonyOn(action, facts, snapshot).level;
    }
  }
  return { ...fields, actions };
}
