/*
 * What the TalosCluster, TalosMachine and MachineReclaim controllers share: watch caches
 * of the three kinds in the operator's namespace (where their Secrets are), this
 * process's own writes seen at once, the Talos machine API (talosAccess.ts), the name
 * resolver. startOperator() creates it once; each kind's controller.ts (talos-cluster/,
 * talos-machine/, reclaim/) wires its reconciler to it and declares its controller to the
 * builder (runtime/controller), which runs the queue, counts and logs. The kinds' own
 * limits stay with their controllers, so nothing here imports a kind.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  machineReclaimResource,
  talosClusterResource,
  talosMachineResource,
  type LocalSecretRef,
  type MachineReclaim,
  type TalosCluster,
  type TalosMachine,
} from '@rackside/plugin-servers-common';
import {
  CoreClient,
  createWatchCache,
  dnsResolver,
  type KubeObject,
  RacksideClient,
  resourcePath,
  type RawKubeObject,
  type ResolveName,
  type WatchCache,
} from '@rackside/plugin-servers-node';
import type { EventRecorder } from '../runtime/events';
import { eventsFor, type ObjectEvents } from '../runtime/kube/eventsFor';
import { OPERATOR_FIELD_MANAGER } from '../runtime/kube/fieldManager';
import { ownWritesView, type OwnWritesView } from '../runtime/kube/ownWrites';
import type { SecretReader } from '../runtime/kube/secrets';
import type { OperatorLog } from '../runtime/logger';
import type { NodeView } from '../runtime/nodeView';
import { createTalosAccess, type TalosAccess } from './talosAccess';

export interface MachineKindsOptions {
  kubeConfig: KubeConfig;
  /** The operator's namespace: TalosClusters, TalosMachines, MachineReclaims and their Secrets. */
  namespace: string;
  /** The operator's Node cache (system UUIDs and readiness). */
  nodes: WatchCache<NodeView & RawKubeObject>;
  recorder: EventRecorder;
  /** The operator's Secret reader (runtime/kube/secrets.ts): talosconfigs and join configs. */
  secrets: SecretReader;
  log?: OperatorLog;
  /** Deadline of one discovery probe, and of a name's resolution; default 5 s. */
  probeTimeoutMs?: number;
  /** The machine API; tests may replace it. */
  talos?: TalosAccess;
  /** Resolves discovery addresses that are names; default the system resolver. */
  resolve?: ResolveName;
}

export interface MachineKinds {
  /** Deadline of one discovery probe (default 5 s). */
  readonly probeTimeoutMs: number;
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly nodes: WatchCache<NodeView & RawKubeObject>;
  readonly api: RacksideClient;
  readonly core: CoreClient;
  readonly talos: TalosAccess;
  readonly resolve: ResolveName;
  readonly log: OperatorLog;
  readonly now: () => number;
  readonly clusters: WatchCache<TalosCluster & RawKubeObject>;
  readonly machines: WatchCache<TalosMachine & RawKubeObject>;
  readonly reclaims: WatchCache<MachineReclaim & RawKubeObject>;
  readonly freshMachines: OwnWritesView<TalosMachine>;
  readonly freshReclaims: OwnWritesView<MachineReclaim>;
  readSecret(namespace: string, ref: LocalSecretRef): Promise<string>;
  record(descriptor: {
    apiVersion: string;
    kind: string;
  }): ObjectEvents<KubeObject>['record'];
  /** The Node whose system UUID is `uuid` (lower case). */
  nodeWithUUID(uuid: string): (NodeView & RawKubeObject) | undefined;
  /** The three caches and the Node cache have synced. */
  synced(): Promise<void>;
  hasSynced(): boolean;
  /** Stops the three watches (after the controllers stopped). */
  stop(): Promise<void>;
}

export function createMachineKinds(options: MachineKindsOptions): MachineKinds {
  const { kubeConfig: kc, namespace, nodes, recorder } = options;
  const log = options.log ?? (() => {});
  const clusters = createWatchCache<TalosCluster & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(talosClusterResource, namespace),
    name: 'talosclusters',
  });
  const machines = createWatchCache<TalosMachine & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(talosMachineResource, namespace),
    name: 'talosmachines',
  });
  const reclaims = createWatchCache<MachineReclaim & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(machineReclaimResource, namespace),
    name: 'machinereclaims',
  });
  const probeTimeoutMs = options.probeTimeoutMs ?? 5000;
  return {
    probeTimeoutMs,
    kubeConfig: kc,
    namespace,
    nodes,
    api: new RacksideClient(kc, { fieldManager: OPERATOR_FIELD_MANAGER }),
    core: new CoreClient(kc, { fieldManager: OPERATOR_FIELD_MANAGER }),
    talos: options.talos ?? createTalosAccess(),
    resolve: options.resolve ?? dnsResolver(probeTimeoutMs),
    log,
    now: () => Date.now(),
    clusters,
    machines,
    reclaims,
    freshMachines: ownWritesView<TalosMachine>(machines),
    freshReclaims: ownWritesView<MachineReclaim>(reclaims),
    readSecret: (ns, ref) =>
      options.secrets.read({ namespace: ns, name: ref.name, key: ref.key }),
    record: descriptor => eventsFor(recorder, descriptor).record,
    nodeWithUUID: uuid =>
      nodes
        .list()
        .find(n => n.status?.nodeInfo?.systemUUID?.toLowerCase() === uuid),
    async synced() {
      await Promise.all([
        clusters.synced,
        machines.synced,
        reclaims.synced,
        nodes.synced,
      ]);
    },
    hasSynced: () =>
      clusters.hasSynced() && machines.hasSynced() && reclaims.hasSynced(),
    async stop() {
      await Promise.all([clusters.stop(), machines.stop(), reclaims.stop()]);
    },
  };
}
