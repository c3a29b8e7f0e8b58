/*
 * The PowerProvider controller: the reconciler of reconciler.ts (and the
 * ServerBMC checks of serverBmc.ts, which serve it) wired to the apiserver, on one work
 * queue keyed by kind. startOperator creates it next to the maintenance and machine
 * controllers; maintenances wait for its first pass, so an admission never refuses a
 * reboot only because the channel was not built yet.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  nodeMaintenanceResource,
  POWER_PROVIDER_NAME,
  powerProviderResource,
  serverBmcResource,
  type NodeMaintenance,
  type PowerProvider,
  type ServerBMC,
} from '@rackside/plugin-servers-common';
import { ResourceClient } from '@rackside/plugin-servers-node';
import type { OperatorCaches } from '../runtime/caches';
import type { SecretReader } from '../runtime/kube/secrets';
import type { ReconcilerPorts } from '../maintenance/reconciler';
import type { OperatorMetrics } from '../runtime/metrics';
import { WorkQueue } from '../runtime/workqueue';
import { NotLeadingError } from '../runtime/leaderElection';
import { PowerProviderReconciler, type PowerDeadlines } from './reconciler';
import { reconcileServerBmc } from './serverBmc';
import { HealthMonitor } from './health';
import type { EventRecorder } from '../runtime/events';
import { OPERATOR_FIELD_MANAGER } from '../runtime/kube/fieldManager';
import { reconcileErrorFields, type OperatorLog } from '../runtime/logger';

export interface PowerControllerOptions {
  /** Leader-gated: every write asks the elector right before it goes out. */
  kubeConfig: KubeConfig;
  caches: Pick<OperatorCaches, 'providers' | 'bmcs' | 'nodes' | 'maintenances'>;
  /** Events of the health readings (a change of rollup). */
  recorder: EventRecorder;
  /** The health sweep (docs/hardware-health.md). */
  health?: HealthSettings;
  secrets: SecretReader;
  metrics: OperatorMetrics;
  deadlines?: Partial<PowerDeadlines>;
  log: OperatorLog;
  /** Whether this replica leads: asked again right before each Redfish Reset POST. */
  leading?: () => boolean;
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

export interface PowerController {
  /** The channel as the maintenance rows read it and the reconciler sends on it. */
  powerPort(): ReconcilerPorts['power'];
  /** Runs the queue and waits for the first pass over the provider and every BMC. */
  start(): Promise<void>;
  /** Stops the queue (leadership lost). */
  pause(): void;
  stop(): Promise<void>;
}

const POWER_KEY = `PowerProvider/${POWER_PROVIDER_NAME}`;
const BMC_PREFIX = 'ServerBMC/';

export function createPowerController(
  options: PowerControllerOptions,
): PowerController {
  const { kubeConfig: kc, caches, metrics, log, secrets } = options;
  const { providers, bmcs, nodes, maintenances } = caches;
  const fieldManager = { fieldManager: OPERATOR_FIELD_MANAGER };
  const providerClient = new ResourceClient<PowerProvider>(
    kc,
    powerProviderResource,
    fieldManager,
  );
  const bmcClient = new ResourceClient<ServerBMC>(
    kc,
    serverBmcResource,
    fieldManager,
  );
  const power = new PowerProviderReconciler(
    {
      provider: () => providers.get(POWER_PROVIDER_NAME),
      bmc: name => bmcs.get(name),
      secrets,
      writeStatus: async (provider, status) => {
        await providerClient.patchStatus(
          provider.metadata.name,
          { status },
          { type: 'merge' },
        );
      },
      onSent: (verb, channel) => metrics.powerVerbsSent.inc({ verb, channel }),
      log,
      mayAct: () => {
        if (options.leading && !options.leading()) {
          throw new NotLeadingError('send');
        }
      },
    },
    {
      rebootSeconds: options.deadlines?.rebootSeconds ?? 900,
      unansweredSeconds: options.deadlines?.unansweredSeconds ?? 300,
    },
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
    reader: (node, name) => power.healthReader(node, name),
    scrub: (name, text) => power.scrub(name, text),
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

  let queue: WorkQueue | undefined;
  const unsubscribe = [
    ...(['add', 'update', 'delete'] as const).map(event =>
      providers.on(event, () => queue?.add(POWER_KEY)),
    ),
    ...(['add', 'update'] as const).map(event =>
      bmcs.on(event, (bmc: ServerBMC) =>
        queue?.add(`${BMC_PREFIX}${bmc.metadata.name}`),
      ),
    ),
  ];

  const reconcile = async (key: string) => {
    if (key === POWER_KEY) {
      await power.reconcile();
      return;
    }
    const name = key.slice(BMC_PREFIX.length);
    const bmc = bmcs.get(name);
    if (!bmc) return;
    await reconcileServerBmc(bmc, {
      node: n => nodes.get(n),
      secrets,
      writeStatus: async status => {
        await bmcClient.patchStatus(
          name,
          { status },
          {
            type: 'merge',
          },
        );
      },
    });
  };

  const pause = () => {
    health.pause();
    queue?.stop();
    queue = undefined;
  };
  return {
    powerPort: () => power.powerPort(),
    async start() {
      queue = new WorkQueue(reconcile, {
        workers: 1,
        metrics: metrics.queue('PowerProvider'),
        onError: (key, error) => {
          metrics.reconcileErrors.inc({ kind: key.split('/')[0] });
          const [kind, ...name] = key.split('/');
          log(
            `reconcile ${key}: ${(error as Error).message}`,
            reconcileErrorFields(kind, name.join('/'), error),
          );
        },
      });
      queue.add(POWER_KEY);
      for (const bmc of bmcs.list()) {
        queue.add(`${BMC_PREFIX}${bmc.metadata.name}`);
      }
      await queue.idle();
      health.start();
    },
    pause,
    async stop() {
      pause();
      for (const off of unsubscribe) off();
      await power.stop();
    },
  };
}
