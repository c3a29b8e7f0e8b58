/*
 * The ServerBMC kind's ports at the edge: the BMC's status writes, the health sweep
 * (health.ts) with its writes of a BMC's health and of a maintenance's hardware
 * reading, and the channel the BMCs are reached through (BmcChannel: the PowerProvider's,
 * powerprovider/reconciler.ts; only the redfish channel reaches BMCs, decision 0001).
 * controller.ts declares the controller over them.
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
import type { OperatorCaches } from '../runtime/caches';
import type { EventRecorder } from '../runtime/events';
import { OPERATOR_FIELD_MANAGER } from '../runtime/kube/fieldManager';
import type { SecretReader } from '../runtime/kube/secrets';
import type { OperatorLog } from '../runtime/logger';
import type { OperatorMetrics } from '../runtime/metrics';
import type { NodeView } from '../runtime/nodeView';
import { HealthMonitor } from './health';
import type { ServerBmcPorts } from './reconciler';

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

/** The ServerBMC checks' ports (without the node, read from the cache) and the sweep. */
export interface ServerBmcEdges {
  /** The checks' ports of the ServerBMC `name`. */
  checks(name: string): ServerBmcPorts;
  health: HealthMonitor;
}

export function kubeServerBmcPorts(
  options: ServerBmcControllerOptions,
  log: OperatorLog,
): ServerBmcEdges {
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
    log,
    intervalMs: options.health?.intervalMs ?? 15 * 60 * 1000,
    concurrency: options.health?.concurrency ?? 4,
    fullIntervalMs: options.health?.fullIntervalMs,
    readingDeadlineMs: options.health?.readingDeadlineMs,
  });

  return {
    checks: name => ({
      node: n => nodes.get(n),
      secrets,
      writeStatus: async status => {
        await bmcClient.patchStatus(name, { status }, { type: 'merge' });
      },
    }),
    health,
  };
}
