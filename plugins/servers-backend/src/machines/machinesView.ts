import {
  isTerminalReclaimPhase,
  reclaimAddedAddresses,
  DEFAULT_TALOS_PORT,
  RECLAIM_TTL_MINUTES,
  TALOS_ADDRESS_STATE_TEXT,
  type DiscoveryAddressResponse,
  type TalosAddressStatus,
  type MachineReclaim,
  type ReclaimResponse,
  type TalosCluster,
  type TalosClusterResponse,
  type TalosMachine,
  type TalosMachineResponse,
} from '@rackside/plugin-servers-common';
import { addressKey } from './discoveryAddresses';

/**
 * What the answer says of a probe: its category's words. A status written by an operator
 * from before categories may hold a probe's error text (which told a closed port from an
 * open one): for Unreachable and NotTalos only the category's text is answered, for the
 * others the operator's message up to the first ": ".
 */
function probeMessage(status: TalosAddressStatus | undefined) {
  if (!status) return undefined;
  const text = TALOS_ADDRESS_STATE_TEXT[status.state];
  if (status.state === 'Unreachable' || status.state === 'NotTalos') {
    return text;
  }
  return (status.message ?? text).split(': ')[0];
}

/** A TalosCluster with its addresses joined to what the last probe found. */
export function talosClusterView(cluster: TalosCluster): TalosClusterResponse {
  const probed = new Map(
    (cluster.status?.addresses ?? []).map(s => [addressKey(s.address), s]),
  );
  const added = new Set(reclaimAddedAddresses(cluster).map(addressKey));
  const addresses: DiscoveryAddressResponse[] = (
    cluster.spec.discovery?.addresses ?? []
  ).map(address => {
    const status = probed.get(addressKey(address));
    return {
      address,
      state: status?.state,
      uuid: status?.uuid,
      lastProbeTime: status?.lastProbeTime,
      message: probeMessage(status),
      addedByReclaim: added.has(addressKey(address)),
    };
  });
  return {
    name: cluster.metadata.name,
    namespace: cluster.metadata.namespace ?? '',
    intervalSeconds: cluster.spec.discovery?.intervalSeconds ?? 300,
    allowedNetworks: [...(cluster.spec.discovery?.allowedNetworks ?? [])],
    talosPort: cluster.spec.discovery?.talosPort ?? DEFAULT_TALOS_PORT,
    lastDiscoveryTime: cluster.status?.lastDiscoveryTime,
    addresses,
    conditions: cluster.status?.conditions ?? [],
  };
}

/** A TalosMachine as the routes answer it. */
export function talosMachineView(machine: TalosMachine): TalosMachineResponse {
  const s = machine.status;
  return {
    uuid: machine.metadata.name,
    talosCluster: machine.spec.cluster,
    phase: s?.phase ?? 'Pending',
    address: s?.address,
    hostname: s?.hostname,
    nodeName: s?.nodeName,
    join: machine.spec.join,
    lastSeenAt: s?.lastSeenAt,
    configAppliedAt: s?.configAppliedAt,
    joinedAt: s?.joinedAt,
    message: s?.message,
    createdAt: machine.metadata.creationTimestamp,
  };
}

/**
 * A MachineReclaim as the routes answer it. Only named fields are copied, so the
 * credential's Secret reference (and anything added to the kind later) stays out.
 */
export function reclaimView(reclaim: MachineReclaim): ReclaimResponse {
  const s = reclaim.status;
  const phase = s?.phase ?? 'Pending';
  return {
    name: reclaim.metadata.name,
    address: reclaim.spec.address,
    targetCluster: reclaim.spec.targetCluster,
    phase,
    terminal: isTerminalReclaimPhase(phase),
    machineUUID: s?.machineUUID,
    confirmed: !!reclaim.spec.confirmUUID,
    ttlMinutes: reclaim.spec.ttlMinutes ?? RECLAIM_TTL_MINUTES.default,
    expiresAt: s?.expiresAt,
    confirmedAt: s?.confirmedAt,
    resetSentAt: s?.resetSentAt,
    credentialDeletedAt: s?.credentialDeletedAt,
    result: s?.result,
    audit: (s?.audit ?? []).map(entry => ({
      at: entry.at,
      event: entry.event,
      message: entry.message,
      actor: entry.actor,
    })),
    conditions: s?.conditions ?? [],
    requestedBy: reclaim.spec.requestedBy,
    reason: reclaim.spec.reason,
    createdAt: reclaim.metadata.creationTimestamp,
  };
}

/** Newest first by creation time, then by name. */
export function newestObjectsFirst<
  T extends { metadata: { name: string; creationTimestamp?: string } },
>(a: T, b: T): number {
  const byTime = (b.metadata.creationTimestamp ?? '').localeCompare(
    a.metadata.creationTimestamp ?? '',
  );
  return byTime !== 0 ? byTime : a.metadata.name.localeCompare(b.metadata.name);
}
