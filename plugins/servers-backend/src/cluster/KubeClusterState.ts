import { ConflictError } from '@backstage/errors';
import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  maintenancePlanResource,
  nodeMaintenanceResource,
  powerProviderResource,
  serverBmcResource,
  failedPartsOf,
  type Approval,
  type ServerHealthRefresh,
  type PowerProvider,
  type RequestFlag,
  type ServerHealth,
  type FirmwareHistoryEntry,
} from '@rackside/plugin-servers-common';
import {
  CoreClient,
  createClusterNodes,
  coreResources,
  createWatchCache,
  FEW_NODES,
  makeKubeConfig,
  ResourceClient,
  resourcePath,
  slimIdentity,
  slimPod,
  type ClusterConfig,
  type ClusterNodes,
  type NodeObject,
  type PodDisruptionBudgetObject,
  type PodObject,
  type RawKubeObject,
  type WatchCache,
  type WatchTransport,
  AlertmanagerClient,
  type AlertmanagerApi,
} from '@rackside/plugin-servers-node';
import { powerAdvertisementOf } from '@rackside/plugin-servers-common';
import type {
  ClusterState,
  KeyedSnapshot,
  MaintenanceObject,
  NewMaintenance,
  NewPlan,
  NodeDrainInputs,
  PlanObject,
  RequestFlagName,
  ServerBmcRecord,
} from './types';
import { waitForFirstSync } from './cacheSync';
import { PlanPodCache } from './podCache';
import { alertsKeyOf, healthRowKey } from './rowKeys';
import { snapshotOf } from './snapshot';
import {
  ALERTS_REFRESH_MS,
  NodeAlertsReader,
  type ClusterAlerts,
} from './nodeAlerts';

/** Options of {@link KubeClusterState} beyond the cluster and the logger. */
export interface KubeClusterStateOptions {
  /**
   * The cluster's Node watch, shared with the other readers of the process
   * (`clusterNodesServiceRef`); without one the state opens its own.
   */
  nodes?: ClusterNodes;
  /** Replaces the HTTP transport of every watch (tests). */
  transport?: WatchTransport;
  /** How long changes are collected before `onChange` listeners hear of them. */
  changedDelayMs?: number;
  /** How long plan pre-flights' pod cache stays after the last one (default 10 min). */
  planPodCacheIdleMs?: number;
  /** Replaces the cluster's Alertmanager client (tests); used only when alerting is configured. */
  alertmanager?: AlertmanagerApi;
}

/** What a row shows of a maintenance: a status write that changes none of it is no change. */
function maintenanceDigest(m: MaintenanceObject): string {
  return JSON.stringify([
    m.metadata.name,
    m.metadata.creationTimestamp ?? null,
    m.spec,
    m.status ?? null,
  ]);
}

/**
 * What the backend keeps of a ServerBMC (its cache's transform): the name, the version,
 * the refresh request and the health reading, never the address or the credentials.
 */
function serverBmcRecordOf(obj: RawKubeObject): ServerBmcRecord {
  const spec = (obj as { spec?: { healthRefresh?: ServerHealthRefresh } }).spec;
  const status = (
    obj as {
      status?: {
        health?: ServerHealth;
        firmwareHistory?: FirmwareHistoryEntry[];
      };
    }
  ).status;
  return {
    name: obj.metadata?.name ?? '',
    resourceVersion: obj.metadata?.resourceVersion,
    ...(spec?.healthRefresh ? { healthRefresh: spec.healthRefresh } : {}),
    ...(status?.health ? { health: status.health } : {}),
    ...(status?.firmwareHistory?.length
      ? { firmwareHistory: status.firmwareHistory.map(historyEntryOf) }
      : {}),
  };
}

/** One firmware history entry, its fields named one by one (nothing else is kept). */
function historyEntryOf(entry: FirmwareHistoryEntry): FirmwareHistoryEntry {
  return {
    at: entry.at,
    maintenance: entry.maintenance,
    ...(entry.uid ? { uid: entry.uid } : {}),
    imageURI: entry.imageURI,
    result: entry.result,
    components: (entry.components ?? []).map(c => ({
      id: c.id,
      ...(c.before !== undefined ? { before: c.before } : {}),
      ...(c.after !== undefined ? { after: c.after } : {}),
    })),
  };
}

