import type { KubeConfig } from '@kubernetes/client-node';
import {
  nodeFactsFromNode,
  type NodeFacts,
} from '@rackside/plugin-servers-common';
import type { KubeHttp } from '../clients/kubeHttp';
import { coreResources, type NodeObject } from '../clients/core';
import { resourcePath, type RawKubeObject } from '../clients/types';
import {
  createWatchCache,
  type WatchCache,
  type WatchCacheLogger,
} from './WatchCache';
import type { WatchTransport } from './transport';

/**
 * What a page (and a catalog entity) shows of a Node, and nothing else: name, labels
 * (roles, control plane, virtual and the permission rules read them), schedulability,
 * readiness, the system UUID and the OS image (the Talos version column, and what an
 * upgrade compares its target with). A heartbeat (a new resourceVersion, the conditions'
 * lastHeartbeatTime, managedFields, images, resource usage) changes none of it.
 */
export function shownNodeOf(raw: RawKubeObject | NodeObject): NodeObject {
  const node = raw as NodeObject;
  const ready = node.status?.conditions?.find(c => c.type === 'Ready');
  const systemUUID = node.status?.nodeInfo?.systemUUID;
  // Cut as the operator's slim Node cuts it: a version is never this long.
  const osImage = node.status?.nodeInfo?.osImage?.slice(0, 256);
  const nodeInfo = {
    ...(systemUUID !== undefined ? { systemUUID } : {}),
    ...(osImage !== undefined ? { osImage } : {}),
  };
  return {
    apiVersion: node.apiVersion ?? 'v1',
    kind: node.kind ?? 'Node',
    metadata: {
      name: node.metadata?.name,
      resourceVersion: node.metadata?.resourceVersion,
      ...(node.metadata?.labels ? { labels: node.metadata.labels } : {}),
    },
    spec: node.spec?.unschedulable ? { unschedulable: true } : {},
    status: {
      ...(ready
        ? { conditions: [{ type: 'Ready', status: ready.status }] }
        : {}),
      ...(Object.keys(nodeInfo).length > 0 ? { nodeInfo } : {}),
    },
  } as NodeObject;
}

/** The shown facts of a Node as one string: equal strings, equal rows. */
export function shownDigestOf(node: NodeObject): string {
  const labels = node.metadata?.labels ?? {};
  const sortedLabels = Object.keys(labels)
    .sort()
    .map(k => [k, labels[k]]);
  return JSON.stringify([
    node.metadata?.name ?? '',
    sortedLabels,
    node.spec?.unschedulable === true,
    node.status?.conditions?.find(c => c.type === 'Ready')?.status ?? null,
    node.status?.nodeInfo?.systemUUID ?? null,
    node.status?.nodeInfo?.osImage?.slice(0, 256) ?? null,
  ]);
}

/** One Node as the shared watch keeps it: derived once per change, not per read. */
export interface ShownNode {
  /** The shown projection ({@link shownNodeOf}); a new object only when a fact changed. */
  node: NodeObject;
  facts: NodeFacts;
  digest: string;
}

/** The listeners of {@link ClusterNodes}. */
export interface ClusterNodesEvents {
  /**
   * Something shown changed (a Node added, removed, or one of its shown facts):
   * fires once per burst with the names. Never for a heartbeat.
   */
  changed: (names: ReadonlySet<string>) => void;
}

/**
 * The Nodes of one cluster from one watch, as their shown facts. Shared by every reader
 * in a backend process (the servers plugin and the catalog module), see
 * {@link ClusterNodesService}.
 */
export interface ClusterNodes {
  readonly cluster: string;
  /** Bumped whenever a shown fact of any Node changed (or a Node came or went). */
  readonly generation: number;
  /** Every Node's shown projection, ordered by name; the same array until a change. */
  list(): NodeObject[];
  /** Every Node with its facts and digest, ordered by name. */
  entries(): readonly ShownNode[];
  get(name: string): ShownNode | undefined;
  readonly synced: Promise<void>;
  hasSynced(): boolean;
  on<E extends keyof ClusterNodesEvents>(
    event: E,
    listener: ClusterNodesEvents[E],
  ): () => void;
  /** Watch requests this cluster's Node watch opened (for health checks and benches). */
  watchesOpened(): number;
  stop(): Promise<void>;
}

