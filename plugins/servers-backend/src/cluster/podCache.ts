/*
 * The pods a plan pre-flight reads, from a watch cache instead of a list per request.
 * A plan pre-flight of many servers would otherwise read every pod of the cluster
 * again on each pre-flight (the answer, each reload, the request); the cache reads them
 * once and follows their changes. It holds each pod as the drain reads it (servers-node
 * slimPod), indexed by node, and only while plans are being prepared: it starts at the
 * first pre-flight that needs it and stops after `idleMs` without one, so a portal that
 * never plans keeps no pod in memory.
 */
import type {
  PodObject,
  RawKubeObject,
  WatchCache,
} from '@rackside/plugin-servers-node';
import { waitForFirstSync } from './cacheSync';

/** The cache's index of pods by `spec.nodeName`. */
const BY_NODE = 'nodeName';

/** How long the pod cache stays after the last plan pre-flight that read it. */
export const PLAN_POD_CACHE_IDLE_MS = 10 * 60_000;

type SlimPod = PodObject & RawKubeObject;

/** Makes the cache: every pod of the cluster, slimmed, with the given index. */
export type PodCacheFactory = (
  indexes: Record<string, (pod: SlimPod) => string | undefined>,
) => WatchCache<SlimPod>;

export class PlanPodCache {
  private cache: WatchCache<SlimPod> | undefined;
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly cluster: string,
    private readonly make: PodCacheFactory,
    private readonly idleMs = PLAN_POD_CACHE_IDLE_MS,
  ) {}

  /** The pods bound to each of `nodeNames`, once the cache has its first list. */
  async podsOn(
    nodeNames: readonly string[],
  ): Promise<Map<string, PodObject[]>> {
    if (!this.cache) {
      this.cache = this.make({ [BY_NODE]: pod => pod.spec?.nodeName });
    }
    const cache = this.cache;
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => void this.stop(), this.idleMs);
    this.idle.unref?.();
    await waitForFirstSync(cache, { cluster: this.cluster, items: 'pods' });
    return new Map(nodeNames.map(n => [n, cache.byIndex(BY_NODE, n)]));
  }

  /** Whether the cache is running (tests, and the idle stop). */
  get running(): boolean {
    return this.cache !== undefined;
  }

  async stop(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
    const cache = this.cache;
    this.cache = undefined;
    await cache?.stop();
  }
}
