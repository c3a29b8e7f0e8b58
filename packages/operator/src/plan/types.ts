/*
 * What the MaintenancePlan rows (table.ts) read and answer: the view, the Decision, and
 * what every rule of `advance` reads.
 */
import type {
  AlertSnapshot,
  HardwareHealthFacts,
  MaintenancePlan,
  MaintenancePlanStatus,
  NodeMaintenance,
  ObjectGate,
  PlanNode,
} from '@rackside/plugin-servers-common';
import type { NodeView } from '../runtime/nodeView';
import type { AlertReads } from '../runtime/alertReads';
import type { Clock, Done, Wait } from '../runtime/lifecycle/table';

/** What the rows read: watch caches and the clock. */
export interface PlanView extends Clock {
  node(name: string): NodeView | undefined;
  nodes(): NodeView[];
  /** A NodeMaintenance by name (the reconciler's own writes included). */
  maintenance(name: string): NodeMaintenance | undefined;
  /** The PodDisruptionBudgets of the cluster that are not healthy, as namespace/name. */
  unhealthyBudgets(): string[];
  /**
   * Whether an object gate holds now, and if not why; `refused`: it cannot be checked as
   * written (a kind not allowed, no namespace, too many objects), so the plan stops.
   */
  objectGate(gate: ObjectGate): {
    holds: boolean;
    message: string;
    refused?: boolean;
  };
  /**
   * The cluster's Alertmanager (docs/alerts.md); absent when none is configured: the alert
   * gate is unknown (holds unless the plan says whenUnknown: Proceed) and a healthy return
   * checks only Ready.
   */
  alerting?: AlertReads;
  /** The node's BMC health reading (its ServerBMC's `status.health`); absent: none. */
  hardware(nodeName: string): HardwareHealthFacts | undefined;
  /**
   * The node's BMC firmware as its last health reading listed it (its ServerBMC's
   * status.health.firmware): a firmware plan with a version skips the nodes already at it.
   */
  firmwareReading?(
    nodeName: string,
  ): ReadonlyArray<{ id?: string; name: string; version: string }> | undefined;
}

/** What a row answers. */
export type PlanDecision =
  /** Write this status (phase and all); `event` is emitted after it is written. */
  | {
      kind: 'write';
      status: MaintenancePlanStatus;
      event?: { type: 'Normal' | 'Warning'; reason: string; message: string };
      requeueAfterMs?: number;
    }
  /** Create this step's NodeMaintenance, then write status with the step Running. */
  | {
      kind: 'start';
      step: PlanNode;
      maintenance: string;
      status: MaintenancePlanStatus;
    }
  /** Ask these open steps to abandon (onCancel abandon), then look again. */
  | { kind: 'abandon'; maintenances: string[]; by: string; reason: string }
  | Wait
  | Done;

export type PlanRow = (
  plan: MaintenancePlan,
  view: PlanView,
) => Promise<PlanDecision>;

/**
 * The longest time-based wait: a window weeks away is looked at again hourly (from the
 * caches, no apiserver request), and a timer never overflows (setTimeout holds 24.8 days).
 */
export const MAX_WAIT_MS = 60 * 60_000;

/** How long to wait until `at`: at least 0, at most {@link MAX_WAIT_MS}. */
export function untilThen(at: number, now: number): number {
  return Math.min(MAX_WAIT_MS, Math.max(0, at - now));
}

/** Everything a rule of `advance` reads. */
export interface Advance {
  plan: MaintenancePlan;
  view: PlanView;
  now: number;
  steps: PlanNode[];
  /** The status with the steps as their maintenances say. */
  status: MaintenancePlanStatus;
  open: PlanNode[];
  /** What Alertmanager said this pass (read only when the plan needs it). */
  alerts?: AlertSnapshot;
  /** Open steps whose node came back and is not yet proven healthy. */
  returning: PlanNode[];
  /** The earliest time a returning step or a held gate must be looked at again. */
  recheckAt?: number;
}

export type AdvanceRule = (a: Advance) => PlanDecision | undefined;
