import type { PowerProviderType, PowerVerb } from './rules/capability';
import type { Ceremony, CeremonyLevel } from './rules/ceremony';
import type {
  DrainBudget,
  DrainEstimate,
  DrainPod,
  DrainStatefulSet,
  DrainVirtualMachine,
  EvictedWorkload,
  RefusedDrainPod,
} from './rules/drain';
import type { GuardVerdict } from './rules/guard';
import type { ServerAction } from './permissions';
import type {
  DerivedQuorum,
  MaintenanceIntent,
  MaintenancePhase,
} from './rules/quorum';
import type {
  HealthRollup,
  NodeMaintenanceAlerting,
  NodeMaintenanceHardware,
  NodeMaintenanceSpec,
  NodeMaintenanceStatus,
  ServerHealth,
  FirmwareHistoryEntry,
  FirmwareRequest,
  FirmwareStatus,
  UpgradeRequest,
  UpgradeStatus,
} from './resources';
import type { AlertGateInput } from './rules/alertGate';
import type {
  ServerSortDirection,
  ServerSortKey,
} from './rules/serverListRules';

/**
 * The JSON shapes of the `/api/servers` read routes (docs/architecture.md, "The rules and who calls them"; docs/architecture.md, "The backend"; docs/architecture.md, "Layers").
 * The backend's view functions declare these as their return types and the
 * frontend client parses responses as these, so the browser and the server
 * share one definition.
 */

/** The quorum numbers of a cluster, or why they cannot be derived. */
export type QuorumSummaryResponse =
  | DerivedQuorum
  | {
      derived: false;
      reason: string;
      /**
       * Set when the quorum is derived but not shown to this user: their `servers:read`
       * is conditional and does not cover every control-plane member.
       */
      hidden?: true;
    };

/** What the deployment's power channel offers, as `GET /clusters` reports it. */
export interface ClusterPowerResponse {
  type: PowerProviderType;
  attendedRack: boolean;
  confirmsPowerOff: boolean;
  verbs: PowerVerb[];
}

/** One reachable cluster in `GET /clusters`. */
export interface AvailableClusterSummary {
  name: string;
  title: string;
  available: true;
  /** Number of Nodes. */
  servers: number;
  quorum: QuorumSummaryResponse;
  power: ClusterPowerResponse;
}

/** One cluster in `GET /clusters` whose state could not be read. */
export interface UnavailableClusterSummary {
  name: string;
  title: string;
  available: false;
  error: string;
}

/** One cluster in `GET /clusters`. */
export type ClusterSummaryResponse =
  | AvailableClusterSummary
  | UnavailableClusterSummary;

/** `GET /clusters`. */
export interface ClusterListResponse {
  items: ClusterSummaryResponse[];
}

/** Whether an action is offered on a server now, allowed for the user, and its ceremony. */
export interface ActionOffer {
  /** The action makes sense on this server now. */
  offered: boolean;
  /** The permission framework allows the current user to request it. */
  allowed: boolean;
  /** What a request must carry. */
  ceremony: Ceremony;
  /** Why the action is not offered. */
  why?: string;
}

/** The drain progress of a maintenance (`status.drain`). */
export type MaintenanceProgress = NonNullable<NodeMaintenanceStatus['drain']>;

/** Why the operator refused a maintenance (`status.refusal`). */
export type MaintenanceRefusal = NonNullable<NodeMaintenanceStatus['refusal']>;

/** One entry of a maintenance's phase history. */
export type MaintenanceHistoryEntry = NonNullable<
  NodeMaintenanceStatus['history']
>[number];

/** One condition of a maintenance. */
export type MaintenanceCondition = NonNullable<
  NodeMaintenanceStatus['conditions']
>[number];

/**
 * The drain options a maintenance was asked with (`spec.drain`), each as written: an
 * option left out is its default (not evicted, the pod's own grace period, no timeout).
 */
export type MaintenanceDrainOptions = Partial<
  NonNullable<NodeMaintenanceSpec['drain']>
>;

/** A request flag (returnToService, abandon, powerOn) as set on a maintenance. */
export type MaintenanceRequestFlag = NonNullable<
  NodeMaintenanceSpec['returnToService']
>;

