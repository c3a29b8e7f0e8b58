import type { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError } from '../clients/errors';
import { KubeHttp } from '../clients/kubeHttp';
import { KubeObject, objectKey, RawKubeObject } from '../clients/types';
import {
  kubeWatchTransport,
  ListPage,
  ListRequest,
  RawWatchEvent,
  WatchHandle,
  WatchTransport,
} from './transport';

/**
 * The logger a watch cache reports to; Backstage's `LoggerService` and most
 * loggers fit.
 */
export interface WatchCacheLogger {
  debug(message: string, meta?: any): void;
  info(message: string, meta?: any): void;
  warn(message: string, meta?: any): void;
  error(message: string, meta?: any): void;
}

/** Options of {@link createWatchCache}. */
export interface WatchCacheOptions<T extends KubeObject> {
  /** Cluster access. Required unless `transport` is given. */
  kubeConfig?: KubeConfig | KubeHttp;
  /**
   * Collection path, e.g. `/api/v1/nodes`, `/api/v1/pods` or
   * `/apis/rackside.dev/v1alpha1/nodemaintenances` (see `resourcePath`).
   */
  path: string;
  labelSelector?: string;
  /** e.g. `spec.nodeName=worker-3` to cache only one node's pods. */
  fieldSelector?: string;
  /**
   * Replaces the list half of the transport (each call lists one page;
   * follow `request.continue`).
   */
  listFn?: (request: ListRequest) => Promise<ListPage>;
  /** Replaces the HTTP transport (tests). */
  transport?: WatchTransport;
  /**
   * Turns the apiserver's object into what the cache stores, to save memory
   * (drop fields nobody reads). It receives objects whose
   * `metadata.managedFields` is already gone and must keep
   * `metadata.name`, `namespace` and `resourceVersion`. An object it throws
   * on is logged and left out.
   */
  transform?: (obj: RawKubeObject) => T;
  /**
   * Secondary indexes: name to a function giving the values an object is
   * found under (see {@link WatchCache.byIndex}).
   */
  indexes?: Record<string, (obj: T) => string | string[] | undefined>;
  /**
   * Relist this often and emit the differences (a safety net against a
   * missed event). Off by default: an idle cache makes no request beyond
   * its open watch.
   */
  resyncMs?: number;
  /** Items per list request; default 500. */
  pageSize?: number;
  /**
   * Server-side watch timeout; default a random 300 to 600 s, so many caches
   * do not reconnect in step.
   */
  watchTimeoutSeconds?: number | (() => number);
  /**
   * Reconnect delays: exponential from `initialMs` (default 500) to `maxMs`
   * (default 30 s), each with up to 50 % jitter. The delay resets once a
   * watch proved healthy: it delivered an event or stayed open
   * `resetAfterMs` (default 5 s).
   */
  backoff?: { initialMs?: number; maxMs?: number; resetAfterMs?: number };
  /** How long `changed` collects changes before it fires; default 100 ms. */
  changedDelayMs?: number;
  /** Used in log messages; defaults to the path and selectors. */
  name?: string;
  logger?: WatchCacheLogger;
}

/** The listeners of a watch cache's events. */
export interface WatchCacheEvents<T> {
  /** An object appeared (also for every object of the first list). */
  add: (obj: T) => void;
  /** An object changed (its resourceVersion differs). */
  update: (obj: T, old: T) => void;
  /** An object is gone; the argument is its last known state. */
  delete: (obj: T) => void;
  /**
   * Something changed: fires once per burst (see `changedDelayMs`) with the
   * keys that were added, updated or deleted.
   */
  changed: (keys: ReadonlySet<string>) => void;
}

/** A snapshot of a cache's connection, for health checks and tests. */
export interface WatchCacheStatus {
  synced: boolean;
  /** A watch is open and the server accepted it. */
  watching: boolean;
  /** The last resourceVersion the cache is consistent with. */
  resourceVersion?: string;
  /** Consecutive failed attempts (0 when healthy). */
  failures: number;
  lastError?: string;
  /** Number of (re)lists done, including the first. */
  lists: number;
  /** Number of watch requests opened. */
  watches: number;
}

/**
 * An in-memory copy of one collection kept current by list + watch (an
 * informer). Keys are `namespace/name` (or `name`).
 */
