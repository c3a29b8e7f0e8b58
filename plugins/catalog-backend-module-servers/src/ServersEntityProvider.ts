import type {
  LoggerService,
  SchedulerServiceTaskRunner,
} from '@backstage/backend-plugin-api';
import { stringifyEntityRef, type Entity } from '@backstage/catalog-model';
import type {
  DeferredEntity,
  EntityProvider,
  EntityProviderConnection,
} from '@backstage/plugin-catalog-node';
import { nodeFactsFromNode } from '@rackside/plugin-servers-common';
import {
  coreResources,
  createWatchCache,
  makeKubeConfig,
  resourcePath,
  shownNodeOf,
  type ClusterConfig,
  type ClusterNodes,
  type NodeObject,
  type WatchCache,
} from '@rackside/plugin-servers-node';
import { clusterEntity, rolesOf, serverEntity } from './serverEntity';

/** The part of a watch cache the provider uses (tests pass a fake). */
export type NodeCache = Pick<
  WatchCache<NodeObject>,
  'list' | 'hasSynced' | 'synced' | 'on' | 'stop'
>;

/** Options of {@link ServersEntityProvider}. */
export interface ServersEntityProviderOptions {
  clusters: Array<
    Pick<ClusterConfig, 'name' | 'title'> & Partial<ClusterConfig>
  >;
  /** Owner of every entity, e.g. `group:default/plant-admins`. */
  owner: string;
  logger: LoggerService;
  /**
   * Publish each server's SMBIOS system UUID (annotation `rackside.dev/system-uuid`).
   * Off by default: every catalog reader sees the entities, and the UUID is what a
   * machine is told apart by at join and reclaim time (`servers.catalog.includeSystemUUID`).
   */
  includeSystemUUID?: boolean;
  /** Runs the full refresh; without one, only watch events publish. */
  taskRunner?: SchedulerServiceTaskRunner;
  /** Makes the Node watch of a cluster; defaults to a watch cache over `servers.clusters` access. */
  createNodeCache?: (
    cluster: ServersEntityProviderOptions['clusters'][number],
  ) => NodeCache;
}

/**
 * A shared Node watch (`clusterNodesServiceRef`) as the provider reads it: `changed`
 * fires only when something shown changed (a heartbeat rebuilds no entity), and
 * stopping the provider leaves the watch to the process that owns it.
 */
export function sharedNodeCache(nodes: ClusterNodes): NodeCache {
  return {
    list: () => nodes.list(),
    hasSynced: () => nodes.hasSynced(),
    get synced() {
      return nodes.synced;
    },
    on: ((event: string, listener: (keys: ReadonlySet<string>) => void) => {
      if (event !== 'changed') return () => {};
      return nodes.on('changed', listener);
    }) as NodeCache['on'],
    stop: async () => {},
  };
}

function defaultNodeCache(
  cluster: ServersEntityProviderOptions['clusters'][number],
  logger: LoggerService,
): NodeCache {
  if (!cluster.access) {
    throw new Error(`cluster ${cluster.name} has no access configuration`);
  }
  return createWatchCache<NodeObject>({
    kubeConfig: makeKubeConfig(cluster as ClusterConfig),
    path: resourcePath(coreResources.nodes),
    // What a page and an entity show of a Node: the same projection the shared watch
    // (sharedNodeCache) hands the provider, so an entity is the same from either.
    transform: shownNodeOf,
    // Each burst of changes rebuilds and compares every server's entity. Node heartbeats
    // change thousands of Nodes in a large cluster every few minutes (about 17 a second
    // at 5,000 nodes): collected for a second, that is one comparison a second instead of
    // ten, which took a third of the backend's CPU (bench/README.md, servers list).
    changedDelayMs: 1000,
    name: `${cluster.name} nodes (catalog)`,
    logger: logger.child({ cluster: cluster.name }),
  });
}

/** The location key of a cluster's entities (only this provider may replace them). */
export function locationKeyOf(cluster: string): string {
  return `rackside-servers:${cluster}`;
}

/**
 * Publishes each server of each configured cluster as a `Resource` entity,
 * and each cluster as a `System`. Nodes are watched: a change to what an
 * entity shows (labels, roles, a Node added or gone) is published as a
 * delta at once; heartbeats change nothing and publish nothing. The
 * scheduled full refresh replaces the provider's whole set (removing what
 * belongs to clusters no longer configured) and waits until every cluster
 * has been listed once, so an unreachable cluster never empties its part of
 * the catalog.
 */