/** The power verbs of a maintenance as the operator recorded them (`status.power`). */
export type MaintenancePowerRecords = NonNullable<
  NodeMaintenanceStatus['power']
>;

/** One recorded power verb: recorded, then sent (or failed), over which channel. */
export type MaintenancePowerRecord = NonNullable<
  MaintenancePowerRecords['reboot']
>;

/** A NodeMaintenance as the routes answer it. */
export interface MaintenanceResponse {
  name: string;
  nodeName: string;
  intent: MaintenanceIntent;
  reason: string;
  requestedBy?: string;
  createdAt?: string;
  phase: MaintenancePhase;
  terminal: boolean;
  returnToService?: MaintenanceRequestFlag;
  abandon?: MaintenanceRequestFlag;
  powerOn?: MaintenanceRequestFlag;
  /** The drain options it was asked with (`spec.drain`); absent: the default drain. */
  drain?: MaintenanceDrainOptions;
  progress?: MaintenanceProgress;
  conditions: MaintenanceCondition[];
  refusal?: MaintenanceRefusal;
  abandoned?: boolean;
  history: MaintenanceHistoryEntry[];
  /** The power verbs sent for this maintenance, each at most once. */
  power?: MaintenancePowerRecords;
  /** When the channel accepted the reboot. */
  rebootSentAt?: string;
  /** When the channel accepted the shutdown; bounds the PowerOffConfirmed readback. */
  poweredOffAt?: string;
  /** When the channel accepted the power-on. */
  powerOnSentAt?: string;
  /** The silence the operator holds on the node's alerts (docs/alerts.md); absent: none. */
  alerting?: MaintenanceAlerting;
  /** What the BMC said at the start and the end, and the log entries written during it. */
  hardware?: NodeMaintenanceHardware;
  /** An upgrade: the image asked (`spec.upgrade`) and the versions recorded (`status.upgrade`). */
  upgrade?: MaintenanceUpgrade;
  /** A firmware update: the image asked (`spec.firmware`) and the task and inventories (`status.firmware`). */
  firmware?: MaintenanceFirmware;
}

/** What a maintenance page shows of a Talos upgrade: what was asked and how far it went. */
export interface MaintenanceUpgrade {
  request: UpgradeRequest;
  /** Absent until the operator recorded the upgrade (Drained, right before it sends). */
  status?: UpgradeStatus;
}

/** What a maintenance page shows of a firmware update: what was asked and the BMC's task. */
export interface MaintenanceFirmware {
  request: FirmwareRequest;
  /** Absent until the operator read the inventory before the update. */
  status?: FirmwareStatus;
}

/**
 * `status.alerting` of a NodeMaintenance: the Alertmanager silences the operator holds on
 * the node's alerts while the maintenance is open, and until when.
 */
export type MaintenanceAlerting = NodeMaintenanceAlerting;

/** One Alertmanager alert of a node, as the portal shows it (docs/alerts.md, "In the portal"). */
export interface ServerAlert {
  /** Alertmanager's fingerprint: one alert, however many nodes it belongs to. */
  fingerprint: string;
  alertname: string;
  severity?: string;
  /**
   * firing: active (or not yet judged by Alertmanager); silenced: a silence holds it;
   * inhibited: another firing alert covers it.
   */
  state: 'firing' | 'silenced' | 'inhibited';
  /**
   * Silenced ones only: true when every silence on it is Rackside's (a maintenance's), false
   * when a person's silence holds it; absent when the silences could not be read.
   */
  silencedByRackside?: boolean;
  /** The ids of the silences that hold it. */
  silencedBy: string[];
  startsAt: string;
  /** The `summary` annotation. */
  summary?: string;
  labels: Record<string, string>;
}

/** What a row shows of a node's alerts. */
export interface ServerAlertSummary {
  firing: number;
  silenced: number;
  /** The highest severity among the firing ones. */
  highestSeverity?: string;
  /** The last read of Alertmanager failed: these counts are from the read before. */
  stale?: boolean;
}

/**
 * A plan's alert gate as the dialog asks it and the pre-flight query carries it (JSON in
 * `alertGate`): the shape of the request body's `gates.alerts`.
 */
export type PlanAlertGateInput = AlertGateInput;

