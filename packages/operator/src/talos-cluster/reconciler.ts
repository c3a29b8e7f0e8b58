/*
 * Discovery (docs/architecture.md, "Adding machines"): every address of a TalosCluster is probed every interval, and at
 * once when something wakes the cluster (its spec changed, e.g. an added address, or a
 * reclaim of it is Done). A probe without a client certificate tells maintenance mode
 * (then the SMBIOS UUID is read and a Pending TalosMachine appears) from a configured
 * machine; a configured machine whose server certificate the cluster's own CA issued is a
 * Member, any other is AlreadyConfigured (the case for "Reset and add"). Discovery writes
 * the cluster's status and creates TalosMachines; it never writes the cluster's spec.
 *
 * Reach (servers-node reachFor): an address outside the cluster's allowed networks, on another port
 * than its Talos port, or a name resolving to any address outside them, is reported
 * NotAllowed and never contacted; a cluster with no allowed networks contacts nothing.
 * Status carries categories only: the error text of a probe goes to the log.
 */
import {
  TALOS_ADDRESS_STATE_TEXT,
  type LocalSecretRef,
  type TalosAddressStatus,
  type TalosCluster,
  type TalosClusterStatus,
  type TalosMachine,
} from '@rackside/plugin-servers-common';
import {
  reachFor,
  type ResolveName,
  type TalosClientIdentity,
  type TalosProbeResult,
} from '@rackside/plugin-servers-node';
import { setCondition } from '../runtime/lifecycle/conditions';
import { runPasses } from '../runtime/lifecycle/table';
import type { TalosAccess } from '../talos/talosAccess';
import {
  discoveryTable,
  READY_CONDITION,
  stateOf,
  type DiscoveryReads,
} from './table';

export interface DiscoveryPorts {
  cluster(key: string): TalosCluster | undefined;
  machine(namespace: string, name: string): TalosMachine | undefined;
  /** A key of a Secret in `namespace`; throws with a message naming the Secret and key. */
  readSecret(namespace: string, ref: LocalSecretRef): Promise<string>;
  talos: TalosAccess;
  /** Resolves a discovery address that is a name, at each probe. */
  resolve: ResolveName;
  /** Creates the TalosMachine (named by its UUID) and gives it phase Pending and the address. */
  createMachine(
    cluster: TalosCluster,
    uuid: string,
    seen: { address: string; at: string },
  ): Promise<void>;
  /** Where a Pending machine answered last. */
  updateMachineSeen(
    machine: TalosMachine,
    seen: { address: string; at: string },
  ): Promise<void>;
  writeStatus(cluster: TalosCluster, status: TalosClusterStatus): Promise<void>;
  events: {
    record(
      cluster: TalosCluster,
      type: 'Normal' | 'Warning',
      reason: string,
      message: string,
    ): Promise<void>;
  };
  now(): number;
  /** Deadline of one probe (and of one UUID read). */
  probeTimeoutMs: number;
  /** Probes in flight at once per cluster. */
  concurrency: number;
  log?: (message: string) => void;
}

export { READY_CONDITION };

/** What one address is, from its probe and (where there is one) the UUID read. */
export function addressStatus(
  address: string,
  probe: TalosProbeResult,
  uuid: { uuid?: string; error?: string },
  at: string,
): TalosAddressStatus {
  const base = { address, lastProbeTime: at };
  switch (probe.mode) {
    case 'maintenance':
      return uuid.uuid
        ? {
            ...base,
            state: 'Maintenance',
            uuid: uuid.uuid,
            message: 'maintenance mode',
          }
        : {
            ...base,
            state: 'Maintenance',
            message: 'maintenance mode, but its UUID could not be read',
          };
    case 'configured':
      if (probe.serverTrusted === true) {
        return {
          ...base,
          state: 'Member',
          ...(uuid.uuid ? { uuid: uuid.uuid } : {}),
          message: TALOS_ADDRESS_STATE_TEXT.Member,
        };
      }
      return {
        ...base,
        state: 'AlreadyConfigured',
        message: TALOS_ADDRESS_STATE_TEXT.AlreadyConfigured,
      };
    case 'unreachable':
    default:
      return (probe as { answered?: boolean }).answered
        ? {
            ...base,
            state: 'NotTalos',
            message: TALOS_ADDRESS_STATE_TEXT.NotTalos,
          }
        : {
            ...base,
            state: 'Unreachable',
            message: TALOS_ADDRESS_STATE_TEXT.Unreachable,
          };
  }
}

/** The error texts of a probe, for the log only. */
function probeDetail(
  probe: TalosProbeResult,
  uuid: { error?: string },
): string | undefined {
  const parts = [
    probe.mode === 'unreachable' ? probe.reason : undefined,
    probe.mode === 'configured' ? probe.trustDetail : undefined,
    uuid.error,
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : undefined;
}

async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]);
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, worker),
  );
  return results;
}

function summary(addresses: TalosAddressStatus[]): string {
  if (addresses.length === 0) return 'no discovery addresses to probe';
  const counts = new Map<string, number>();
  for (const a of addresses)
    counts.set(a.state, (counts.get(a.state) ?? 0) + 1);
  return `${addresses.length} address(es): ${[...counts]
    .map(([state, n]) => `${n} ${state}`)
    .join(', ')}`;
}

export class TalosClusterReconciler {
  private readonly woken = new Set<string>();

  constructor(private readonly ports: DiscoveryPorts) {}

