/*
 * The impact of an action on nodes now: the node's pods, budgets and storage read from
 * the apiserver, run through the pre-flight (preflight.ts). A server's pre-flight and
 * action request ask it of one node, a plan's pre-flight of every node of the plan.
 */
import type { PreflightAction } from '@rackside/plugin-servers-common';
import type { ClusterSnapshot, ClusterState } from '../cluster/types';
import {
  computePreflight,
  type PreflightImpact,
  type PreflightOptions,
} from './preflight';

/** The impact of `action` on one node now. */
export async function currentImpact(
  cluster: ClusterState,
  snap: ClusterSnapshot,
  nodeName: string,
  action: PreflightAction,
  drainOptions: PreflightOptions,
): Promise<PreflightImpact> {
  const [pods, budgets] = await Promise.all([
    cluster.podsOnNode(nodeName),
    cluster.podDisruptionBudgets(),
  ]);
  // Claims and volumes tell node-local data apart (docs/drain.md).
  const storage = await cluster.drainStorage?.(nodeName, [
    ...new Set(pods.map(p => p.metadata?.namespace ?? '')),
  ]);
  return computePreflight({
    cluster: cluster.name,
    node: nodeName,
    action,
    options: drainOptions,
    snapshot: snap,
    pods,
    budgets,
    storage,
    now: new Date(),
  });
}

/**
 * {@link currentImpact} of many nodes (a plan pre-flight): the budgets once, and the
 * pods and storage of every node in one batched read where the cluster offers it, so
 * the apiserver requests do not grow with the nodes.
 */
export async function currentImpacts(
  cluster: ClusterState,
  snap: ClusterSnapshot,
  nodeNames: string[],
  action: PreflightAction,
  drainOptions: PreflightOptions,
): Promise<PreflightImpact[]> {
  if (!cluster.drainInputsOf) {
    return Promise.all(
      nodeNames.map(n => currentImpact(cluster, snap, n, action, drainOptions)),
    );
  }
  const [inputs, budgets] = await Promise.all([
    cluster.drainInputsOf(nodeNames),
    cluster.podDisruptionBudgets(),
  ]);
  const now = new Date();
  return nodeNames.map(node => {
    const { pods, storage } = inputs.get(node) ?? { pods: [], storage: {} };
    return computePreflight({
      cluster: cluster.name,
      node,
      action,
      options: drainOptions,
      snapshot: snap,
      pods,
      budgets,
      storage,
      now,
    });
  });
}
