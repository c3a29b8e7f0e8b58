/*
 * The maintenance plan routes' answers (docs/architecture.md, "The backend"; docs/plans.md): the plans of a cluster
 * with their per-node progress, and the plan pre-flight (per node, per step, the
 * estimate) with the token that binds it.
 */
import type {
  HeldApprovalResponse,
  PlanPreflightAlerts,
  PreflightResponse,
  PreflightQuorumEffect,
} from './api';
import type {
  LabelSelector,
  PlanCounts,
  PlanGates,
  PlanIntent,
  PlanWindow,
} from './resources/maintenancePlan';
import type { PlanPhase, PlanStepPhase } from './rules/planPhases';
import type { AlertGateInput } from './rules/alertGate';
import type {
  HealthyReturnBody,
  PlanFirmwareBody,
  PlanUpgradeBody,
} from './requestBodies';
import type { DrainBudget } from './rules/drain';
import type { PlanUpgradeSummary } from './rules/planUpgrade';

/** One node of a plan, as the plan page shows it. */
export interface PlanStepResponse {
  name: string;
  controlPlane: boolean;
  phase: PlanStepPhase;
  /** The NodeMaintenance of the step, once it started. */
  maintenance?: string;
  startedAt?: string;
  endedAt?: string;
  message?: string;
  /** An upgrade plan: the Talos version the node ran before, and came back on. */
  talosVersion?: { before?: string; after?: string };
  /**
   * A firmware plan with a version: the version its targeted components reported before,
   * and report after (the plan's version once reached, or for a node already at it).
   */
  firmwareVersion?: { before?: string; after?: string };
}

/** Who paused, resumed or cancelled a plan, why and when. */
export interface PlanFlagResponse {
  by: string;
  reason: string;
  at?: string;
}

/** `GET /clusters/:cluster/plans/:name`: one MaintenancePlan. */
export interface PlanResponse {
  cluster: string;
  name: string;
  intent: PlanIntent;
  /** An upgrade plan's installer image (spec.upgrade). */
  upgrade?: { image: string; stage?: boolean };
  /** A firmware plan's update (spec.firmware). */
  firmware?: {
    imageURI: string;
    targets?: string[];
    applyTime?: 'Immediate' | 'OnReset';
    version?: string;
    checksum?: string;
  };
  /**
   * An upgrade plan, or a firmware plan with a version: how many of its nodes run the
   * target, "12 of 40 at v1.12.0" (planUpgradeSummary).
   */
  versions?: PlanUpgradeSummary;
  /** Pending until the operator has resolved the plan. */
  phase: PlanPhase;
  message?: string;
  maxParallel: number;
  reason: string;
  requestedBy?: string;
  createdAt?: string;
  /** The nodes in the order they go; from spec.nodes until the operator resolved them. */
  nodes: PlanStepResponse[];
  counts: PlanCounts;
  waiting?: {
    on: string;
    gate?: string;
    message: string;
    since: string;
    until?: string;
  };
  gates?: PlanGates;
  window?: PlanWindow;
  failurePolicy: { tolerate: number };
  onCancel: 'finish' | 'abandon';
  paused: boolean;
  pause?: PlanFlagResponse;
  resume?: PlanFlagResponse;
  cancel?: PlanFlagResponse;
  /** The plan's authority: no step starts after `until` until someone renews it. */
  authorization?: {
    by: string;
    at: string;
    until: string;
    excluded?: string[];
  };
  /** The rung each node's step was acknowledged at (hazard: its name was typed). */
  acknowledged?: Record<string, string>;
  /** Who acknowledged what, oldest first: the creation, then renewals that did. */
  acknowledgements?: Array<{
    by: string;
    at: string;
    on: 'create' | 'renew';
    preflightTakenAt: string;
    rungs: Record<string, string>;
  }>;
  /** The drain options of every step (a renewal's pre-flight takes the same). */
  drain?: {
    deleteEmptyDirData?: boolean;
    force?: boolean;
    allowNodeLocalData?: boolean;
  };
  startedAt?: string;
  completedAt?: string;
  estimate?: {
    stepSeconds: number;
    remainingSeconds: number;
    completesAt?: string;
  };
}

/** How many plans one page of `GET /clusters/:cluster/plans` holds when `limit` is not given. */
export const PLAN_LIST_DEFAULT_LIMIT = 100;
/** The most plans one page may hold. */
export const PLAN_LIST_MAX_LIMIT = 500;
/** Which plans a list asks for: those still going, or those that ended. */
export const PLAN_LIST_STATES = ['open', 'finished'] as const;
/** The `state` filter of the plans list. */
export type PlanListState = (typeof PLAN_LIST_STATES)[number];

/**
 * The query of `GET /clusters/:cluster/plans`: a page of `limit` plans (1 to
 * {@link PLAN_LIST_MAX_LIMIT}, default {@link PLAN_LIST_DEFAULT_LIMIT}) after the one
 * `continue` names, optionally only the open or only the finished ones.
 */
export interface PlanListQuery {
  limit?: number;
  /** The `continue` of the previous page of the same walk. */
  continue?: string;
  state?: PlanListState;
}

/**
 * `GET /clusters/:cluster/plans`: newest first (by creation, then name). The walk is by
 * position, not by offset: a plan created during a walk neither repeats nor shifts it.
 */
export interface PlanListResponse {
  items: PlanResponse[];
  /** The token of the next page; absent on the last. */
  continue?: string;
}

/** The pre-flight of one node of a plan: the single pre-flight, without a token. */
export type PlanNodeImpact = Omit<PreflightResponse, 'token'> & {
  controlPlane: boolean;
  /** The step (0-based) the node goes in. */
  step: number;
};

