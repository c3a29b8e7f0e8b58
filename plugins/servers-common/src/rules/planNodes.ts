/*
 * Which nodes a MaintenancePlan takes, and in what order (docs/plans.md): resolved
 * once from spec.nodes or spec.selector, workers before control-plane members, each group
 * by name. One rule, called by the operator when it resolves a plan and by the backend's
 * plan pre-flight.
 */
import { selectorMatches } from './drain';
import { CONTROL_PLANE_LABEL } from './quorum';
import type { LabelSelector } from '../resources/maintenancePlan';

/** What the rule reads of a Node. */
export interface PlanNodeFacts {
  name: string;
  labels?: Record<string, string>;
}

/** One node as the plan takes it. */
export interface PlannedNode {
  name: string;
  controlPlane: boolean;
  /** Named in spec.nodes but no such Node: the step is Skipped. */
  missing?: boolean;
}

/**
 * Whether a node's labels match a label selector (metav1.LabelSelector semantics): the
 * drain's rule for budgets, so both read a selector the same way.
 */
export function matchesLabelSelector(
  selector: LabelSelector,
  labels: Record<string, string> = {},
): boolean {
  return selectorMatches(selector, labels);
}

/** By name, code point by code point (as kubectl sorts), never by locale. */
function byName(a: PlannedNode, b: PlannedNode): number {
  if (a.name === b.name) return 0;
  return a.name < b.name ? -1 : 1;
}

/**
 * The plan's nodes in the order they go: workers by name, then control-plane members by
 * name. A name in `spec.nodes` with no Node is kept (marked missing) so status says so.
 */
export function resolvePlanNodes(
  spec: { nodes?: string[]; selector?: LabelSelector },
  nodes: readonly PlanNodeFacts[],
): PlannedNode[] {
  const known = new Map(nodes.map(n => [n.name, n]));
  const isControlPlane = (n: PlanNodeFacts | undefined) =>
    n?.labels !== undefined &&
    Object.prototype.hasOwnProperty.call(n.labels, CONTROL_PLANE_LABEL);
  let planned: PlannedNode[];
  if (spec.nodes) {
    planned = spec.nodes.map(name => {
      const node = known.get(name);
      return node
        ? { name, controlPlane: isControlPlane(node) }
        : { name, controlPlane: false, missing: true };
    });
  } else if (spec.selector) {
    const selector = spec.selector;
    planned = nodes
      .filter(n => matchesLabelSelector(selector, n.labels))
      .map(n => ({ name: n.name, controlPlane: isControlPlane(n) }));
  } else {
    planned = [];
  }
  return [
    ...planned.filter(n => !n.controlPlane).sort(byName),
    ...planned.filter(n => n.controlPlane).sort(byName),
  ];
}
