import {
  objectKey,
  type KubeObject,
  type RawKubeObject,
  type WatchCache,
} from '@rackside/plugin-servers-node';

/**
 * Whether `a` is a later version of the object than `b` (resourceVersion, compared as
 * the integers the apiserver writes; anything else is never newer).
 */
export function newer(a: KubeObject, b: KubeObject): boolean {
  try {
    return (
      BigInt(a.metadata?.resourceVersion ?? '0') >
      BigInt(b.metadata?.resourceVersion ?? '0')
    );
  } catch {
    return false;
  }
}

/** A watch cache as a controller reads it: with its own writes until the watch has them. */
export interface OwnWritesView<T> {
  get(key: string): T | undefined;
  /** Every cached object, each as fresh as {@link get} gives it. */
  list(): T[];
  /** Records an object this process wrote (the answer of the write). */
  remember(obj: T): void;
  forget(key: string): void;
}

/**
 * A cache plus this process's own writes until the watch has caught up with them: the
 * next decision (the next admission, the next pass) must see what the last one wrote.
 */
export function ownWritesView<T extends KubeObject>(
  cache: Pick<WatchCache<T & RawKubeObject>, 'get' | 'list'>,
): OwnWritesView<T> {
  const written = new Map<string, T>();
  const get = (key: string): T | undefined => {
    const cached = cache.get(key) as T | undefined;
    const own = written.get(key);
    if (!own) return cached;
    if (!cached || newer(own, cached)) return own;
    written.delete(key);
    return cached;
  };
  return {
    get,
    list: () => cache.list().map(obj => get(objectKey(obj)) ?? (obj as T)),
    remember(obj) {
      written.set(objectKey(obj), obj);
    },
    forget(key) {
      written.delete(key);
    },
  };
}

/**
 * The status write of a reconciler that decides on what it read: a merge patch made
 * conditional on that object's resourceVersion (a stale view gets a 409, and the queue
 * retries with the current object), its answer remembered in the own-writes view.
 */
export function conditionalStatusWriter<T extends KubeObject, S>(
  client: {
    patchStatus(
      name: string,
      patch: any,
      options: { namespace?: string; type: 'merge' },
    ): Promise<T>;
  },
  view: OwnWritesView<T>,
): (obj: T, status: S) => Promise<T> {
  return async (obj, status) => {
    const written = await client.patchStatus(
      obj.metadata?.name ?? '',
      { metadata: { resourceVersion: obj.metadata?.resourceVersion }, status },
      { namespace: obj.metadata?.namespace, type: 'merge' },
    );
    view.remember(written);
    return written;
  };
}
