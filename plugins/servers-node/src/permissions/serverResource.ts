import { createPermissionResourceRef } from '@backstage/plugin-permission-node';
import { SERVER_RESOURCE_TYPE } from '@rackside/plugin-servers-common';

/** What a permission rule can see of one server. */
export interface ServerResource {
  cluster: string;
  node: string;
  controlPlane: boolean;
  virtual: boolean;
  labels: Record<string, string>;
}

/** Rules filter server lists with plain predicates. */
export type ServerPredicate = (server: ServerResource) => boolean;

/**
 * The `server` resource of the `servers` plugin. Its resource ref string is
 * `<cluster>/<node>` (see {@link serverResourceRefOf}).
 */
export const serverPermissionResourceRef = createPermissionResourceRef<
  ServerResource,
  ServerPredicate
>().with({ pluginId: 'servers', resourceType: SERVER_RESOURCE_TYPE });

/** The resourceRef string a server permission is checked with. */
export function serverResourceRefOf(cluster: string, node: string): string {
  return `${cluster}/${node}`;
}

/** Inverse of {@link serverResourceRefOf}; undefined for malformed refs. */
export function parseServerResourceRef(
  ref: string,
): { cluster: string; node: string } | undefined {
  const slash = ref.indexOf('/');
  if (slash <= 0 || slash === ref.length - 1) return undefined;
  return { cluster: ref.slice(0, slash), node: ref.slice(slash + 1) };
}
