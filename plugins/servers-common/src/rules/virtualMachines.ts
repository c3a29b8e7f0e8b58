/**
 * KubeVirt virtual machines in a drain (docs/drain.md). Where the cluster serves
 * kubevirt.io/v1 VirtualMachineInstances, each VMI running on the node is either
 * live-migrated or shut down when the drain evicts its virt-launcher pod, by its
 * `spec.evictionStrategy` and whether KubeVirt finds it migratable (its `LiveMigratable`
 * condition). Some VMIs keep their pod from being evicted at all; the drain then waits for
 * them until its timeout. The pre-flight shows this and the operator records it, from
 * this one function.
 */

/** The parts of a kubevirt.io/v1 VirtualMachineInstance the drain reads. */
export interface VirtualMachineInstanceLike {
  metadata?: { name?: string; namespace?: string };
  spec?: { evictionStrategy?: string };
  status?: {
    /** The node whose virt-launcher pod runs the guest. */
    nodeName?: string;
    phase?: string;
    conditions?: Array<{
      type?: string;
      status?: string;
      reason?: string;
      message?: string;
    }>;
  };
}

/**
 * What a drain does to a VMI: `migrate` (live migration to another node, the guest keeps
 * running), `shutdown` (the guest stops; a VirtualMachine that wants it running starts
 * it elsewhere) or `blocks` (KubeVirt refuses the eviction of its pod: the drain waits for
 * it until its timeout).
 */
export type VirtualMachineDrainAction = 'migrate' | 'shutdown' | 'blocks';

/** A VMI on the node as the drain plan names it. */
export interface DrainVirtualMachine {
  namespace: string;
  name: string;
  /** `spec.evictionStrategy` as set on the VMI; absent when it sets none. */
  evictionStrategy?: string;
  /** Its `LiveMigratable` condition is True. */
  migratable: boolean;
  action: VirtualMachineDrainAction;
  /** A sentence for a person: why this action. */
  reason: string;
}

/** The VMI condition KubeVirt sets to say whether the guest can be live-migrated. */
export const LIVE_MIGRATABLE_CONDITION = 'LiveMigratable';

/** VMI phases with no guest running any more. */
const FINISHED_VMI_PHASES = new Set(['Succeeded', 'Failed']);

function notMigratableBecause(vmi: VirtualMachineInstanceLike): string {
  const condition = vmi.status?.conditions?.find(
    c => c.type === LIVE_MIGRATABLE_CONDITION,
  );
  const why = (condition?.message || condition?.reason || '').slice(0, 300);
  if (!condition) return 'KubeVirt has not found it migratable';
  return why
    ? `it cannot be live-migrated: ${why}`
    : 'it cannot be live-migrated';
}

function classifyOne(
  vmi: VirtualMachineInstanceLike,
  nodeName: string,
): DrainVirtualMachine {
  const strategy = vmi.spec?.evictionStrategy || undefined;
  const migratable =
    vmi.status?.conditions?.some(
      c => c.type === LIVE_MIGRATABLE_CONDITION && c.status === 'True',
    ) ?? false;
  const base = {
    namespace: vmi.metadata?.namespace ?? '',
    name: vmi.metadata?.name ?? '',
    evictionStrategy: strategy,
    migratable,
  };
  const shown = JSON.stringify((strategy ?? '').slice(0, 63));
  switch (strategy) {
    case 'LiveMigrate':
      return migratable
        ? {
            ...base,
            action: 'migrate',
            reason: `its eviction strategy is LiveMigrate and it is migratable: it is live-migrated off ${nodeName}`,
          }
        : {
            ...base,
            action: 'blocks',
            reason: `its eviction strategy is LiveMigrate but ${notMigratableBecause(
              vmi,
            )}; KubeVirt refuses to evict it, so the drain waits for it until its timeout (shut it down, or set LiveMigrateIfPossible or None)`,
          };
    case 'LiveMigrateIfPossible':
      return migratable
        ? {
            ...base,
            action: 'migrate',
            reason: `its eviction strategy is LiveMigrateIfPossible and it is migratable: it is live-migrated off ${nodeName}`,
          }
        : {
            ...base,
            action: 'shutdown',
            reason: `its eviction strategy is LiveMigrateIfPossible but ${notMigratableBecause(
              vmi,
            )}: it is shut down`,
          };
    case 'None':
      return {
        ...base,
        action: 'shutdown',
        reason: 'its eviction strategy is None: it is shut down',
      };
    case undefined:
      return {
        ...base,
        action: 'shutdown',
        reason:
          "it sets no eviction strategy: the cluster's default applies, taken as KubeVirt's own default None: it is shut down",
      };
    case 'External':
      return {
        ...base,
        action: 'blocks',
        reason:
          'its eviction strategy is External: KubeVirt refuses to evict it and leaves it to an external controller, so the drain waits for it until its timeout',
      };
    default:
      return {
        ...base,
        action: 'blocks',
        reason: `its eviction strategy ${shown} is not one this drain knows (None, LiveMigrate, LiveMigrateIfPossible, External): it may keep its pod from being evicted`,
      };
  }
}

/**
 * The VMIs running on `nodeName` (by `status.nodeName`; finished ones left out), each with
 * what a drain does to it, sorted by namespace and name. Callers pass every VMI they
 * listed, or nothing at all where the cluster has no VirtualMachineInstance API.
 */
export function classifyVirtualMachines(
  vmis: readonly VirtualMachineInstanceLike[],
  nodeName: string,
): DrainVirtualMachine[] {
  return vmis
    .filter(
      vmi =>
        vmi.status?.nodeName === nodeName &&
        !FINISHED_VMI_PHASES.has(vmi.status?.phase ?? ''),
    )
    .map(vmi => classifyOne(vmi, nodeName))
    .sort(
      (a, b) =>
        a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name),
    );
}