/**
 * What a plan pre-flight says of the alert gate asked with it (`alertGate`): the alerts that
 * would hold the gate now. Unknown (no Alertmanager, or it could not be read) holds the gate
 * unless the plan says `whenUnknown: Proceed`.
 */
export interface PlanPreflightAlerts {
  configured: boolean;
  /** false: the alerts are unknown (`reason`), and the gate would not hold. */
  known: boolean;
  reason?: string;
  /**
   * The alerts that would hold the gate, each with the nodes it belongs to (maybe none)
   * that the reader may read; an alert of servers they cannot read only is not listed.
   */
  holding: Array<ServerAlert & { nodes: string[] }>;
  /** How many servers the reader cannot read have alerts holding the gate (absent: none). */
  hiddenServers?: number;
  /** How many holding alerts belong only to such servers (counted, not listed). */
  hiddenAlerts?: number;
  /** The same in words: "and 2 servers you cannot see". */
  hidden?: string;
  /** When Alertmanager was read (at most 30 s before the pre-flight). */
  readAt?: string;
}

/** `GET /clusters/:cluster/servers/:node/alerts`. */
export interface ServerAlertsResponse {
  cluster: string;
  node: string;
  /** Whether the cluster has an Alertmanager configured; false: no alerts are read. */
  configured: boolean;
  items: ServerAlert[];
  /** When Alertmanager was last read successfully. */
  readAt?: string;
  /** The last read failed: the items are from the read before (or none). */
  stale?: { error: string; since: string };
}

/** `GET /clusters/:cluster/maintenances`. */
export interface MaintenanceListResponse {
  items: MaintenanceResponse[];
}

/** A server's health as a row of the Servers page shows it (from its ServerBMC). */
export interface ServerHealthSummary {
  rollup: HealthRollup;
  /** When the reading was made (the row shows its age). */
  readAt?: string;
  /** How many parts the BMC reports not OK. */
  failedParts: number;
  /** Why the last reading failed (the reading's state is then unknown). */
  error?: string;
  /** The operator's sweep interval (s): a reading older than two is unknown. */
  sweepIntervalSeconds?: number;
}

/**
 * A server's health as the detail route answers it: the whole reading of
 * `ServerBMC.status.health` (never the BMC's address or credentials), and the pending
 * refresh request.
 */
export interface ServerHealthDetail
  extends ServerHealthSummary,
    Omit<ServerHealth, 'rollup' | 'readAt'> {
  /** The refresh asked for last (`spec.healthRefresh.requestedAt`), answered or not. */
  refreshRequestedAt?: string;
  /**
   * The firmware updates of this BMC that ended (its ServerBMC's
   * `status.firmwareHistory`, oldest first; docs/upgrades.md, "The BMC's firmware history").
   */
  firmwareHistory?: FirmwareHistoryEntry[];
}

/** `POST /clusters/:cluster/servers/:node/health/refresh` (202). */
export interface HealthRefreshResponse {
  /** The request the operator answers (`status.health.answeredRequestAt` once it did). */
  requestedAt: string;
}

/** What the list and the detail routes both say of a server (Node). */
export interface ServerFields {
  name: string;
  cluster: string;
  /** From `node-role.kubernetes.io/<role>` labels, sorted. */
  roles: string[];
  controlPlane: boolean;
  virtual: boolean;
  ready: boolean;
  unschedulable: boolean;
  labels: Record<string, string>;
  /** The node's non-terminal maintenance, if any. */
  maintenance?: MaintenanceResponse;
  /** The power verbs the channel offers for this node. */
  powerVerbs: PowerVerb[];
  /** The node's Alertmanager alerts; absent when the cluster has no Alertmanager configured. */
  alerts?: ServerAlertSummary;
  /** What the node's BMC last said (absent: no ServerBMC, or not read yet). */
  health?: ServerHealthSummary;
  /**
   * The Talos version the Node reports (`status.nodeInfo.osImage` "Talos (v1.11.3)",
   * talosVersionOfOsImage); absent when it names none.
   */
  talosVersion?: string;
}

/** A server as the detail route answers it: every action, offered or not, and why. */
export interface ServerResponse extends ServerFields {
  systemUUID?: string;
  health?: ServerHealthDetail;
  actions: Record<ServerAction, ActionOffer>;
}

