/*
 * The NodeMaintenance controller, declared for the builder (runtime/controller): the
 * reconciler of reconciler.ts over its ports at the edge (ports.ts), and what wakes a
 * maintenance: its own changes, a change of its Node (e.g. Returning waits for Ready) and
 * a change of what is known of its hardware. Stopping, it lets the reconciles under way
 * end (a recorded verb is sent and answered).
 */
import {
  MAINTENANCE_PHASES,
  type ServerBMC,
} from '@rackside/plugin-servers-common';
import { objectKey, type RawKubeObject } from '@rackside/plugin-servers-node';
import { NODE_INDEX } from '../runtime/caches';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import { hardwareKnowledgeChanged } from '../runtime/hardwareReading';
import type { NodeView } from '../runtime/nodeView';
import {
  kubeMaintenancePorts,
  type MaintenanceControllerOptions,
} from './ports';
import { MaintenanceReconciler } from './reconciler';

export type { MaintenanceControllerOptions };

/** How long a stop waits for the reconciles under way (the chart's grace period is 30 s). */
const STOP_GRACE_MS = 20_000;

export function createMaintenanceController(
  options: MaintenanceControllerOptions,
  controllerPorts: ControllerPorts,
): Controller {
  const { caches, metrics } = options;
  const { maintenances, nodes } = caches;
  let wakeMaintenance: (name: string) => void = () => {};
  const { ports, drains, fresh, silences } = kubeMaintenancePorts(
    options,
    name => wakeMaintenance(name),
  );
  const reconciler = new MaintenanceReconciler(ports);

  const updateGauge = () => {
    const counts = new Map<string, number>(MAINTENANCE_PHASES.map(p => [p, 0]));
    for (const nm of maintenances.list()) {
      const phase = nm.status?.phase;
      if (phase) counts.set(phase, (counts.get(phase) ?? 0) + 1);
    }
    for (const [phase, count] of counts) {
      metrics.maintenancesByPhase.set({ phase }, count);
    }
  };

  const controller = buildController(
    {
      kind: 'NodeMaintenance',
      reconcile: key => reconciler.reconcile(key),
      watches: wake => [
        maintenances.on('add', nm => wake.enqueue(objectKey(nm))),
        maintenances.on('update', (nm, old) => {
          // A drain belongs to Draining: abandoned, returned or finished, it stops.
          if (nm.status?.phase !== 'Draining') drains.cancel(objectKey(nm));
          if (
            nm.status?.phase === 'Drained' &&
            old.status?.phase === 'Draining'
          ) {
            const started = Date.parse(nm.status.drain?.startedAt ?? '');
            if (Number.isFinite(started)) {
              metrics.drainDuration.observe((Date.now() - started) / 1000);
            }
          }
          wake.enqueue(objectKey(nm));
        }),
        maintenances.on('delete', nm => {
          drains.cancel(objectKey(nm));
          fresh.forget(objectKey(nm));
          // Deleted while open (or within its return grace): its silence ends now. Only
          // the leader acts; a delete no replica saw lapses with the lease.
          if (wake.running() && silences) void silences.forget(nm);
        }),
        maintenances.on('changed', updateGauge),
        // A node change wakes the maintenances of that node (e.g. Returning waits for Ready).
        ...(['add', 'update', 'delete'] as const).map(event =>
          nodes.on(event, (node: NodeView & RawKubeObject) => {
            for (const nm of maintenances.byIndex(
              NODE_INDEX,
              objectKey(node),
            )) {
              wake.enqueue(objectKey(nm));
            }
          }),
        ),
        // A reading that changes what is known of the hardware (e.g. unknown to OK) wakes
        // a healthy return waiting on it (the ServerBMC is named after its node).
        caches.bmcs.on('update', (bmc: ServerBMC, old: ServerBMC) => {
          if (!hardwareKnowledgeChanged(bmc, old)) return;
          for (const nm of maintenances.byIndex(
            NODE_INDEX,
            bmc.metadata.name,
          )) {
            wake.enqueue(objectKey(nm));
          }
        }),
      ],
      keys: () => maintenances.list().map(nm => nm.metadata.name),
      phaseOf: key => maintenances.get(key)?.status?.phase,
      beforeFirstPass: updateGauge,
      onPaused: () => drains.stop(),
      // A graceful stop lets the reconciles under way end: one that recorded a power verb
      // sends it and writes the answer, instead of leaving a record without an answer
      // that the next leader can only give up on (send-once never sends twice).
      stopGraceMs: STOP_GRACE_MS,
    },
    controllerPorts,
  );
  wakeMaintenance = name => controller.enqueue(name);
  return controller;
}