  /** The next reconcile of `key` probes even if the interval has not passed. */
  wake(key: string): void {
    this.woken.add(key);
  }

  forget(key: string): void {
    this.woken.delete(key);
  }

  /** Runs the row of the cluster's state (table.ts) and does what it decides. */
  async reconcile(key: string): Promise<{ requeueAfterMs?: number }> {
    const woken = this.woken.delete(key);
    const reads: DiscoveryReads = {
      now: () => this.ports.now(),
      readSecret: (namespace, ref) => this.ports.readSecret(namespace, ref),
      woken,
    };
    return runPasses(this.ports.cluster(key), async cluster => {
      const decision = await discoveryTable[stateOf(cluster, reads)](
        cluster,
        reads,
      );
      switch (decision.kind) {
        case 'wait':
          return { requeueAfterMs: decision.requeueAfterMs };
        case 'record':
          await this.ports.writeStatus(cluster, decision.status);
          await this.ports.events.record(
            cluster,
            decision.event.type,
            decision.event.reason,
            decision.event.message,
          );
          return { requeueAfterMs: decision.requeueAfterMs };
        default:
          return this.discover(cluster, decision.identity, decision.intervalMs);
      }
    });
  }

  /** Probes every address with the cluster's CA and records what each is. */
  private async discover(
    cluster: TalosCluster,
    identity: TalosClientIdentity,
    intervalMs: number,
  ): Promise<{ requeueAfterMs?: number }> {
    const namespace = cluster.metadata.namespace ?? '';
    const at = new Date(this.ports.now()).toISOString();
    const addresses = cluster.spec.discovery?.addresses ?? [];
    const networks = cluster.spec.discovery?.allowedNetworks ?? [];
    const log = (message: string) =>
      this.ports.log?.(`${namespace}/${cluster.metadata.name}: ${message}`);
    const probed = await mapLimit(
      addresses,
      this.ports.concurrency,
      async (address): Promise<TalosAddressStatus> => {
        const reach = await reachFor(cluster, address, this.ports.resolve);
        if (!reach.allowed) {
          log(
            `discovery: ${address} not probed: ${reach.message}${
              reach.detail ? ` (${reach.detail})` : ''
            }`,
          );
          return {
            address,
            state: reach.state,
            lastProbeTime: at,
            message: reach.message.slice(0, 4096),
          };
        }
        const dial = reach.dial;
        const probe = await this.ports.talos.probe(dial, {
          ca: identity.ca,
          timeoutMs: this.ports.probeTimeoutMs,
        });
        const uuid: { uuid?: string; error?: string } = {};
        if (
          probe.mode === 'maintenance' ||
          (probe.mode === 'configured' && probe.serverTrusted)
        ) {
          try {
            uuid.uuid = (
              probe.mode === 'maintenance'
                ? await this.ports.talos.maintenanceUUID(
                    dial,
                    this.ports.probeTimeoutMs,
                  )
                : await this.ports.talos.uuid(
                    dial,
                    identity,
                    this.ports.probeTimeoutMs,
                  )
            ).toLowerCase();
          } catch (error) {
            uuid.error = (error as Error).message;
          }
        }
        const entry = addressStatus(address, probe, uuid, at);
        const detail = probeDetail(probe, uuid);
        if (detail) log(`discovery: ${address}: ${entry.state}: ${detail}`);
        return entry;
      },
    );

    for (const entry of probed) {
      if (entry.state !== 'Maintenance' || !entry.uuid) continue;
      const note = await this.ensureMachine(
        cluster,
        entry.uuid,
        entry.address,
        at,
      );
      if (note) entry.message = `${entry.message}; ${note}`.slice(0, 4096);
    }

    await this.ports.writeStatus(cluster, {
      ...cluster.status,
      addresses: probed,
      lastDiscoveryTime: at,
      observedGeneration: cluster.metadata.generation,
      conditions: setCondition(
        cluster.status?.conditions,
        networks.length === 0
          ? {
              type: READY_CONDITION,
              status: 'False',
              reason: 'NoAllowedNetworks',
              message:
                'no address is probed: the TalosCluster lists no allowed networks (spec.discovery.allowedNetworks)',
              observedGeneration: cluster.metadata.generation,
            }
          : {
              type: READY_CONDITION,
              status: 'True',
              reason: 'Probed',
              message: summary(probed),
              observedGeneration: cluster.metadata.generation,
            },
        at,
      ),
    });
    log(`discovery: ${summary(probed)}`);
    return { requeueAfterMs: intervalMs };
  }

  /** A Pending TalosMachine for a machine in maintenance mode; answers a note for the address. */
  private async ensureMachine(
    cluster: TalosCluster,
    uuid: string,
    address: string,
    at: string,
  ): Promise<string | undefined> {
    const namespace = cluster.metadata.namespace ?? '';
    const existing = this.ports.machine(namespace, uuid);
    if (!existing) {
      await this.ports.createMachine(cluster, uuid, { address, at });
      await this.ports.events.record(
        cluster,
        'Normal',
        'MachineDiscovered',
        `${address} is a machine in maintenance mode (UUID ${uuid}): TalosMachine ${uuid} is Pending`,
      );
      return undefined;
    }
    if (existing.spec.cluster !== cluster.metadata.name) {
      return `already a machine of TalosCluster ${existing.spec.cluster}`;
    }
    const phase = existing.status?.phase;
    if (phase === undefined || phase === 'Pending') {
      await this.ports.updateMachineSeen(existing, { address, at });
    }
    return undefined;
  }
}
