import {
  isTerminalPhase,
  type MaintenanceFacts,
  type MaintenanceIntent,
  type MaintenancePhase,
} from './quorum';

/**
 * Which maintenances a node has, as the backend (its list, its request check) and the
 * operator (admission, the check before a power verb) both read them (docs/architecture.md, "The maintenance lifecycle"
 * and 6). Each question is one function here, so the two sides cannot give different
 * answers about the same objects.
 */

/**
 * The part of a NodeMaintenance these rules read. Structural, so the operator's
 * NodeMaintenance, the backend's cache object and a test literal all fit.
 */
export interface MaintenanceRecord {
  metadata: { name?: string; creationTimestamp?: string };
  spec: { nodeName: string; intent: MaintenanceIntent };
  status?: { phase?: MaintenancePhase };
}

/**
 * Whether the operator has admitted this maintenance: admission writes the first phase
 * (Requested), so an object without `status.phase` has not been checked by anyone yet. One
 * held for approval (AwaitingApproval, docs/approvals.md) is not admitted either: it is
 * admitted from the cluster as it is once approved, and claims no margin before.
 */
export function isAdmitted(m: MaintenanceRecord): boolean {
  const phase = m.status?.phase;
  return phase !== undefined && phase !== 'AwaitingApproval';
}

/** Whether a maintenance is still open: not yet admitted, or admitted and not ended. */
export function isOpen(m: MaintenanceRecord): boolean {
  return !isAdmitted(m) || !isTerminalPhase(m.status!.phase!);
}

/**
 * The maintenances that count toward quorum, as `deriveQuorum` reads them: the admitted
 * ones that have not ended. A request not yet admitted claims no margin: the operator
 * may still refuse it (busy node, capability, pods), and the operator checks requests one
 * at a time in admission order, so of two requests racing for the last margin exactly
 * one wins (docs/architecture.md, "The rules and who calls them"). Counting unadmitted requests as going down would make
 * those two refuse each other, and the backend would refuse what the operator admits.
 */
export function quorumMaintenances(
  maintenances: readonly MaintenanceRecord[],
): MaintenanceFacts[] {
  const facts: MaintenanceFacts[] = [];
  for (const m of maintenances) {
    if (!isAdmitted(m) || isTerminalPhase(m.status!.phase!)) continue;
    facts.push({
      nodeName: m.spec.nodeName,
      intent: m.spec.intent,
      phase: m.status!.phase!,
    });
  }
  return facts;
}

/**
 * The order in which a node's open maintenances hold it: an admitted one first (the
 * operator lets at most one through), then who asked first (creation time, then name,
 * so two never tie). The first is the node's open maintenance; every later one is
 * refused by admission, naming it (docs/architecture.md, "The maintenance lifecycle", "at most one per node").
 */
export function holdsBefore(
  a: MaintenanceRecord,
  b: MaintenanceRecord,
): number {
  const admitted = Number(isAdmitted(b)) - Number(isAdmitted(a));
  if (admitted !== 0) return admitted;
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const na = a.metadata.name ?? '';
  const nb = b.metadata.name ?? '';
  if (na === nb) return 0;
  return na < nb ? -1 : 1;
}

/** The open maintenance of a node ({@link holdsBefore}), or undefined when it has none. */
export function openMaintenanceOf<M extends MaintenanceRecord>(
  nodeName: string,
  maintenances: readonly M[],
): M | undefined {
  let open: M | undefined;
  for (const m of maintenances) {
    if (m.spec.nodeName !== nodeName || !isOpen(m)) continue;
    if (!open || holdsBefore(m, open) < 0) open = m;
  }
  return open;
}

/** Every node's open maintenance, by node name: {@link openMaintenanceOf} for all at once. */
export function openMaintenanceByNode<M extends MaintenanceRecord>(
  maintenances: readonly M[],
): Map<string, M> {
  const byNode = new Map<string, M>();
  for (const m of maintenances) {
    if (!isOpen(m)) continue;
    const open = byNode.get(m.spec.nodeName);
    if (!open || holdsBefore(m, open) < 0) byNode.set(m.spec.nodeName, m);
  }
  return byNode;
}
