/*
 * Network reach of discovery (docs/architecture.md, "Adding machines"): a TalosCluster lists the networks its machines
 * live in (`spec.discovery.allowedNetworks`) and the port of their Talos API
 * (`spec.discovery.talosPort`). One rule, here, for the backend (which refuses an address
 * outside them before writing it) and the operator (which never probes, reads a UUID from
 * or joins an address outside them). Names are resolved at the edges (node:dns); this file
 * only parses and compares, so it runs in the browser too.
 */

/** The port of the Talos machine API when a TalosCluster names none. */
export const DEFAULT_TALOS_PORT = 50000;

/** An IP address as bytes: 4 for IPv4 (also an IPv4-mapped IPv6 address), 16 for IPv6. */
export type IpBytes = number[];

function parseIPv4(text: string): IpBytes | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const part of parts) {
    // No leading zeros: `010` is octal to some parsers and decimal to others.
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    bytes.push(n);
  }
  return bytes;
}

function parseIPv6(text: string): IpBytes | undefined {
  if (!/^[0-9A-Fa-f:.]+$/.test(text)) return undefined;
  let head = text;
  let tail: number[] = [];
  // An embedded IPv4 address in the last 32 bits (`::ffff:1.2.3.4`).
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    const v4 = parseIPv4(text.slice(lastColon + 1));
    if (!v4) return undefined;
    tail = [(v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]];
    head = text.slice(0, lastColon + 1);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9A-Fa-f]{1,4}$/.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const left = groups(halves[0]);
  const right = halves.length === 2 ? groups(halves[1]) : [];
  if (!left || !right) return undefined;
  const given = left.length + right.length + tail.length;
  let words: number[];
  if (halves.length === 2) {
    if (given > 7) return undefined;
    words = [...left, ...new Array(8 - given).fill(0), ...right, ...tail];
  } else {
    if (given !== 8) return undefined;
    words = [...left, ...tail];
  }
  return words.flatMap(w => [w >> 8, w & 0xff]);
}

const isMappedV4 = (b: IpBytes) =>
  b.length === 16 &&
  b.slice(0, 10).every(x => x === 0) &&
  b[10] === 0xff &&
  b[11] === 0xff;

/**
 * An IP literal as bytes, or undefined for anything else (names, zones, `1.2.3`). An
 * IPv4-mapped IPv6 address is answered as the IPv4 address it maps, so it is held to the
 * IPv4 networks and cannot slip past them as "IPv6".
 */
export function parseIp(text: string): IpBytes | undefined {
  const v4 = parseIPv4(text);
  if (v4) return v4;
  const v6 = parseIPv6(text);
  if (!v6) return undefined;
  return isMappedV4(v6) ? v6.slice(12) : v6;
}

/** A network of `allowedNetworks`. */
export interface IpNetwork {
  bytes: IpBytes;
  prefix: number;
  text: string;
}

/**
 * A CIDR as the apiserver's CEL `isCIDR` takes it, in canonical form (no bits set after
 * the prefix: `10.0.5.0/24`, not `10.0.5.7/24`); IPv4-mapped IPv6 networks are refused.
 */
export function parseCidr(text: string): IpNetwork | undefined {
  const match = /^([^/]+)\/(0|[1-9][0-9]{0,2})$/.exec(text);
  if (!match) return undefined;
  const v4 = parseIPv4(match[1]);
  const v6 = v4 ? undefined : parseIPv6(match[1]);
  const bytes = v4 ?? v6;
  if (!bytes || (v6 && isMappedV4(v6))) return undefined;
  const prefix = Number(match[2]);
  if (prefix > bytes.length * 8) return undefined;
  for (let bit = prefix; bit < bytes.length * 8; bit++) {
    if (bytes[bit >> 3] & (0x80 >> (bit & 7))) return undefined;
  }
  return { bytes, prefix, text };
}

/** Whether `ip` lies in `network` (families must match). */
export function networkContains(network: IpNetwork, ip: IpBytes): boolean {
  if (network.bytes.length !== ip.length) return false;
  for (let bit = 0; bit < network.prefix; bit++) {
    const mask = 0x80 >> (bit & 7);
    if ((network.bytes[bit >> 3] & mask) !== (ip[bit >> 3] & mask)) {
      return false;
    }
  }
  return true;
}

/** A discovery address read as host and port. */
export interface DiscoveryEndpoint {
  host: string;
  /** The port written, or the cluster's Talos port when none was. */
  port: number;
  /** Whether the address wrote a port. */
  portGiven: boolean;
  /** The bytes of an IP literal; undefined for a DNS name. */
  ip?: IpBytes;
}

const DNS_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/**
 * Reads `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address; host is an IP
 * literal or a DNS name, port 1-65535 (decimal, no sign). Undefined for anything else.
 */
