/*
 * The snapshot of one cluster every feature reads: its nodes, their facts and open
 * maintenances, the quorum derivation, the power channel, the BMCs and their readings,
 * and the alerts. KubeClusterState derives it once per change; a state that does not
 * keep one (a test's fake) has it derived on each read.
 */
import {
  deriveQuorum,
  invoke,
  invokeFirmware,
  invokeUpgrade,
  nodeFactsFromNode,
  openMaintenanceByNode,
  powerAdvertisementOf,
  quorumMaintenances,
  type InvokeResult,
  type NodeFacts,
  type PowerProvider,
  type PowerVerb,
  type ServerHealth,
} from '@rackside/plugin-servers-common';
import type { NodeObject } from '@rackside/plugin-servers-node';
import type { ClusterAlerts } from './nodeAlerts';
import type {
  ClusterSnapshot,
  ClusterState,
  MaintenanceObject,
  ServerBmcRecord,
} from './types';

/** Orders maintenances newest first (RFC 3339 timestamps sort as strings). */
export function newestFirst(
  a: MaintenanceObject,
  b: MaintenanceObject,
): number {
  return (b.metadata.creationTimestamp ?? '').localeCompare(
    a.metadata.creationTimestamp ?? '',
  );
}

export function snapshotOf(
  nodes: NodeObject[],
  maintenances: MaintenanceObject[],
  powerProvider: PowerProvider | undefined,
  bmcNodes: Iterable<string> = [],
  bmcs: readonly ServerBmcRecord[] = [],
  alerts?: ClusterAlerts,
): ClusterSnapshot {
  const bmcHealth = new Map<string, ServerHealth>();
  for (const b of bmcs) if (b.health) bmcHealth.set(b.name, b.health);
  const facts = nodes.map(n => nodeFactsFromNode(n));
  const activeByNode = openMaintenanceByNode(maintenances);
  const newestByNode = new Map<string, MaintenanceObject>();
  for (const m of [...maintenances].sort(newestFirst).reverse()) {
    newestByNode.set(m.spec.nodeName, m);
  }
  return {
    nodes,
    facts,
    maintenances,
    activeByNode,
    newestByNode,
    derivation: deriveQuorum(facts, quorumMaintenances(maintenances)),
    powerProvider,
    bmcNodes: new Set(bmcNodes),
    ...(alerts ? { alerts } : {}),
    bmcHealth,
  };
}

/** The cluster's snapshot, derived once per change where the state keeps it. */
export async function clusterSnapshot(
  cluster: ClusterState,
): Promise<ClusterSnapshot> {
  if (cluster.snapshot) return cluster.snapshot();
  const [nodes, maintenances, powerProvider, bmcNodes, bmcs, alerts] =
    await Promise.all([
      cluster.nodes(),
      cluster.maintenances(),
      cluster.powerProvider(),
      cluster.serverBmcNodes(),
      cluster.serverBmcs?.() ?? [],
      cluster.alerts?.(),
    ]);
  return snapshotOf(nodes, maintenances, powerProvider, bmcNodes, bmcs, alerts);
}

/**
 * Whether an upgrade (the talos channel) or a firmware update (a BMC over Redfish, for a
 * node with a ServerBMC) may be asked for this node: servers-common's capability rule.
 */
export function installCheck(
  snapshot: ClusterSnapshot,
  action: 'upgrade' | 'firmware',
  facts: NodeFacts,
): InvokeResult {
  const advertisement = powerAdvertisementOf(snapshot.powerProvider);
  return action === 'upgrade'
    ? invokeUpgrade(advertisement, facts)
    : invokeFirmware(advertisement, facts, {
        hasServerBmc: snapshot.bmcNodes.has(facts.name),
      });
}

/** Whether a power verb may be asked for this node: servers-common's capability rule. */
export function powerCheck(
  snapshot: ClusterSnapshot,
  verb: PowerVerb,
  facts: NodeFacts,
): InvokeResult {
  return invoke(powerAdvertisementOf(snapshot.powerProvider), verb, facts, {
    hasServerBmc: snapshot.bmcNodes.has(facts.name),
  });
}
