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

/**
 * The checksum of a firmware image as `spec.firmware.checksum` takes it: `sha256:` and 64
 * lowercase hex digits, nothing else (the CRD's pattern too). Lowercase only, so that the
 * comparison with what the operator computes is one of text, never of case.
 */
export const FIRMWARE_CHECKSUM = /^sha256:[0-9a-f]{64}$/;
/** {@link FIRMWARE_CHECKSUM} as the CRD's and the OpenAPI document's pattern. */
export const FIRMWARE_CHECKSUM_PATTERN = FIRMWARE_CHECKSUM.source;

/** Why a checksum is not one `spec.firmware.checksum` takes, or undefined when it is. */
export function whyFirmwareChecksumRefused(
  checksum: string,
): string | undefined {
  if (FIRMWARE_CHECKSUM.test(checksum)) return undefined;
  return `the firmware checksum ${JSON.stringify(
    checksum.slice(0, 80),
  )} is not sha256:<64 lowercase hex digits>`;
}

/**
 * An allowed firmware source as a deployment lists it: its https origin, and whether a
 * request for an image from it must carry a checksum (`spec.firmware.checksum`).
 */
export interface FirmwareSource {
  origin: string;
  checksumRequired: boolean;
}

/**
 * Reads one entry of a source list: an origin string (`https://fw.example.com`), or an
 * object `{origin, checksumRequired?}` (app-config). Undefined when the origin is not an
 * https origin alone, or the object holds anything else.
 */
export function parseFirmwareSourceEntry(
  entry: unknown,
): FirmwareSource | undefined {
  if (typeof entry === 'string') {
    const origin = parseFirmwareSource(entry);
    return origin ? { origin, checksumRequired: false } : undefined;
  }
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
    return undefined;
  }
  const { origin, checksumRequired, ...rest } = entry as Record<
    string,
    unknown
  >;
  if (Object.keys(rest).length > 0 || typeof origin !== 'string') {
    return undefined;
  }
  if (checksumRequired !== undefined && typeof checksumRequired !== 'boolean') {
    return undefined;
  }
  const parsed = parseFirmwareSource(origin);
  return parsed
    ? { origin: parsed, checksumRequired: checksumRequired === true }
    : undefined;
}

/**
 * Why a firmware request is refused for its checksum under `sources`: its image comes from
 * a source that requires one and it carries none, or the one it carries is not
 * `sha256:<64 lowercase hex>`. Undefined when neither (the origin itself is judged by
 * {@link whyFirmwareSourceRefused}).
 */
export function whyFirmwareChecksumMissing(
  request: { imageURI: string; checksum?: string },
  sources: readonly FirmwareSource[],
): string | undefined {
  if (request.checksum !== undefined) {
    return whyFirmwareChecksumRefused(request.checksum);
  }
  let origin: string | undefined;
  try {
    origin = new URL(request.imageURI).origin;
  } catch {
    return undefined;
  }
  const source = sources.find(s => s.origin === origin);
  if (source?.checksumRequired) {
    return `the firmware source ${origin} requires a checksum (sha256:<64 hex>), and the request carries none`;
  }
  return undefined;
}

/** What the version rule reads of one FirmwareInventory component. */
export interface FirmwareVersionReading {
  /** Its @odata.id (a maintenance's inventory) or absent (a health reading). */
  id?: string;
  name: string;
  version: string;
}

/** The component a target names: its @odata.id, its Id (the link's last segment), or its Name. */
export function firmwareTargetMatches(
  component: FirmwareVersionReading,
  target: string,
): boolean {
  if (component.id !== undefined) {
    if (component.id === target) return true;
    if (component.id.replace(/\/+$/, '').split('/').pop() === target) {
      return true;
    }
  }
  const last = target.replace(/\/+$/, '').split('/').pop();
  return component.name === target || component.name === last;
}

/**
 * Why a firmware update to `version` has nothing to do: every targeted component (without
 * targets, every component the inventory lists; at least one) already reports it, in the
 * words a single update is refused with and a plan skips a node with (`already at 2.5.0`).
 * Undefined when no version is given, the inventory is empty, or a targeted component is
 * missing or reports another version.
 */
export function firmwareAlreadyAt(
  version: string | undefined,
  inventory: readonly FirmwareVersionReading[] | undefined,
  targets: readonly string[] | undefined,
): string | undefined {
  if (version === undefined || !inventory || inventory.length === 0) {
    return undefined;
  }
  if (targets && targets.length > 0) {
    const all = targets.every(target => {
      const found = inventory.filter(c => firmwareTargetMatches(c, target));
      return found.length > 0 && found.every(c => c.version === version);
    });
    return all ? `already at ${version}` : undefined;
  }
  return inventory.every(c => c.version === version)
    ? `already at ${version}`
    : undefined;
}

/** The key of the credentials Secret that holds the sources' credentials. */
export const FIRMWARE_SOURCE_CREDENTIALS_KEY = 'sources.json';

/** What a credentials Secret gives the sources it may: origin to username and password. */
export interface FirmwareSourceCredentialsMap {
  byOrigin: ReadonlyMap<string, { username: string; password: string }>;
  /** The Secret's entries left unused: not an allowed source (origins only, never a secret). */
  ignored: string[];
}

/**
 * Reads the `sources.json` key of the firmware sources' credentials Secret:
 * `{"https://fw.example.com": {"username": "...", "password": "..."}}`. Only an entry
 * whose key is exactly one of the `allowed` origins is used; any other (a path, another
 * host, not an origin) is ignored and named, so a Secret can never send credentials to
 * a source the deployment does not allow. Throws a sentence that never holds a value of
 * the Secret when it is not such a document.
 */
export function parseFirmwareSourceCredentials(
  text: string,
  allowed: readonly string[],
): FirmwareSourceCredentialsMap {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new Error(
      `${FIRMWARE_SOURCE_CREDENTIALS_KEY} is not JSON (an object of https origins to {username, password})`,
    );
  }
  if (!document || typeof document !== 'object' || Array.isArray(document)) {
    throw new Error(
      `${FIRMWARE_SOURCE_CREDENTIALS_KEY} is not an object of https origins to {username, password}`,
    );
  }
  const origins = new Set(
    allowed.flatMap(source => {
      const o = parseFirmwareSource(source);
      return o ? [o] : [];
    }),
  );
  const byOrigin = new Map<string, { username: string; password: string }>();
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(document)) {
    const origin = parseFirmwareSource(key);
    const shown = JSON.stringify(key.slice(0, 200));
    if (!origin || origin !== key.replace(/\/$/, '') || !origins.has(origin)) {
      ignored.push(shown);
      continue;
    }
    const entry = (value ?? {}) as Record<string, unknown>;
    if (
      typeof entry.username !== 'string' ||
      typeof entry.password !== 'string' ||
      entry.username === '' ||
      entry.username.includes(':') ||
      /[\r\n]/.test(entry.username + entry.password)
    ) {
      throw new Error(
        `${FIRMWARE_SOURCE_CREDENTIALS_KEY}: the entry of ${shown} is not {username, password} (a username without ':' and neither with a line break)`,
      );
    }
    byOrigin.set(origin, {
      username: entry.username,
      password: entry.password,
    });
  }
  return { byOrigin, ignored };
}
