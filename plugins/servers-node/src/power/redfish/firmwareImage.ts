/*
 * The firmware image as the operator fetches it itself (docs/upgrades.md, "Firmware"):
 * for a BMC that takes only a multipart push (the bytes it uploads), and for an update
 * that names a checksum (the image's sha256, computed as it streams in, never held). Both
 * from a source the operator allowed: https only, no redirects followed, refused past a
 * size cap as it streams in and past a deadline, with the source's credentials (from the
 * Secret the chart names, never from the request) as basic auth when it has some.
 */
import { createHash } from 'node:crypto';
import { Agent, fetch, type Response } from 'undici';
import { readBoundedBytes, streamBounded } from '../../http/boundedBody';
import type { FirmwareImage } from './firmwareUpdate';

/** The largest image fetched: 512 MiB (BIOS and BMC images are tens of MiB). */
export const MAX_FIRMWARE_IMAGE_BYTES = 512 * 1024 * 1024;
/** How long fetching one image may take: 10 minutes. */
export const FIRMWARE_IMAGE_DEADLINE_MS = 10 * 60 * 1000;

/** A firmware source's username and password (docs/upgrades.md, "Credentials for a source"). */
export interface FirmwareSourceCredentials {
  username: string;
  password: string;
}

/** How one image is fetched. */
export interface FirmwareImageFetchOptions {
  maxBytes?: number;
  deadlineMs?: number;
  /** Basic auth for the source; never put in a message. */
  credentials?: FirmwareSourceCredentials;
  /** PEM CA bundle the source's certificate is checked against (else the system's). */
  caBundle?: string;
}

async function get(
  imageURI: string,
  options: FirmwareImageFetchOptions,
): Promise<{ response: Response; source: string; signal: AbortSignal }> {
  const url = new URL(imageURI);
  if (url.protocol !== 'https:' || url.username || url.password) {
    throw new Error(`firmware image ${url.origin} is not a plain https URL`);
  }
  const signal = AbortSignal.timeout(
    options.deadlineMs ?? FIRMWARE_IMAGE_DEADLINE_MS,
  );
  const headers: Record<string, string> = {};
  if (options.credentials) {
    const { username, password } = options.credentials;
    headers.authorization = `Basic ${Buffer.from(
      `${username}:${password}`,
    ).toString('base64')}`;
  }
  const source = `firmware image ${url.origin}${url.pathname}`;
  const dispatcher = options.caBundle
    ? new Agent({ connect: { ca: options.caBundle } })
    : undefined;
  let response: Response;
  try {
    response = await fetch(url, {
      redirect: 'error',
      signal,
      headers,
      ...(dispatcher ? { dispatcher } : {}),
    });
  } catch (error) {
    // undici's message names the URL at most (the header is never in it).
    throw new Error(
      `${source} could not be fetched: ${
        (error as Error & { cause?: Error }).cause?.message ??
        (error as Error).message
      }`,
    );
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`${source} answered HTTP ${response.status}`);
  }
  return { response, source, signal };
}

/** Fetches the whole image for a multipart push. */
export async function fetchFirmwareImage(
  imageURI: string,
  options: FirmwareImageFetchOptions = {},
): Promise<FirmwareImage> {
  const { response, source, signal } = await get(imageURI, options);
  const bytes = await readBoundedBytes(response, {
    source,
    maxBytes: options.maxBytes ?? MAX_FIRMWARE_IMAGE_BYTES,
    signal,
  });
  const url = new URL(imageURI);
  const fileName = decodeURIComponent(url.pathname.split('/').pop() ?? '');
  return { fileName: fileName || 'firmware.bin', bytes };
}

/** `sha256:<64 lowercase hex>` of some bytes, as `spec.firmware.checksum` writes it. */
export function sha256Of(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/**
 * `sha256:<64 lowercase hex>` of the image at `imageURI`, computed as it streams in
 * (the image is never held whole), under the same cap and deadline as a fetch.
 */
export async function firmwareImageChecksum(
  imageURI: string,
  options: FirmwareImageFetchOptions = {},
): Promise<string> {
  const { response, source, signal } = await get(imageURI, options);
  const hash = createHash('sha256');
  await streamBounded(
    response,
    {
      source,
      maxBytes: options.maxBytes ?? MAX_FIRMWARE_IMAGE_BYTES,
      signal,
    },
    chunk => {
      hash.update(chunk);
    },
  );
  return `sha256:${hash.digest('hex')}`;
}
