/**
 * The one quorum derivation (docs/architecture.md, "The rules and who calls them", decision 0001 section 5). The backend's list,
 * the backend's request check and the operator's authoritative check all call
 * {@link deriveQuorum}, so the three can never disagree about the numbers.
 */

/** The label that makes a node a control-plane member; its value is ignored. */
export const CONTROL_PLANE_LABEL = 'node-role.kubernetes.io/control-plane';

/** The prefix of the labels that give a node its roles (`node-role.kubernetes.io/<role>`). */
export const NODE_ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/';

/** A node's roles, from its `node-role.kubernetes.io/<role>` labels, sorted. */
export function nodeRolesOf(labels: Record<string, string> = {}): string[] {
  return Object.keys(labels)
    .filter(
      key =>
        key.startsWith(NODE_ROLE_LABEL_PREFIX) &&
        key.length > NODE_ROLE_LABEL_PREFIX.length,
    )
    .map(key => key.slice(NODE_ROLE_LABEL_PREFIX.length))
    .sort();
}

/** The label (with value `true`) that marks a simulated node Rackside never acts on. */
export const VIRTUAL_NODE_LABEL = 'rackside.dev/virtual-node';

/** Every phase of a NodeMaintenance, in lifecycle order (docs/architecture.md, "The maintenance lifecycle"). */
export const MAINTENANCE_PHASES = [
  'AwaitingApproval',
  'Requested',
  'Cordoned',
  'Draining',
  'Drained',
  'Rebooting',
  'PoweredOff',
  'Returning',
  'Complete',
  'Refused',
  'Failed',
] as const;

/** A NodeMaintenance phase. */
export type MaintenancePhase = (typeof MAINTENANCE_PHASES)[number];

/** The phases a maintenance never leaves: it no longer affects the node. */
export const TERMINAL_MAINTENANCE_PHASES: readonly MaintenancePhase[] = [
  'Complete',
  'Refused',
  'Failed',
];

/** How far a NodeMaintenance goes (`spec.intent`). */
export const MAINTENANCE_INTENTS = [
  'cordon',
  'drain',
  'reboot',
  'shutdown',
  'upgrade',
  'firmware',
] as const;

/** A NodeMaintenance intent. */
export type MaintenanceIntent = (typeof MAINTENANCE_INTENTS)[number];

/** What the derivation needs to know about a node; read it with {@link nodeFactsFromNode}. */
export interface NodeFacts {
  name: string;
  /** The node carries the {@link CONTROL_PLANE_LABEL} label (any value). */
  controlPlane: boolean;
  /** The node's `Ready` condition is `True`. */
  ready: boolean;
  /** The node carries {@link VIRTUAL_NODE_LABEL}`=true`. */
  virtual: boolean;
}

/** What the derivation needs to know about a NodeMaintenance. */
export interface MaintenanceFacts {
  nodeName: string;
  intent: MaintenanceIntent;
  phase: MaintenancePhase;
}

/** The numbers the guard and the quorum banner show. */
export interface DerivedQuorum {
  derived: true;
  /** Control-plane members: nodes labelled {@link CONTROL_PLANE_LABEL}. */
  members: number;
  /** floor(members / 2) + 1. */
  quorum: number;
  /** Ready members that are not already going down. */
  ready: number;
  /** ready - quorum; negative when the cluster is already below quorum. */
  margin: number;
  /** Members with a non-terminal reboot or shutdown maintenance, sorted by name. */
  goingDown: string[];
}

/** Why no quorum could be derived (the guard then refuses every reboot and shutdown). */
export interface UnderivedQuorum {
  derived: false;
  reason: string;
}

/** The result of {@link deriveQuorum}. */
export type QuorumDerivation = DerivedQuorum | UnderivedQuorum;

/** The reason given when no node is labelled as control plane. */
export const NO_CONTROL_PLANE_REASON =
  'no node carries the node-role.kubernetes.io/control-plane label';

