import { InputError } from '@backstage/errors';
import {
  discoveryReachOf,
  isTerminalReclaimPhase,
  reclaimAddedAddresses,
  RECLAIM_ADDED_ADDRESSES_ANNOTATION,
  type MachineReclaim,
  type TalosCluster,
  type TalosMachine,
} from '@rackside/plugin-servers-common';
import {
  dnsResolver,
  reachFor,
  TALOS_API_PORT,
  type ResolveName,
} from '@rackside/plugin-servers-node';

/** How long the backend waits for a name to resolve before refusing it. */
const RESOLVE_TIMEOUT_MS = 5_000;

/** The system resolver, bounded in time (the operator's, from servers-node). */
export const resolveWithDns: ResolveName = dnsResolver(RESOLVE_TIMEOUT_MS);

/**
 * 400 unless discovery of `cluster` may reach `address` (docs/architecture.md, "Adding machines"): the Talos port,
 * inside the allowed networks (a name: every address it resolves to now; the operator
 * checks again at each probe). The message names the allowed networks; it never says
 * what, if anything, listens at the address.
 */
export async function requireReachable(
  cluster: TalosCluster,
  address: string,
  resolve: ResolveName = resolveWithDns,
): Promise<void> {
  const reach = await reachFor(cluster, address, resolve);
  if (reach.allowed) return;
  const name = cluster.metadata.name;
  if (reach.state === 'Unreachable') {
    throw new InputError(
      `address: ${
        reach.message
      }; discovery of ${name} reaches only the allowed networks (${
        discoveryReachOf(cluster).allowedNetworks.join(', ') || 'none'
      })`,
    );
  }
  throw new InputError(
    `address: ${address} cannot be a discovery address of ${name}: ${reach.message}`,
  );
}

/**
 * One form of an address for comparing (`10.0.0.5` and `10.0.0.5:50000` are the
 * same machine): lower-case host plus port, IPv6 brackets removed.
 */
export function addressKey(address: string): string {
  const text = address.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    return `${bracketed[1]}|${bracketed[2] ?? TALOS_API_PORT}`;
  }
  const colons = text.split(':').length - 1;
  if (colons === 1) {
    const [host, port] = text.split(':');
    return `${host}|${port || TALOS_API_PORT}`;
  }
  // No colon: a host; several: a bare IPv6 address.
  return `${text}|${TALOS_API_PORT}`;
}

/** Whether two addresses name the same machine endpoint. */
export function sameAddress(a: string, b: string): boolean {
  return addressKey(a) === addressKey(b);
}

/** A reclaim that still needs its address listed: Done, or not finished yet. */
function holdsAddress(reclaim: MachineReclaim): boolean {
  const phase = reclaim.status?.phase ?? 'Pending';
  return phase === 'Done' || !isTerminalReclaimPhase(phase);
}

/**
 * The addresses a reclaim appended to `cluster` (its annotation) that nothing needs
 * any more: no Done or running request of that cluster names it and no TalosMachine
 * of the cluster is at it (decision 0002, item 8). Covers failed, expired and deleted
 * requests.
 */
export function staleReclaimAddresses(
  cluster: TalosCluster,
  reclaims: readonly MachineReclaim[],
  machines: readonly TalosMachine[],
): string[] {
  const needed = new Set<string>();
  for (const r of reclaims) {
    if (r.spec.targetCluster === cluster.metadata.name && holdsAddress(r)) {
      needed.add(addressKey(r.spec.address));
    }
  }
  for (const m of machines) {
    if (m.spec.cluster === cluster.metadata.name && m.status?.address) {
      needed.add(addressKey(m.status.address));
    }
  }
  return reclaimAddedAddresses(cluster).filter(a => !needed.has(addressKey(a)));
}

/** What to write to a TalosCluster, or nothing when it is already right. */
export interface AddressPlan {
  addresses: string[];
  /** The new value of the annotation (empty: remove it). */
  recorded: string[];
  removed: string[];
  /** `ensure` was appended (it was not listed). */
  appended: boolean;
}

/**
 * Takes the stale reclaim-added addresses out of `cluster` and, with `ensure`, makes
 * sure that address is listed: appended and recorded in the annotation when it was
 * not listed; an address the user listed is left as it is and never recorded.
 * Undefined when nothing changes.
 */
export function planReclaimAddresses(
  cluster: TalosCluster,
  reclaims: readonly MachineReclaim[],
  machines: readonly TalosMachine[],
  ensure?: string,
): AddressPlan | undefined {
  const stale = staleReclaimAddresses(cluster, reclaims, machines).filter(
    a => !ensure || !sameAddress(a, ensure),
  );
  const staleKeys = new Set(stale.map(addressKey));
  const current = cluster.spec.discovery?.addresses ?? [];
  const addresses = current.filter(a => !staleKeys.has(addressKey(a)));
  const recorded = reclaimAddedAddresses(cluster).filter(
    a => !staleKeys.has(addressKey(a)),
  );
  let appended = false;
  if (ensure && !addresses.some(a => sameAddress(a, ensure))) {
    addresses.push(ensure);
    if (!recorded.some(a => sameAddress(a, ensure))) recorded.push(ensure);
    appended = true;
  }
  const removed = current.filter(a => staleKeys.has(addressKey(a)));
  const annotationChanged =
    recorded.join(',') !== reclaimAddedAddresses(cluster).join(',');
  if (!appended && removed.length === 0 && !annotationChanged) {
    return undefined;
  }
  return { addresses, recorded, removed, appended };
}

/** `cluster` with the plan applied (spec addresses and the annotation). */
export function applyAddressPlan(
  cluster: TalosCluster,
  plan: AddressPlan,
): TalosCluster {
  const annotations = { ...(cluster.metadata.annotations ?? {}) };
  if (plan.recorded.length > 0) {
    annotations[RECLAIM_ADDED_ADDRESSES_ANNOTATION] = plan.recorded.join(',');
  } else {
    delete annotations[RECLAIM_ADDED_ADDRESSES_ANNOTATION];
  }
  return {
    ...cluster,
    metadata: { ...cluster.metadata, annotations },
    spec: {
      ...cluster.spec,
      discovery: { ...cluster.spec.discovery, addresses: plan.addresses },
    },
  };
}
