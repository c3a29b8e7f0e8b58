import type {
  Approval,
  DrainContext,
  ServerHealthRefresh,
  ServerHealth,
  FirmwareHistoryEntry,
  MaintenancePlanInput,
  MaintenancePlanSpec,
  MaintenancePlanStatus,
  NodeMaintenanceDrainOptions,
  NodeMaintenancePreflight,
  NodeMaintenanceSpec,
  NodeFacts,
  NodeMaintenanceStatus,
  PowerProvider,
  QuorumDerivation,
  RequestFlag,
} from '@rackside/plugin-servers-common';
import type {
  NodeObject,
  PodDisruptionBudgetObject,
  PodObject,
} from '@rackside/plugin-servers-node';
import type { ClusterAlerts } from './nodeAlerts';

/** Everything a request needs to know about a cluster, read once. */
export interface ClusterSnapshot {
  nodes: NodeObject[];
  facts: NodeFacts[];
  maintenances: MaintenanceObject[];
  /** Each node's open maintenance (servers-common `openMaintenanceOf`), by node name. */
  activeByNode: ReadonlyMap<string, MaintenanceObject>;
  /** Each node's newest maintenance, terminal or not, by node name. */
  newestByNode: ReadonlyMap<string, MaintenanceObject>;
  derivation: QuorumDerivation;
  powerProvider?: PowerProvider;
  /** Nodes that have a ServerBMC (a BMC channel reaches only these). */
  bmcNodes: ReadonlySet<string>;
  /** Each node's Alertmanager alerts; absent when the cluster has no Alertmanager configured. */
  alerts?: ClusterAlerts;
  /** Each node's health reading (`ServerBMC.status.health`), where one was made. */
  bmcHealth: ReadonlyMap<string, ServerHealth>;
}

/**
 * What the backend keeps of a ServerBMC: its name and version, the refresh request and
 * the health reading. Never its address or its credentials' reference: the backend never
 * reaches a BMC (decision 0001).
 */
export interface ServerBmcRecord {
  name: string;
  resourceVersion?: string;
  healthRefresh?: ServerHealthRefresh;
  health?: ServerHealth;
  /** `status.firmwareHistory`: the firmware updates of this BMC that ended. */
  firmwareHistory?: FirmwareHistoryEntry[];
}

/**
 * A snapshot derived once per change of a cluster: its `generation`, and per node the
 * key of its list row (what the row is made of: the node's shown facts, its open
 * maintenance, a BMC), so rows and entity tags move only when something shown did.
 */
export interface KeyedSnapshot extends ClusterSnapshot {
  generation: number;
  rowKeys: ReadonlyMap<string, string>;
}

/** A NodeMaintenance as the backend reads it (status may be absent or partial). */
export interface MaintenanceObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    labels?: Record<string, string>;
  };
  spec: NodeMaintenanceSpec;
  status?: Partial<NodeMaintenanceStatus>;
}

/** What the backend writes to create a NodeMaintenance. */
export interface NewMaintenance {
  apiVersion: string;
  kind: 'NodeMaintenance';
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    nodeName: string;
    intent: NodeMaintenanceSpec['intent'];
    reason: string;
    requestedBy: string;
    returnToService?: RequestFlag;
    /** The pre-flight snapshot the requester acknowledged. */
    preflight?: NodeMaintenancePreflight;
    drain?: Partial<NodeMaintenanceDrainOptions>;
    /** Opt-in healthy return as asked (the apiserver fills the defaults). */
    healthyReturn?: { healthyForSeconds?: number; timeoutSeconds?: number };
    /** Held for a second person's approval (docs/approvals.md). */
    approval?: Approval;
  };
}

/** A MaintenancePlan as the backend reads it (status may be absent or partial). */
export interface PlanObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    annotations?: Record<string, string>;
  };
  spec: MaintenancePlanSpec;
  status?: Partial<MaintenancePlanStatus>;
}

/** What the backend writes to create a MaintenancePlan. */
export interface NewPlan {
  apiVersion: string;
  kind: 'MaintenancePlan';
  metadata: { name: string; annotations?: Record<string, string> };
  spec: MaintenancePlanInput['spec'];
}

/** A request flag the backend sets on a maintenance. */
export type RequestFlagName = 'returnToService' | 'abandon' | 'powerOn';

/** What the drain pre-flight of one node reads: its pods and what tells its data apart. */
export interface NodeDrainInputs {
  pods: PodObject[];
  storage: Omit<DrainContext, 'nodeName'>;
}

/**
 * One cluster as the routes see it: reads come from watch caches, writes go
 * to the apiserver. Kept small so routes are testable with a fake.
 */
