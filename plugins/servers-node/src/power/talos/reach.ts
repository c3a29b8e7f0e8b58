/*
 * Where discovery and the join may go (docs/architecture.md, "Adding machines"): only to addresses inside the
 * TalosCluster's allowed networks, on its Talos port. The rule is servers-common's
 * (checkDiscoveryAddress); this adds the resolution of a name at the time of the call:
 * every address the name resolves to must be inside, and the call then goes to the first
 * of those addresses, not to the name again (a second lookup could answer differently).
 * The operator calls it before each probe, join and reset; the backend's discovery
 * address check is the same question asked before the address is written.
 */
import {
  checkDiscoveryAddress,
  checkResolvedAddresses,
  DEFAULT_TALOS_PORT,
  discoveryReachOf,
} from '@rackside/plugin-servers-common';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** Every address a name resolves to (all families). */
export type ResolveName = (host: string) => Promise<string[]>;

/** node:dns `lookup` (the system resolver, hosts file included), bounded in time. */
export function dnsResolver(timeoutMs: number): ResolveName {
  return async host => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const answers = await Promise.race([
        lookup(host, { all: true, verbatim: true }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`resolving ${host} timed out`)),
            timeoutMs,
          );
        }),
      ]);
      return answers.map(a => a.address);
    } finally {
      clearTimeout(timer);
    }
  };
}

export type Reach =
  /** `dial` is what to connect to: the address itself, or for a name the checked IP and port. */
  | { allowed: true; dial: string }
  /**
   * NotAllowed: never contacted (outside the networks, another port, no networks);
   * Unreachable: a name that did not resolve. `message` carries no error text;
   * `detail` (for the log only) may.
   */
  | {
      allowed: false;
      state: 'NotAllowed' | 'Unreachable';
      message: string;
      detail?: string;
    };

/** Whether `address` may be contacted for `cluster`, and where to connect. */
export async function reachFor(
  cluster: Parameters<typeof discoveryReachOf>[0],
  address: string,
  resolve: ResolveName,
): Promise<Reach> {
  const reach = discoveryReachOf(cluster);
  const check = checkDiscoveryAddress(address, reach);
  if (!check.allowed) {
    return { allowed: false, state: 'NotAllowed', message: check.message };
  }
  const endpoint = check.endpoint;
  const withPort = (host: string) =>
    isIP(host) === 6
      ? `[${host}]:${endpoint.port}`
      : `${host}:${endpoint.port}`;
  if (endpoint.ip) {
    // The Talos client implies 50000 for an address without a port: name the cluster's
    // port when it is another one.
    const implied = !endpoint.portGiven && endpoint.port !== DEFAULT_TALOS_PORT;
    return { allowed: true, dial: implied ? withPort(endpoint.host) : address };
  }
  let resolved: string[];
  try {
    resolved = await resolve(endpoint.host);
  } catch (error) {
    return {
      allowed: false,
      state: 'Unreachable',
      message: `${endpoint.host} does not resolve`,
      detail: (error as Error).message,
    };
  }
  const names = checkResolvedAddresses(endpoint, resolved, reach);
  if (!names.allowed) {
    return {
      allowed: false,
      state: 'NotAllowed',
      message: names.message,
      detail: `${endpoint.host} resolved to ${resolved.join(', ')}`,
    };
  }
  return { allowed: true, dial: withPort(resolved[0]) };
}
