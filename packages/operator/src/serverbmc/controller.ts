/*
 * The ServerBMC controller, declared for the builder (runtime/controller): the checks of
 * reconciler.ts on every ServerBMC (woken when one is added or changed), and the health
 * sweep of health.ts, which runs while the controller does. The BMCs are reached through
 * the PowerProvider's channel (BmcChannel, implemented by powerprovider/reconciler.ts):
 * only the redfish channel reaches them (decision 0001).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  nodeMaintenanceResource,
  serverBmcResource,
  type NodeMaintenance,
  type ServerBMC,
} from '@rackside/plugin-servers-common';
import {
  ResourceClient,
  type BmcHealthReader,
} from '@rackside/plugin-servers-node';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import type { OperatorCaches } from '../runtime/caches';
import type { EventRecorder } from '../runtime/events';
import { OPERATOR_FIELD_MANAGER } from '../runtime/kube/fieldManager';
import type { SecretReader } from '../runtime/kube/secrets';
import type { OperatorMetrics } from '../runtime/metrics';
import type { NodeView } from '../runtime/nodeView';
import { HealthMonitor } from './health';
import { reconcileServerBmc } from './reconciler';

/** What the BMCs are reached through: the PowerProvider's channel. */
export interface BmcChannel {
  /** The node's BMC health reader; undefined when the channel reaches no BMC. */
  healthReader(
    node: NodeView | undefined,
    name: string,
  ): Promise<BmcHealthReader | undefined>;
  /** `text` without the BMC's address (status and Events are widely read). */
  scrub(name: string, text: string): string;
}

export interface HealthSettings {
  /** Each BMC is read about this often (ms, jittered ±20 %); default 15 min. */
  intervalMs?: number;
  /** BMCs read at once, at most; default 4. */
  concurrency?: number;
  /** A full reading (parts, logs, firmware) at least this often (ms); default 12 h. */
  fullIntervalMs?: number;
  /** One reading's deadline, all its requests together (ms); default 60 s. */
  readingDeadlineMs?: number;
}

export interface ServerBmcControllerOptions {
  /** Leader-gated: every write asks the elector right before it goes out. */
  kubeConfig: KubeConfig;
  caches: Pick<OperatorCaches, 'bmcs' | 'nodes' | 'maintenances'>;
  channel: BmcChannel;
  secrets: SecretReader;
  /** Events of the health readings (a change of rollup). */
  recorder: EventRecorder;
  metrics: OperatorMetrics;
  /** The health sweep (docs/hardware-health.md). */
  health?: HealthSettings;
}

export function createServerBmcController(
  options: ServerBmcControllerOptions,
  ports: ControllerPorts,
): Controller {
  const { kubeConfig: kc, caches, channel, metrics, secrets } = options;
  const { bmcs, nodes, maintenances } = caches;
  const fieldManager = { fieldManager: OPERATOR_FIELD_MANAGER };
  const bmcClient = new ResourceClient<ServerBMC>(
    kc,
    serverBmcResource,
    fieldManager,
  );
  const maintenanceClient = new ResourceClient<NodeMaintenance>(
    kc,
    nodeMaintenanceResource,
    fieldManager,
  );
  const health = new HealthMonitor({
    bmcs,
    nodes,
    maintenances,
    reader: (node, name) => channel.healthReader(node, name),
    scrub: (name, text) => channel.scrub(name, text),
    writeHealth: async (name, patch) => {
      await bmcClient.patchStatus(
        name,
        { status: { health: patch } },
        { type: 'merge' },
      );
    },
    writeHardware: async (name, hardware) => {
      await maintenanceClient.patchStatus(
        name,
        { status: { hardware } },
        { type: 'merge' },
      );
    },
    onWriteFailed: () => metrics.statusWriteFailures.inc({ kind: 'ServerBMC' }),
    recorder: options.recorder,
    log: ports.log ?? (() => {}),
    intervalMs: options.health?.intervalMs ?? 15 * 60 * 1000,
    concurrency: options.health?.concurrency ?? 4,
    fullIntervalMs: options.health?.fullIntervalMs,
    readingDeadlineMs: options.health?.readingDeadlineMs,
  });

  return buildController(
    {
      kind: 'ServerBMC',
      async reconcile(name) {
        const bmc = bmcs.get(name);
        if (!bmc) return;
        await reconcileServerBmc(bmc, {
          node: n => nodes.get(n),
          secrets,
          writeStatus: async status => {
            await bmcClient.patchStatus(name, { status }, { type: 'merge' });
          },
        });
      },
      watches: wake =>
        (['add', 'update'] as const).map(event =>
          bmcs.on(event, (bmc: ServerBMC) => wake.enqueue(bmc.metadata.name)),
        ),
      keys: () => bmcs.list().map(bmc => bmc.metadata.name),
      // Maintenances start after the first pass over every BMC; the sweep after it.
      awaitFirstPass: true,
      onStarted: () => health.start(),
      onPaused: () => health.pause(),
    },
    { ...ports, workers: 1 },
  );
}
