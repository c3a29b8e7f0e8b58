import { status as GrpcStatus } from '@grpc/grpc-js';
import { connect as tlsConnect } from 'node:tls';
import { isIP } from 'node:net';
import { parseTalosEndpoint } from './endpoint';
import {
  TalosApiClient,
  TalosApiError,
  type TalosVersion,
} from './TalosApiClient';

/**
 * What a probe without a client certificate learned about an address:
 * - `maintenance`: the machine answers without a client certificate (not configured);
 * - `configured`: it requires a client certificate. `serverTrusted` tells, when a CA
 *   was given, whether its server certificate is issued by that CA for this address
 *   (a member of our cluster) or not (a machine another cluster configured);
 * - `unreachable`: no answer, or an answer that is neither of the above. `answered` tells
 *   the two apart: something took the connection but did not speak the Talos API (an
 *   HTTP server, a TLS error, a gRPC status a Talos machine would not send), as opposed to
 *   no connection at all (refused, timed out, unroutable). `reason` is the error text:
 *   for the log, not for a status or an API answer.
 */
export type TalosProbeResult =
  | { mode: 'maintenance'; version: TalosVersion }
  | { mode: 'configured'; serverTrusted?: boolean; trustDetail?: string }
  | { mode: 'unreachable'; reason: string; answered?: boolean };

/** Errors that mean no connection was made: nothing answered at the address. */
const NO_CONNECTION =
  /ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EADDRNOTAVAIL|timed out/i;

/** Whether a failed probe met something that answered (true) or nothing (false). */
export function probeFailureAnswered(error: unknown): boolean {
  if (error instanceof TalosApiError) {
    if (error.code === GrpcStatus.DEADLINE_EXCEEDED) return false;
    if (error.code === GrpcStatus.UNAVAILABLE) {
      return !NO_CONNECTION.test(error.details);
    }
    return true;
  }
  const code = (error as NodeJS.ErrnoException)?.code ?? '';
  return !NO_CONNECTION.test(`${code} ${(error as Error)?.message ?? ''}`);
}

export interface TalosProbeOptions {
  /** Our cluster's Talos CA (PEM): also check whose server certificate a configured machine has. */
  ca?: string;
  timeoutMs?: number;
}

/**
 * Does the server certificate at this endpoint verify against `ca` (chain and address)?
 * Only the handshake is needed: in TLS 1.3 the client checks the server's certificate
 * before the server turns it away for lacking a client certificate.
 */
function serverCertificateTrusted(
  address: string,
  ca: string,
  timeoutMs: number,
): Promise<{ trusted: boolean; detail?: string }> {
  const { host, port } = parseTalosEndpoint(address);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host,
      port,
      ca,
      ALPNProtocols: ['h2'],
      // SNI carries names only; for an IP the certificate's IP SANs are checked.
      servername: isIP(host) ? undefined : host,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`TLS handshake with ${address} timed out`));
    }, timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      const detail = socket.authorizationError
        ? String(socket.authorizationError)
        : undefined;
      resolve({ trusted: socket.authorized, detail });
      socket.destroy();
    });
    socket.once('error', error => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/**
 * Probes a Talos API address the way discovery needs it: Version without a client
 * certificate (maintenance mode answers; a configured machine refuses the handshake with
 * "certificate required"), then, for a configured machine and a given CA, whether the
 * server certificate is ours.
 */
export async function probeTalosMachine(
  address: string,
  options: TalosProbeOptions = {},
): Promise<TalosProbeResult> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const client = new TalosApiClient(
    address,
    { mode: 'maintenance' },
    { timeoutMs },
  );
  try {
    const version = await client.version();
    return { mode: 'maintenance', version };
  } catch (error) {
    if (!(error instanceof TalosApiError) || !error.certificateRequired) {
      return {
        mode: 'unreachable',
        reason: (error as Error).message,
        answered: probeFailureAnswered(error),
      };
    }
  } finally {
    client.close();
  }
  if (!options.ca) return { mode: 'configured' };
  try {
    const { trusted, detail } = await serverCertificateTrusted(
      address,
      options.ca,
      timeoutMs,
    );
    return { mode: 'configured', serverTrusted: trusted, trustDetail: detail };
  } catch (error) {
    return {
      mode: 'unreachable',
      reason: (error as Error).message,
      answered: probeFailureAnswered(error),
    };
  }
}
