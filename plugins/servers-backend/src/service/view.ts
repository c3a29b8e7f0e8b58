import {
  ceremonyFor,
  deriveQuorum,
  guard,
  isTerminalPhase,
  nodeFactsFromNode,
  invoke,
  POWER_VERBS,
  powerAdvertisementOf,
  type InvokeResult,
  type PowerVerb,
  SERVER_ACTIONS,
  type MaintenanceFacts,
  type MaintenancePhase,
  type NodeFacts,
  type PowerProvider,
  type QuorumDerivation,
  type ServerAction,
  type ActionOffer,
  type MaintenanceResponse,
  type QuorumSummaryResponse,
  type ServerResponse,
} from '@rackside/plugin-servers-common';
import type { NodeObject, ServerResource } from '@rackside/plugin-servers-node';
import type { MaintenanceObject } from './types';

/** The phase of a maintenance; an object the operator has not seen yet is Requested. */
export function phaseOf(m: MaintenanceObject): MaintenancePhase {
  return (m.status?.phase as MaintenancePhase | undefined) ?? 'Requested';
}

export function isActive(m: MaintenanceObject): boolean {
  return !isTerminalPhase(phaseOf(m));
}

export function maintenanceFacts(
  maintenances: readonly MaintenanceObject[],
): MaintenanceFacts[] {
  return maintenances.map(m => ({
    nodeName: m.spec.nodeName,
    intent: m.spec.intent,
    phase: phaseOf(m),
  }));
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

/** The non-terminal maintenance of a node (the newest if several). */
export function activeMaintenanceOf(
  maintenances: readonly MaintenanceObject[],
  node: string,
): MaintenanceObject | undefined {
  return maintenances
    .filter(m => m.spec.nodeName === node && isActive(m))
    .sort(newestFirst)[0];
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
    progress: status.drain,
    conditions: status.conditions ?? [],
    refusal: status.refusal,
    abandoned: status.abandoned,
    history: status.history ?? [],
    power: status.power,
    rebootSentAt: status.rebootSentAt,
    poweredOffAt: status.poweredOffAt,
    powerOnSentAt: status.powerOnSentAt,
  };
}

export type MaintenanceView = MaintenanceResponse;

/** Everything a request needs to know about a cluster, read once. */
export interface ClusterSnapshot {
  nodes: NodeObject[];
  facts: NodeFacts[];
  maintenances: MaintenanceObject[];
  derivation: QuorumDerivation;
  powerProvider?: PowerProvider;
  /** Nodes that have a ServerBMC (a BMC channel reaches only these). */
  bmcNodes: ReadonlySet<string>;
}

export function snapshotOf(
  nodes: NodeObject[],
  maintenances: MaintenanceObject[],
  powerProvider: PowerProvider | undefined,
  bmcNodes: Iterable<string> = [],
): ClusterSnapshot {
  const facts = nodes.map(n => nodeFactsFromNode(n as any));
  return {
    nodes,
    facts,
    maintenances,
    derivation: deriveQuorum(facts, maintenanceFacts(maintenances)),
    powerProvider,
    bmcNodes: new Set(bmcNodes),
  };
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
  const facts = nodeFactsFromNode(node as any);
  return {
    cluster,
    node: facts.name,
    controlPlane: facts.controlPlane,
    virtual: facts.virtual,
    labels: { ...(node.metadata?.labels ?? {}) },
  };
}

function rolesOf(labels: Record<string, string>): string[] {
  const prefix = 'node-role.kubernetes.io/';
  return Object.keys(labels)
    .filter(key => key.startsWith(prefix) && key.length > prefix.length)
    .map(key => key.slice(prefix.length))
    .sort();
}

/** The shared {@link ActionOffer} shape. */
export type ActionView = ActionOffer;

