/*
 * The NodeMaintenance controller, declared for the builder (runtime/controller): the
 * reconciler of reconciler.ts wired to the apiserver (status writes with this process's
 * own writes seen at once, node patches, evictions through the DrainRunner, Events), the
 * power channel and its send as ports (PowerPort, PowerSendPort: powerprovider/), and
 * what wakes a maintenance: its own changes, a change of its Node (e.g. Returning waits
 * for Ready) and a change of what is known of its hardware.
 */
import type { AlertReads } from '../runtime/alertReads';
import {
  MAINTENANCE_PHASES,
  nodeMaintenanceResource,
  type NodeMaintenance,
  type NodeMaintenanceStatus,
  type ServerBMC,
} from '@rackside/plugin-servers-common';
import {
  coreResources,
  createWatchCache,
  objectKey,
  ResourceClient,
  resourcePath,
  slimPod,
  type CoreClient,
  type NodeObject,
  type PodObject,
  type RawKubeObject,
} from '@rackside/plugin-servers-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { NODE_INDEX, type OperatorCaches } from '../runtime/caches';
import { hardwareKnowledgeChanged } from '../runtime/hardwareReading';
import { DrainRunner, type DrainRunnerOptions } from './drain/DrainRunner';
import type { EventRecorder } from '../runtime/events';
import { eventsFor } from '../runtime/kube/eventsFor';
import {
  conditionalStatusWriter,
  ownWritesView,
} from '../runtime/kube/ownWrites';
import { systemClock } from '../runtime/lifecycle/table';
import type { OperatorMetrics } from '../runtime/metrics';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import {
  MaintenanceReconciler,
  Mutex,
  type ReconcilerPorts,
} from './reconciler';
import type { NodeView } from '../runtime/nodeView';
import type { PowerPort, PowerSendPort } from './types';
import { SilenceLease, type SilenceSettings } from './silenceLease';
import type { AlertmanagerApi } from '@rackside/plugin-servers-node';
import { OPERATOR_FIELD_MANAGER } from '../runtime/kube/fieldManager';
import type { OperatorLog } from '../runtime/logger';

export interface MaintenanceControllerOptions {
  /** Leader-gated: every write asks the elector right before it goes out. */
  kubeConfig: KubeConfig;
  caches: Pick<OperatorCaches, 'maintenances' | 'nodes' | 'bmcs'>;
  core: CoreClient;
  recorder: EventRecorder;
  /** The power channel as the rows read it. */
  power: PowerPort;
  /** The send of a recorded verb (powerprovider/powerSend.ts, leader-gated). */
  powerSend: PowerSendPort;
  metrics: OperatorMetrics;
  drain?: DrainRunnerOptions;
  /**
   * The cluster's Alertmanager (its writes leader-gated) and the lease's flags: a
   * maintenance silences its node's alerts while it is open (silenceLease.ts). Absent:
   * nothing is silenced and nothing else changes.
   */
  alerting?: { alertmanager: AlertmanagerApi; settings: SilenceSettings };
  /** Test hook of OperatorOptions: awaited just before a status is written. */
  beforeStatusWrite?: (
    name: string,
    phase: string,
    status: NodeMaintenanceStatus,
  ) => Promise<void>;
  log: OperatorLog;
  /** Alertmanager for a healthy return a maintenance asks for; absent: Ready only. */
  returnAlerts?: AlertReads;
}

/** How long a stop waits for the reconciles under way (the chart's grace period is 30 s). */
const STOP_GRACE_MS = 20_000;

