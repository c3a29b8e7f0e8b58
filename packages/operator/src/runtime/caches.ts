/*
 * The watch caches the operator's controllers share (one watch each, nothing polls):
 * NodeMaintenances (indexed by node), Nodes (servers-node slimNode: what is read), the
 * PowerProvider `default` and the ServerBMCs. The machine controllers keep their own
 * (talos/machineKinds.ts); a drain watches the pods of its node only (servers-node slimPod).
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
import {
  coreResources,
  createWatchCache,
  resourcePath,
  slimNode,
  type RawKubeObject,
  type WatchCache,
} from '@rackside/plugin-servers-node';
import type { NodeView } from './nodeView';

/** The index of the NodeMaintenance cache by `spec.nodeName`. */
export const NODE_INDEX = 'nodeName';

export interface OperatorCaches {
  maintenances: WatchCache<NodeMaintenance>;
  nodes: WatchCache<NodeView & RawKubeObject>;
  providers: WatchCache<PowerProvider & RawKubeObject>;
  bmcs: WatchCache<ServerBMC & RawKubeObject>;
  /** Resolves once every cache has listed. */
  synced(): Promise<void>;
  hasSynced(): boolean;
  stop(): Promise<void>;
}

export function createOperatorCaches(kc: KubeConfig): OperatorCaches {
  const maintenances = createWatchCache<NodeMaintenance>({
    kubeConfig: kc,
    path: resourcePath(nodeMaintenanceResource),
    name: 'nodemaintenances',
    indexes: { [NODE_INDEX]: nm => nm.spec?.nodeName },
  });
  const nodes = createWatchCache<NodeView & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(coreResources.nodes),
    name: 'nodes',
    transform: slimNode,
  });
  const providers = createWatchCache<PowerProvider & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(powerProviderResource),
    fieldSelector: `metadata.name=${POWER_PROVIDER_NAME}`,
    name: 'powerproviders',
  });
  const bmcs = createWatchCache<ServerBMC & RawKubeObject>({
    kubeConfig: kc,
    path: resourcePath(serverBmcResource),
    name: 'serverbmcs',
  });
  const all = [maintenances, nodes, providers, bmcs];
  return {
    maintenances,
    nodes,
    providers,
    bmcs,
    synced: async () => {
      await Promise.all(all.map(cache => cache.synced));
    },
    hasSynced: () => all.every(cache => cache.hasSynced()),
    stop: async () => {
      await Promise.all(all.map(cache => cache.stop()));
    },
  };
}
