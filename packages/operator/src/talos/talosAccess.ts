/*
 * The one edge between the discovery, join and reclaim controllers and the Talos machine
 * API. Each call opens a client for one machine, makes one call under the deadline the
 * caller passes, and closes it: the controllers never hold a connection between
 * reconciles. The tables are tested with a fake of this interface.
 */
import {
  probeTalosMachine,
  TalosApiClient,
  type TalosApplyResult,
  type TalosClientIdentity,
  type TalosEtcdMember,
  type TalosProbeResult,
} from '@rackside/plugin-servers-node';

export interface TalosAccess {
  /** Maintenance mode, configured (and whether `ca` issued its certificate), or unreachable. */
  probe(
    address: string,
    options: { ca?: string; timeoutMs: number },
  ): Promise<TalosProbeResult>;
  /** The SMBIOS UUID of a machine in maintenance mode (no client certificate). */
  maintenanceUUID(address: string, timeoutMs: number): Promise<string>;
  /** The SMBIOS UUID of a configured machine, over mTLS with `identity`. */
  uuid(
    address: string,
    identity: TalosClientIdentity,
    timeoutMs: number,
  ): Promise<string>;
  /** The etcd members as the control plane at `address` sees them. */
  etcdMembers(
    address: string,
    identity: TalosClientIdentity,
    timeoutMs: number,
  ): Promise<TalosEtcdMember[]>;
  /** Reset: graceful, reboot into maintenance mode, wipe STATE and EPHEMERAL. Sent once. */
  reset(
    address: string,
    identity: TalosClientIdentity,
    timeoutMs: number,
  ): Promise<{ actorId: string }>;
  /** ApplyConfiguration (mode AUTO) over the maintenance connection. */
  applyConfiguration(
    address: string,
    config: string,
    timeoutMs: number,
  ): Promise<TalosApplyResult>;
}

async function once<T>(
  client: TalosApiClient,
  call: (c: TalosApiClient) => Promise<T>,
): Promise<T> {
  try {
    return await call(client);
  } finally {
    client.close();
  }
}

/** The real machine API (`@rackside/plugin-servers-node`'s Talos client). */
export function createTalosAccess(): TalosAccess {
  const maintenance = (address: string, timeoutMs: number) =>
    new TalosApiClient(address, { mode: 'maintenance' }, { timeoutMs });
  const mtls = (
    address: string,
    identity: TalosClientIdentity,
    timeoutMs: number,
  ) => new TalosApiClient(address, { mode: 'mtls', identity }, { timeoutMs });
  return {
    probe: (address, { ca, timeoutMs }) =>
      probeTalosMachine(address, { ca, timeoutMs }),
    maintenanceUUID: (address, timeoutMs) =>
      once(maintenance(address, timeoutMs), c => c.systemUUID()),
    uuid: (address, identity, timeoutMs) =>
      once(mtls(address, identity, timeoutMs), c => c.systemUUID()),
    etcdMembers: (address, identity, timeoutMs) =>
      once(mtls(address, identity, timeoutMs), c => c.etcdMemberList()),
    reset: (address, identity, timeoutMs) =>
      once(mtls(address, identity, timeoutMs), c =>
        c.reset({ graceful: true, reboot: true }),
      ),
    applyConfiguration: (address, config, timeoutMs) =>
      once(maintenance(address, timeoutMs), c =>
        c.applyConfiguration(config, { mode: 'AUTO' }),
      ),
  };
}