export function parseDiscoveryEndpoint(
  address: string,
  talosPort = DEFAULT_TALOS_PORT,
): DiscoveryEndpoint | undefined {
  const text = address.trim();
  let host = text;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::([^:]*))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1];
    portText = bracketed[2];
    if (!parseIPv6(host)) return undefined;
  } else if ((text.match(/:/g) ?? []).length === 1) {
    [host, portText] = text.split(':');
  }
  let port = talosPort;
  if (portText !== undefined) {
    if (!/^[1-9][0-9]{0,4}$/.test(portText)) return undefined;
    port = Number(portText);
    if (port > 65535) return undefined;
  }
  const ip = parseIp(host);
  if (!ip && (host.includes(':') || !DNS_NAME.test(host))) return undefined;
  // A name made of digits and dots only is a malformed IP, not a name.
  if (!ip && /^[0-9.]+$/.test(host)) return undefined;
  return { host, port, portGiven: portText !== undefined, ip };
}

/** What discovery may reach: the allowed networks and the Talos port of a TalosCluster. */
export interface DiscoveryReach {
  allowedNetworks: readonly string[];
  talosPort: number;
}

/** The reach of a TalosCluster's spec (defaults applied). */
export function discoveryReachOf(cluster: {
  spec: {
    discovery?: { allowedNetworks?: readonly string[]; talosPort?: number };
  };
}): DiscoveryReach {
  return {
    allowedNetworks: cluster.spec.discovery?.allowedNetworks ?? [],
    talosPort: cluster.spec.discovery?.talosPort ?? DEFAULT_TALOS_PORT,
  };
}

/** Why an address is not one discovery may reach. */
export type DiscoveryRefusal =
  /** Not host[:port] with an IP literal or DNS name and a port 1-65535. */
  | 'invalid'
  /** A port other than the cluster's Talos port. */
  | 'port'
  /** The cluster lists no allowed networks: nothing may be reached (fail closed). */
  | 'noNetworks'
  /** An address (or one a name resolved to) outside every allowed network. */
  | 'outside';

export type DiscoveryCheck =
  | { allowed: true; endpoint: DiscoveryEndpoint }
  | {
      allowed: false;
      refusal: DiscoveryRefusal;
      /** For a person: what is wrong and what is allowed; never an error text of a probe. */
      message: string;
      endpoint?: DiscoveryEndpoint;
    };

/** `a, b` or `none`. */
export function describeNetworks(reach: DiscoveryReach): string {
  return reach.allowedNetworks.length
    ? reach.allowedNetworks.join(', ')
    : 'none';
}

/** The IP addresses (text) outside every allowed network. */
export function outsideNetworks(
  reach: DiscoveryReach,
  ips: readonly string[],
): string[] {
  const networks = reach.allowedNetworks
    .map(parseCidr)
    .filter((n): n is IpNetwork => !!n);
  return ips.filter(text => {
    const ip = parseIp(text);
    return !ip || !networks.some(n => networkContains(n, ip));
  });
}

/**
 * Whether discovery may reach `address` by its text alone: syntax, port, and for an IP
 * literal the networks. A DNS name passes here with `endpoint.ip` undefined: the caller
 * resolves it and checks every address with {@link checkResolvedAddresses}.
 */
export function checkDiscoveryAddress(
  address: string,
  reach: DiscoveryReach,
): DiscoveryCheck {
  const endpoint = parseDiscoveryEndpoint(address, reach.talosPort);
  if (!endpoint) {
    return {
      allowed: false,
      refusal: 'invalid',
      message:
        'must be an IP address or DNS name, optionally with :port (1-65535)',
    };
  }
  if (endpoint.port !== reach.talosPort) {
    return {
      allowed: false,
      refusal: 'port',
      endpoint,
      message: `port ${endpoint.port} is not the Talos API port of this cluster (${reach.talosPort})`,
    };
  }
  if (reach.allowedNetworks.length === 0) {
    return {
      allowed: false,
      refusal: 'noNetworks',
      endpoint,
      message:
        'the TalosCluster lists no allowed networks (spec.discovery.allowedNetworks), so no address may be probed',
    };
  }
  if (endpoint.ip) {
    const outside = outsideNetworks(reach, [endpoint.host]);
    if (outside.length > 0) {
      return {
        allowed: false,
        refusal: 'outside',
        endpoint,
        message: `outside the allowed networks (${describeNetworks(reach)})`,
      };
    }
  }
  return { allowed: true, endpoint };
}

/** A name's resolved addresses: all must be inside, and there must be at least one. */
export function checkResolvedAddresses(
  endpoint: DiscoveryEndpoint,
  resolved: readonly string[],
  reach: DiscoveryReach,
): DiscoveryCheck {
  if (resolved.length === 0) {
    return {
      allowed: false,
      refusal: 'outside',
      endpoint,
      message: `${endpoint.host} resolves to no address`,
    };
  }
  const outside = outsideNetworks(reach, resolved);
  if (outside.length > 0) {
    return {
      allowed: false,
      refusal: 'outside',
      endpoint,
      message: `${
        endpoint.host
      } resolves to an address outside the allowed networks (${describeNetworks(
        reach,
      )})`,
    };
  }
  return { allowed: true, endpoint };
}
