/*
 * BMC addresses stay in the operator's log (docs/architecture.md, "The backend" and the brief's rule: never
 * in status, history or notifications). A Redfish receipt or error names the BMC it
 * talked to (`ResetType On accepted by https://10.0.5.21/redfish/v1/Systems/1`,
 * `connect ECONNREFUSED 10.0.5.21:443`); what the maintenance records says "the BMC".
 */

/** The text with every URL, the BMC's host (with or without port) and any IP address replaced. */
export function withoutBmcAddresses(text: string, bmcAddress?: string): string {
  let out = text.replace(/Redfish BMC https?:\/\/[^\s:/]+(:\d+)?/g, 'the BMC');
  out = out.replace(/https?:\/\/[^\s'"()<>]+/g, 'the BMC');
  let host: string | undefined;
  try {
    host = bmcAddress ? new URL(bmcAddress).hostname : undefined;
  } catch {
    host = undefined;
  }
  if (host) out = withoutHost(out, host.replace(/^\[|\]$/g, ''));
  // Any IPv4 address with an optional port (a BMC named by a name resolves to one).
  out = out.replace(/\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b/g, 'the BMC');
  return out;
}

/** The text with every `host`, `[host]`, `host:port` or `[host]:port` replaced by "the BMC". */
function withoutHost(text: string, host: string): string {
  let out = '';
  let from = 0;
  for (let at = text.indexOf(host); at !== -1; at = text.indexOf(host, from)) {
    const start = at > 0 && text[at - 1] === '[' ? at - 1 : at;
    let end = at + host.length;
    if (text[end] === ']') end += 1;
    const port = /^:\d+/.exec(text.slice(end));
    if (port) end += port[0].length;
    out += `${text.slice(from, start)}the BMC`;
    from = end;
  }
  return out + text.slice(from);
}