/** What a row shows of a health reading: its change is the cluster's change signal. */
function healthSignalKey(b: ServerBmcRecord): string {
  return b.health ? `${b.health.rollup}|${failedPartsOf(b.health)}` : '';
}

/** The 409 of a decision on a request that changed since it was read. */
function approvalMovedMessage(kind: string, name: string): string {
  return `${kind} ${name} changed while the decision was being made (another approver, or the operator): look at it again`;
}

/** What a page shows of a plan: a status write that changes none of it is no change. */
function planDigest(p: PlanObject): string {
  return JSON.stringify([p.spec, p.status ?? null]);
}

/**
 * A cluster backed by the shared Node watch and watch caches of NodeMaintenances, the
 * PowerProvider `default` and the ServerBMCs; writes go through {@link ResourceClient}.
 *
 * Every cache event is judged once, when it arrives: does it change anything a page
 * shows? Only then does the state's `generation` move and do `onChange` listeners hear
 * of it (so a heartbeat publishes no signal), and the snapshot the routes read is
 * derived once per generation, not per request.
 */
export class KubeClusterState implements ClusterState {
  readonly name: string;
  readonly title: string;
  private readonly nodeCache: ClusterNodes;
  private readonly ownsNodes: boolean;
  private readonly maintenanceCache: WatchCache<MaintenanceObject>;
  private readonly powerCache: WatchCache<PowerProvider>;
  private readonly bmcCache: WatchCache<ServerBmcRecord & RawKubeObject>;
  private readonly bmcClient: ResourceClient<any>;
  private readonly maintenanceClient: ResourceClient<any>;
  private readonly planCache: WatchCache<PlanObject>;
  private readonly planClient: ResourceClient<any>;
  private readonly core: CoreClient;
  private readonly planPods: PlanPodCache;
  private readonly nodeAlerts: NodeAlertsReader | undefined;
  private readonly alertmanagerClient: AlertmanagerClient | undefined;

  private ownChanges = 0;
  private readonly listeners = new Set<() => void>();
  private notifyTimer: NodeJS.Timeout | undefined;
  private readonly unsubscribes: Array<() => void> = [];
  private cachedSnapshot:
    | { generation: number; snapshot: Promise<KeyedSnapshot> }
    | undefined;