/**
 * A server as the list route answers it: what a row of the Servers page shows. The
 * detail route's system UUID and the actions that are not offered or not allowed (with
 * why) are left out, so that the list of a cluster of thousands of servers stays small.
 */
export interface ServerListItem extends ServerFields {
  /**
   * The actions offered on this server now and allowed for the user, each with the
   * level of the ceremony its request needs (`ceremonyAt` rebuilds the ceremony). An
   * action that is absent is not offered or not allowed; `GET .../servers/:node` says
   * which, and why.
   */
  actions: Partial<Record<ServerAction, CeremonyLevel>>;
}

/** `GET /clusters/:cluster/servers`. */
export interface ServerListResponse {
  cluster: string;
  quorum: QuorumSummaryResponse;
  items: ServerListItem[];
}

/**
 * The windowed mode of `GET /clusters/:cluster/servers`: `limit` rows (at most 1,000)
 * from where `continue` says, of the servers matching `filter`, in the order of `sort`
 * and `direction` ({@link matchesServerFilter}, {@link compareServers}). Every window
 * of one walk (the first window and the ones its `continue` tokens lead to) is cut from
 * the list as it was at the first window; a change signal means start a new walk.
 */
export interface ServerListWindowQuery {
  limit?: number;
  /** The `continue` of the previous window of the same walk. */
  continue?: string;
  /** The table's filter text (case-insensitive). */
  filter?: string;
  sort?: ServerSortKey;
  direction?: ServerSortDirection;
}

/** One window of the servers list ({@link ServerListWindowQuery}). */
export interface ServerListWindowResponse extends ServerListResponse {
  /** The servers matching the filter in this walk (every window). */
  total: number;
  /** The position of the first item of this window in the walk. */
  offset: number;
  /** The token of the next window; absent on the last. */
  continue?: string;
}

/**
 * What a request created held says of its approval (docs/approvals.md): the rule that
 * holds it, who may approve (catalog refs of users and groups), until when.
 */
export interface HeldApprovalResponse {
  rule: string;
  approvers: string[];
  expiresAt: string;
}

/** The answer of a successful action: the NodeMaintenance it created or changed. */
export interface ActionResponse {
  name: string;
  /** The new maintenance waits for this approval before anything touches the node. */
  approval?: HeldApprovalResponse;
}

/**
 * `GET /upgrades/sources`: what this deployment lets an upgrade or a firmware update
 * install (`servers.upgrades` in app-config, docs/upgrades.md), for the portal to offer
 * targets from. The backend checks the request against the same lists.
 */
export interface UpgradeSourcesResponse {
  /** Talos installer image prefixes (imageAllowed). */
  talosImages: string[];
  /** The https origins firmware images may come from (whyFirmwareSourceRefused). */
  firmwareSources: string[];
  /**
   * Those of `firmwareSources` configured with `checksumRequired`: a firmware update from
   * them is refused without a checksum (whyFirmwareChecksumMissing), so the portal asks
   * for one.
   */
  firmwareChecksumRequired: string[];
}

/** The actions that carry a pre-flight (`GET .../preflight?action=`). */
export const PREFLIGHT_ACTIONS = [
  'drain',
  'reboot',
  'shutdown',
  'upgrade',
  'firmware',
] as const;
/** An action with a pre-flight. */
export type PreflightAction = (typeof PREFLIGHT_ACTIONS)[number];

/** What a node runs now, as an upgrade's or a firmware update's pre-flight shows it. */
export interface PreflightVersions {
  /** The Talos version its Node reports (`osImage` "Talos (v1.11.3)"); absent if none. */
  talos?: string;
  /**
   * The BMC's firmware inventory as of its last health reading (component and version,
   * and its `@odata.id` where the reading kept it: what a firmware request's `targets`
   * name); absent when no reading listed one.
   */
  firmware?: Array<{ id?: string; name: string; version: string }>;
}

/** The quorum effect of an action, as the pre-flight shows it. */
export interface PreflightQuorumEffect {
  verdict: GuardVerdict;
  /** The guard's explanation, a sentence. */
  reason: string;
  members: number | null;
  quorum: number | null;
  ready: number | null;
  margin: number | null;
  /** The margin once the action has taken its member down. */
  marginAfter: number | null;
}