/** A node of a plan that nothing will be asked of: its step is Skipped up front. */
export interface PlanSkippedNode {
  node: string;
  /** In the operator's words: `already at v1.12.0`. */
  reason: string;
  /**
   * A firmware plan's node: its BMC's last reading (as the single pre-flight's
   * `versions.firmware`), so the portal's Components choice still lists what it holds.
   */
  firmware?: Array<{ id?: string; name: string; version: string }>;
}

/** One step of a plan as the pre-flight foresees it. */
export interface PlanPreflightStep {
  /** 0-based. */
  index: number;
  nodes: string[];
  controlPlane: boolean;
  /** The slowest node's drain estimate, in seconds. */
  estimateSeconds: number;
  /** The guard's verdict for the step (a worker step never touches quorum). */
  quorum: PreflightQuorumEffect;
}

/**
 * `GET /clusters/:cluster/plans/preflight?intent=&nodes=`: what the plan would do now.
 * `token` binds all of it (every node's impact, the steps, maxParallel); a create
 * carrying it is refused with 409 and the new pre-flight if any of it changed.
 */
export interface PlanPreflightResponse {
  cluster: string;
  intent: PlanIntent;
  takenAt: string;
  maxParallel: number;
  /** An upgrade plan's installer image (the pre-flight's `image`); the token binds it. */
  image?: string;
  /** A firmware plan's image URI (the pre-flight's `imageURI`); the token binds it. */
  imageURI?: string;
  /** A firmware plan's version (the pre-flight's `version`); the token binds it. */
  version?: string;
  /** Every node's impact, in the order they go (the skipped ones are not among them). */
  nodes: PlanNodeImpact[];
  /**
   * The nodes already at the plan's target, Skipped up front by the rules the operator
   * applies (an upgrade: `alreadyAtTarget`, the Node's osImage; a firmware plan with a
   * version: `firmwareAlreadyAtTarget`, the BMC's last health reading): no step, no place
   * among the maxParallel, no quorum effect, not in the typed count.
   */
  skipped?: PlanSkippedNode[];
  steps: PlanPreflightStep[];
  /** The disruption budgets over pods of any node of the plan (each once). */
  budgets: DrainBudget[];
  /** The sum of the steps' estimates (drain time; a reboot adds the machines' boot). */
  estimate: { seconds: number };
  /**
   * How many servers a reboot, upgrade or firmware plan's requester types: the nodes it
   * will act on, the skipped ones not counted (null: no typed count).
   */
  typedCount: number | null;
  canProceed: boolean;
  /** Each names its node. */
  blockers: string[];
  /** Only when the pre-flight was asked with an alert gate: what would hold it now. */
  alerts?: PlanPreflightAlerts;
  token: string;
}

/** The body of `POST /clusters/:cluster/plans` (a product contract). */
export interface PlanRequestBody {
  intent: PlanIntent;
  /** Intent upgrade only, and required there: the installer image (and stage). */
  upgrade?: PlanUpgradeBody;
  /** Intent firmware only, and required there: the image URI, targets and applyTime. */
  firmware?: PlanFirmwareBody;
  nodes?: string[];
  selector?: LabelSelector;
  maxParallel?: number;
  /** `alerts`: wait while a matching alert fires (docs/alerts.md, "The alert gate"). */
  gates?: Partial<Omit<PlanGates, 'alerts'>> & { alerts?: AlertGateInput };
  /** A step is Done only after a healthy return (defaults 60 s Ready, 900 s timeout). */
  healthyReturn?: HealthyReturnBody;
  window?: Partial<PlanWindow>;
  failurePolicy?: { tolerate?: number };
  /** Drain options of every step, as in the pre-flight. */
  drain?: {
    deleteEmptyDirData?: boolean;
    force?: boolean;
    allowNodeLocalData?: boolean;
  };
  reason: string;
  preflightToken: string;
  /** Reboots, upgrades and firmware updates: the number of servers, typed out. */
  typedCount?: number;
  /**
   * The nodes whose step is at the hazard rung of the pre-flight (it consumes the last
   * quorum margin), each name typed out; the reason is typed too, never picked.
   */
  typedNames?: string[];
}

/** The body of `POST /clusters/:cluster/plans/:name/renew`. */
export interface PlanRenewBody {
  reason: string;
  /** Renew without the nodes the caller may not act on (their steps are skipped). */
  skipRefused?: boolean;
  /**
   * The token of the renewer's plan pre-flight of the remaining steps: needed when one
   * is at the hazard rung or above the rung it was acknowledged at (servers-common's
   * renewalAcknowledgement); with it the renewer's acknowledgement replaces the creator's.
   */
  preflightToken?: string;
  /** The remaining nodes at the hazard rung of that pre-flight, each name typed out. */
  typedNames?: string[];
}

/** The answer of `POST /clusters/:cluster/plans/:name/renew`. */
export interface PlanRenewedResponse {
  name: string;
  /** The new end of the plan's authorization. */
  until: string;
  /** A renewal that raised a rung a rule holds: the new approval no step starts without. */
  approval?: HeldApprovalResponse;
}

/** The answer of `POST /clusters/:cluster/plans` (201). */
export interface PlanCreatedResponse {
  name: string;
  /** The plan waits for this approval before any step starts (docs/approvals.md). */
  approval?: HeldApprovalResponse;
}

/** The plan controls. */
export const PLAN_CONTROLS = ['pause', 'resume', 'cancel'] as const;
/** A plan control. */
export type PlanControl = (typeof PLAN_CONTROLS)[number];
