/**
 * Which Talos installer images an upgrade may install (docs/upgrades.md, "Allowing
 * sources"), and the Talos version an image installs. The backend asks it before it writes
 * an upgrade, the operator again at the moment it sends one (whoever wrote the object), and
 * the portal to offer only the targets the deployment allows.
 *
 * An image reference is `[registry[:port]/]repository[:tag][@digest]`. A prefix allows a
 * reference only where the reference continues the prefix at a boundary of the reference's
 * own grammar, so a prefix never allows a registry or repository that merely starts with
 * the same letters.
 */

/** At most this many characters in an image reference (the registries' own limit is 255 for the name). */
export const MAX_IMAGE_REFERENCE_LENGTH = 512;

/** A registry host, with an optional port: DNS labels, `localhost`, or an IPv4 address. */
const REGISTRY_HOST =
  /^(?:localhost|[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*)(?::[0-9]{1,5})?$/;
/** One path component of a repository: lowercase, separated by `.`, `_`, `__` or dashes. */
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
/** A tag: a Talos installer's is its version, e.g. `v1.12.0`. */
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
/** A Talos version as the installer's tag names it. */
const TALOS_VERSION = /^v\d{1,4}\.\d{1,4}\.\d{1,4}(?:-[0-9A-Za-z.-]{1,64})?$/;

/** An image reference taken apart; undefined where it is not one. */
export interface ImageReference {
  /** The registry host (and port), as written; absent for a reference without one. */
  registry?: string;
  /** The repository path components. */
  path: string[];
  tag?: string;
  digest?: string;
}

/**
 * Parses an image reference. Anything outside the grammar (userinfo, a scheme, `..`,
 * uppercase path components, whitespace, a digest that is not sha256) is not one.
 */
export function parseImageReference(ref: string): ImageReference | undefined {
  if (ref.length === 0 || ref.length > MAX_IMAGE_REFERENCE_LENGTH) {
    return undefined;
  }
  let name = ref;
  let digest: string | undefined;
  const at = name.indexOf('@');
  if (at >= 0) {
    digest = name.slice(at + 1);
    if (!DIGEST.test(digest)) return undefined;
    name = name.slice(0, at);
  }
  let tag: string | undefined;
  const colon = name.lastIndexOf(':');
  if (colon > name.lastIndexOf('/')) {
    tag = name.slice(colon + 1);
    if (!TAG.test(tag)) return undefined;
    name = name.slice(0, colon);
  }
  const parts = name.split('/');
  let registry: string | undefined;
  if (
    parts.length > 1 &&
    (parts[0].includes('.') ||
      parts[0].includes(':') ||
      parts[0] === 'localhost')
  ) {
    registry = parts.shift()!;
    if (!REGISTRY_HOST.test(registry)) return undefined;
  }
  if (parts.length === 0 || !parts.every(p => PATH_COMPONENT.test(p))) {
    return undefined;
  }
  return { registry, path: parts, tag, digest };
}

/**
 * Parses an allowed prefix: a registry, optionally followed by repository path components,
 * optionally ending with `/` (then any repository below is allowed) or with a whole
 * repository and `:` (then any tag of that repository is allowed). Undefined when it is
 * not one of those.
 */
function parsePrefix(
  prefix: string,
):
  | { registry: string; path: string[]; below: boolean; anyTagOnly: boolean }
  | undefined {
  if (prefix.length === 0 || prefix.length > MAX_IMAGE_REFERENCE_LENGTH) {
    return undefined;
  }
  let rest = prefix;
  const anyTagOnly = rest.endsWith(':');
  if (anyTagOnly) rest = rest.slice(0, -1);
  const below = rest.endsWith('/');
  if (below) rest = rest.slice(0, -1);
  if (anyTagOnly && below) return undefined;
  const parts = rest.split('/');
  const registry = parts.shift()!;
  if (!REGISTRY_HOST.test(registry)) return undefined;
  if (!parts.every(p => PATH_COMPONENT.test(p))) return undefined;
  if (anyTagOnly && parts.length === 0) return undefined;
  return { registry, path: parts, below, anyTagOnly };
}

/** Whether `prefix` is one {@link imageAllowed} understands (for config validation). */
export function isImagePrefix(prefix: string): boolean {
  return parsePrefix(prefix) !== undefined;
}

/**
 * Whether an installer image may be installed: it is a well-formed reference with a
 * registry and a tag, and one of the allowed prefixes names its registry exactly and the
 * first components of its repository exactly (`factory.talos.dev/installer/` allows
 * `factory.talos.dev/installer/<schematic>:v1.12.0`, never
 * `factory.talos.dev.evil.example/...` or `factory.talos.dev/installer-evil/...`). A
 * prefix without a trailing `/` or `:` names one whole repository. No prefix: nothing is
 * allowed.
 */
export function imageAllowed(
  image: string,
  prefixes: readonly string[],
): boolean {
  const ref = parseImageReference(image);
  if (!ref || !ref.registry || !ref.tag) return false;
  return prefixes.some(raw => {
    const prefix = parsePrefix(raw);
    if (!prefix || prefix.registry !== ref.registry) return false;
    const n = prefix.path.length;
    if (ref.path.length < n) return false;
    for (let i = 0; i < n; i++) {
      if (ref.path[i] !== prefix.path[i]) return false;
    }
    // "registry/" or "registry/a/": any repository below; "registry/a" or "registry/a:":
    // that repository only.
    return prefix.below || n === 0
      ? ref.path.length > n
      : ref.path.length === n;
  });
}

/**
 * The Talos version an installer image installs: its tag (`v1.12.0` of
 * `factory.talos.dev/installer/<schematic>:v1.12.0`). Undefined when the reference has no
 * tag or the tag is not a version (`latest` names none).
 */
export function talosVersionOfImage(image: string): string | undefined {
  const tag = parseImageReference(image)?.tag;
  return tag && TALOS_VERSION.test(tag) ? tag : undefined;
}

/**
 * The Talos version a Node reports: its `status.nodeInfo.osImage` is `Talos (v1.12.0)`.
 * Undefined for anything else.
 */
export function talosVersionOfOsImage(
  osImage: string | undefined,
): string | undefined {
  const match = /^Talos \((v[^()\s]{1,80})\)$/.exec(osImage ?? '');
  return match && TALOS_VERSION.test(match[1]) ? match[1] : undefined;
}

/**
 * Why an upgrade to `image` may not be sent, in the sentence every side uses; undefined
 * when it may. The backend asks it before it writes, the operator again before it sends.
 */
export function whyUpgradeImageRefused(
  image: string,
  prefixes: readonly string[],
): string | undefined {
  if (!imageAllowed(image, prefixes)) {
    return `image ${image} is not in the allowed list${
      prefixes.length
        ? ` (${prefixes.join(', ')})`
        : ' (no Talos image prefix is allowed)'
    }`;
  }
  if (!talosVersionOfImage(image)) {
    return `image ${image} names no Talos version: its tag must be one (e.g. v1.12.0)`;
  }
  return undefined;
}

/**
 * Why a forced upgrade (Talos skips its own etcd health check) may not go on: only a
 * request acknowledged at the hazard rung may force. Undefined when it may.
 */
export function whyForceRefused(
  request: { force?: boolean },
  acknowledged: string | undefined,
): string | undefined {
  if (!request.force || acknowledged === 'hazard') return undefined;
  return `force skips Talos's etcd health check and is taken only with the hazard ceremony (the node's name and a reason typed by a person); this request was acknowledged at the ${
    acknowledged ?? 'no'
  } rung`;
}
