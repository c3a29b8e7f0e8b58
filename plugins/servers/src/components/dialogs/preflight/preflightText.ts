import {
  podKey,
  quorumNumbersSentence,
  type DrainBudget,
  type DrainPod,
  type DrainStatefulSet,
  type DrainVirtualMachine,
  type VirtualMachineDrainAction,
  type PreflightQuorumEffect,
  type PreflightResponse,
} from '@rackside/plugin-servers-common';

/** What a person reads about one pod: its controller, grace period, state. */
export function podDetails(pod: DrainPod): string {
  const parts = [
    pod.controller ? `owned by ${pod.controller}` : 'no controller',
  ];
  if (pod.gracePeriodSeconds !== undefined) {
    parts.push(`grace period ${pod.gracePeriodSeconds} s`);
  }
  if (pod.terminating) parts.push('already terminating');
  return parts.join(' · ');
}

/** "allows 1 disruption", "allows 0 disruptions". */
export function disruptionsText(
  budget: Pick<DrainBudget, 'disruptionsAllowed'>,
): string {
  const n = budget.disruptionsAllowed;
  return `allows ${n} disruption${n === 1 ? '' : 's'}`;
}

/** A pod with data on the node, and whether this pre-flight lets the drain evict it. */
export interface NodeLocalPod {
  pod: DrainPod;
  /** The option is on: it is evicted, and is unavailable until the node is back. */
  allowed: boolean;
}

/**
 * The pods with data on the node (section 16): refused ones (cause
 * `nodeLocalData`) and, once allowNodeLocalData is on, the ones the drain
 * evicts anyway. Empty when the node holds no such data.
 */
export function nodeLocalPods(preflight: PreflightResponse): NodeLocalPod[] {
  const refused = preflight.refused
    .filter(r => r.causes.includes('nodeLocalData'))
    .map(r => ({ pod: r.pod, allowed: false }));
  const allowed = (preflight.nodeLocal ?? []).map(pod => ({
    pod,
    allowed: true,
  }));
  return [...refused, ...allowed].sort((a, b) =>
    podKey(a.pod).localeCompare(podKey(b.pod)),
  );
}

/** What a drain does to a virtual machine, as its chip says it. */
export const VM_ACTION_LABELS: Record<VirtualMachineDrainAction, string> = {
  migrate: 'live-migrated',
  shutdown: 'shut down',
  blocks: 'blocks the drain',
};

/** The colour of a virtual machine's chip, by what the drain does to it. */
export const VM_ACTION_COLORS = {
  migrate: 'success',
  shutdown: 'warning',
  blocks: 'error',
} as const;

/** How many virtual machines each action takes: "1 live-migrated, 2 shut down". */
export function virtualMachinesSummary(
  vms: readonly DrainVirtualMachine[],
): string {
  return (['migrate', 'shutdown', 'blocks'] as const)
    .map(
      action => [action, vms.filter(v => v.action === action).length] as const,
    )
    .filter(([, n]) => n > 0)
    .map(([action, n]) => `${n} ${VM_ACTION_LABELS[action]}`)
    .join(', ');
}

/** The budgets over a StatefulSet's pods, in words. */
export function statefulSetBudgetText(set: DrainStatefulSet): string {
  if (set.budgets.length === 0) {
    return 'no disruption budget covers these pods';
  }
  return set.budgets
    .map(
      b =>
        `budget ${b.name} ${disruptionsText(b)}${
          b.blocksNow ? ' (blocks evictions now)' : ''
        }`,
    )
    .join('; ');
}

/** The numbers behind the quorum sentence, when the guard could derive them. */
export function quorumNumbers(q: PreflightQuorumEffect): string | undefined {
  return q.members === null ? undefined : quorumNumbersSentence(q);
}
