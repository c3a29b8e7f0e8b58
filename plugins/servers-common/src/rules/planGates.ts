/*
 * What a MaintenancePlan object gate may read (docs/plans.md): a gate reads through
 * the operator's identity and its message is in the plan's status, so it reads only the
 * kinds the chart allows (`operator.planGateReads`), a namespaced kind only in its own
 * namespace, and at most MAX_GATE_OBJECTS objects. The operator refuses a gate by these
 * rules before it watches anything; a backend that knows the same allow-list and the
 * kind (API discovery) can refuse the plan at creation with the same words.
 */
import type { ObjectGate } from '../resources/maintenancePlan';

/** At most this many objects a gate checks: a selector matching more is refused. */
export const MAX_GATE_OBJECTS = 100;

/** The API group of an apiVersion: `ceph.rook.io` of `ceph.rook.io/v1`, the core group '' of `v1`. */
export function apiGroupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
}

/** A resource as kubectl spells it: `resource.group`, a core resource alone. */
export function resourceText(group: string, resource: string): string {
  return group ? `${resource}.${group}` : resource;
}

/**
 * Whether the allow-list (`resource.group` entries, `*.group` for a whole group, `*`
 * for the core group: the chart's planGateReads as the operator's --plan-gate-reads)
 * lets gates read this resource.
 */
export function gateReadsAllow(
  reads: readonly string[],
  group: string,
  resource: string,
): boolean {
  return (
    reads.includes(resourceText(group, resource)) ||
    reads.includes(resourceText(group, '*'))
  );
}

/**
 * Why a gate is refused as written, or undefined: its kind not in the allow-list, or a
 * namespaced kind without a namespace. `resource` is the kind as API discovery names it.
 */
export function objectGateRefusal(
  gate: ObjectGate,
  resource: { name: string; namespaced: boolean },
  reads: readonly string[],
): string | undefined {
  const group = apiGroupOf(gate.apiVersion);
  const named = resourceText(group, resource.name);
  if (!gateReadsAllow(reads, group, resource.name)) {
    return `${named} is not among the kinds plan gates may read (the chart's operator.planGateReads)`;
  }
  if (resource.namespaced && !gate.namespace) {
    return `${named} is namespaced: the gate names its namespace (a gate never reads a kind cluster-wide)`;
  }
  return undefined;
}
