/*
 * A node as the permission framework sees it (a ServerResource), and the nodes a caller
 * may read: a hidden node and an absent one answer the same 404, so a caller cannot
 * learn that a server it may not read exists.
 */
import { NotFoundError } from '@backstage/errors';
import { nodeFactsFromNode } from '@rackside/plugin-servers-common';
import type { NodeObject, ServerResource } from '@rackside/plugin-servers-node';
import type { ClusterSnapshot } from '../cluster/types';

export function serverResourceOf(
  cluster: string,
  node: NodeObject,
): ServerResource {
  const facts = nodeFactsFromNode(node);
  return {
    cluster,
    node: facts.name,
    controlPlane: facts.controlPlane,
    virtual: facts.virtual,
    labels: { ...(node.metadata?.labels ?? {}) },
  };
}

/** The node named `name`, or 404. */
export function findNode(
  snap: ClusterSnapshot,
  cluster: string,
  name: string,
): NodeObject {
  const node = snap.nodes.find(n => n.metadata?.name === name);
  if (!node) {
    throw new NotFoundError(`no server named ${name} in cluster ${cluster}`);
  }
  return node;
}

/** A node the caller may read; hidden and absent are the same 404. */
export function visibleNode(
  snap: ClusterSnapshot,
  cluster: string,
  name: string,
  filter: (server: ServerResource) => boolean,
): NodeObject {
  const node = findNode(snap, cluster, name);
  if (!filter(serverResourceOf(cluster, node))) {
    throw new NotFoundError(`no server named ${name} in cluster ${cluster}`);
  }
  return node;
}

/** The names of the nodes the caller may read. */
export function visibleNodeNames(
  snap: ClusterSnapshot,
  cluster: string,
  filter: (server: ServerResource) => boolean,
): Set<string> {
  return new Set(
    snap.nodes
      .filter(n => filter(serverResourceOf(cluster, n)))
      .map(n => n.metadata?.name ?? ''),
  );
}
