import type { Entity } from '@backstage/catalog-model';

/** The cluster (a name from `servers.clusters`) a server or chassis belongs to. */
export const CLUSTER_ANNOTATION = 'rackside.dev/cluster';
/** The Kubernetes Node name of a server or chassis. */
export const NODE_ANNOTATION = 'rackside.dev/node';

/** Where an entity points: its cluster (when annotated) and node. */
export interface ServerTarget {
  cluster?: string;
  node: string;
}

/** The server an entity is annotated with, if any. */
export function serverTargetOf(entity: Entity): ServerTarget | undefined {
  const annotations = entity.metadata.annotations ?? {};
  const node = annotations[NODE_ANNOTATION]?.trim();
  if (!node) return undefined;
  const cluster = annotations[CLUSTER_ANNOTATION]?.trim() || undefined;
  return { cluster, node };
}

/**
 * Whether an entity has the Server tab: it carries `rackside.dev/node`
 * (and usually `rackside.dev/cluster`). For `EntitySwitch.Case if=` and
 * `EntityLayout.Route if=` in legacy apps.
 *
 * @public
 */
export function isServerEntity(entity: Entity): boolean {
  return serverTargetOf(entity) !== undefined;
}
