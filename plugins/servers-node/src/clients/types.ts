/**
 * Identifies one kind of Kubernetes resource well enough to build its REST
 * paths. `group` is `''` for the core group (`/api/v1`).
 */
export interface ResourceDescriptor {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

/** The object metadata every client and cache in this package relies on. */
export interface KubeObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

/**
 * The least a Kubernetes object must look like to be stored or sent by this
 * package. Both client-node's model types (through {@link Wire}) and the zod
 * types of `@rackside/plugin-servers-common` satisfy it.
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: KubeObjectMeta;
}

/**
 * An object exactly as the apiserver sent it: parsed JSON, nothing converted.
 */
export type RawKubeObject = KubeObject & { [field: string]: any };

/**
 * A client-node model type as it is on the wire: `Date` fields are RFC 3339
 * strings. Objects from {@link ResourceClient} and the watch caches are plain
 * JSON, so `Wire<V1Node>` is their honest type.
 */
export type Wire<T> = T extends Date
  ? string
  : T extends (infer U)[]
  ? Wire<U>[]
  : T extends object
  ? { [K in keyof T]: Wire<T[K]> }
  : T;

/** `apiVersion` of a descriptor: `v1` for core, else `group/version`. */
export function apiVersionOf(descriptor: ResourceDescriptor): string {
  return descriptor.group
    ? `${descriptor.group}/${descriptor.version}`
    : descriptor.version;
}

/**
 * The collection path of a kind, e.g. `/api/v1/nodes` or
 * `/apis/rackside.dev/v1alpha1/namespaces/ns/talosmachines`. For a
 * namespaced kind without `namespace` it is the all-namespaces path.
 */
export function resourcePath(
  descriptor: ResourceDescriptor,
  namespace?: string,
): string {
  const root = descriptor.group
    ? `/apis/${descriptor.group}/${descriptor.version}`
    : `/api/${descriptor.version}`;
  if (namespace !== undefined && !descriptor.namespaced) {
    throw new TypeError(
      `${descriptor.kind} is cluster-scoped; do not pass a namespace`,
    );
  }
  const ns =
    namespace !== undefined
      ? `/namespaces/${encodeURIComponent(namespace)}`
      : '';
  return `${root}${ns}/${descriptor.plural}`;
}

/**
 * The cache key of an object: `namespace/name`, or `name` for cluster-scoped
 * objects (the convention of client-go's MetaNamespaceKeyFunc).
 */
export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name ?? '';
  const namespace = obj.metadata?.namespace;
  return namespace ? `${namespace}/${name}` : name;
}