  constructor(
    cluster: ClusterConfig,
    logger: LoggerService,
    private readonly options: KubeClusterStateOptions = {},
  ) {
    this.name = cluster.name;
    this.title = cluster.title;
    const kubeConfig = makeKubeConfig(cluster);
    const log = logger.child({ cluster: cluster.name });
    const transport = options.transport;
    this.ownsNodes = !options.nodes;
    this.nodeCache =
      options.nodes ??
      createClusterNodes({
        cluster: cluster.name,
        kubeConfig,
        transport,
        logger: log,
      });
    this.planPods = new PlanPodCache(
      cluster.name,
      indexes =>
        createWatchCache<PodObject & RawKubeObject>({
          kubeConfig,
          transport,
          path: resourcePath(coreResources.pods),
          name: `${cluster.name} pods (plan pre-flights)`,
          transform: slimPod,
          indexes,
          logger: log,
        }),
      options.planPodCacheIdleMs,
    );
    this.maintenanceCache = createWatchCache<MaintenanceObject>({
      kubeConfig,
      transport,
      path: resourcePath(nodeMaintenanceResource),
      name: `${cluster.name} nodemaintenances`,
      logger: log,
    });
    this.powerCache = createWatchCache<PowerProvider>({
      kubeConfig,
      transport,
      path: resourcePath(powerProviderResource),
      fieldSelector: 'metadata.name=default',
      name: `${cluster.name} powerprovider`,
      logger: log,
    });
    this.bmcCache = createWatchCache<ServerBmcRecord & RawKubeObject>({
      kubeConfig,
      transport,
      path: resourcePath(serverBmcResource),
      // Which nodes a BMC channel can reach, and what their BMCs last said; never
      // the address or the credentials.
      transform: obj => ({ ...slimIdentity(obj), ...serverBmcRecordOf(obj) }),
      name: `${cluster.name} serverbmcs`,
      logger: log,
    });
    // Only spec.healthRefresh is ever written (a merge patch on the resourceVersion).
    this.bmcClient = new ResourceClient(kubeConfig, serverBmcResource, {
      fieldManager: 'rackside-backstage',
    });
    this.maintenanceClient = new ResourceClient(
      kubeConfig,
      nodeMaintenanceResource,
      { fieldManager: 'rackside-backstage' },
    );
    this.planCache = createWatchCache<PlanObject>({
      kubeConfig,
      transport,
      path: resourcePath(maintenancePlanResource),
      name: `${cluster.name} maintenanceplans`,
      logger: log,
    });
    this.planClient = new ResourceClient(kubeConfig, maintenancePlanResource, {
      fieldManager: 'rackside-backstage',
    });
    this.core = new CoreClient(kubeConfig, {
      fieldManager: 'rackside-backstage',
    });
    if (cluster.alerting) {
      const { url, caData, token, tokenFile, matchers } = cluster.alerting;
      this.alertmanagerClient = options.alertmanager
        ? undefined
        : new AlertmanagerClient({ url, caData, token, tokenFile });
      this.nodeAlerts = new NodeAlertsReader({
        api: options.alertmanager ?? this.alertmanagerClient!,
        matchers,
        nodes: () => this.nodes(),
        maintenances: () => this.maintenances(),
        // A new mapping is a shown change: the rows' keys and the generation move.
        onChange: () => {
          this.ownChanges++;
          this.notifySoon();
        },
        onError: error =>
          log.warn(
            `could not read the alerts of cluster ${cluster.name}: ${error}`,
          ),
      });
      // Alertmanager has no watch: read it every 30 s, so an open page that reads nothing
      // still hears of a new alert through the change signal (one request per cluster
      // whoever looks; a page is signalled only when the mapping changed).
      const poll = setInterval(
        () => void this.nodeAlerts?.read(),
        ALERTS_REFRESH_MS,
      );
      poll.unref?.();
      this.unsubscribes.push(() => clearInterval(poll));
    }
    this.judgeChanges();
  }

  /** Each node's alerts, read at most every 30 s (`cluster/nodeAlerts.ts`). */
  async alerts(): Promise<ClusterAlerts | undefined> {
    return this.nodeAlerts?.read();
  }

  /**
   * Turns cache events into changes of what is shown: Nodes are judged by the shared
   * watch (its `changed` fires only for shown facts), maintenances by their spec and
   * status, the power provider by its advertisement, ServerBMCs by their names.
   */
  private judgeChanges() {
    const changed = () => {
      this.ownChanges++;
      this.notifySoon();
    };
    const powerKey = (p: PowerProvider) =>
      JSON.stringify(powerAdvertisementOf(p));
    this.unsubscribes.push(
      this.nodeCache.on('changed', () => this.notifySoon()),
      this.maintenanceCache.on('add', changed),
      this.maintenanceCache.on('delete', changed),
      this.maintenanceCache.on('update', (m, old) => {
        if (maintenanceDigest(m) !== maintenanceDigest(old)) changed();
      }),
      this.powerCache.on('add', changed),
      this.powerCache.on('delete', changed),
      this.powerCache.on('update', (p, old) => {
        if (powerKey(p) !== powerKey(old)) changed();
      }),
      this.bmcCache.on('add', changed),
      this.bmcCache.on('delete', changed),
      // A new reading: a change of rollup (or of the parts counted) is a change signal;
      // a reading that only moves readAt makes the next snapshot fresh without one, so
      // a 15-minute sweep of a rack sends no signal while nothing changed.
      this.bmcCache.on('update', (b, old) => {
        if (healthSignalKey(b) !== healthSignalKey(old)) changed();
        else if (JSON.stringify(b.health) !== JSON.stringify(old.health)) {
          this.ownChanges++;
        }
      }),
      // A plan's spec or status (its page and the Servers page's list of plans).
      this.planCache.on('add', changed),
      this.planCache.on('delete', changed),
      this.planCache.on('update', (p, old) => {
        if (planDigest(p) !== planDigest(old)) changed();
      }),
    );
  }

