/*
 * The MaintenancePlan kind's ports at the edge: its caches (the plans, and the
 * PodDisruptionBudgets slimmed to their health) and the reconciler's PlanPorts on the
 * apiserver (status, step creation, abandon flags, Events; the views over the caches,
 * the object gates and Alertmanager). controller.ts declares the controller over them.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { ConflictError } from '@backstage/errors';
import {
  maintenancePlanResource,
  type MaintenancePlan,
  type NodeMaintenance,
  type ServerBMC,
} from '@rackside/plugin-servers-common';
import {
  coreResources,
  type AlertmanagerApi,
  createWatchCache,
  RacksideClient,
  resourcePath,
  slimPodDisruptionBudget,
  type PodDisruptionBudgetHealth,
  type RawKubeObject,
  type WatchCache,
} from '@rackside/plugin-servers-node';
import { createAlertReads } from '../runtime/alertReads';
import type { EventRecorder } from '../runtime/events';
import { eventsFor } from '../runtime/kube/eventsFor';
import { OPERATOR_FIELD_MANAGER } from '../runtime/kube/fieldManager';
import type { OwnWritesView } from '../runtime/kube/ownWrites';
import { systemClock, type Clock } from '../runtime/lifecycle/table';
import type { OperatorLog } from '../runtime/logger';
import type { NodeView } from '../runtime/nodeView';
import type { ObjectGateWatches } from './objectGates';
import { stepObject, type PlanPorts } from './reconciler';

export interface PlanControllerOptions {
  kubeConfig: KubeConfig;
  /** The operator's NodeMaintenance cache (a plan's steps). */
  maintenances: WatchCache<NodeMaintenance>;
  /** The operator's Node cache (readiness, labels). */
  nodes: WatchCache<NodeView & RawKubeObject>;
  recorder: EventRecorder;
  clock?: Clock;
  /**
   * The kinds object gates may read, as `resource.group` (core: the resource alone): the
   * chart's operator.planGateReads, which also grants the reads. Others are refused.
   */
  planGateReads?: readonly string[];
  /** A status write failed for another reason than a conflict (a metric counts it). */
  onStatusWriteFailed?: (kind: string) => void;
  log?: OperatorLog;
  /** The operator's ServerBMC cache: a healthy return needs a rollup that is not Critical. */
  bmcs?: WatchCache<ServerBMC & RawKubeObject>;
  /** The cluster's Alertmanager (docs/alerts.md); undefined: alert gates unknown, returns check Ready only. */
  alertmanager?: AlertmanagerApi;
  /** The node matchers and the return grace (config.alerting); needed with alertmanager. */
  alerting?: { matchers: readonly string[]; returnGraceMs: number };
  /** How often a plan held by alerts reads them again (default 10 s). */
  alertPollMs?: number;
}

/** What a PodDisruptionBudget is kept as: its health only (servers-node's slim). */
export type BudgetHealth = PodDisruptionBudgetHealth & RawKubeObject;

export const unhealthy = (b: BudgetHealth) =>
  (b.status?.currentHealthy ?? 0) < (b.status?.desiredHealthy ?? 0);

/** The plan kind's own watch caches (the Node and NodeMaintenance caches are shared). */
export function createPlanCaches(kc: KubeConfig) {
  return {
    plans: createWatchCache<MaintenancePlan & RawKubeObject>({
      kubeConfig: kc,
      path: resourcePath(maintenancePlanResource),
      name: 'maintenanceplans',
    }),
    budgets: createWatchCache<BudgetHealth>({
      kubeConfig: kc,
      path: resourcePath(coreResources.podDisruptionBudgets),
      name: 'poddisruptionbudgets (plans)',
      transform: slimPodDisruptionBudget,
    }),
  };
}

/** What the ports read beyond the options: the caches, the gates, our own writes. */
export interface PlanEdges {
  budgets: WatchCache<BudgetHealth>;
  gates: ObjectGateWatches;
  /** Plans and steps with this process's own writes seen at once. */
  freshPlans: OwnWritesView<MaintenancePlan>;
  freshSteps: OwnWritesView<NodeMaintenance>;
}

/** The reconciler's ports on the apiserver. */
export function kubePlanPorts(
  options: PlanControllerOptions,
  { budgets, gates, freshPlans, freshSteps }: PlanEdges,
): PlanPorts {
  const { kubeConfig: kc, maintenances, nodes, recorder } = options;
  const log = options.log ?? (() => {});
  const clock = options.clock ?? systemClock;
  const api = new RacksideClient(kc, { fieldManager: OPERATOR_FIELD_MANAGER });
  return {
    view: {
      now: () => clock.now(),
      plan: name => freshPlans.get(name),
      node: name => nodes.get(name),
      nodes: () => nodes.list(),
      maintenance: name => freshSteps.get(name),
      unhealthyBudgets: () =>
        budgets
          .list()
          .filter(unhealthy)
          .map(b => `${b.metadata?.namespace}/${b.metadata?.name}`)
          .sort(),
      objectGate: gate => gates.verdict(gate),
      hardware: name => options.bmcs?.get(name)?.status?.health,
      firmwareReading: name =>
        options.bmcs?.get(name)?.status?.health?.firmware,
      alerting: createAlertReads(
        options.alertmanager,
        options.alerting,
        () => maintenances.list(),
        options.alertPollMs,
      ),
    },
    async writeStatus(plan, status, writeOptions = {}) {
      const written = await api.maintenancePlans.updateStatus(
        { ...plan, status },
        { dryRun: writeOptions.dryRun },
      );
      if (!writeOptions.dryRun) freshPlans.remember(written);
      return written;
    },
    statusWriteFailed: () => options.onStatusWriteFailed?.('MaintenancePlan'),
    async createStep(plan, step, maintenance) {
      try {
        const created = await api.nodeMaintenances.create(
          stepObject(plan, step, maintenance),
        );
        freshSteps.remember(created);
        return true;
      } catch (error) {
        if (error instanceof ConflictError) return false; // started before: adopted
        throw error;
      }
    },
    async abandonStep(name, flag) {
      const patched = await api.nodeMaintenances.patch(
        name,
        { spec: { abandon: flag } },
        { type: 'merge' },
      );
      freshSteps.remember(patched);
    },
    events: eventsFor<MaintenancePlan>(recorder, maintenancePlanResource),
    log,
  };
}