/** Whether an action is offered on a node now, and if not, why. */
export function offerOf(
  action: ServerAction,
  node: NodeObject,
  facts: NodeFacts,
  active: MaintenanceObject | undefined,
  snapshot: ClusterSnapshot,
): { offered: boolean; why?: string } {
  if (facts.virtual) {
    return {
      offered: false,
      why: `${facts.name} is a virtual node; Rackside takes no action on it.`,
    };
  }
  const unschedulable = node.spec?.unschedulable === true;
  const pending = active?.spec.returnToService || active?.spec.abandon;
  switch (action) {
    case 'cordon':
      if (active) {
        return {
          offered: false,
          why: `${facts.name} is already under maintenance ${active.metadata.name}.`,
        };
      }
      return unschedulable
        ? { offered: false, why: `${facts.name} is already cordoned.` }
        : { offered: true };
    case 'uncordon':
      if (active) {
        return pending
          ? {
              offered: false,
              why: `maintenance ${active.metadata.name} is already ending.`,
            }
          : { offered: true };
      }
      return unschedulable
        ? { offered: true }
        : { offered: false, why: `${facts.name} is in service.` };
    case 'drain':
    case 'reboot':
    case 'shutdown': {
      if (action !== 'drain') {
        // The capability rule: only what the channel advertises for this node.
        const allowed = powerCheck(snapshot, action, facts);
        if (!allowed.ok) return { offered: false, why: allowed.reason };
      }
      // A node cordoned outside Rackside may be drained: abandon restores its cordon.
      return active
        ? {
            offered: false,
            why: `${facts.name} is already under maintenance ${active.metadata.name}.`,
          }
        : { offered: true };
    }
    case 'power-on': {
      const allowed = powerCheck(snapshot, 'power-on', facts);
      if (!allowed.ok) return { offered: false, why: allowed.reason };
      if (
        !active ||
        active.spec.intent !== 'shutdown' ||
        phaseOf(active) !== 'PoweredOff'
      ) {
        return {
          offered: false,
          why: `${facts.name} is not powered off by a Rackside shutdown.`,
        };
      }
      return pending || active.spec.powerOn
        ? {
            offered: false,
            why: `maintenance ${active.metadata.name} is already ending.`,
          }
        : { offered: true };
    }
    case 'maintenance-abandon':
      if (!active) {
        return { offered: false, why: `${facts.name} has no maintenance.` };
      }
      return pending
        ? {
            offered: false,
            why: `maintenance ${active.metadata.name} is already ending.`,
          }
        : { offered: true };
    default:
      return { offered: false, why: `${String(action)} is not an action.` };
  }
}

/** A server as the list and detail routes answer it. */
export function serverView(
  cluster: string,
  node: NodeObject,
  snapshot: ClusterSnapshot,
  allowed: (action: ServerAction) => boolean,
): ServerResponse {
  const facts = nodeFactsFromNode(node as any);
  const labels = { ...(node.metadata?.labels ?? {}) };
  const active = activeMaintenanceOf(snapshot.maintenances, facts.name);
  const actions = {} as Record<ServerAction, ActionView>;
  for (const action of SERVER_ACTIONS) {
    // guard() only looks this node up in the list: hand it just this node, or a list of
    // every server makes the whole page quadratic in the number of servers.
    const verdict = guard(
      { action, nodeName: facts.name },
      snapshot.derivation,
      [facts],
    ).verdict;
    const offer = offerOf(action, node, facts, active, snapshot);
    actions[action] = {
      offered: offer.offered,
      allowed: allowed(action),
      ceremony: ceremonyFor(action, verdict),
      ...(offer.why ? { why: offer.why } : {}),
    };
  }
  return {
    name: facts.name,
    cluster,
    roles: rolesOf(labels),
    controlPlane: facts.controlPlane,
    virtual: facts.virtual,
    ready: facts.ready,
    unschedulable: node.spec?.unschedulable === true,
    labels,
    systemUUID: node.status?.nodeInfo?.systemUUID,
    maintenance: active ? maintenanceView(active) : undefined,
    powerVerbs: POWER_VERBS.filter(
      verb => powerCheck(snapshot, verb, facts).ok,
    ),
    actions,
  };
}
