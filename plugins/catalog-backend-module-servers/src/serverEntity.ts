import type { Entity } from '@backstage/catalog-model';
import { createHash } from 'node:crypto';
import { nodeRolesOf } from '@rackside/plugin-servers-common';

/** What the entity provider needs to know about one server. */
export interface ServerFacts {
  cluster: string;
  node: string;
  controlPlane: boolean;
  virtual: boolean;
  /** Role names from the Node's `node-role.kubernetes.io/<role>` labels. */
  roles?: string[];
  systemUUID?: string;
}

/** The cluster (a name from `servers.clusters`) a server or chassis belongs to. */
export const CLUSTER_ANNOTATION = 'rackside.dev/cluster';
/** The Kubernetes Node name of a server or chassis. */
export const NODE_ANNOTATION = 'rackside.dev/node';
/** The machine's SMBIOS system UUID, when the Node reports one. */
export const SYSTEM_UUID_ANNOTATION = 'rackside.dev/system-uuid';

const MAX_NAME = 63;
const LABEL_VALUE = /^[a-z0-9A-Z]([-_.a-z0-9A-Z]{0,61}[a-z0-9A-Z])?$/;

/**
 * The entity name of a server: `<cluster>--<node>`, because node names
 * repeat across clusters. Names past the catalog's 63 characters are cut
 * and end in a hash of the whole, so two long names never meet.
 */
export function serverEntityName(cluster: string, node: string): string {
  const full = `${cluster}--${node}`;
  if (full.length <= MAX_NAME) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  const head = full
    .slice(0, MAX_NAME - hash.length - 1)
    .replace(/[^a-z0-9A-Z]+$/, '');
  return `${head}-${hash}`;
}

/** The role names of a Node's labels, sorted. */
export function rolesOf(labels: Record<string, string> | undefined): string[] {
  // Only the roles that fit in a catalog label (`rackside.dev/role-<role>`).
  return nodeRolesOf(labels).filter(
    role => LABEL_VALUE.test(`role-${role}`) && role.length <= 50,
  );
}

/**
 * One server as a catalog `Resource` of type `server`, part of the System
 * named after its cluster. Labels: `rackside.dev/role` (control-plane or
 * worker), `rackside.dev/role-<role>: "true"` per Node role, and
 * `rackside.dev/virtual-node: "true"` for virtual nodes.
 */
export function serverEntity(
  facts: ServerFacts,
  options: { owner: string; locationKey: string },
): Entity {
  const roleLabels = Object.fromEntries(
    (facts.roles ?? []).map(role => [`rackside.dev/role-${role}`, 'true']),
  );
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Resource',
    metadata: {
      name: serverEntityName(facts.cluster, facts.node),
      title: facts.node,
      description: `${
        facts.controlPlane ? 'Control-plane' : 'Worker'
      } server of ${facts.cluster}`,
      annotations: {
        [CLUSTER_ANNOTATION]: facts.cluster,
        [NODE_ANNOTATION]: facts.node,
        ...(facts.systemUUID
          ? { [SYSTEM_UUID_ANNOTATION]: facts.systemUUID }
          : {}),
        'backstage.io/managed-by-location': options.locationKey,
        'backstage.io/managed-by-origin-location': options.locationKey,
      },
      labels: {
        'rackside.dev/role': facts.controlPlane ? 'control-plane' : 'worker',
        ...roleLabels,
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

/** A cluster as a catalog `System`; its servers are its parts. */
export function clusterEntity(
  cluster: { name: string; title: string },
  options: { owner: string; locationKey: string },
): Entity {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'System',
    metadata: {
      name: cluster.name,
      title: cluster.title,
      description: `Kubernetes cluster ${cluster.name}, its servers managed by Rackside`,
      annotations: {
        [CLUSTER_ANNOTATION]: cluster.name,
        'backstage.io/managed-by-location': options.locationKey,
        'backstage.io/managed-by-origin-location': options.locationKey,
      },
    },
    spec: { owner: options.owner },
  };
}