/** Options of {@link createClusterNodes}. */
export interface ClusterNodesOptions {
  cluster: string;
  kubeConfig?: KubeConfig | KubeHttp;
  /** Replaces the HTTP transport (tests). */
  transport?: WatchTransport;
  /** How long `changed` collects changes before it fires; default 100 ms. */
  changedDelayMs?: number;
  logger?: WatchCacheLogger;
}

const byName = new Intl.Collator('en').compare;

class ClusterNodesImpl implements ClusterNodes {
  readonly cluster: string;
  private readonly cache: WatchCache<NodeObject>;
  private readonly shown = new Map<string, ShownNode>();
  private readonly listeners = new Set<ClusterNodesEvents['changed']>();
  private gen = 0;
  private ordered: { gen: number; entries: ShownNode[]; nodes: NodeObject[] } =
    { gen: -1, entries: [], nodes: [] };
  private pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: ClusterNodesOptions) {
    this.cluster = options.cluster;
    this.cache = createWatchCache<NodeObject>({
      kubeConfig: options.kubeConfig,
      transport: options.transport,
      path: resourcePath(coreResources.nodes),
      transform: shownNodeOf,
      name: `${options.cluster} nodes`,
      logger: options.logger,
    });
    this.cache.on('add', node => this.put(node));
    this.cache.on('update', node => this.put(node));
    this.cache.on('delete', node => this.remove(node.metadata?.name ?? ''));
  }

  get generation() {
    return this.gen;
  }

  get synced() {
    return this.cache.synced;
  }

  hasSynced() {
    return this.cache.hasSynced();
  }

  watchesOpened() {
    return this.cache.status().watches;
  }

  private put(node: NodeObject) {
    const name = node.metadata?.name ?? '';
    const digest = shownDigestOf(node);
    const old = this.shown.get(name);
    // A heartbeat: the watch stored a new resourceVersion, nothing shown changed. The
    // old projection stays, so rows and entity tags keyed by it stay too.
    if (old && old.digest === digest) return;
    this.shown.set(name, { node, facts: nodeFactsFromNode(node), digest });
    this.touch(name);
  }

  private remove(name: string) {
    if (this.shown.delete(name)) this.touch(name);
  }

  private touch(name: string) {
    this.gen++;
    this.pending.add(name);
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const names = this.pending;
      this.pending = new Set();
      for (const listener of this.listeners) {
        try {
          listener(names);
        } catch (error) {
          this.options.logger?.error(
            `${this.cluster} nodes: a changed listener threw: ${error}`,
          );
        }
      }
    }, this.options.changedDelayMs ?? 100);
  }

  entries(): readonly ShownNode[] {
    if (this.ordered.gen !== this.gen) {
      const entries = [...this.shown.values()].sort((a, b) =>
        byName(a.facts.name, b.facts.name),
      );
      this.ordered = {
        gen: this.gen,
        entries,
        nodes: entries.map(e => e.node),
      };
    }
    return this.ordered.entries;
  }

  list(): NodeObject[] {
    this.entries();
    return this.ordered.nodes;
  }

  get(name: string) {
    return this.shown.get(name);
  }

  on<E extends keyof ClusterNodesEvents>(
    _event: E,
    listener: ClusterNodesEvents[E],
  ): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  async stop() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.listeners.clear();
    await this.cache.stop();
  }
}

/** Opens one Node watch of a cluster, kept as shown facts. */
export function createClusterNodes(options: ClusterNodesOptions): ClusterNodes {
  if (!options.transport && !options.kubeConfig) {
    throw new TypeError('createClusterNodes needs a kubeConfig or a transport');
  }
  return new ClusterNodesImpl(options);
}
