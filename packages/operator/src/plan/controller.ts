/*
 * The MaintenancePlan controller, declared for the builder (runtime/controller): the
 * reconciler (reconciler.ts, table.ts) wired to the apiserver:
 * a watch cache of MaintenancePlans and of PodDisruptionBudgets (slimmed to their health),
 * the operator's NodeMaintenance and Node caches, the object-gate watches
 * (objectGates.ts: allowed kinds only, filtered by the apiserver) and the edges (status,
 * step creation, abandon flags, Events).
 *
 * What wakes a plan: its own spec changing (created, paused, resumed, cancelled); a
 * NodeMaintenance it owns changing; a Node's readiness changing; a budget's health
 * changing; an object one of its gates watches changing; and, for a window or a gate
 * timeout, the time the table names. Nothing is polled but Alertmanager, which has no
 * watch: a plan held by an alert gate or a healthy return reads it again every
 * alertPollMs.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { ConflictError } from '@backstage/errors';
import {
  isNodeReady,
  isTerminalPlanPhase,
  maintenancePlanResource,
  type MaintenancePlan,
  type NodeMaintenance,
  type ObjectGate,
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
import { hardwareKnowledgeChanged } from '../runtime/hardwareReading';
import type { EventRecorder } from '../runtime/events';
import { eventsFor } from '../runtime/kube/eventsFor';
import { ownWritesView } from '../runtime/kube/ownWrites';
import { systemClock, type Clock } from '../runtime/lifecycle/table';
import type { NodeView } from '../runtime/nodeView';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import { gateWatchKey, ObjectGateWatches } from './objectGates';
import { PlanReconciler, stepObject } from './reconciler';
import { OPERATOR_FIELD_MANAGER } from '../runtime/kube/fieldManager';
import type { OperatorLog } from '../runtime/logger';

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

export interface PlanController extends Controller {
  /** The plan and budget caches have listed. */
  hasSynced(): boolean;
  /** The plans as watched (the operator's state metrics read them). */
  readonly cache: WatchCache<MaintenancePlan & RawKubeObject>;
}

/** What a PodDisruptionBudget is kept as: its health only (servers-node's slim). */
type BudgetHealth = PodDisruptionBudgetHealth & RawKubeObject;

const unhealthy = (b: BudgetHealth) =>
  (b.status?.currentHealthy ?? 0) < (b.status?.desiredHealthy ?? 0);

function planOf(nm: NodeMaintenance): string | undefined {
  return nm.metadata.ownerReferences?.find(
    r => r.controller === true && r.kind === 'MaintenancePlan',
  )?.name;
}

export function createPlanController(
  options: PlanControllerOptions,
  ports: ControllerPorts,
): PlanController {
  const { kubeConfig: kc, maintenances, nodes, recorder } = options;
  const log = options.log ?? (() => {});
  const clock = options.clock ?? systemClock;
  const api = new RacksideClient(kc, { fieldManager: OPERATOR_FIELD_MANAGER });

  const plans = createWatchCache<MaintenancePlan & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(maintenancePlanResource),
    name: 'maintenanceplans',
  });
  const budgets = createWatchCache<BudgetHealth>({
    kubeConfig: kc,
    path: resourcePath(coreResources.podDisruptionBudgets),
    name: 'poddisruptionbudgets (plans)',
    transform: slimPodDisruptionBudget,
  });

  // Our own writes until the watch has caught up with them: a step just created is seen
  // by the next pass, so it is never created twice nor taken for deleted.
  const freshPlans = ownWritesView<MaintenancePlan>(plans);
  const freshSteps = ownWritesView<NodeMaintenance>(maintenances);

  let wakePlan: (name: string) => void = () => {};
  const openPlans = () =>
    plans.list().filter(p => !isTerminalPlanPhase(p.status?.phase));
  const wakeOpen = (filter: (p: MaintenancePlan) => boolean = () => true) => {
    for (const p of openPlans()) if (filter(p)) wakePlan(p.metadata.name);
  };

  const gates = new ObjectGateWatches({
    kubeConfig: kc,
    reads: options.planGateReads ?? [],
    onChange: key =>
      wakeOpen(p =>
        (p.spec.gates?.objects ?? []).some(g => gateWatchKey(g) === key),
      ),
    log,
  });
  const refreshGates = () =>
    gates.need(
      openPlans().flatMap((p): ObjectGate[] => p.spec.gates?.objects ?? []),
    );

  const reconciler = new PlanReconciler({
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
  });

  const controller = buildController(
    {
      kind: 'MaintenancePlan',
      reconcile: key => reconciler.reconcile(key),
      watches: wake => [
        plans.on('add', p => {
          refreshGates();
          wake.enqueue(p.metadata.name);
        }),
        plans.on('update', (p, old) => {
          refreshGates();
          // Our own status writes come back as updates: only a spec change is news.
          if (p.metadata.generation !== old.metadata.generation) {
            wake.enqueue(p.metadata.name);
          }
        }),
        plans.on('delete', p => {
          freshPlans.forget(p.metadata.name);
          refreshGates();
        }),
        ...(['add', 'update', 'delete'] as const).map(event =>
          maintenances.on(event, (nm: NodeMaintenance) => {
            if (event === 'delete') freshSteps.forget(nm.metadata.name);
            const plan = planOf(nm);
            if (plan) wake.enqueue(plan);
          }),
        ),
        nodes.on('update', (node: NodeView & RawKubeObject, old) => {
          // Heartbeats come through here: only a change of readiness is news.
          if (isNodeReady(node) !== isNodeReady(old)) wakeOpen();
        }),
        // A reading that changes what is known of the hardware (e.g. unknown to OK) wakes
        // the healthy returns waiting on it.
        ...(options.bmcs
          ? [
              options.bmcs.on('update', (bmc: ServerBMC, old: ServerBMC) => {
                if (hardwareKnowledgeChanged(bmc, old)) wakeOpen();
              }),
            ]
          : []),
        ...(['add', 'update', 'delete'] as const).map(event =>
          budgets.on(event, (b: BudgetHealth, old?: BudgetHealth) => {
            if (event !== 'update' || !old || unhealthy(b) !== unhealthy(old)) {
              wakeOpen(p => p.spec.gates?.podDisruptionBudgetsHealthy ?? true);
            }
          }),
        ),
      ],
      keys: () => openPlans().map(p => p.metadata.name),
      phaseOf: key => plans.get(key)?.status?.phase,
      async synced() {
        await Promise.all([
          plans.synced,
          budgets.synced,
          maintenances.synced,
          nodes.synced,
        ]);
      },
      // The gates' watches before the first pass asks their verdicts.
      beforeFirstPass: refreshGates,
      async onStopped() {
        await gates.stop();
        await Promise.all([plans.stop(), budgets.stop()]);
      },
    },
    // Two plans at once (a plan's own steps run in parallel within its pass).
    { ...ports, workers: 2 },
  );
  wakePlan = name => controller.enqueue(name);
  return {
    ...controller,
    hasSynced: () => plans.hasSynced() && budgets.hasSynced(),
    cache: plans,
  };
}