  private notifySoon() {
    if (this.notifyTimer) return;
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = undefined;
      for (const listener of this.listeners) listener();
    }, this.options.changedDelayMs ?? 100);
  }

  /** Moves whenever something shown changed: Nodes, maintenances, power, BMCs. */
  get generation(): number {
    return this.nodeCache.generation * 2 ** 20 + this.ownChanges;
  }

  /**
   * The cluster as the routes read it, derived once per {@link generation}: the quorum,
   * each node's open maintenance, and each row's key (what the row is made of).
   */
  async snapshot(): Promise<KeyedSnapshot> {
    // First: a refresh that changes the mapping moves the generation read next.
    await this.nodeAlerts?.read();
    const generation = this.generation;
    if (this.cachedSnapshot?.generation !== generation) {
      const snapshot = this.deriveSnapshot();
      this.cachedSnapshot = { generation, snapshot };
      snapshot.catch(() => {
        if (this.cachedSnapshot?.snapshot === snapshot) {
          this.cachedSnapshot = undefined;
        }
      });
    }
    return this.cachedSnapshot!.snapshot;
  }

  private async deriveSnapshot(): Promise<KeyedSnapshot> {
    const generation = this.generation;
    const [nodes, maintenances, powerProvider, bmcs, alerts] =
      await Promise.all([
        this.nodes(),
        this.maintenances(),
        this.powerProvider(),
        this.serverBmcs(),
        this.alerts(),
      ]);
    const snap = snapshotOf(
      nodes,
      maintenances,
      powerProvider,
      bmcs.map(b => b.name),
      bmcs,
      alerts,
    );
    const digests = new Map<MaintenanceObject, string>();
    const rowKeys = new Map<string, string>();
    for (const entry of this.nodeCache.entries()) {
      const name = entry.facts.name;
      const active = snap.activeByNode.get(name);
      let activeKey = '';
      if (active) {
        activeKey = digests.get(active) ?? maintenanceDigest(active);
        digests.set(active, activeKey);
      }
      rowKeys.set(
        name,
        `${entry.digest}|${activeKey}|${
          snap.bmcNodes.has(name) ? 'bmc' : ''
        }|${alertsKeyOf(snap, name)}|${healthRowKey(snap.bmcHealth.get(name))}`,
      );
    }
    return { ...snap, generation, rowKeys };
  }

  private synced(
    cache: { synced: Promise<void>; hasSynced(): boolean },
    items: string,
  ): Promise<void> {
    return waitForFirstSync(cache, { cluster: this.name, items });
  }

  /** The Nodes as their shown projection, ordered by name (see `shownNodeOf`). */
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

  async serverBmcs(): Promise<ServerBmcRecord[]> {
    await this.synced(this.bmcCache, 'server BMCs');
    // The cache keeps the record's fields (its transform), beside apiVersion and kind.
    return this.bmcCache
      .list()
      .map(({ name, resourceVersion, healthRefresh, health }) => ({
        name,
        resourceVersion,
        ...(healthRefresh ? { healthRefresh } : {}),
        ...(health ? { health } : {}),
      }));
  }

  async readServerBmc(name: string): Promise<ServerBmcRecord | undefined> {
    const obj = await this.bmcClient.find(name);
    return obj ? serverBmcRecordOf(obj) : undefined;
  }

  async requestHealthRefresh(
    name: string,
    resourceVersion: string,
    refresh: ServerHealthRefresh,
  ): Promise<ServerBmcRecord> {
    // The resourceVersion makes the patch conditional: of two requests that read the
    // same object (two backends, two clicks), the apiserver lets one through.
    const patched = await this.bmcClient.patch(name, {
      metadata: { resourceVersion },
      spec: { healthRefresh: refresh },
    });
    return serverBmcRecordOf(patched);
  }

  async podsOnNode(nodeName: string): Promise<PodObject[]> {
    return this.core.podsOnNode(nodeName);
  }

  async podDisruptionBudgets(): Promise<PodDisruptionBudgetObject[]> {
    return (await this.core.podDisruptionBudgets.list()).items;
  }

  async drainStorage(nodeName: string, namespaces: string[]) {
    const [storage, virtualMachines] = await Promise.all([
      this.core.drainStorage(nodeName, namespaces),
      this.core.virtualMachineInstancesOn(nodeName),
    ]);
    // Undefined (no VirtualMachineInstance API) leaves the pre-flight without the section.
    return virtualMachines ? { ...storage, virtualMachines } : storage;
  }

  async drainInputsOf(
    nodeNames: string[],
  ): Promise<Map<string, NodeDrainInputs>> {
    // A handful of nodes: their pods listed now (quick). Many: from the pod cache that
    // plan pre-flights keep, so no pre-flight lists every pod of the cluster again.
    const [nodes, podsByNode, storage] = await Promise.all([
      this.nodes(),
      nodeNames.length <= FEW_NODES
        ? this.core.podsOnNodes(nodeNames)
        : this.planPods.podsOn(nodeNames),
      this.core.drainStorageOfCluster(nodeNames),
    ]);
    // The labels from the watch cache: a GET per node is what this read avoids.
    const labelsOf = new Map(
      nodes.map(n => [n.metadata?.name ?? '', n.metadata?.labels ?? {}]),
    );
    const { claims, volumes, virtualMachines } = storage;
    return new Map(
      [...podsByNode].map(([node, pods]) => [
        node,
        {
          pods,
          storage: {
            nodeLabels: labelsOf.get(node) ?? {},
            claims,
            volumes,
            ...(virtualMachines ? { virtualMachines } : {}),
          },
        },
      ]),
    );
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

  async plans(): Promise<PlanObject[]> {
    await this.synced(this.planCache, 'maintenance plans');
    return this.planCache.list();
  }

  async createPlan(obj: NewPlan): Promise<PlanObject> {
    return this.planClient.create(obj);
  }

  async updatePlanSpec(
    name: string,
    change: (current: PlanObject) => PlanObject['spec'],
  ): Promise<PlanObject> {
    // As setRequestFlag: update on the resourceVersion, a lost race retried.
    for (let attempt = 0; ; attempt++) {
      const current: PlanObject = await this.planClient.get(name);
      try {
        return await this.planClient.update({
          ...current,
          spec: change(current),
        });
      } catch (error) {
        if (attempt >= 2 || !ConflictError.is(error)) throw error;
      }
    }
  }

  async readMaintenance(name: string): Promise<MaintenanceObject | undefined> {
    return this.maintenanceClient.find(name);
  }

  async readPlan(name: string): Promise<PlanObject | undefined> {
    return this.planClient.find(name);
  }

  async decideMaintenanceApproval(
    name: string,
    resourceVersion: string,
    approval: Approval,
  ): Promise<MaintenanceObject> {
    const current: MaintenanceObject = await this.maintenanceClient.get(name);
    // An update (the Backstage identity is not granted patch) carrying the version the
    // decision was checked on: the apiserver refuses it once the object moved, and so
    // do we before asking. Never retried: a moved request is looked at again.
    if (current.metadata.resourceVersion !== resourceVersion) {
      throw new ConflictError(approvalMovedMessage('maintenance', name));
    }
    return this.maintenanceClient.update({
      ...current,
      spec: { ...current.spec, approval },
    });
  }

  async decidePlanApproval(
    name: string,
    resourceVersion: string,
    approval: Approval,
  ): Promise<PlanObject> {
    const current: PlanObject = await this.planClient.get(name);
    if (current.metadata.resourceVersion !== resourceVersion) {
      throw new ConflictError(approvalMovedMessage('plan', name));
    }
    return this.planClient.update({
      ...current,
      spec: { ...current.spec, approval },
    });
  }

  /** Calls `listener` (once per burst) when something a page shows changed. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  async stop(): Promise<void> {
    this.unsubscribes.splice(0).forEach(off => off());
    this.listeners.clear();
    if (this.notifyTimer) clearTimeout(this.notifyTimer);
    await Promise.all([
      // A shared Node watch belongs to the process, not to this cluster state.
      this.ownsNodes ? this.nodeCache.stop() : Promise.resolve(),
      this.maintenanceCache.stop(),
      this.powerCache.stop(),
      this.bmcCache.stop(),
      this.planCache.stop(),
      this.planPods.stop(),
      this.alertmanagerClient?.close(),
    ]);
  }
}
