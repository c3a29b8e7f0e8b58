import { InputError } from '@backstage/errors';
import { isIP } from 'node:net';

/** The port apid listens on. */
export const TALOS_API_PORT = 50000;

/** Where a Talos machine's API is. */
export interface TalosEndpoint {
  host: string;
  port: number;
  /** `host:port` as gRPC and messages write it (`[v6]:port` for IPv6). */
  authority: string;
}

/**
 * Reads an address as talosctl takes it: `10.0.5.21`, `10.0.5.21:50000`, `node-1`,
 * `[fd00::1]:50000` or a bare IPv6 address. The port defaults to 50000.
 */
export function parseTalosEndpoint(address: string): TalosEndpoint {
  const value = address.trim();
  let host = value;
  let port = TALOS_API_PORT;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) {
    host = bracketed[1];
    if (bracketed[2]) port = Number(bracketed[2]);
  } else if (isIP(value) !== 6) {
    const withPort = /^([^:]+):(\d+)$/.exec(value);
    if (withPort) {
      host = withPort[1];
      port = Number(withPort[2]);
    }
  }
  const validHost =
    isIP(host) !== 0 ||
    /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(
      host,
    );
  if (!validHost || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new InputError(`"${address}" is not a Talos API address`);
  }
  const authority = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  return { host, port, authority };
}
