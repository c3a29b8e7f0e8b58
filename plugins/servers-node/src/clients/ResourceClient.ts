import type { KubeConfig } from '@kubernetes/client-node';
import { NotFoundError } from '@backstage/errors';
import { toBackstageError } from './errors';
import { KubeHttp, KubeQuery } from './kubeHttp';
import {
  apiVersionOf,
  KubeObject,
  resourcePath,
  ResourceDescriptor,
} from './types';

/** One RFC 6902 JSON patch operation. */
export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

/**
 * An RFC 7386 merge patch of T: any subset of its fields, `null` removes one.
 */
export type MergePatch<T> = T extends unknown[]
  ? T
  : T extends object
  ? { [K in keyof T]?: MergePatch<T[K]> | null }
  : T;

/** Where an object lives; `namespace` is required for namespaced kinds. */
export interface ScopeOptions {
  namespace?: string;
}

/** Options of create, update and patch calls. */
export interface WriteOptions extends ScopeOptions {
  /** Validate and admit, but do not persist (`dryRun=All`). */
  dryRun?: boolean;
  /** Overrides the client's field manager for this call. */
  fieldManager?: string;
}

/** Options of {@link ResourceClient.patch}. */
export interface PatchOptions extends WriteOptions {
  /**
   * `merge` (RFC 7386), `json` (RFC 6902) or `strategic` (core kinds only).
   * Defaults to `json` for an array, else `merge`.
   */
  type?: 'merge' | 'json' | 'strategic';
}

/** Options of {@link ResourceClient.list}. */
export interface ListOptions extends ScopeOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Items per request; the client follows `continue` until the end. */
  pageSize?: number;
}

/** Options of {@link ResourceClient.delete}. */
export interface DeleteOptions extends ScopeOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  /** Delete only if the object still has this uid / resourceVersion (409 otherwise). */
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Resolve instead of throwing NotFoundError when the object is already gone. */
  ignoreNotFound?: boolean;
  dryRun?: boolean;
}

/** Options of {@link ResourceClient} construction. */
export interface ResourceClientOptions {
  /** `fieldManager` sent with writes; defaults to `rackside`. */
  fieldManager?: string;
  /** Request timeout; defaults to 30 s. */
  timeoutMs?: number;
}

const PATCH_TYPES = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
} as const;

/**
 * A typed client for one resource kind (custom or built-in). `T` is what the
 * apiserver answers, `W` what a caller writes (for zod-typed kinds the schema's
 * input type, where defaulted fields are optional). Objects are the
 * apiserver's JSON; every failure is thrown as an `@backstage/errors` error
 * (see {@link toBackstageError}) so a backend route can pass it on as
 * 400/403/404/409.
 */
export class ResourceClient<T extends KubeObject, W extends KubeObject = T> {
  readonly descriptor: ResourceDescriptor;
  readonly http: KubeHttp;
  private readonly fieldManager: string;

  constructor(
    kubeConfig: KubeConfig | KubeHttp,
    descriptor: ResourceDescriptor,
    options: ResourceClientOptions = {},
  ) {
    this.descriptor = descriptor;
    this.http =
      kubeConfig instanceof KubeHttp
        ? kubeConfig
        : new KubeHttp(kubeConfig, { timeoutMs: options.timeoutMs });
    this.fieldManager = options.fieldManager ?? 'rackside';
  }

  /** `group/version` (or `v1`) of this kind. */
  get apiVersion(): string {
    return apiVersionOf(this.descriptor);
  }

  /** The collection path; all namespaces for a namespaced kind without `namespace`. */
  collectionPath(namespace?: string): string {
    return resourcePath(this.descriptor, namespace);
  }

  /** The path of one object (plus an optional subresource such as `status`). */
  itemPath(name: string, namespace?: string, subresource?: string): string {
    if (!name) throw new TypeError(`${this.descriptor.kind}: name is required`);
    this.checkScope(namespace);
    const sub = subresource ? `/${subresource}` : '';
    return `${this.collectionPath(namespace)}/${encodeURIComponent(
      name,
    )}${sub}`;
  }

  private checkScope(namespace: string | undefined) {
    if (this.descriptor.namespaced && !namespace) {
      throw new TypeError(
        `${this.descriptor.kind} is namespaced; pass a namespace`,
      );
    }
  }

  private writeQuery(options: WriteOptions): KubeQuery {
    return {
      fieldManager: options.fieldManager ?? this.fieldManager,
      dryRun: options.dryRun ? 'All' : undefined,
    };
  }

  private async call<R>(fn: () => Promise<R>): Promise<R> {
    try {
      return await fn();
    } catch (error) {
      throw toBackstageError(error);
    }
  }

  private namespaceOf(obj: W, options: ScopeOptions): string | undefined {
    const namespace = options.namespace ?? obj.metadata?.namespace;
    return this.descriptor.namespaced ? namespace : undefined;
  }

  private withType(obj: W): W {
    return {
      ...obj,
      apiVersion: obj.apiVersion ?? this.apiVersion,
      kind: obj.kind ?? this.descriptor.kind,
    };
  }

  /** Reads one object; NotFoundError when it does not exist. */
  async get(name: string, options: ScopeOptions = {}): Promise<T> {
    return this.call(() =>
      this.http.request<T>({
        method: 'GET',
        path: this.itemPath(name, options.namespace),
      }),
    );
  }

