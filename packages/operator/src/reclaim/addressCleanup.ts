/*
 * Address clean-up of the ADR 0107 amendment. Whoever appends a reclaim's address to a
 * TalosCluster's spec.discovery.addresses records it in the annotation
 * rackside.dev/reclaim-added-addresses (an address the user listed is never recorded).
 * When a reclaim is created and when it is confirmed, an address recorded there is taken
 * back out once no Done or running request of that cluster names it and no TalosMachine
 * of the cluster is at it: that covers failed, expired, refused and deleted requests.
 * Nothing else ever writes the list, and reads never do.
 */
import {
  isTerminalReclaimPhase,
  RECLAIM_ADDED_ADDRESSES_ANNOTATION,
  reclaimAddedAddresses,
  type MachineReclaim,
  type TalosCluster,
  type TalosMachine,
} from '@rackside/plugin-servers-common';
import { parseTalosEndpoint } from '@rackside/plugin-servers-node';

/** The same machine address however it is written (`10.0.0.5` = `10.0.0.5:50000`). */
export function sameAddress(a: string | undefined, b: string | undefined) {
  if (!a || !b) return false;
  try {
    return parseTalosEndpoint(a).authority === parseTalosEndpoint(b).authority;
  } catch {
    return a === b;
  }
}

/** What to write: the new address list and annotation value, and what was taken out. */
export interface AddressRelease {
  released: string[];
  addresses: string[];
  /** The annotation's new value; undefined removes it. */
  annotation: string | undefined;
}

/** A request that still needs its address: Done, or not finished (including not yet admitted). */
function needsAddress(reclaim: MachineReclaim): boolean {
  const phase = reclaim.status?.phase;
  return (
    phase === undefined || phase === 'Done' || !isTerminalReclaimPhase(phase)
  );
}

/**
 * The clean-up of one cluster, or undefined when nothing changes. `reclaims` and
 * `machines` are those of the cluster's namespace.
 */
export function planAddressRelease(
  cluster: TalosCluster,
  reclaims: readonly MachineReclaim[],
  machines: readonly TalosMachine[],
): AddressRelease | undefined {
  const recorded = reclaimAddedAddresses(cluster);
  if (recorded.length === 0) return undefined;
  const listed = cluster.spec.discovery?.addresses ?? [];
  const name = cluster.metadata.name;
  const needed = (address: string) =>
    reclaims.some(
      r =>
        r.spec.targetCluster === name &&
        sameAddress(r.spec.address, address) &&
        needsAddress(r),
    ) ||
    machines.some(
      m => m.spec.cluster === name && sameAddress(m.status?.address, address),
    );
  const released = recorded.filter(a => listed.includes(a) && !needed(a));
  // A recorded address the list no longer holds (someone removed it) is forgotten too.
  const keep = recorded.filter(
    a => listed.includes(a) && !released.includes(a),
  );
  if (released.length === 0 && keep.length === recorded.length)
    return undefined;
  return {
    released,
    addresses: listed.filter(a => !released.includes(a)),
    annotation: keep.length > 0 ? keep.join(',') : undefined,
  };
}

/** Live reads and the one conditional write of the clean-up. */
export interface AddressCleanupPorts {
  getCluster(
    namespace: string,
    name: string,
  ): Promise<TalosCluster | undefined>;
  listReclaims(namespace: string): Promise<MachineReclaim[]>;
  listMachines(namespace: string): Promise<TalosMachine[]>;
  /** Patch spec.discovery.addresses and the annotation, only if `cluster` is current (409 otherwise). */
  writeCluster(cluster: TalosCluster, release: AddressRelease): Promise<void>;
}

/**
 * Runs the clean-up for `namespace/name`. The cluster is read before the requests and
 * machines, and written only if unchanged since: an address appended meanwhile makes the
 * write fail and the next attempt sees the request that appended it. Best effort: answers
 * the addresses taken out, or throws.
 */
export async function releaseReclaimAddresses(
  ports: AddressCleanupPorts,
  namespace: string,
  name: string,
  attempts = 3,
): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    const cluster = await ports.getCluster(namespace, name);
    if (!cluster) return [];
    const [reclaims, machines] = await Promise.all([
      ports.listReclaims(namespace),
      ports.listMachines(namespace),
    ]);
    const release = planAddressRelease(cluster, reclaims, machines);
    if (!release) return [];
    try {
      await ports.writeCluster(cluster, release);
      return release.released;
    } catch (error) {
      if (attempt >= attempts) throw error;
    }
  }
}

/** The merge patch of {@link AddressCleanupPorts.writeCluster}. */
export function addressReleasePatch(
  cluster: TalosCluster,
  release: AddressRelease,
) {
  return {
    metadata: {
      resourceVersion: cluster.metadata.resourceVersion,
      annotations: {
        [RECLAIM_ADDED_ADDRESSES_ANNOTATION]: release.annotation ?? null,
      },
    },
    spec: { discovery: { addresses: release.addresses } },
  };
}