/**
 * `GET /clusters/:cluster/servers/:node/preflight?action=`: what the action would do now.
 * `token` binds exactly this impact; a request carrying it is refused with 409 (and the
 * new pre-flight) if the impact changed.
 */
export interface PreflightResponse {
  cluster: string;
  node: string;
  action: PreflightAction;
  takenAt: string;
  /** The drain options the impact was computed with. */
  options: {
    deleteEmptyDirData: boolean;
    force: boolean;
    /** Absent from answers of backends older than docs/drain.md: false. */
    allowNodeLocalData?: boolean;
  };
  /** Pods that would be evicted (and waited for). */
  evict: DrainPod[];
  /** Pods that would be refused, and why; a drain with any of these is not started. */
  refused: RefusedDrainPod[];
  /** DaemonSet pods left in place. */
  daemonSet: DrainPod[];
  /** Static (mirror) pods left in place. */
  mirror: DrainPod[];
  /** Succeeded or Failed pods: nothing to evict. */
  finished: DrainPod[];
  /**
   * Section 16's classes; the backend always sends them (optional only for answers of
   * older backends). `rackside.dev/drain: skip`: left in place.
   */
  skipped?: DrainPod[];
  /** `rackside.dev/drain: wait-completed`: waited for until they finish, never evicted. */
  waitCompleted?: DrainPod[];
  /**
   * Pods to evict whose data is on the node (allowed by allowNodeLocalData): they cannot
   * run elsewhere until the node is back. Without the option they are in `refused`.
   */
  nodeLocal?: DrainPod[];
  /** StatefulSets with pods to evict, and the budgets over those pods. */
  statefulSets?: DrainStatefulSet[];
  /** The `rackside.dev/drain-order` groups, evicted lowest first. */
  orderGroups?: Array<{ order: number; pods: string[] }>;
  /** The expected duration from the grace periods, with the slowest pod. */
  estimate?: DrainEstimate;
  /**
   * KubeVirt VirtualMachineInstances on the node, each live-migrated, shut down or
   * blocking the drain by its eviction strategy. Absent where the cluster has no
   * kubevirt.io VirtualMachineInstance API (and from answers of older backends).
   */
  virtualMachines?: DrainVirtualMachine[];
  /** Disruption budgets covering pods to evict; `blocksNow` ones refuse evictions today. */
  budgets: DrainBudget[];
  /**
   * An upgrade or a firmware update: what the node runs now, for the person choosing the
   * target. Absent for other actions (and from answers of older backends).
   */
  versions?: PreflightVersions;
  /**
   * The node's firing Alertmanager alerts as last read: shown, never acknowledged (alerts
   * come and go on their own; a plan's alert gate holds on them). Absent where the cluster
   * has no Alertmanager configured (and from answers of older backends).
   */
  alerts?: Array<{ alertname: string; severity?: string }>;
  quorum: PreflightQuorumEffect;
  ceremony: Ceremony;
  /** Whether a request with this token would be accepted now; `blockers` say why not. */
  canProceed: boolean;
  blockers: string[];
  /**
   * The pods to evict labelled `backstage.io/kubernetes-id` (the Kubernetes plugin's
   * convention), grouped by the label's value: the workloads the drain disrupts.
   * Absent from answers of older backends.
   */
  workloads?: EvictedWorkload[];
  /**
   * The catalog entities whose pods (labelled `backstage.io/kubernetes-id`) the drain
   * evicts, with their owners: the people told when the drain starts. Absent when the
   * backend has no catalog to ask (or the catalog could not be read).
   */
  affectedEntities?: AffectedEntity[];
  token: string;
}

/** A catalog entity whose pods a drain evicts, and who owns it. */
export interface AffectedEntity {
  /** The entity ref, e.g. `component:default/shop-web`. */
  entityRef: string;
  /** Its title, or its name, for a person. */
  title: string;
  /** `spec.owner` as a full entity ref (a group or user), if the entity has one. */
  owner?: string;
  /** The `backstage.io/kubernetes-id` its pods carry. */
  kubernetesId: string;
  /** The pods of it the drain evicts, as namespace/name. */
  pods: string[];
}

/** The body of a 409 when the acknowledged pre-flight no longer matches the impact. */
export interface PreflightChangedBody {
  error: { name: 'ConflictError'; message: string };
  preflight: PreflightResponse;
}

export * from './machinesApi';
