/*
 * The NodeMaintenance kind's ports at the edge: the reconciler's ReconcilerPorts on the
 * apiserver (status writes with this process's own writes seen at once, node patches,
 * evictions through the DrainRunner, Events, the Alertmanager silence), the power
 * channel and its send as startOperator hands them (PowerPort, PowerSendPort, from
 * powerprovider/). controller.ts declares the controller over them.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  nodeMaintenanceResource,
  serverBmcResource,
  type NodeMaintenance,
  type NodeMaintenanceStatus,
  type ServerBMC,
} from '@rackside/plugin-servers-common';
import {
  coreResources,
  createWatchCache,
  ResourceClient,
  resourcePath,
  slimPod,
  type AlertmanagerApi,
  type CoreClient,
  type NodeObject,
  type PodObject,
  type RawKubeObject,
} from '@rackside/plugin-servers-node';
import type { AlertReads } from '../runtime/alertReads';
import type { OperatorCaches } from '../runtime/caches';
import type { EventRecorder } from '../runtime/events';
import { eventsFor } from '../runtime/kube/eventsFor';
import { OPERATOR_FIELD_MANAGER } from '../runtime/kube/fieldManager';
import {
  conditionalStatusWriter,
  ownWritesView,
  type OwnWritesView,
} from '../runtime/kube/ownWrites';
import { systemClock } from '../runtime/lifecycle/table';
import type { OperatorLog } from '../runtime/logger';
import type { OperatorMetrics } from '../runtime/metrics';
import { DrainRunner, type DrainRunnerOptions } from './drain/DrainRunner';
import { Mutex, type ReconcilerPorts } from './reconciler';
import { SilenceLease, type SilenceSettings } from './silenceLease';
import type { PowerPort, PowerSendPort } from './types';

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
  /** The Talos image prefixes an upgrade may install (docs/upgrades.md); absent: none. */
  upgrades?: {
    imagePrefixes: readonly string[];
    /** The https origins a firmware update may fetch from (docs/upgrades.md); absent: none. */
    firmwareSources?: readonly string[];
    /** Those of them whose images are sent only with a checksum. */
    firmwareChecksumRequired?: readonly string[];
  };
  /** The node this replica runs on and the handover of its Lease (ReconcilerPorts). */
  ownNode?: ReconcilerPorts['ownNode'];
}

/** The reconciler's ports, and what the controller's watches reach of them. */
export interface MaintenanceEdges {
  ports: ReconcilerPorts;
  drains: DrainRunner;
  /** The maintenances with this process's own writes (forgotten on delete). */
  fresh: OwnWritesView<NodeMaintenance>;
  silences?: SilenceLease;
}

/** The NodeMaintenance ports on the apiserver; `wake` queues a maintenance (a drain's news). */
export function kubeMaintenancePorts(
  options: MaintenanceControllerOptions,
  wake: (name: string) => void,
): MaintenanceEdges {
  const { kubeConfig: kc, caches, core, metrics, log } = options;
  const { maintenances, nodes } = caches;
  const fieldManager = { fieldManager: OPERATOR_FIELD_MANAGER };
  const maintenanceClient = new ResourceClient<NodeMaintenance>(
    kc,
    nodeMaintenanceResource,
    fieldManager,
  );
  const bmcClient = new ResourceClient<ServerBMC>(
    kc,
    serverBmcResource,
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
      wake,
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
      firmwareReading: name => caches.bmcs.get(name)?.status?.health?.firmware,
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
    upgrades: options.upgrades,
    ownNode: options.ownNode,
    firmwareHistory: {
      read: name => {
        const bmc = caches.bmcs.get(name);
        return bmc ? bmc.status?.firmwareHistory ?? [] : undefined;
      },
      async write(name, next) {
        // With the version read: a history someone changed since is not overwritten
        // (409; the next reconcile reads it again).
        const resourceVersion = caches.bmcs.get(name)?.metadata.resourceVersion;
        await bmcClient.patchStatus(
          name,
          {
            metadata: { resourceVersion },
            status: { firmwareHistory: next },
          } as never,
          { type: 'merge' },
        );
      },
    },
    onRefused: cause => metrics.refusals.inc({ cause }),
    log,
  };
  return { ports, drains, fresh, silences };
}