/** Whether a maintenance in this phase is finished and so no longer affects its node. */
export function isTerminalPhase(phase: MaintenancePhase): boolean {
  return TERMINAL_MAINTENANCE_PHASES.includes(phase);
}

/**
 * Whether a maintenance takes its node down. Only a power verb does (an upgrade reboots
 * the node, a firmware update is applied with a reset or by the BMC itself), and it counts
 * from the moment it is admitted until it ends, not from when the verb is sent: once a
 * request has been admitted, the margin it will spend is already spoken for. Which maintenances are handed to {@link deriveQuorum} at all (the
 * admitted ones) is decided by `quorumMaintenances` (openMaintenance.ts), which every
 * caller uses.
 */
export function takesNodeDown(maintenance: MaintenanceFacts): boolean {
  return (
    (maintenance.intent === 'reboot' ||
      maintenance.intent === 'shutdown' ||
      maintenance.intent === 'upgrade' ||
      maintenance.intent === 'firmware') &&
    !isTerminalPhase(maintenance.phase)
  );
}

/** Simple majority of the members: what etcd needs to keep accepting writes. */
export function quorumSize(members: number): number {
  return Math.floor(members / 2) + 1;
}

/**
 * Derives control-plane quorum from the nodes and the non-terminal maintenances.
 *
 * A ready member that is already going down is not counted as ready, so a second power
 * request cannot spend margin the first one has already claimed. A caller re-checking one
 * maintenance (the operator) passes the list without that maintenance, or it would count
 * as already down and never be refused.
 *
 * Without any labelled node nothing is derived: a guard that passed because it derived
 * nothing would be silence with worse consequences (decision 0001 section 5).
 */
export function deriveQuorum(
  nodes: readonly NodeFacts[],
  maintenances: readonly MaintenanceFacts[],
): QuorumDerivation {
  const members = nodes.filter(node => node.controlPlane);
  if (members.length === 0) {
    return { derived: false, reason: NO_CONTROL_PLANE_REASON };
  }
  const down = new Set(
    maintenances.filter(takesNodeDown).map(maintenance => maintenance.nodeName),
  );
  const goingDown = members
    .filter(member => down.has(member.name))
    .map(member => member.name)
    .sort();
  const ready = members.filter(
    member => member.ready && !down.has(member.name),
  ).length;
  const quorum = quorumSize(members.length);
  return {
    derived: true,
    members: members.length,
    quorum,
    ready,
    margin: ready - quorum,
    goingDown,
  };
}

/**
 * The part of a Kubernetes Node the facts are read from. Structural, so a
 * `@kubernetes/client-node` V1Node, a watch-cache entry or a test literal all fit, and
 * this package stays free of Node-only dependencies.
 */
export interface NodeLike {
  metadata?: {
    name?: string;
    labels?: Readonly<Record<string, string>>;
  };
  status?: {
    conditions?: ReadonlyArray<{ type: string; status: string }>;
  };
}

/**
 * Whether a Node is ready: its `Ready` condition is True. No Node, or a Node without a
 * `Ready` condition, is not ready: an unknown state must never count towards quorum.
 */
export function isNodeReady(
  node: Pick<NodeLike, 'status'> | undefined,
): boolean {
  const readyCondition = node?.status?.conditions?.find(
    condition => condition.type === 'Ready',
  );
  return readyCondition?.status === 'True';
}

/** Reads {@link NodeFacts} from a Node (readiness by {@link isNodeReady}). */
export function nodeFactsFromNode(node: NodeLike): NodeFacts {
  const labels = node.metadata?.labels ?? {};
  return {
    name: node.metadata?.name ?? '',
    controlPlane: Object.prototype.hasOwnProperty.call(
      labels,
      CONTROL_PLANE_LABEL,
    ),
    ready: isNodeReady(node),
    virtual: labels[VIRTUAL_NODE_LABEL] === 'true',
  };
}
