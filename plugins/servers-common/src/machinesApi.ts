import type {
  Condition,
  MachineReclaimAuditEntry,
  MachineReclaimPhase,
  RequestFlag,
  TalosAddressState,
  TalosMachinePhase,
} from './resources';

/**
 * The JSON shapes of the machine routes of `/api/servers` (docs/architecture.md, "Adding machines"; docs/architecture.md, "The backend"; docs/architecture.md, "Layers"):
 * discovery addresses, discovered machines, and "Reset and add" requests. The backend
 * declares these as its answers and the frontend parses responses as these.
 *
 * No shape here carries a credential: a reclaim's talosconfig goes in with
 * {@link CreateReclaimRequestBody} and never comes back out.
 */

/** One discovery address of a TalosCluster and what the last probe found there. */
export interface DiscoveryAddressResponse {
  address: string;
  /**
   * What the last probe found, as a category; absent until discovery has probed the
   * address. NotAllowed: outside the allowed networks (or another port), never probed.
   */
  state?: TalosAddressState;
  /** SMBIOS UUID of the machine, where the probe could read it. */
  uuid?: string;
  lastProbeTime?: string;
  /** The category in words (never a probe's error text: that is in the operator's log). */
  message?: string;
  /**
   * A Reset and add request appended this address (annotation
   * `rackside.dev/reclaim-added-addresses`); it is taken out again once no
   * request or machine needs it.
   */
  addedByReclaim: boolean;
}

/** A TalosCluster (machines can be added to it) as the machine routes answer it. */
export interface TalosClusterResponse {
  name: string;
  namespace: string;
  /** Seconds between discovery passes. */
  intervalSeconds: number;
  /**
   * The networks discovery may reach (`spec.discovery.allowedNetworks`): an address
   * outside them is refused. Empty: the cluster takes no address (fail closed).
   */
  allowedNetworks: string[];
  /** The port of the machines' Talos API; an address must name this port or none. */
  talosPort: number;
  lastDiscoveryTime?: string;
  /** The addresses of `spec.discovery.addresses`, in that order, with their probe results. */
  addresses: DiscoveryAddressResponse[];
  conditions: Condition[];
}

/** A discovered machine (TalosMachine, named by its SMBIOS UUID). */
export interface TalosMachineResponse {
  uuid: string;
  /** The TalosCluster whose discovery found it. */
  talosCluster: string;
  /** `Pending` until the operator reports otherwise. */
  phase: TalosMachinePhase;
  address?: string;
  hostname?: string;
  /** The Node with this machine's system UUID, once it exists. */
  nodeName?: string;
  /** Who asked to add it, and why (set once). */
  join?: RequestFlag;
  lastSeenAt?: string;
  configAppliedAt?: string;
  joinedAt?: string;
  message?: string;
  createdAt?: string;
}

/** `GET /clusters/:cluster/machines`. */
export interface MachinesResponse {
  cluster: string;
  /** The namespace the TalosClusters, TalosMachines and reclaims live in (the operator's). */
  namespace: string;
  talosClusters: TalosClusterResponse[];
  /** Every TalosMachine, newest first. */
  machines: TalosMachineResponse[];
}

/** The answer of `POST /clusters/:cluster/discovery/addresses` (201). */
export interface DiscoveryAddressAddedResponse {
  talosCluster: string;
  address: string;
}

/** The answer of `POST /clusters/:cluster/machines/:uuid/join`: the TalosMachine. */
export interface JoinMachineResponse {
  name: string;
}

/** `GET /clusters/:cluster/reclaims/can`: whether "Reset and add" is offered to this user. */
export interface CanReclaimResponse {
  allowed: boolean;
  /** Why not, for a person (absent when allowed). */
  reason?: string;
}

/** The answer of `POST /clusters/:cluster/reclaims` (201): the MachineReclaim's name. */
export interface ReclaimCreatedResponse {
  name: string;
  /** What went wrong after the request was recorded (it proceeds regardless). */
  warnings?: string[];
}

/** The answer of a confirmation: the MachineReclaim's name. */
export interface ReclaimConfirmedResponse {
  name: string;
}

/** A MachineReclaim ("Reset and add" request) as the routes answer it. Never the credential. */
export interface ReclaimResponse {
  name: string;
  address: string;
  /** The TalosCluster the machine is added to. */
  targetCluster: string;
  /** `Pending` until the operator reports otherwise. */
  phase: MachineReclaimPhase;
  /** Done, Failed, Expired or Refused. */
  terminal: boolean;
  /** The UUID the operator read through the foreign talosconfig (what the user types). */
  machineUUID?: string;
  /** The typed UUID has been accepted (`spec.confirmUUID` is set). */
  confirmed: boolean;
  ttlMinutes: number;
  expiresAt?: string;
  confirmedAt?: string;
  resetSentAt?: string;
  credentialDeletedAt?: string;
  /** The outcome in words (e.g. the DHCP hint of a Failed request). */
  result?: string;
  audit: MachineReclaimAuditEntry[];
  conditions: Condition[];
  requestedBy?: string;
  reason?: string;
  createdAt?: string;
}

/** `GET /clusters/:cluster/reclaims`, newest first. */
export interface ReclaimListResponse {
  items: ReclaimResponse[];
}