export function createMaintenanceController(
  options: MaintenanceControllerOptions,
  controllerPorts: ControllerPorts,
): Controller {
  const { kubeConfig: kc, caches, core, metrics, log } = options;
  const { maintenances, nodes } = caches;
  const fieldManager = { fieldManager: OPERATOR_FIELD_MANAGER };
  const maintenanceClient = new ResourceClient<NodeMaintenance>(
    kc,
    nodeMaintenanceResource,
    fieldManager,
  );
  const nodeClient = new ResourceClient<NodeObject>(
    kc,
    coreResources.nodes,
    fieldManager,
  );
  // Our own writes, until the watch catches up: the next admission must see them.
  const fresh = ownWritesView<NodeMaintenance>(maintenances);
  const writeStatus = conditionalStatusWriter<
    NodeMaintenance,
    NodeMaintenanceStatus
  >(maintenanceClient, fresh);

  let wakeMaintenance: (name: string) => void = () => {};
  const drains = new DrainRunner(
    {
      watchPods(nodeName) {
        const cache = createWatchCache<PodObject & RawKubeObject>({
          kubeConfig: kc,
          path: resourcePath(coreResources.pods),
          fieldSelector: `spec.nodeName=${nodeName}`,
          name: `pods on ${nodeName}`,
          transform: slimPod,
        });
        return {
          synced: cache.synced,
          pods: () => cache.list(),
          onChange(listener) {
            // Per event, not the debounced 'changed': Drained follows the last pod at once.
            const offs = (['add', 'update', 'delete'] as const).map(event =>
              cache.on(event, () => listener()),
            );
            return () => offs.forEach(off => off());
          },
          stop: () => cache.stop(),
        };
      },
      evict: (namespace, name, opts) => core.evictPod(namespace, name, opts),
      budgets: async namespace =>
        (await core.podDisruptionBudgets.list({ namespace })).items,
      storage: (nodeName, namespaces) =>
        core.drainStorage(nodeName, namespaces),
      virtualMachines: nodeName => core.virtualMachineInstancesOn(nodeName),
      async writeProgress(name, progress) {
        // Only status.drain: the phase stays the reconciler's, and a merge patch of this
        // one field cannot undo its writes.
        await maintenanceClient.patchStatus(
          name,
          { status: { drain: progress } },
          { type: 'merge' },
        );
      },
      wake: name => wakeMaintenance(name),
      log,
    },
    options.drain,
  );

  const events = eventsFor<NodeMaintenance>(
    options.recorder,
    nodeMaintenanceResource,
  );
  const status: ReconcilerPorts['status'] = {
    async write(nm, next: NodeMaintenanceStatus) {
      await options.beforeStatusWrite?.(
        nm.metadata.name,
        next.phase ?? '',
        next,
      );
      return writeStatus(nm, next);
    },
    read: name => maintenanceClient.find(name),
  };
  const silences = options.alerting
    ? new SilenceLease({
        ...options.alerting,
        ...systemClock,
        node: name => nodes.get(name),
        status,
        events,
        onError: operation => metrics.alertmanagerErrors.inc({ operation }),
        log,
      })
    : undefined;

  const ports: ReconcilerPorts = {
    view: {
      maintenance: name => fresh.get(name),
      maintenances: () => fresh.list(),
      node: name => nodes.get(name),
      nodes: () => nodes.list(),
      hardware: name => caches.bmcs.get(name)?.status?.health,
    },
    pods: {
      onNode: nodeName => core.podsOnNode(nodeName),
      storage: (nodeName, pods) =>
        core.drainStorage(nodeName, [
          ...new Set(pods.map(p => p.metadata?.namespace ?? '')),
        ]),
    },
    drains,
    power: options.power,
    powerSend: options.powerSend,
    nodes: {
      async setUnschedulable(nodeName, unschedulable) {
        const node = nodes.get(nodeName);
        if (node && (node.spec?.unschedulable === true) === unschedulable)
          return;
        await nodeClient.patch(
          nodeName,
          { spec: { unschedulable } },
          { type: 'strategic' },
        );
      },
    },
    status,
    events,
    silences,
    admissionLock: new Mutex(),
    ...systemClock,
    returnAlerts: options.returnAlerts,
    onRefused: cause => metrics.refusals.inc({ cause }),
    log,
  };
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
