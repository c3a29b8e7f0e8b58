/*
 * What every slim keeps of an object whatever its kind: enough for a watch cache to key
 * it (name, namespace) and to resume from it (resourceVersion). Annotations, labels,
 * managedFields and the rest of metadata are kept only where a kind's slim names them.
 */
import type { RawKubeObject } from '../../clients/types';

/** The identity of a Kubernetes object as a watch cache keys it. */
export interface SlimIdentity {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
}

/** Keeps apiVersion, kind, name, namespace (when namespaced) and resourceVersion. */
export function slimIdentity(obj: RawKubeObject): SlimIdentity {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      name: obj.metadata?.name,
      ...(obj.metadata?.namespace !== undefined
        ? { namespace: obj.metadata.namespace }
        : {}),
      resourceVersion: obj.metadata?.resourceVersion,
    },
  };
}
