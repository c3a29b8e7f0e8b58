// From the product entry by name, as every other user of this entry point sees them.
import type {
  ListPage,
  ListRequest,
  RawKubeObject,
  RawWatchEvent,
  WatchHandle,
  WatchHandlers,
  WatchRequest,
  WatchTransport,
} from '@rackside/plugin-servers-node';

/**
 * An in-memory apiserver of many collections for tests of watch readers: objects by
 * path, resourceVersions, open watches, and a count of the watch requests per path.
 */
export class FakeKube implements WatchTransport {
  private rv = 1000;
  private readonly stores = new Map<string, Map<string, RawKubeObject>>();
  private readonly watchers = new Map<string, Set<WatchHandlers>>();
  /** Watch requests opened, per collection path. */
  readonly watchesOpened = new Map<string, number>();

  private store(path: string) {
    let store = this.stores.get(path);
    if (!store) this.stores.set(path, (store = new Map()));
    return store;
  }

  /** Creates or replaces an object (a new resourceVersion) and tells the watchers. */
  put(path: string, obj: RawKubeObject): RawKubeObject {
    this.rv++;
    const stored = structuredClone(obj);
    stored.metadata = { ...stored.metadata, resourceVersion: String(this.rv) };
    const store = this.store(path);
    const name = stored.metadata!.name!;
    const type = store.has(name) ? 'MODIFIED' : 'ADDED';
    store.set(name, stored);
    this.send(path, { type, object: stored });
    return stored;
  }

  /** The stored object (a copy), to modify and put back. */
  get(path: string, name: string): RawKubeObject | undefined {
    const obj = this.store(path).get(name);
    return obj && structuredClone(obj);
  }

  delete(path: string, name: string) {
    const obj = this.store(path).get(name);
    if (!obj) return;
    this.rv++;
    this.store(path).delete(name);
    this.send(path, {
      type: 'DELETED',
      object: {
        ...obj,
        metadata: { ...obj.metadata, resourceVersion: String(this.rv) },
      },
    });
  }

  private send(path: string, event: RawWatchEvent) {
    for (const w of this.watchers.get(path) ?? []) {
      w.onEvent(structuredClone(event));
    }
  }

  async list(request: ListRequest): Promise<ListPage> {
    return {
      items: [...this.store(request.path).values()].map(o =>
        structuredClone(o),
      ),
      resourceVersion: String(this.rv),
    };
  }

  watch(request: WatchRequest, handlers: WatchHandlers): WatchHandle {
    this.watchesOpened.set(
      request.path,
      (this.watchesOpened.get(request.path) ?? 0) + 1,
    );
    let set = this.watchers.get(request.path);
    if (!set) this.watchers.set(request.path, (set = new Set()));
    set.add(handlers);
    let end!: () => void;
    const done = new Promise<void>(resolve => {
      end = resolve;
    });
    queueMicrotask(() => handlers.onOpen?.());
    return {
      done,
      abort: () => {
        set!.delete(handlers);
        end();
      },
    };
  }
}
