/*
 * The firmware image a multipart push uploads, fetched by the operator from a source it
 * allowed (docs/upgrades.md, "Firmware"): https only, no redirects followed, refused past
 * a size cap as it streams in and past a deadline.
 */
import { fetch } from 'undici';
import { readBoundedBytes } from '../../http/boundedBody';
import type { FirmwareImage } from './firmwareUpdate';

/** The largest image fetched for a push: 512 MiB (BIOS and BMC images are tens of MiB). */
export const MAX_FIRMWARE_IMAGE_BYTES = 512 * 1024 * 1024;
/** How long fetching one image may take: 10 minutes. */
export const FIRMWARE_IMAGE_DEADLINE_MS = 10 * 60 * 1000;

export async function fetchFirmwareImage(
  imageURI: string,
  options: { maxBytes?: number; deadlineMs?: number } = {},
): Promise<FirmwareImage> {
  const url = new URL(imageURI);
  if (url.protocol !== 'https:' || url.username || url.password) {
    throw new Error(`firmware image ${url.origin} is not a plain https URL`);
  }
  const signal = AbortSignal.timeout(
    options.deadlineMs ?? FIRMWARE_IMAGE_DEADLINE_MS,
  );
  const response = await fetch(url, { redirect: 'error', signal });
  const source = `firmware image ${url.origin}${url.pathname}`;
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`${source} answered HTTP ${response.status}`);
  }
  const bytes = await readBoundedBytes(response, {
    source,
    maxBytes: options.maxBytes ?? MAX_FIRMWARE_IMAGE_BYTES,
    signal,
  });
  const fileName = decodeURIComponent(url.pathname.split('/').pop() ?? '');
  return { fileName: fileName || 'firmware.bin', bytes };
}
