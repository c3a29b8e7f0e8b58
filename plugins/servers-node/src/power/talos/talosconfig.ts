import { InputError } from '@backstage/errors';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { isScalar, parseDocument, visit } from 'yaml';

/** What a client needs from a talosconfig for mTLS: PEM texts, the key in a label Node accepts. */
export interface TalosClientIdentity {
  /** The cluster's Talos CA (verifies the machines' server certificates). */
  ca: string;
  /** The client certificate (for the admin talosconfig: organization `os:admin`). */
  crt: string;
  /** The client key, PKCS#8 under `PRIVATE KEY`. */
  key: string;
}

/** One context of a talosconfig. */
export interface Talosconfig {
  context: string;
  endpoints: string[];
  nodes: string[];
  identity: TalosClientIdentity;
}

const PEM_BLOCK =
  /-----BEGIN ([A-Z0-9 ]+)-----\r?\n[A-Za-z0-9+/=\r\n]+-----END \1-----/;

/**
 * Talos writes its Ed25519 client keys as PKCS#8 under the label `ED25519 PRIVATE KEY`,
 * which OpenSSL (and so Node) does not recognise; the DER inside is plain PKCS#8, so
 * relabelling to `PRIVATE KEY` is all it takes. Other labels pass unchanged.
 */
export function normalizeTalosKey(pem: string): string {
  return pem.replace(
    /-----(BEGIN|END) ED25519 PRIVATE KEY-----/g,
    '-----$1 PRIVATE KEY-----',
  );
}

/** Talos stores `ca`, `crt` and `key` as base64 of the PEM text; PEM itself is accepted too. */
function pemField(
  value: unknown,
  field: string,
  context: string,
): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') {
    throw new InputError(
      `talosconfig context "${context}": ${field} must be a string`,
    );
  }
  const text = value.includes('-----BEGIN ')
    ? value
    : Buffer.from(value, 'base64').toString('utf8');
  if (!PEM_BLOCK.test(text)) {
    // The value itself is never quoted: it may be a key.
    throw new InputError(
      `talosconfig context "${context}": ${field} is not base64 of a PEM block`,
    );
  }
  return text;
}

function stringList(value: unknown, field: string, context: string): string[] {
  if (value === undefined || value === null) return [];
  if (
    !Array.isArray(value) ||
    value.some(v => typeof v !== 'string' || v === '')
  ) {
    throw new InputError(
      `talosconfig context "${context}": ${field} must be a list of addresses`,
    );
  }
  return value;
}

/**
 * The YAML of a talosconfig, read as `yaml.parse` reads it but with the duplicate-key
 * check done here in one pass per map: the library compares every key of a map with every
 * other, and a map of 32,768 keys (256 KiB; the Secret a reclaim reads may hold 1 MiB)
 * took 24 s of the backend's or the operator's event loop.
 */
function parseYaml(text: string): unknown {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length > 0) throw doc.errors[0];
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        // Keys that are not scalars are compared by identity, as the library does.
        const key = isScalar(pair.key) ? pair.key.value : pair.key ?? null;
        if (seen.has(key)) throw new Error('Map keys must be unique');
        seen.add(key);
      }
    },
  });
  return doc.toJS();
}

/**
 * Reads one context of a talosconfig (the current one unless `context` is given) and
 * checks that its CA, certificate and key load. Errors name the context and the field,
 * never the key material.
 */
export function parseTalosconfig(
  text: string,
  options: { context?: string } = {},
): Talosconfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new InputError(
      `talosconfig is not YAML: ${(error as Error).message.split('\n')[0]}`,
    );
  }
  if (!doc || typeof doc !== 'object') {
    throw new InputError('talosconfig is empty or not a mapping');
  }
  const { context: current, contexts } = doc as {
    context?: unknown;
    contexts?: unknown;
  };
  if (!contexts || typeof contexts !== 'object') {
    throw new InputError('talosconfig has no contexts');
  }
  const name = options.context ?? current;
  if (typeof name !== 'string' || name === '') {
    throw new InputError(
      'talosconfig names no current context (and none was asked for)',
    );
  }
  const entry = (contexts as Record<string, unknown>)[name];
  if (!entry || typeof entry !== 'object') {
    const known = Object.keys(contexts).join(', ') || 'none';
    throw new InputError(
      `talosconfig has no context "${name}" (contexts: ${known})`,
    );
  }
  const raw = entry as Record<string, unknown>;
  const ca = pemField(raw.ca, 'ca', name);
  const crt = pemField(raw.crt, 'crt', name);
  const key = pemField(raw.key, 'key', name);
  if (!ca || !crt || !key) {
    const missing = [!ca && 'ca', !crt && 'crt', !key && 'key']
      .filter(Boolean)
      .join(', ');
    throw new InputError(
      `talosconfig context "${name}" lacks ${missing}: a client certificate is needed for a configured machine`,
    );
  }
  const normalizedKey = normalizeTalosKey(key);
  try {
    createPrivateKey(normalizedKey);
  } catch {
    throw new InputError(
      `talosconfig context "${name}": key is not a private key Node can load`,
    );
  }
  for (const [field, pem] of [
    ['ca', ca],
    ['crt', crt],
  ] as const) {
    try {
      // eslint-disable-next-line no-new
      new X509Certificate(pem);
    } catch {
      throw new InputError(
        `talosconfig context "${name}": ${field} is not an X.509 certificate`,
      );
    }
  }
  return {
    context: name,
    endpoints: stringList(raw.endpoints, 'endpoints', name),
    nodes: stringList(raw.nodes, 'nodes', name),
    identity: { ca, crt, key: normalizedKey },
  };
}