export interface ClusterState {
  readonly name: string;
  readonly title: string;
  /** All Nodes (waits for the first sync). */
  nodes(): Promise<NodeObject[]>;
  /** All NodeMaintenances (waits for the first sync). */
  maintenances(): Promise<MaintenanceObject[]>;
  /** The PowerProvider `default`, if any. */
  powerProvider(): Promise<PowerProvider | undefined>;
  /** Names of the nodes that have a ServerBMC. */
  serverBmcNodes(): Promise<string[]>;
  /**
   * The ServerBMCs (waits for the first sync). Optional so a state without them (an
   * older fake) still serves everything else; the health is then absent.
   */
  serverBmcs?(): Promise<ServerBmcRecord[]>;
  /** One ServerBMC read from the apiserver now (absent: none). */
  readServerBmc?(name: string): Promise<ServerBmcRecord | undefined>;
  /**
   * Merge-patches `spec.healthRefresh` of the ServerBMC `name` on `resourceVersion`:
   * a ConflictError when the object changed since it was read (another request won).
   */
  requestHealthRefresh?(
    name: string,
    resourceVersion: string,
    refresh: ServerHealthRefresh,
  ): Promise<ServerBmcRecord>;
  /**
   * The pods bound to a node, read from the apiserver now: a pre-flight must show the
   * present, and caching every pod of a cluster would cost the backend far more memory.
   */
  podsOnNode(nodeName: string): Promise<PodObject[]>;
  /** Every PodDisruptionBudget, read now (for the same reason). */
  podDisruptionBudgets(): Promise<PodDisruptionBudgetObject[]>;
  /**
   * The node's labels, the claims of these namespaces and the PersistentVolumes, read
   * now: what tells pods with data on the node apart (docs/drain.md). Without it
   * the pre-flight sees only hostPath volumes. Also the node's KubeVirt
   * VirtualMachineInstances (`virtualMachines`), absent where the cluster has no such API.
   */
  drainStorage?(
    nodeName: string,
    namespaces: string[],
  ): Promise<Omit<DrainContext, 'nodeName'>>;
  /**
   * What `podsOnNode` and `drainStorage` read, for many nodes at once (a
   * plan pre-flight), in a number of apiserver requests that does not grow with them.
   */
  drainInputsOf?(nodeNames: string[]): Promise<Map<string, NodeDrainInputs>>;
  /** Creates a NodeMaintenance; errors are `@backstage/errors` errors. */
  createMaintenance(obj: NewMaintenance): Promise<MaintenanceObject>;
  /** Sets one request flag on a maintenance (merge patch of spec). */
  setRequestFlag(
    name: string,
    flag: RequestFlagName,
    value: RequestFlag,
  ): Promise<MaintenanceObject>;
  /**
   * All MaintenancePlans (waits for the first sync). The plan methods are optional so a
   * state without plans (an older fake) still serves everything else; the plan routes
   * then list none and refuse writes.
   */
  plans?(): Promise<PlanObject[]>;
  /** Creates a MaintenancePlan; errors are `@backstage/errors` errors. */
  createPlan?(obj: NewPlan): Promise<PlanObject>;
  /**
   * Replaces a plan's spec with `change(current)` (read-modify-write on the
   * resourceVersion, retried on a lost race); `change` throws to refuse.
   */
  updatePlanSpec?(
    name: string,
    change: (current: PlanObject) => PlanObject['spec'],
  ): Promise<PlanObject>;
  /** One NodeMaintenance as the apiserver has it now (undefined: none). */
  readMaintenance?(name: string): Promise<MaintenanceObject | undefined>;
  /** One MaintenancePlan as the apiserver has it now (undefined: none). */
  readPlan?(name: string): Promise<PlanObject | undefined>;
  /**
   * Writes an approval's decision: `spec.approval` of the NodeMaintenance (or
   * MaintenancePlan) `name`, only if the object is still at `resourceVersion` (the
   * version the decision's checks read); a ConflictError otherwise, so of two approvers
   * who read the same request at once exactly one write wins (docs/approvals.md).
   */
  decideMaintenanceApproval?(
    name: string,
    resourceVersion: string,
    approval: Approval,
  ): Promise<MaintenanceObject>;
  decidePlanApproval?(
    name: string,
    resourceVersion: string,
    approval: Approval,
  ): Promise<PlanObject>;
  /**
   * Each node's Alertmanager alerts (`cluster/nodeAlerts.ts`: read at most every 30 s,
   * shared by every request); absent or undefined when no Alertmanager is configured.
   */
  alerts?(): Promise<ClusterAlerts | undefined>;
  /**
   * Calls `listener` when something a page shows changed (never for a heartbeat);
   * returns unsubscribe.
   */
  onChange(listener: () => void): () => void;
  /**
   * The snapshot of the cluster derived once per change, when the state keeps one
   * (the watch-backed state does; fakes may not, and are read afresh per request).
   */
  snapshot?(): Promise<KeyedSnapshot>;
}

/** The configured clusters. */
export interface ClusterRegistry {
  list(): ClusterState[];
  get(name: string): ClusterState | undefined;
}