  /** Reads one object; undefined when it does not exist. */
  async find(name: string, options: ScopeOptions = {}): Promise<T | undefined> {
    try {
      return await this.get(name, options);
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  /**
   * Lists objects, following pagination to the end. The items carry
   * `apiVersion` and `kind` (the apiserver leaves them out of list items).
   */
  async list(
    options: ListOptions = {},
  ): Promise<{ items: T[]; resourceVersion: string }> {
    return this.call(async () => {
      const items: T[] = [];
      let continueToken: string | undefined;
      let resourceVersion = '';
      do {
        const page = await this.http.request<{
          items?: T[];
          metadata?: { resourceVersion?: string; continue?: string };
        }>({
          method: 'GET',
          path: this.collectionPath(options.namespace),
          query: {
            labelSelector: options.labelSelector,
            fieldSelector: options.fieldSelector,
            limit: options.pageSize ?? 500,
            continue: continueToken,
          },
        });
        for (const item of page.items ?? []) {
          item.apiVersion ??= this.apiVersion;
          item.kind ??= this.descriptor.kind;
          items.push(item);
        }
        continueToken = page.metadata?.continue || undefined;
        resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      } while (continueToken);
      return { items, resourceVersion };
    });
  }

  /**
   * Creates an object. `apiVersion` and `kind` are filled in when missing;
   * ConflictError when the name is taken.
   */
  async create(obj: W, options: WriteOptions = {}): Promise<T> {
    return this.call(() => {
      const namespace = this.namespaceOf(obj, options);
      this.checkScope(namespace);
      return this.http.request<T>({
        method: 'POST',
        path: this.collectionPath(namespace),
        query: this.writeQuery(options),
        body: this.withType(obj),
      });
    });
  }

  /**
   * Replaces an object. With `metadata.resourceVersion` set (required for
   * custom resources) a concurrent change makes it fail with ConflictError.
   */
  async update(obj: W, options: WriteOptions = {}): Promise<T> {
    return this.putAt(obj, options);
  }

  /** Replaces the status subresource (the spec in `obj` is ignored). */
  async updateStatus(obj: W, options: WriteOptions = {}): Promise<T> {
    return this.putAt(obj, options, 'status');
  }

  private putAt(
    obj: W,
    options: WriteOptions,
    subresource?: string,
  ): Promise<T> {
    return this.call(() =>
      this.http.request<T>({
        method: 'PUT',
        path: this.itemPath(
          obj.metadata?.name ?? '',
          this.namespaceOf(obj, options),
          subresource,
        ),
        query: this.writeQuery(options),
        body: this.withType(obj),
      }),
    );
  }

  private patchAt(
    name: string,
    patch: MergePatch<T> | JsonPatchOperation[],
    options: PatchOptions,
    subresource?: string,
  ): Promise<T> {
    return this.call(() => {
      const type = options.type ?? (Array.isArray(patch) ? 'json' : 'merge');
      if ((type === 'json') !== Array.isArray(patch)) {
        throw new TypeError(
          `a ${type} patch must ${type === 'json' ? '' : 'not '}be an array`,
        );
      }
      return this.http.request<T>({
        method: 'PATCH',
        path: this.itemPath(name, options.namespace, subresource),
        query: this.writeQuery(options),
        body: patch,
        contentType: PATCH_TYPES[type],
      });
    });
  }

  /**
   * Patches an object: a merge patch (an object) or a JSON patch (an array
   * of operations; a `test` operation on `/metadata/resourceVersion` makes it
   * conditional). A failed `test` surfaces as InputError or ConflictError, as
   * the apiserver answers it.
   */
  async patch(
    name: string,
    patch: MergePatch<T> | JsonPatchOperation[],
    options: PatchOptions = {},
  ): Promise<T> {
    return this.patchAt(name, patch, options);
  }

  /** Patches the status subresource; see {@link ResourceClient.patch}. */
  async patchStatus(
    name: string,
    patch: MergePatch<T> | JsonPatchOperation[],
    options: PatchOptions = {},
  ): Promise<T> {
    return this.patchAt(name, patch, options, 'status');
  }

  /**
   * Server-side apply of `obj` as `fieldManager` (the client's by default).
   * `force` takes over fields another manager owns.
   */
  async apply(
    obj: W,
    options: WriteOptions & { force?: boolean } = {},
  ): Promise<T> {
    return this.call(() =>
      this.http.request<T>({
        method: 'PATCH',
        path: this.itemPath(
          obj.metadata?.name ?? '',
          this.namespaceOf(obj, options),
        ),
        query: {
          ...this.writeQuery(options),
          force: options.force || undefined,
        },
        body: this.withType(obj),
        contentType: 'application/apply-patch+yaml',
      }),
    );
  }

  /** Deletes an object (NotFoundError when absent unless `ignoreNotFound`). */
  async delete(name: string, options: DeleteOptions = {}): Promise<void> {
    try {
      await this.call(() =>
        this.http.request({
          method: 'DELETE',
          path: this.itemPath(name, options.namespace),
          query: { dryRun: options.dryRun ? 'All' : undefined },
          body: {
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            propagationPolicy: options.propagationPolicy,
            gracePeriodSeconds: options.gracePeriodSeconds,
            preconditions: options.preconditions,
          },
        }),
      );
    } catch (error) {
      if (options.ignoreNotFound && error instanceof NotFoundError) return;
      throw error;
    }
  }
}
