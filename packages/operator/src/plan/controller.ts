/*
 * The MaintenancePlan controller, declared for the builder (runtime/controller): the
 * reconciler (reconciler.ts, table.ts) over its ports at the edge (ports.ts), the
 * object-gate watches (objectGates.ts: allowed kinds only, filtered by the apiserver),
 * and what wakes a plan: its own spec changing (created, paused, resumed, cancelled); a
 * NodeMaintenance it owns changing; a Node's readiness changing; a budget's health
 * changing; an object one of its gates watches changing; and, for a window or a gate
 * timeout, the time the table names. Nothing is polled but Alertmanager, which has no
 * watch: a plan held by an alert gate or a healthy return reads it again every
 * alertPollMs.
 */
import {
  isNodeReady,
  isTerminalPlanPhase,
  type MaintenancePlan,
  type NodeMaintenance,
  type ObjectGate,
  type ServerBMC,
} from '@rackside/plugin-servers-common';
import type { RawKubeObject, WatchCache } from '@rackside/plugin-servers-node';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import { hardwareKnowledgeChanged } from '../runtime/hardwareReading';
import { ownWritesView } from '../runtime/kube/ownWrites';
import type { NodeView } from '../runtime/nodeView';
import { gateWatchKey, ObjectGateWatches } from './objectGates';
import {
  createPlanCaches,
  kubePlanPorts,
  unhealthy,
  type BudgetHealth,
  type PlanControllerOptions,
} from './ports';
import { PlanReconciler } from './reconciler';

export type { PlanControllerOptions };

export interface PlanController extends Controller {
  /** The plan and budget caches have listed. */
  hasSynced(): boolean;
  /** The plans as watched (the operator's state metrics read them). */
  readonly cache: WatchCache<MaintenancePlan & RawKubeObject>;
}

function planOf(nm: NodeMaintenance): string | undefined {
  return nm.metadata.ownerReferences?.find(
    r => r.controller === true && r.kind === 'MaintenancePlan',
  )?.name;
}

export function createPlanController(
  options: PlanControllerOptions,
  ports: ControllerPorts,
): PlanController {
  const { kubeConfig: kc, maintenances, nodes } = options;
  const log = options.log ?? (() => {});
  const { plans, budgets } = createPlanCaches(kc);

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

  const reconciler = new PlanReconciler(
    kubePlanPorts(options, { budgets, gates, freshPlans, freshSteps }),
  );

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
