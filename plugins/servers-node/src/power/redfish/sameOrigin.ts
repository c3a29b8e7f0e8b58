import { RedfishError } from './errors';

/** Every resource a client follows lives under this path of the BMC's own origin. */
export const REDFISH_PATH = '/redfish/v1/';

/**
 * Percent-encoded dot, slash, backslash or percent: a server that decodes them before
 * resolving the path could leave `/redfish/v1/` even though the URL parser did not.
 */
const ENCODED_SEGMENT_CHARS = /%(2e|2f|5c|25)/i;

/** Whitespace, control characters and backslashes, which the URL parser drops or rewrites. */
function hasRewrittenChars(reference: string): boolean {
  for (let i = 0; i < reference.length; i++) {
    const code = reference.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f || code === 0x5c) return true;
  }
  return false;
}

/** The reference as it can be shown in an error: truncated, never with user info. */
function shown(reference: string, resolved?: URL): string {
  if (resolved && (resolved.username || resolved.password)) {
    const copy = new URL(resolved.href);
    copy.username = '';
    copy.password = '';
    return JSON.stringify(copy.href.slice(0, 200));
  }
  return JSON.stringify(reference.slice(0, 200));
}

/**
 * The URL a reference taken from a BMC's answer (an `@odata.id`, an action `target`,
 * `@Redfish.ActionInfo`, `Links.Sessions`, a `Location` header, a redirect) points to, or
 * a `notSent` RedfishError naming `field` when it would leave the BMC: another scheme,
 * host or port, user info, a path outside `/redfish/v1/` (after `..` segments, also
 * percent-encoded ones, are resolved), or characters the URL parser rewrites. The caller
 * has not sent anything for this URL yet, so credentials stay with the BMC they belong to.
 *
 * Relative references resolve against the BMC's origin (Redfish links are absolute paths).
 */
export function resolveOnBmc(bmc: URL, reference: unknown, field: string): URL {
  const refuse = (what: string, reason: string): never => {
    throw new RedfishError({
      bmc: bmc.origin,
      outcome: 'notSent',
      message: `Redfish BMC ${bmc.origin}: ${field} ${what} is refused: ${reason}; nothing was sent to it`,
    });
  };
  if (typeof reference !== 'string' || reference === '') {
    return refuse(
      reference === undefined ? '(missing)' : JSON.stringify(reference),
      'not a URL',
    );
  }
  if (hasRewrittenChars(reference)) {
    return refuse(
      shown(reference),
      'it holds whitespace, control characters or a backslash',
    );
  }
  let url: URL;
  try {
    url = new URL(reference, bmc);
  } catch {
    return refuse(shown(reference), 'not a URL');
  }
  if (url.origin !== bmc.origin) {
    return refuse(
      shown(reference, url),
      `it is on another origin (${url.origin}), not the BMC's ${bmc.origin}`,
    );
  }
  if (url.username || url.password) {
    return refuse(shown(reference, url), 'it carries user info');
  }
  if (ENCODED_SEGMENT_CHARS.test(url.pathname)) {
    return refuse(
      shown(reference),
      'its path holds a percent-encoded dot, slash, backslash or percent',
    );
  }
  if (
    url.pathname !== REDFISH_PATH.slice(0, -1) &&
    !url.pathname.startsWith(REDFISH_PATH)
  ) {
    return refuse(
      shown(reference),
      `its path ${url.pathname} is outside ${REDFISH_PATH}`,
    );
  }
  url.hash = '';
  return url;
}

/** The path (and query) of a URL on the BMC, as requests and messages show it. */
export function pathOf(url: URL): string {
  return `${url.pathname}${url.search}`;
}