export interface WatchCache<T extends KubeObject> {
  /** All cached objects. */
  list(): T[];
  get(key: string): T | undefined;
  /** Objects an index maps `value` to. Throws for an unknown index. */
  byIndex(index: string, value: string): T[];
  readonly size: number;
  /** Resolves after the first complete list; rejects if stopped before. */
  readonly synced: Promise<void>;
  hasSynced(): boolean;
  status(): WatchCacheStatus;
  /** Subscribes to an event; returns the unsubscribe function. */
  on<E extends keyof WatchCacheEvents<T>>(
    event: E,
    listener: WatchCacheEvents<T>[E],
  ): () => void;
  /** Closes the watch and timers; resolves when the cache has let go. */
  stop(): Promise<void>;
}

type Outcome = {
  kind: 'ended' | 'expired' | 'failed' | 'aborted';
  error?: unknown;
  healthy: boolean;
};

const silentLogger: WatchCacheLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

function isExpired(error: unknown): boolean {
  return (
    error instanceof KubeApiError &&
    (error.statusCode === 410 || error.reason === 'Expired')
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

class WatchCacheImpl<T extends KubeObject> implements WatchCache<T> {
  readonly synced: Promise<void>;
  private readonly items = new Map<string, T>();
  private readonly listeners: {
    [E in keyof WatchCacheEvents<T>]: Set<WatchCacheEvents<T>[E]>;
  } = {
    add: new Set(),
    update: new Set(),
    delete: new Set(),
    changed: new Set(),
  };
  private readonly indexes = new Map<
    string,
    {
      fn: (obj: T) => string | string[] | undefined;
      map: Map<string, Set<string>>;
    }
  >();
  private readonly transport: WatchTransport;
  private readonly logger: WatchCacheLogger;
  private readonly name: string;
  private readonly abortController = new AbortController();
  private readonly loop: Promise<void>;
  private resolveSynced!: () => void;
  private rejectSynced!: (error: Error) => void;
  private isSynced = false;
  private stopped = false;
  private rv: string | undefined;
  private current: WatchHandle | undefined;
  private abortingWatch = false;
  private resyncDue = false;
  private resyncTimer: NodeJS.Timeout | undefined;
  private sleeper: { wake(): void } | undefined;
  private pendingChanges = new Set<string>();
  private changedTimer: NodeJS.Timeout | undefined;
  private watching = false;
  private failures = 0;
  private lastError: string | undefined;
  private lists = 0;
  private watches = 0;

  constructor(private readonly options: WatchCacheOptions<T>) {
    if (!options.transport && !options.kubeConfig) {
      throw new TypeError('createWatchCache needs a kubeConfig or a transport');
    }
    const base = options.transport ?? kubeWatchTransport(options.kubeConfig!);
    this.transport = options.listFn
      ? { list: options.listFn, watch: base.watch.bind(base) }
      : base;
    this.logger = options.logger ?? silentLogger;
    const selectors = [options.labelSelector, options.fieldSelector]
      .filter(Boolean)
      .join(',');
    this.name =
      options.name ??
      (selectors ? `${options.path}?${selectors}` : options.path);
    for (const [index, fn] of Object.entries(options.indexes ?? {})) {
      this.indexes.set(index, { fn, map: new Map() });
    }
    this.synced = new Promise<void>((resolve, reject) => {
      this.resolveSynced = resolve;
      this.rejectSynced = reject;
    });
    // Nobody has to await `synced`; a stop before sync must not crash the process.
    this.synced.catch(() => {});
    if (options.resyncMs && options.resyncMs > 0) {
      this.resyncTimer = setInterval(() => {
        this.resyncDue = true;
        this.abortWatch();
      }, options.resyncMs);
    }
    // Start after the caller had the chance to subscribe.
    this.loop = Promise.resolve().then(() => this.run());
  }

  // ---------------------------------------------------------------- reads

  list(): T[] {
    return Array.from(this.items.values());
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  byIndex(index: string, value: string): T[] {
    const entry = this.indexes.get(index);
    if (!entry) throw new Error(`${this.name}: no index named "${index}"`);
    const keys = entry.map.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.items.get(key);
      if (obj) out.push(obj);
    }
    return out;
  }

  get size(): number {
    return this.items.size;
  }

  hasSynced(): boolean {
    return this.isSynced;
  }

  status(): WatchCacheStatus {
    return {
      synced: this.isSynced,
      watching: this.watching,
      resourceVersion: this.rv,
      failures: this.failures,
      lastError: this.lastError,
      lists: this.lists,
      watches: this.watches,
    };
  }

  on<E extends keyof WatchCacheEvents<T>>(
    event: E,
    listener: WatchCacheEvents<T>[E],
  ): () => void {
    const set = this.listeners[event] as Set<WatchCacheEvents<T>[E]>;
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      if (this.resyncTimer) clearInterval(this.resyncTimer);
      if (this.changedTimer) clearTimeout(this.changedTimer);
      this.sleeper?.wake();
      this.abortController.abort();
      this.abortWatch();
      if (!this.isSynced) {
        this.rejectSynced(
          new Error(`watch cache ${this.name} stopped before it synced`),
        );
      }
    }
    await this.loop;
  }

  // ---------------------------------------------------------------- events

  private emit<E extends keyof WatchCacheEvents<T>>(
    event: E,
    ...args: Parameters<WatchCacheEvents<T>[E]>
  ) {
    for (const listener of this.listeners[event]) {
      try {
        (listener as (...a: unknown[]) => void)(...args);
      } catch (error) {
        this.logger.error(
          `watch cache ${this.name}: a ${event} listener threw: ${describe(
            error,
          )}`,
        );
      }
    }
  }

  private markChanged(key: string) {
    this.pendingChanges.add(key);
    if (this.changedTimer || this.stopped) return;
    this.changedTimer = setTimeout(() => {
      this.changedTimer = undefined;
      const keys = this.pendingChanges;
      this.pendingChanges = new Set();
      this.emit('changed', keys);
    }, this.options.changedDelayMs ?? 100);
  }

  // ---------------------------------------------------------------- store

  private prepare(raw: RawKubeObject): T | undefined {
    if (raw.metadata && 'managedFields' in raw.metadata) {
      delete (raw.metadata as { managedFields?: unknown }).managedFields;
    }
    if (!this.options.transform) return raw as unknown as T;
    try {
      return this.options.transform(raw);
    } catch (error) {
      this.logger.error(
        `watch cache ${this.name}: transform failed for ${objectKey(
          raw,
        )}; object left out: ${describe(error)}`,
      );
      return undefined;
    }
  }

  private indexValues(
    fn: (obj: T) => string | string[] | undefined,
    obj: T,
  ): string[] {
    const values = fn(obj);
    if (values === undefined) return [];
    return Array.isArray(values) ? values : [values];
  }

  private reindex(key: string, old: T | undefined, obj: T | undefined) {
    for (const { fn, map } of this.indexes.values()) {
      if (old) {
        for (const value of this.indexValues(fn, old)) {
          const keys = map.get(value);
          keys?.delete(key);
          if (keys?.size === 0) map.delete(value);
        }
      }
      if (obj) {
        for (const value of this.indexValues(fn, obj)) {
          let keys = map.get(value);
          if (!keys) map.set(value, (keys = new Set()));
          keys.add(key);
        }
      }
    }
  }

  private store(key: string, obj: T) {
    const old = this.items.get(key);
    if (
      old &&
      old.metadata?.resourceVersion === obj.metadata?.resourceVersion
    ) {
      return;
    }
    this.items.set(key, obj);
    this.reindex(key, old, obj);
    if (old) this.emit('update', obj, old);
    else this.emit('add', obj);
    this.markChanged(key);
  }

  private remove(key: string) {
    const old = this.items.get(key);
    if (!old) return;
    this.items.delete(key);
    this.reindex(key, old, undefined);
    this.emit('delete', old);
    this.markChanged(key);
  }

  // ---------------------------------------------------------------- list

  /**
   * Lists the collection and brings the cache in line with it: adds and
   * updates for what is new or changed, deletes for what is gone. Objects
   * that did not change are not copied, so a relist costs little more memory
   * than the changes.
   */
  private async relist() {
    this.lists++;
    const seen = new Set<string>();
    const changed: Array<[string, T]> = [];
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.transport.list({
        path: this.options.path,
        labelSelector: this.options.labelSelector,
        fieldSelector: this.options.fieldSelector,
        limit: this.options.pageSize ?? 500,
        continue: continueToken,
        signal: this.abortController.signal,
      });
      if (this.stopped) return;
      const kind = page.kind?.replace(/List$/, '');
      for (const raw of page.items) {
        if (!raw.kind && kind) raw.kind = kind;
        if (!raw.apiVersion && page.apiVersion)
          raw.apiVersion = page.apiVersion;
        const key = objectKey(raw);
        seen.add(key);
        const old = this.items.get(key);
        if (
          old &&
          old.metadata?.resourceVersion === raw.metadata?.resourceVersion
        ) {
          continue;
        }
        const obj = this.prepare(raw);
        if (obj) changed.push([key, obj]);
        else seen.delete(key);
      }
      continueToken = page.continue;
      resourceVersion = page.resourceVersion;
    } while (continueToken);

    for (const [key, obj] of changed) this.store(key, obj);
    for (const key of this.items.keys()) {
      if (!seen.has(key)) this.remove(key);
    }
    this.rv = resourceVersion;
    // This list is as good as a resync that fell due while it ran.
    this.resyncDue = false;
    this.logger.debug(
      `watch cache ${this.name}: listed ${this.items.size} objects at resourceVersion ${resourceVersion}`,
    );
    if (!this.isSynced) {
      this.isSynced = true;
      this.resolveSynced();
    }
  }

  // ---------------------------------------------------------------- watch

  private abortWatch() {
    if (!this.current) return;
    this.abortingWatch = true;
    this.current.abort();
  }

  private onEvent(event: RawWatchEvent, end: (status?: unknown) => void) {
    const raw = event.object;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const key = objectKey(raw);
        const rv = raw.metadata?.resourceVersion;
        const obj = this.prepare(raw);
        if (obj) this.store(key, obj);
        if (rv) this.rv = rv;
        return;
      }
      case 'DELETED': {
        this.remove(objectKey(raw));
        if (raw.metadata?.resourceVersion)
          this.rv = raw.metadata.resourceVersion;
        return;
      }
      case 'BOOKMARK':
        if (raw?.metadata?.resourceVersion) {
          this.rv = raw.metadata.resourceVersion;
        }
        return;
      case 'ERROR':
        end(raw);
        return;
      default:
        this.logger.debug(
          `watch cache ${this.name}: ignoring watch event ${event.type}`,
        );
    }
  }

  private watchOnce(): Promise<Outcome> {
    return new Promise<Outcome>(resolve => {
      const started = Date.now();
      const resetAfterMs = this.options.backoff?.resetAfterMs ?? 5000;
      let delivered = 0;
      let errorStatus: { code?: number; reason?: string } | undefined;
      let handle: WatchHandle | undefined;
      let endRequested = false;
      let settled = false;
      let healthyTimer: NodeJS.Timeout | undefined;
      // A watch that delivers, or simply stays open a while, ends a failure streak.
      const markHealthy = () => {
        if (healthyTimer) clearTimeout(healthyTimer);
        healthyTimer = undefined;
        if (settled || this.failures === 0) return;
        this.logger.info(`watch cache ${this.name}: watching again`);
        this.failures = 0;
        this.lastError = undefined;
      };

      const end = (status?: unknown) => {
        errorStatus = (status as typeof errorStatus) ?? {};
        endRequested = true;
        handle?.abort();
      };
      const finish = (kind: Outcome['kind'], error?: unknown) => {
        if (settled) return;
        settled = true;
        if (healthyTimer) clearTimeout(healthyTimer);
        this.current = undefined;
        this.watching = false;
        const aborted = this.abortingWatch;
        this.abortingWatch = false;
        resolve({
          kind: aborted && !errorStatus ? 'aborted' : kind,
          error,
          healthy: delivered > 0 || Date.now() - started >= resetAfterMs,
        });
      };

      const timeout = this.options.watchTimeoutSeconds;
      this.watches++;
      try {
        handle = this.transport.watch(
          {
            path: this.options.path,
            labelSelector: this.options.labelSelector,
            fieldSelector: this.options.fieldSelector,
            resourceVersion: this.rv ?? '',
            allowWatchBookmarks: true,
            timeoutSeconds:
              typeof timeout === 'function'
                ? timeout()
                : timeout ?? 300 + Math.floor(Math.random() * 300),
          },
          {
            onOpen: () => {
              if (settled) return;
              this.watching = true;
              if (this.failures > 0) {
                healthyTimer = setTimeout(markHealthy, resetAfterMs);
              }
            },
            onEvent: event => {
              if (settled || endRequested || this.stopped) return;
              if (event.type !== 'ERROR' && delivered++ === 0) markHealthy();
              this.onEvent(event, end);
            },
          },
        );
      } catch (error) {
        finish('failed', error);
        return;
      }
      this.current = handle;
      if (endRequested || this.stopped) handle.abort();
      handle.done.then(
        () => {
          if (!errorStatus) finish('ended');
          else if (errorStatus.code === 410 || errorStatus.reason === 'Expired')
            finish('expired');
          else {
            finish(
              'failed',
              new KubeApiError(errorStatus.code ?? 500, errorStatus),
            );
          }
        },
        error => finish(isExpired(error) ? 'expired' : 'failed', error),
      );
    });
  }

  // ---------------------------------------------------------------- loop

  private delay(failures: number): number {
    const initial = this.options.backoff?.initialMs ?? 500;
    const max = this.options.backoff?.maxMs ?? 30_000;
    const base = Math.min(max, initial * 2 ** Math.min(failures - 1, 30));
    return Math.round(base / 2 + (Math.random() * base) / 2);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise(resolve => {
      let timer: NodeJS.Timeout | undefined = undefined;
      const wake = () => {
        clearTimeout(timer);
        this.sleeper = undefined;
        resolve();
      };
      timer = setTimeout(wake, ms);
      this.sleeper = { wake };
    });
  }

  private noteFailure(what: string, error: unknown) {
    this.failures++;
    this.lastError = describe(error);
    const message = `watch cache ${this.name}: ${what} failed (attempt ${this.failures}): ${this.lastError}`;
    if (this.failures === 1) this.logger.warn(message);
    else this.logger.debug(message);
  }

  private async run() {
    let needList = true;
    let afterList = false;
    while (!this.stopped) {
      if (this.failures > 0) {
        await this.sleep(this.delay(this.failures));
        if (this.stopped) break;
      }
      if (needList || this.resyncDue) {
        this.resyncDue = false;
        try {
          await this.relist();
          needList = false;
          afterList = true;
        } catch (error) {
          if (this.stopped) break;
          needList = true;
          this.noteFailure('list', error);
          continue;
        }
        if (this.stopped) break;
      }

      const outcome = await this.watchOnce();
      if (this.stopped) break;
      const justListed = afterList;
      afterList = false;
      switch (outcome.kind) {
        case 'aborted':
          // A resync asked for a relist; nothing failed.
          break;
        case 'ended':
          if (outcome.healthy) {
            this.failures = 0;
          } else {
            this.noteFailure('watch', 'the apiserver closed it at once');
          }
          break;
        case 'expired':
          this.logger.info(
            `watch cache ${this.name}: resourceVersion ${this.rv} expired; relisting`,
          );
          needList = true;
          // A 410 right after a fresh list would loop: back off then.
          if (justListed && !outcome.healthy) {
            this.noteFailure('watch', 'resourceVersion expired after a list');
          } else {
            this.failures = 0;
          }
          break;
        case 'failed':
        default:
          if (outcome.healthy) this.failures = 0;
          this.noteFailure('watch', outcome.error);
          break;
      }
      if (this.failures === 0) this.lastError = undefined;
    }
    this.watching = false;
  }
}

/**
 * Starts a watch cache (informer) over one collection: it lists, then
 * watches from the list's resourceVersion with bookmarks, and keeps going
 * through everything a long-lived watch meets. A watch the server ends is
 * resumed from the last resourceVersion; a 410 (resourceVersion too old) leads
 * to a relist whose differences are emitted as add, update and delete; broken
 * connections and apiserver restarts are retried with capped exponential
 * backoff and jitter, never in a tight loop.
 *
 * The cache starts at once; listeners attached synchronously after this call
 * see every event, including an `add` per object of the first list.
 */
export function createWatchCache<T extends KubeObject = RawKubeObject>(
  options: WatchCacheOptions<T>,
): WatchCache<T> {
  return new WatchCacheImpl<T>(options);
}