export class ServersEntityProvider implements EntityProvider {
  private connection?: EntityProviderConnection;
  private readonly caches = new Map<string, NodeCache>();
  /** Per cluster: entity ref to the JSON last published. */
  private readonly published = new Map<string, Map<string, string>>();
  private readonly unsubscribes: Array<() => void> = [];
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly options: ServersEntityProviderOptions) {}

  getProviderName(): string {
    return 'rackside-servers';
  }

  async connect(connection: EntityProviderConnection): Promise<void> {
    this.connection = connection;
    const { logger } = this.options;
    for (const cluster of this.options.clusters) {
      const cache =
        this.options.createNodeCache?.(cluster) ??
        defaultNodeCache(cluster, logger);
      this.caches.set(cluster.name, cache);
      this.unsubscribes.push(
        cache.on('changed', () =>
          this.enqueue(() => this.publishDelta(cluster.name)),
        ),
      );
      cache.synced.then(
        () => this.enqueue(() => this.publishDelta(cluster.name)),
        () => {},
      );
    }
    await this.options.taskRunner?.run({
      id: `${this.getProviderName()}:refresh`,
      fn: () => this.refresh(),
    });
  }

  /** Publishes every cluster's entities as one full mutation (when all are listed). */
  async refresh(): Promise<void> {
    await this.enqueue(() => this.publishFull());
  }

  /** Stops the Node watches. */
  async stop(): Promise<void> {
    this.unsubscribes.splice(0).forEach(off => off());
    await Promise.all([...this.caches.values()].map(cache => cache.stop()));
  }

  /** Mutations go out one at a time, in the order their causes happened. */
  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.queue
      .then(task)
      .catch(error =>
        this.options.logger.warn(`could not publish server entities: ${error}`),
      );
    this.queue = next;
    return next;
  }

  private entitiesOf(clusterName: string): DeferredEntity[] {
    const cluster = this.options.clusters.find(c => c.name === clusterName)!;
    const cache = this.caches.get(clusterName)!;
    const locationKey = locationKeyOf(clusterName);
    const owner = this.options.owner;
    const entities: Entity[] = [clusterEntity(cluster, { owner, locationKey })];
    for (const node of cache.list()) {
      const facts = nodeFactsFromNode(node);
      if (!facts.name) continue;
      entities.push(
        serverEntity(
          {
            cluster: clusterName,
            node: facts.name,
            controlPlane: facts.controlPlane,
            virtual: facts.virtual,
            roles: rolesOf(node.metadata?.labels),
            systemUUID: this.options.includeSystemUUID
              ? node.status?.nodeInfo?.systemUUID || undefined
              : undefined,
          },
          { owner, locationKey },
        ),
      );
    }
    return entities.map(entity => ({ entity, locationKey }));
  }

  private snapshot(entities: DeferredEntity[]): Map<string, string> {
    return new Map(
      entities.map(e => [
        stringifyEntityRef(e.entity),
        JSON.stringify(e.entity),
      ]),
    );
  }

  private async publishDelta(clusterName: string): Promise<void> {
    const cache = this.caches.get(clusterName);
    if (!this.connection || !cache?.hasSynced()) return;
    const entities = this.entitiesOf(clusterName);
    const now = this.snapshot(entities);
    const before = this.published.get(clusterName) ?? new Map<string, string>();
    const added = entities.filter(e => {
      const ref = stringifyEntityRef(e.entity);
      return before.get(ref) !== now.get(ref);
    });
    const locationKey = locationKeyOf(clusterName);
    const removed = [...before.keys()]
      .filter(ref => !now.has(ref))
      .map(entityRef => ({ entityRef, locationKey }));
    if (added.length === 0 && removed.length === 0) return;
    await this.connection.applyMutation({ type: 'delta', added, removed });
    this.published.set(clusterName, now);
    this.options.logger.debug(
      `${clusterName}: published ${added.length} changed and ${removed.length} removed server entities`,
    );
  }

  private async publishFull(): Promise<void> {
    if (!this.connection) return;
    const waiting = [...this.caches]
      .filter(([, c]) => !c.hasSynced())
      .map(([n]) => n);
    if (waiting.length > 0) {
      this.options.logger.info(
        `full refresh of server entities waits for the first list of ${waiting.join(
          ', ',
        )}`,
      );
      return;
    }
    const perCluster = [...this.caches.keys()].map(name => ({
      name,
      entities: this.entitiesOf(name),
    }));
    await this.connection.applyMutation({
      type: 'full',
      entities: perCluster.flatMap(c => c.entities),
    });
    for (const { name, entities } of perCluster) {
      this.published.set(name, this.snapshot(entities));
    }
  }
}
