import type { PowerProviderType, PowerVerb } from './capability';
import type { Ceremony } from './ceremony';
import type { ServerAction } from './permissions';
import type { MaintenanceIntent, MaintenancePhase } from './quorum';
import type { NodeMaintenanceSpec, NodeMaintenanceStatus } from './resources';

/**
 * The JSON shapes of the `/api/servers` read routes (DESIGN sections 6 to 8).
 * The backend's view functions declare these as their return types and the
 * frontend client parses responses as these, so the browser and the server
 * share one definition.
 */

/** The quorum numbers of a cluster, or why they cannot be derived. */
export type QuorumSummaryResponse =
  | {
      derived: true;
      /** Control-plane members. */
      members: number;
      /** floor(members / 2) + 1. */
      quorum: number;
      /** Ready members that are not already going down. */
      ready: number;
      /** ready - quorum; negative when below quorum. */
      margin: number;
      /** Members with a non-terminal reboot or shutdown maintenance. */
      goingDown: string[];
    }
  | { derived: false; reason: string };

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

/** A request flag (returnToService, abandon, powerOn) as set on a maintenance. */
export type MaintenanceRequestFlag = NonNullable<
  NodeMaintenanceSpec['returnToService']
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
  progress?: MaintenanceProgress;
  conditions: MaintenanceCondition[];
  refusal?: MaintenanceRefusal;
  abandoned?: boolean;
  history: MaintenanceHistoryEntry[];
}

/** `GET /clusters/:cluster/maintenances`. */
export interface MaintenanceListResponse {
  items: MaintenanceResponse[];
}

/** A server (Node) as the list and detail routes answer it. */
export interface ServerResponse {
  name: string;
  cluster: string;
  /** From `node-role.kubernetes.io/<role>` labels, sorted. */
  roles: string[];
  controlPlane: boolean;
  virtual: boolean;
  ready: boolean;
  unschedulable: boolean;
  labels: Record<string, string>;
  systemUUID?: string;
  /** The node's non-terminal maintenance, if any. */
  maintenance?: MaintenanceResponse;
  /** The power verbs the channel offers for this node. */
  powerVerbs: PowerVerb[];
  actions: Record<ServerAction, ActionOffer>;
}

/** `GET /clusters/:cluster/servers`. */
export interface ServerListResponse {
  cluster: string;
  quorum: QuorumSummaryResponse;
  items: ServerResponse[];
}

/** The body of `POST /clusters/:cluster/servers/:node/actions/:action`. */
export interface ActionRequestBody {
  reason: string;
  preflightToken?: string;
  typedName?: string;
}

/** The answer of a successful action: the NodeMaintenance it created or changed. */
export interface ActionResponse {
  name: string;
}
