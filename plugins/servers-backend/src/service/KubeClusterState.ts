import { ConflictError } from '@backstage/errors';
import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  nodeMaintenanceResource,
  powerProviderResource,
  serverBmcResource,
  type PowerProvider,
  type RequestFlag,
} from '@rackside/plugin-servers-common';
import {
  CoreClient,
  coreResources,
  createWatchCache,
  makeKubeConfig,
  ResourceClient,
  resourcePath,
  type ClusterConfig,
  type NodeObject,
  type PodDisruptionBudgetObject,
  type PodObject,
  type RawKubeObject,
  type WatchCache,
} from '@rackside/plugin-servers-node';
import type {
  ClusterState,
  MaintenanceObject,
  NewMaintenance,
  RequestFlagName,
} from './types';
import { waitForFirstSync } from './cacheSync';

function stripNode(raw: any): NodeObject {
  // Keep what the routes read; images and volumes are large and unused.
  const {
    images: _images,
    volumesInUse: _v,
    volumesAttached: _a,
    ...status
  } = raw.status ?? {};
  return { ...raw, status } as NodeObject;
}

/**
 * A cluster backed by watch caches of Nodes, NodeMaintenances and the
 * PowerProvider `default`; writes go through {@link ResourceClient}.
 */
export class KubeClusterState implements ClusterState {
  readonly name: string;
  readonly title: string;
  private readonly nodeCache: WatchCache<NodeObject>;
  private readonly maintenanceCache: WatchCache<MaintenanceObject>;
  private readonly powerCache: WatchCache<PowerProvider>;
  private readonly bmcCache: WatchCache<RawKubeObject>;
  private readonly maintenanceClient: ResourceClient<any>;
  private readonly core: CoreClient;

  constructor(cluster: ClusterConfig, logger: LoggerService) {
    this.name = cluster.name;
    this.title = cluster.title;
    const kubeConfig = makeKubeConfig(cluster);
    const log = logger.child({ cluster: cluster.name });
    this.nodeCache = createWatchCache<NodeObject>({
      kubeConfig,
      path: resourcePath(coreResources.nodes),
      transform: stripNode,
      name: `${cluster.name} nodes`,
      logger: log,
    });
    this.maintenanceCache = createWatchCache<MaintenanceObject>({
      kubeConfig,
      path: resourcePath(nodeMaintenanceResource),
      name: `${cluster.name} nodemaintenances`,
      logger: log,
    });
    this.powerCache = createWatchCache<PowerProvider>({
      kubeConfig,
      path: resourcePath(powerProviderResource),
      fieldSelector: 'metadata.name=default',
      name: `${cluster.name} powerprovider`,
      logger: log,
    });
    this.bmcCache = createWatchCache<RawKubeObject>({
      kubeConfig,
      path: resourcePath(serverBmcResource),
      // Only the names are read: which nodes a BMC channel can reach.
      transform: obj => ({
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        metadata: {
          name: obj.metadata?.name,
          resourceVersion: obj.metadata?.resourceVersion,
        },
      }),
      name: `${cluster.name} serverbmcs`,
      logger: log,
    });
    this.maintenanceClient = new ResourceClient(
      kubeConfig,
      nodeMaintenanceResource,
      { fieldManager: 'rackside-backstage' },
    );
    this.core = new CoreClient(kubeConfig, {
      fieldManager: 'rackside-backstage',
    });
  }

  private synced(
    cache: { synced: Promise<void>; hasSynced(): boolean },
    items: string,
  ): Promise<void> {
    return waitForFirstSync(cache, { cluster: this.name, items });
  }

  async nodes(): Promise<NodeObject[]> {
    await this.synced(this.nodeCache, 'nodes');
    return this.nodeCache.list();
  }

  async maintenances(): Promise<MaintenanceObject[]> {
    await this.synced(this.maintenanceCache, 'maintenances');
    return this.maintenanceCache.list();
  }

  async powerProvider(): Promise<PowerProvider | undefined> {
    await this.synced(this.powerCache, 'power provider');
    return this.powerCache.get('default');
  }

  async serverBmcNodes(): Promise<string[]> {
    await this.synced(this.bmcCache, 'server BMCs');
    return this.bmcCache.list().map(b => b.metadata?.name ?? '');
  }

  async podsOnNode(nodeName: string): Promise<PodObject[]> {
    return this.core.podsOnNode(nodeName);
  }

  async podDisruptionBudgets(): Promise<PodDisruptionBudgetObject[]> {
    return (await this.core.podDisruptionBudgets.list()).items;
  }

  async createMaintenance(obj: NewMaintenance): Promise<MaintenanceObject> {
    return this.maintenanceClient.create(obj);
  }

  async setRequestFlag(
    name: string,
    flag: RequestFlagName,
    value: RequestFlag,
  ): Promise<MaintenanceObject> {
    // Read-modify-write with the resourceVersion: the Backstage identity may
    // update NodeMaintenances but is not granted patch. A lost race (409) is
    // retried on the fresh object.
    for (let attempt = 0; ; attempt++) {
      const current: MaintenanceObject = await this.maintenanceClient.get(name);
      if (current.spec[flag]) {
        throw new ConflictError(
          `maintenance ${name} already has ${flag} set by ${
            current.spec[flag]!.by
          }`,
        );
      }
      try {
        return await this.maintenanceClient.update({
          ...current,
          spec: { ...current.spec, [flag]: value },
        });
      } catch (error) {
        if (attempt >= 2 || !ConflictError.is(error)) throw error;
      }
    }
  }

  onChange(listener: () => void): () => void {
    const offs = [
      this.nodeCache,
      this.maintenanceCache,
      this.powerCache,
      this.bmcCache,
    ].map(cache => cache.on('changed', () => listener()));
    return () => offs.forEach(off => off());
  }

  async stop(): Promise<void> {
    await Promise.all([
      this.nodeCache.stop(),
      this.maintenanceCache.stop(),
      this.powerCache.stop(),
      this.bmcCache.stop(),
    ]);
  }
}
