/**
 * Which firmware images a Redfish update may fetch (docs/upgrades.md, "Firmware"): an
 * image URI is allowed only when its origin (scheme, host and port) is exactly one of the
 * deployment's allowed https origins. The backend asks it before it writes a firmware
 * update, the operator again at the moment it sends one (whoever wrote the object).
 *
 * The BMC, not Rackside, fetches the URI, and a BMC's URL parser is not the WHATWG one this
 * code runs. So what two parsers could read differently is refused outright rather than
 * normalized: user info, backslashes, percent-encoding or non-ASCII in the host, blanks and
 * control characters anywhere, a scheme written in another case.
 */

/** At most this many characters in a firmware image URI. */
export const MAX_FIRMWARE_URI_LENGTH = 2048;

/** Characters no URI handed to a BMC may hold: blanks, controls, backslashes, non-ASCII. */
const UNSAFE_CHARACTER = /[^\x21-\x7e]|\\/;
/** A host: DNS labels or an IPv4 address (lowercase ASCII), with an optional port. */
const HOST_AND_PORT =
  /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(?::[0-9]{1,5})?$/;

/**
 * The authority (`host[:port]`) of an `https://` string as written, or a sentence saying
 * why it is not one a BMC and Rackside would both read the same way.
 */
function authorityOf(text: string): { authority: string } | { why: string } {
  if (UNSAFE_CHARACTER.test(text)) {
    return {
      why: 'it holds a blank, a control character, a backslash or a non-ASCII character',
    };
  }
  if (!text.startsWith('https://')) return { why: 'it is not an https URL' };
  const rest = text.slice('https://'.length);
  const end = rest.search(/[/?#]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  if (authority.includes('@')) {
    return { why: 'it carries user info (user@host)' };
  }
  if (!HOST_AND_PORT.test(authority)) {
    return { why: `its host ${JSON.stringify(authority)} is not a plain host` };
  }
  return { authority };
}

/** The origin `https://host[:port]` as URL reads it (the default port 443 left out). */
function originOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Parses an allowed source: an https origin and nothing else (`https://fw.example.com`,
 * `https://10.0.0.5:8443`; a trailing `/` is allowed). Undefined when it is not one.
 */
export function parseFirmwareSource(source: string): string | undefined {
  const parsed = authorityOf(source);
  if ('why' in parsed) return undefined;
  const tail = source.slice('https://'.length + parsed.authority.length);
  if (tail !== '' && tail !== '/') return undefined;
  return originOf(source);
}

/**
 * Why a firmware image URI may not be fetched under `sources`, as a sentence both sides
 * show (`… is not from an allowed firmware source (allowed: …)`), or undefined when it is
 * allowed. An empty list allows nothing; a source that is not an https origin allows
 * nothing either.
 */
export function whyFirmwareSourceRefused(
  uri: string,
  sources: readonly string[],
): string | undefined {
  const shown = JSON.stringify(uri.slice(0, 200));
  if (uri.length === 0 || uri.length > MAX_FIRMWARE_URI_LENGTH) {
    return `the firmware image URI must be 1 to ${MAX_FIRMWARE_URI_LENGTH} characters`;
  }
  const parsed = authorityOf(uri);
  if ('why' in parsed) {
    return `the firmware image URI ${shown} is refused: ${parsed.why}`;
  }
  const origin = originOf(uri);
  if (!origin) return `the firmware image URI ${shown} is not a URL`;
  const allowed = sources.flatMap(source => {
    const o = parseFirmwareSource(source);
    return o ? [o] : [];
  });
  if (allowed.length === 0) {
    return 'no firmware sources are allowed in this deployment (none configured)';
  }
  if (!allowed.includes(origin)) {
    return `the firmware image URI ${shown} is not from an allowed firmware source (allowed: ${allowed.join(
      ', ',
    )})`;
  }
  return undefined;
}

/** Whether a firmware image URI's origin is exactly one of `sources` (see {@link whyFirmwareSourceRefused}). */
export function firmwareSourceAllowed(
  uri: string,
  sources: readonly string[],
): boolean {
  return whyFirmwareSourceRefused(uri, sources) === undefined;
}
