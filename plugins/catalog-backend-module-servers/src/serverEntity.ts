import type { Entity } from '@backstage/catalog-model';

/** What the entity provider needs to know about one server. */
export interface ServerFacts {
  cluster: string;
  node: string;
  controlPlane: boolean;
  virtual: boolean;
  systemUUID?: string;
}

export const CLUSTER_ANNOTATION = 'rackside.dev/cluster';
export const NODE_ANNOTATION = 'rackside.dev/node';

/**
 * One server as a catalog `Resource` of type `server`. The entity name joins
 * cluster and node because node names repeat across clusters.
 */
export function serverEntity(
  facts: ServerFacts,
  options: { owner: string; locationKey: string },
): Entity {
  const name = `${facts.cluster}--${facts.node}`.slice(0, 63);
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Resource',
    metadata: {
      name,
      title: facts.node,
      annotations: {
        [CLUSTER_ANNOTATION]: facts.cluster,
        [NODE_ANNOTATION]: facts.node,
        'backstage.io/managed-by-location': options.locationKey,
        'backstage.io/managed-by-origin-location': options.locationKey,
      },
      labels: {
        'rackside.dev/role': facts.controlPlane ? 'control-plane' : 'worker',
        ...(facts.virtual ? { 'rackside.dev/virtual-node': 'true' } : {}),
      },
    },
    spec: {
      type: 'server',
      owner: options.owner,
      system: facts.cluster,
    },
  };
}
